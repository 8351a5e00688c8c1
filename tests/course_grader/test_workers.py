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
grade.grade(Path({str(tmp_path / "inbox")!r}), {A!r}, course_dir=Path({str(tmp_path / "course")!r}), workers=2, quiet=True,
            config_file=Path({str(ROOT / "nbgrader_config.py")!r}))
"""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    run = subprocess.run([sys.executable, "-"], input=script, cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode != 0
    assert "the grading workers exit as they start (exit code 1), before grading anything" in run.stderr, \
        run.stderr[-3000:]


#: Started at interpreter start-up (a sitecustomize): a thread of the kind ``threading`` does not count
NATIVE_THREAD = """
import _thread, time
_thread.start_new_thread(time.sleep, (3600,))
"""


def test_threads_are_counted_with_the_native_ones():
    script = """
import json, threading
from course_grader.worker_warmup import threads_running
before = threads_running()
""" + NATIVE_THREAD + """
time.sleep(0.2)
print(json.dumps([before, threads_running(), threading.active_count()]))
"""
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    before, after, python_threads = json.loads(run.stdout.strip().splitlines()[-1])
    assert (before, after, python_threads) == (1, 2, 1)


def test_workers_start_as_new_interpreters_where_the_server_runs_a_thread(tmp_path):
    """Something started a thread in every new interpreter (here a sitecustomize): the server's
    forks would inherit its locks half-held.  Workers find it, exit at once, and the command grades
    with workers started as new interpreters, saying so."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NATIVE_THREAD)
    script = tmp_path / "grade_two.py"
    script.write_text(f"""
import json
from pathlib import Path
from grading_support import write, solved_notebook
from course_grader import grade
from course_grader.worker_warmup import FORK_UNSAFE
for student in ("ada", "bo"):
    write(solved_notebook({A!r}), Path({str(tmp_path / "inbox")!r}) / f"{{student}}.ipynb")
if __name__ == "__main__":
    report = grade.grade(Path({str(tmp_path / "inbox")!r}), {A!r}, course_dir=Path({str(tmp_path / "course")!r}),
                         workers=2, config_file=Path({str(ROOT / "nbgrader_config.py")!r}))
    print(json.dumps({{"scores": [r["score"] for r in report["results"]], "unsafe": FORK_UNSAFE}}))
""")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT), str(ROOT / "tests")]))
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["unsafe"] and "threads, not one" in outcome["unsafe"]   # this process too runs the thread
    assert outcome["scores"] == [sum(max_scores(A).values())] * 2
    assert "grading workers start as new interpreters (slower)" in run.stderr, run.stderr[-3000:]
    logs = "".join(p.read_text() for p in (tmp_path / "course" / "logs").glob("grade-*-worker*.log"))
    assert "not started from the workers' server: the process the workers are forked from runs" in logs
