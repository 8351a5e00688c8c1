"""Grading throughput: plain, serial ``nbgrader autograde`` against the course's grading command (:mod:`course_grader`).

    .venv/bin/python benchmarks/grading_throughput.py [--submissions 24] [--assignment a1_softmax_additive]

Generates N submissions of one assignment (half correct, half with the
mistakes of the assignment's catalogue in turn, ``solutions/<a>/mistakes.py``),
grades them twice from scratch in fresh course directories -- once with
nbgrader's own ``autograde`` command (one notebook after the other), once with
the parallel command, which also names each mistake in its feedback -- and prints submissions per minute for
both and their ratio.  Both runs use the course's configuration, so both run
every notebook in the sandbox and re-run its tests in a clean process; the
parallel command also writes feedback HTML and the grades CSV unless
``--no-feedback`` is given, so its rate is, if anything, understated.

The bar (course design): at least 20 NumPy-only submissions per minute on
2 CPU cores.  Numbers depend on the machine and on what else runs on it.
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

from course_grader import grade, mistakes



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


def nbgrader(*args, course: Path):
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "nbgrader"), *args,
                           f"--course-dir={course}"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stdout[-2000:] + done.stderr[-2000:])


def serial(assignment: str, inbox: Path, course: Path) -> float:
    """nbgrader's own autograde over submitted/<student>/<assignment>/; returns seconds."""
    course.mkdir(parents=True)
    release = course / ".release"
    nbgrader("generate_assignment", assignment, f"--CourseDirectory.release_directory={release}", course=course)
    for path in sorted(inbox.glob("*.ipynb")):
        target = course / "submitted" / path.stem / assignment
        target.mkdir(parents=True)
        shutil.copyfile(path, target / f"{assignment}.ipynb")
    started = time.perf_counter()
    nbgrader("autograde", assignment, course=course)
    return time.perf_counter() - started


def parallel(assignment: str, inbox: Path, course: Path, workers: int | None, feedback: bool) -> float:
    started = time.perf_counter()
    grade.grade(inbox, assignment, course, workers=workers, feedback=feedback, quiet=True,
                config_file=ROOT / "nbgrader_config.py")
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=24)
    parser.add_argument("--assignment", default="a1_softmax_additive")
    parser.add_argument("--workers", type=int, default=None, help="default: one per core")
    parser.add_argument("--rounds", type=int, default=2,
                        help="serial and parallel runs alternate this many times; medians are reported")
    parser.add_argument("--no-feedback", action="store_true", help="parallel runs without feedback HTML")
    args = parser.parse_args()
    n, cores = args.submissions, os.cpu_count()
    what = "grade.py, parallel" + (", no feedback" if args.no_feedback else ", with feedback + CSV")
    rates = {"serial": [], "parallel": []}
    with tempfile.TemporaryDirectory(prefix="grading-benchmark-") as scratch:
        scratch = Path(scratch)
        inbox = scratch / "inbox"
        make_submissions(args.assignment, n, inbox)
        print(f"{n} submissions of {args.assignment} (half correct, half with a mistake), "
              f"{cores} CPU cores, load average {os.getloadavg()[0]:.1f}")
        for round_ in range(args.rounds):
            order = ["serial", "parallel"] if round_ % 2 == 0 else ["parallel", "serial"]
            for kind in order:
                course = scratch / f"{kind}-{round_}"
                if kind == "serial":
                    seconds = serial(args.assignment, inbox, course)
                    label = "plain nbgrader autograde, serial"
                else:
                    seconds = parallel(args.assignment, inbox, course, args.workers, not args.no_feedback)
                    label = what
                rates[kind].append(60 * n / seconds)
                print(f"  round {round_ + 1}: {label + ':':42s} {seconds:6.1f} s  "
                      f"{rates[kind][-1]:6.1f} submissions/min")
    serial_rate, parallel_rate = statistics.median(rates["serial"]), statistics.median(rates["parallel"])
    print(f"median: serial {serial_rate:.1f}/min, parallel {parallel_rate:.1f}/min, "
          f"ratio {parallel_rate / serial_rate:.2f}x (load average now {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
