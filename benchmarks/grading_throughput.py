"""Grading throughput: plain ``nbgrader autograde``, the course's pipeline run serially, and the grading command.

    .venv/bin/python benchmarks/grading_throughput.py [--submissions 24] [--assignment a1_softmax_additive]

Generates N submissions of one assignment (half correct, half with the
mistakes of the assignment's catalogue in turn, ``solutions/<a>/mistakes.py``)
and grades them from scratch in fresh course directories three ways:

* **plain**: nbgrader's own ``autograde`` command with nbgrader's default
  pipeline (a course configuration that names only the source folder and the
  course id), one notebook after the other, in the ``python3`` kernel: no
  sandbox, no re-check, no feedback.  (Plain nbgrader cannot draw the hidden
  tests' inputs, so those cells end in a ``NameError`` there: the same cells
  run, with less work in them.)
* **pipeline, serial**: ``nbgrader autograde`` with the course's
  configuration (``nbgrader_config.py``): every notebook in the sandbox, every
  test re-run in a clean process; one notebook after the other, no feedback.
* **command**: the grading command (:func:`course_grader.grade.grade`), one
  worker per core (one more for a big batch), with the sandbox, the re-check,
  feedback HTML and the grades CSV; the peak resident memory of each worker process is printed
  (``tests/worker_peaks.py``; the kernels and re-check processes a worker
  starts are bounded by the sandbox's own limit).

It prints submissions per minute for each, the command's ratio to plain
nbgrader, and the load average.  The rounds alternate the order; medians are
reported.  Numbers depend on the machine and on what else runs on it.

The bar (the course design's grading row, issue 39): at least 200 submissions
a minute for assignment 1 on 2 cores with the sandbox, the re-check and
feedback on, and at least 3x plain nbgrader measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
# the repository first: tests/course_grader (a folder of tests) must not pass for the package
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from worker_peaks import WorkerPeaks  # noqa: E402

from course_grader import grade, mistakes  # noqa: E402

MIB = 2 ** 20



def solved(assignment: str):
    """The released notebook with the instructor's code in every solution cell."""
    student = nbformat.read(ROOT / "book" / "exercises" / assignment / f"{assignment}.ipynb", as_version=4)
    source = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source
              for c in nbformat.read(ROOT / "solutions" / assignment / f"{assignment}.ipynb", as_version=4).cells}
    for cell in student.cells:
        info = cell.metadata.get("nbgrader", {})
        if info.get("solution"):
            cell.source = "\n".join(line for line in source[info["grade_id"]].split("\n")
                                    if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line)
    return student


def make_submissions(assignment: str, count: int, folder: Path):
    """Half solved, half with the assignment's catalogued mistakes in turn (solutions/<a>/mistakes.py)."""
    folder.mkdir(parents=True)
    catalogue = mistakes.load_catalogue(ROOT / "solutions" / assignment)
    for i in range(count):
        nb = solved(assignment)
        if i % 2 and catalogue:
            nb = mistakes.apply_edits(nb, catalogue[(i // 2) % len(catalogue)].edits)
        nbformat.write(nb, folder / f"student{i:03d}.ipynb")


def nbgrader(*args, course: Path, cwd: Path = ROOT):
    """nbgrader's command line; it reads ``nbgrader_config.py`` in ``cwd`` (the course's, by default)."""
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "nbgrader"), *args,
                           f"--course-dir={course}"], cwd=cwd, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stdout[-2000:] + done.stderr[-2000:])


def submit(assignment: str, inbox: Path, course: Path):
    for path in sorted(inbox.glob("*.ipynb")):
        target = course / "submitted" / path.stem / assignment
        target.mkdir(parents=True)
        shutil.copyfile(path, target / f"{assignment}.ipynb")


def plain(assignment: str, inbox: Path, course: Path) -> float:
    """nbgrader's default pipeline, serial; returns the seconds ``autograde`` took."""
    course.mkdir(parents=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.source_directory = {str(ROOT / 'solutions')!r}\n"
        "c.CourseDirectory.course_id = 'attention-transformers'\n"
        "c.CourseDirectory.ignore = ['.ipynb_checkpoints', '*.pyc', '__pycache__', 'mistakes.py']\n"
        "c.Execute.kernel_name = 'python3'\n")
    nbgrader("generate_assignment", assignment, course=course, cwd=course)
    submit(assignment, inbox, course)
    started = time.perf_counter()
    nbgrader("autograde", assignment, course=course, cwd=course)
    return time.perf_counter() - started


def pipeline_serial(assignment: str, inbox: Path, course: Path) -> float:
    """nbgrader's ``autograde`` with the course's configuration, serial; returns seconds."""
    course.mkdir(parents=True)
    release = course / ".release"
    nbgrader("generate_assignment", assignment, f"--CourseDirectory.release_directory={release}", course=course)
    submit(assignment, inbox, course)
    started = time.perf_counter()
    nbgrader("autograde", assignment, course=course)
    return time.perf_counter() - started


def command(assignment: str, inbox: Path, course: Path, workers: int | None, feedback: bool):
    """The grading command, in this process; returns (seconds, peak resident bytes of each worker)."""
    started = time.perf_counter()
    with WorkerPeaks(os.getpid()) as peaks:
        grade.grade(inbox, assignment, course_dir=course, workers=workers, feedback=feedback, quiet=True,
                    config_file=ROOT / "nbgrader_config.py")
    return time.perf_counter() - started, list(peaks.peaks.values())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=24)
    parser.add_argument("--assignment", default="a1_softmax_additive")
    parser.add_argument("--workers", type=int, default=None,
                        help="default: the command's (one per core, one more for a big batch)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="the three runs alternate this many times; medians are reported")
    parser.add_argument("--no-feedback", action="store_true", help="the command without feedback HTML")
    args = parser.parse_args()
    n, cores = args.submissions, os.cpu_count()
    labels = {"plain": "plain nbgrader autograde, serial",
              "serial": "course pipeline, nbgrader autograde, serial",
              "command": "grading command" + (", no feedback" if args.no_feedback else ", feedback + CSV")}
    rates = {kind: [] for kind in labels}
    memory = []
    with tempfile.TemporaryDirectory(prefix="grading-benchmark-") as scratch:
        scratch = Path(scratch)
        inbox = scratch / "inbox"
        make_submissions(args.assignment, n, inbox)
        print(f"{n} submissions of {args.assignment} (half correct, half with a mistake), "
              f"{cores} CPU cores, load average {os.getloadavg()[0]:.1f}")
        for round_ in range(args.rounds):
            order = list(labels) if round_ % 2 == 0 else list(reversed(labels))
            for kind in order:
                course = scratch / f"{kind}-{round_}"
                note = ""
                if kind == "plain":
                    seconds = plain(args.assignment, inbox, course)
                elif kind == "serial":
                    seconds = pipeline_serial(args.assignment, inbox, course)
                else:
                    seconds, peaks = command(args.assignment, inbox, course, args.workers, not args.no_feedback)
                    memory += peaks
                    note = "  worker peaks (MiB): " + ", ".join(f"{p / MIB:.0f}" for p in sorted(peaks))
                rates[kind].append(60 * n / seconds)
                print(f"  round {round_ + 1}: {labels[kind] + ':':46s} {seconds:6.1f} s  "
                      f"{rates[kind][-1]:6.1f} submissions/min{note}", flush=True)
    median = {kind: statistics.median(values) for kind, values in rates.items()}
    print(f"median submissions/min: plain {median['plain']:.1f}, course pipeline serial {median['serial']:.1f}, "
          f"command {median['command']:.1f}; command / plain {median['command'] / median['plain']:.2f}x; "
          f"largest worker peak {max(memory) / MIB:.0f} MiB (load average now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
