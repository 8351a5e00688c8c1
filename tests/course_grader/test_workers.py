"""Grading workers start clean, whatever the grading process did before."""

import json
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import psutil

from grading_support import ROOT, graded_batch, max_scores, solved_notebook
from worker_peaks import FORK_SERVER

A = "a1_softmax_additive"


def test_grading_from_a_process_that_has_trained_with_keras(tmp_path_factory, monkeypatch):
    """An instructor's notebook (or a test run) that trained with Keras, then grades.

    The workers are never forks of this process: forked from pytest processes
    that had run TensorFlow, kernels and a browser, workers died (SIGABRT,
    SIGSEGV) on a few submissions in two of three runs of the whole suite,
    which then came back "failed".  They are forks of multiprocessing's
    forkserver, a new interpreter that runs no thread.  (A fork after this
    test's own training did not crash here: the assertions on the start
    method and on the server are what fail if workers are forked from here.)
    """
    import keras

    x = np.random.default_rng(0).normal(size=(512, 8)).astype("float32")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    model.fit(x, x.sum(axis=1), batch_size=32, epochs=2, verbose=0)   # TensorFlow's threads now exist

    methods = []
    get_context = multiprocessing.get_context

    def recording(method=None):
        methods.append(method)
        return get_context(method)

    monkeypatch.setattr(multiprocessing, "get_context", recording)
    report = graded_batch(tmp_path_factory, "after-keras", A,
                          {f"student-{i}": solved_notebook(A) for i in range(4)})
    assert set(methods) == {"forkserver"}
    [server] = [p for p in psutil.Process().children() if any(FORK_SERVER in part for part in p.cmdline())]
    assert server.num_threads() == 1
    assert report["failed"] == 0, [r["notes"] for r in report["results"]]
    full = sum(max_scores(A).values())
    assert [r["score"] for r in report["results"]] == [full] * 4


def test_one_worker_per_core_and_one_more_for_a_big_batch():
    from course_grader.workers import EXTRA_WORKER_FROM, worker_count

    big = EXTRA_WORKER_FROM * 2
    assert [worker_count(None, n, cores=2) for n in (1, 2, 8, big - 1, big, 300)] == [1, 2, 2, 2, 3, 3]
    assert worker_count(None, 1000, cores=8) == 9 and worker_count(None, 8 * EXTRA_WORKER_FROM - 1, cores=8) == 8
    assert worker_count(5, 300, cores=2) == 5 and worker_count(5, 3, cores=2) == 3   # as asked, never idle


def test_the_workers_server_warms_up_without_starting_a_thread():
    """What the server forks holds no thread's lock: its warm-up (imports, the feedback page's
    templates compiled, the validators built) runs in the server's one thread, and leaves it so."""
    script = """
import json, os, sys
from course_grader import worker_warmup
import jinja2
caches = [c for c in jinja2.BytecodeCache.__subclasses__() if getattr(c, "store", None)]
print(json.dumps({"failed": worker_warmup.WARM_UP_FAILED, "threads": len(os.listdir("/proc/self/task")),
                  "compiled templates": sum(len(c.store) for c in caches),
                  "imported": all(m in sys.modules for m in ("nbgrader.converters.autograde",
                                                           "nbconvert.exporters.html", "sqlalchemy.orm"))}))
"""
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    facts = json.loads(run.stdout.strip().splitlines()[-1])
    assert facts["failed"] is None and facts["threads"] == 1 and facts["imported"], facts
    assert facts["compiled templates"] >= 4, facts    # the page's template and those it extends


def test_workers_that_cannot_start_stop_the_run_with_a_message(tmp_path):
    """A worker that dies is replaced; workers that die as they start, every time, end the run
    with a message instead of being replaced for ever.  Here they cannot start because the
    grading script is read from standard input, which a new worker cannot read again."""
    script = f"""
from pathlib import Path
from grading_support import write, solved_notebook
from course_grader import grade
for student in ("ada", "bo"):
    write(solved_notebook({A!r}), Path({str(tmp_path / "inbox")!r}) / f"{{student}}.ipynb")
grade.grade(Path({str(tmp_path / "inbox")!r}), {A!r}, Path({str(tmp_path / "course")!r}), workers=2, quiet=True,
            config_file=Path({str(ROOT / "nbgrader_config.py")!r}))
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    run = subprocess.run([sys.executable, "-"], input=script, cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode != 0
    assert "the grading workers exit as they start (exit code 1), before grading anything" in run.stderr, \
        run.stderr[-3000:]
