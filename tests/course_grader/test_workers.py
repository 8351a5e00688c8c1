"""Grading workers start as fresh interpreters, whatever the grading process did before."""

import multiprocessing

import numpy as np

from grading_support import graded_batch, max_scores, solved_notebook

A = "a1_softmax_additive"


def test_grading_from_a_process_that_has_trained_with_keras(tmp_path_factory, monkeypatch):
    """An instructor's notebook (or a test run) that trained with Keras, then grades.

    The workers are new interpreters (``spawn``), not forks of this process:
    forked from pytest processes that had run TensorFlow, kernels and a
    browser, workers died (SIGABRT, SIGSEGV) on a few submissions in two of
    three runs of the whole suite, which then came back "failed".  (A fork
    after this test's own training did not crash here: the assertion on the
    start method is what fails if workers are forked again.)
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
    assert methods == ["spawn"]
    assert report["failed"] == 0, [r["notes"] for r in report["results"]]
    full = sum(max_scores(A).values())
    assert [r["score"] for r in report["results"]] == [full] * 4


def test_one_worker_per_core_and_one_more_for_a_big_batch():
    from course_grader.workers import EXTRA_WORKER_FROM, worker_count

    big = EXTRA_WORKER_FROM * 2
    assert [worker_count(None, n, cores=2) for n in (1, 2, 24, big - 1, big, 300)] == [1, 2, 2, 2, 3, 3]
    assert worker_count(None, 1000, cores=8) == 9 and worker_count(None, 100, cores=8) == 8
    assert worker_count(5, 300, cores=2) == 5 and worker_count(5, 3, cores=2) == 3   # as asked, never idle
