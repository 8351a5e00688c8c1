"""Stopping the grader stops everything it started, keeps the gradebook whole and says who was graded.

A real run of the command (``python -m course_grader``, two workers) on four
submissions: two quick ones, then one that is slow in its notebook's kernel and
one that is slow only in the clean re-check (its function sleeps outside
IPython).  Once the quick ones are graded and each worker drives a slow one,
the command gets SIGINT (Ctrl-C) or SIGTERM.  Every process the run started,
in whatever session (kernels and re-check processes start sessions of their
own), must be gone; the gradebook must hold the quick students in full and
nothing of the slow ones; the command must name both.
"""

import copy
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from grading_support import ROOT, cell, max_scores, solved_notebook, write
from worker_peaks import grading_workers

A = "a1_softmax_additive"
QUICK = ["a-quick", "b-quick"]
SLOW = ["c-slow-in-the-kernel", "d-slow-in-the-recheck"]


def _slow(where: str):
    nb = copy.deepcopy(solved_notebook(A))
    if where == "kernel":
        cell(nb, "softmax").source += "\n\nimport time\ntime.sleep(600)\n"
    else:   # the notebook runs quickly; the re-check's process (an IPython shell, not the kernel's) waits
        cell(nb, "softmax").source += (
            "\n\nimport time as _time\nfrom IPython import get_ipython as _get_ipython\n_quick_softmax = softmax\n"
            "def softmax(*args, **kwargs):\n"
            "    if type(_get_ipython()).__name__ != 'ZMQInteractiveShell':\n"
            "        _time.sleep(600)\n"
            "    return _quick_softmax(*args, **kwargs)\n")
    return nb


def _descendants(process: psutil.Process) -> list[psutil.Process]:
    try:
        return process.children(recursive=True)
    except psutil.Error:
        return []


def _wait_for(condition, timeout: float, what: str, seen: set, root: psutil.Process):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen.update(_descendants(root))        # every process the run ever started, noted as it appears
        if condition():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _watch(seconds: float, seen: set, root: psutil.Process):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seen.update(_descendants(root))
        time.sleep(0.3)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_stopping_the_grader_stops_every_process_it_started(tmp_path, signum):
    from nbgrader.api import Gradebook

    inbox, course, log = tmp_path / "inbox", tmp_path / "course", tmp_path / "output.txt"
    for student in QUICK:
        write(solved_notebook(A), inbox / f"{student}.ipynb")
    write(_slow("kernel"), inbox / f"{SLOW[0]}.ipynb")
    write(_slow("recheck"), inbox / f"{SLOW[1]}.ipynb")
    command = [sys.executable, "-m", "course_grader", str(inbox), "--assignment", A,
               "--config", str(ROOT / "nbgrader_config.py"), "--course-dir", str(course), "--workers", "2",
               "--cell-timeout", "500", "--notebook-timeout", "550", "--memory-mb", "2048"]
    with open(log, "w") as output:
        run = subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT,
                               env=dict(os.environ, PYTHONPATH=str(ROOT)), start_new_session=True)
    root, seen = psutil.Process(run.pid), set()
    try:
        _wait_for(lambda: "2/4 graded" in log.read_text(), 300, "the quick submissions", seen, root)
        workers = grading_workers(run.pid)

        def busy():   # each worker drives a slow submission: a kernel or a re-check process below it
            return len(workers) == 2 and all(len(_descendants(w)) >= 2 for w in workers)

        _wait_for(busy, 120, "both workers to drive a slow submission", seen, root)
        _watch(5, seen, root)      # well into the slow work
        assert len(seen) >= 6, seen
        run.send_signal(signum)
        run.wait(timeout=120)
        _, alive = psutil.wait_procs(list(seen), timeout=30)
        left_in_session = [p for p in psutil.process_iter() if _session(p) == run.pid]
        assert alive == [] and left_in_session == [], [p.cmdline()[:3] for p in alive + left_in_session]
    finally:
        for process in [root, *seen]:
            try:
                process.kill()
            except psutil.Error:
                pass
    text = log.read_text()
    assert run.returncode == 130, text[-3000:]
    assert "Traceback" not in text
    stop_line = next(line for line in text.splitlines() if line.startswith("grading stopped"))
    assert stop_line == f"grading stopped: graded {', '.join(QUICK)}; not graded {', '.join(SLOW)}"
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        graded = {s.student.id: s for s in gb.find_assignment(A).submissions}
        assert sorted(graded) == QUICK
        for submission in graded.values():     # complete: every graded cell has its score
            assert all(g.score is not None for nb in submission.notebooks for g in nb.grades)
            assert submission.score == sum(max_scores(A).values())


def _session(process: psutil.Process):
    try:
        return os.getsid(process.pid)
    except OSError:
        return None
