"""Grader memory: the peak resident memory of each grading worker, honest work against the course's attacks.

    .venv/bin/python benchmarks/grader_memory.py [--assignments a1_softmax_additive a9_bleu a10_top_p_sampling]

Grades, with the course's grading command (``python -m course_grader``, two
workers, the sandbox on, the course's ``nbgrader_config.py``), one class of
submissions after another for each assignment, and prints, per class, the
peak resident memory of each worker process on its own: the kernels and
re-check processes a worker starts are sandboxed and bounded by their own
address-space limit (``--memory-mb``), so they are not counted
(``tests/worker_peaks.py`` says how the peak is read).  The peak address
space of each worker is printed too: it is what a limit on the worker's own
``RLIMIT_AS`` would have to allow.  The classes:

* ``honest``: the instructor's solution, and every other one with one of the
  assignment's catalogued mistakes in turn (``solutions/<a>/mistakes.py``);
* ``suites`` (assignment 1): the submissions of the course's adversarial and
  secrecy tests (``tests/course_grader/test_grading_adversarial.py``,
  ``test_grading_secrecy.py``): edited and deleted tests, monkeypatching,
  hooks, infinite loops, memory bombs, output floods, leaks, scripts;
* ``replies``: the reply attacks of ``test_reply_attacks.py`` (malformed,
  swollen, the million-entry archive), replies at the format's limits, and on
  assignment 9 that file's BLEU attacks, each in the solution of the
  assignment (``tests/course_grader/reply_attack_notebooks.py``).

The submissions are built by the tests' own builders, so this measures what
the tests grade.  Numbers depend on the machine and on what else runs on it:
the load average is printed with each line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "course_grader")]   # the package, then the tests' builders

from grading_support import solved_notebook, write  # noqa: E402
from reply_attack_notebooks import reply_attack_submissions  # noqa: E402
from worker_peaks import WorkerPeaks  # noqa: E402

from course_grader import mistakes  # noqa: E402

MIB = 2 ** 20
BLEU = "a9_bleu"


def honest(assignment: str, count: int) -> dict:
    """The solution, and every other submission with the assignment's catalogued mistakes in turn."""
    catalogue = mistakes.load_catalogue(ROOT / "solutions" / assignment)
    subs = {}
    for i in range(count):
        nb = solved_notebook(assignment)
        if i % 2 and catalogue:
            nb = mistakes.apply_edits(nb, catalogue[(i // 2) % len(catalogue)].edits)
        subs[f"honest{i:02d}"] = nb
    return subs


def suites(assignment: str, course: Path) -> dict:
    import test_grading_adversarial
    import test_grading_secrecy

    if assignment != test_grading_adversarial.A:
        return {}
    return {**test_grading_adversarial._submissions(course), **test_grading_secrecy._leakers(),
            "attacker": test_grading_secrecy._attacker()}


def replies(assignment: str) -> dict:
    subs = reply_attack_submissions(assignment)
    if assignment == BLEU:
        from test_reply_attacks import bleu_submissions

        subs.update({f"bleu-{name}": nb for name, nb in bleu_submissions().items() if name != "solution"})
    return subs


def grade(assignment: str, submissions: dict, scratch: Path, args) -> tuple[WorkerPeaks, float, int]:
    """Grade ``submissions`` with the grading command; the workers' peaks, seconds, exit status."""
    inbox, course = scratch / "inbox", scratch / "course"
    for student, content in submissions.items():
        path = inbox / f"{student}.ipynb"
        if isinstance(content, (bytes, str)):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        else:
            write(content, path)
    command = [sys.executable, "-m", "course_grader", str(inbox), "--assignment", assignment,
               "--course-dir", str(course), "--workers", str(args.workers), "--quiet",
               "--cell-timeout", str(args.cell_timeout), "--notebook-timeout", str(args.notebook_timeout),
               "--memory-mb", str(args.memory_mb)]
    started = time.monotonic()
    with open(scratch / "grader-output.txt", "w") as output:
        process = subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
        with WorkerPeaks(process.pid) as peaks:
            status = process.wait()
    return peaks, time.monotonic() - started, status


def mib(values) -> str:
    return ", ".join(f"{value / MIB:.0f}" for value in sorted(values, reverse=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignments", nargs="+", default=["a1_softmax_additive", BLEU, "a10_top_p_sampling"])
    parser.add_argument("--classes", nargs="+", default=["honest", "suites", "replies"],
                        choices=["honest", "suites", "replies"])
    parser.add_argument("--honest", type=int, default=8, help="honest submissions per assignment")
    parser.add_argument("--workers", type=int, default=2)
    # the adversarial suite's own limits, less tight: an infinite loop costs seconds, not minutes
    parser.add_argument("--cell-timeout", type=int, default=10)
    parser.add_argument("--notebook-timeout", type=int, default=120)
    parser.add_argument("--memory-mb", type=int, default=2048)
    parser.add_argument("--keep", type=Path, default=None, help="keep the course directories here")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPU cores, {args.workers} workers, limits: cell {args.cell_timeout} s, "
          f"notebook {args.notebook_timeout} s, {args.memory_mb} MiB per submission")
    print(f"{'assignment':20s} {'class':8s} {'submissions':>11s}  {'peak RSS per worker (MiB)':>25s}  "
          f"{'address space (MiB)':>19s}  {'seconds':>7s}  {'load':>4s}")
    with tempfile.TemporaryDirectory(prefix="grader-memory-") as scratch:
        scratch = args.keep or Path(scratch)
        for assignment in args.assignments:
            for kind in args.classes:
                folder = scratch / f"{assignment}-{kind}"
                folder.mkdir(parents=True)
                subs = (honest(assignment, args.honest) if kind == "honest" else
                        suites(assignment, folder / "course") if kind == "suites" else replies(assignment))
                if not subs:
                    continue
                peaks, seconds, status = grade(assignment, subs, folder, args)
                note = "" if status == 0 else f"  (the command exited with {status})"
                print(f"{assignment:20s} {kind:8s} {len(subs):11d}  {mib(peaks.peaks.values()):>25s}  "
                      f"{mib(peaks.address_peaks.values()):>19s}  {seconds:7.0f}  "
                      f"{os.getloadavg()[0]:4.1f}{note}", flush=True)


if __name__ == "__main__":
    main()
