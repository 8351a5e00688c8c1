"""The worker pool's named steps (``course_grader.workers.WorkerPool``), on stand-in processes: what
happens to a student whose worker dies or hangs, and to a pool whose workers cannot start."""

import time

import pytest

from course_grader import workers


class Process:
    """A stand-in for a worker process: alive or not, with an exit code; records being killed."""

    def __init__(self, alive=False, exitcode=1):
        self.alive, self.exitcode, self.killed = alive, exitcode, False

    def is_alive(self):
        return self.alive

    def kill(self):
        self.killed, self.alive = True, False

    def join(self, timeout=None):
        pass


class Tasks(list):
    put = list.append


class Progress:
    def __init__(self):
        self.updates = []

    def update(self, result):
        self.updates.append(result)


def pool_of(count=2, patience=60.0):
    pool = object.__new__(workers.WorkerPool)     # its steps, without processes, queues or gradebooks
    pool.run = workers.WorkerRun("course", "run", "a1", {}, None, True, {})
    pool.count, pool.quiet, pool.patience = count, True, patience
    pool.tasks, pool.processes, pool.forked, pool.running = Tasks(), {}, {}, {}
    pool.graded_by, pool.retried, pool.deaths_at_start = {slot: [] for slot in range(count)}, set(), 0
    pool.started = []
    pool.start = pool.started.append
    return pool


def test_a_student_whose_worker_dies_is_graded_once_more_then_marked_failed():
    pool, finished, progress = pool_of(), {}, Progress()
    pool.processes[0] = Process()
    pool.running[0] = ("ann", time.monotonic())
    pool.replace(0, finished, progress, more=True)
    assert pool.tasks == [("ann", ["the first grading attempt crashed the grader; graded again"])]
    assert pool.started == [0] and finished == {} and 0 not in pool.running

    pool.processes[0] = Process()
    pool.running[0] = ("ann", time.monotonic())
    pool.replace(0, finished, progress, more=False)       # the last student: no new worker
    assert finished["ann"]["status"] == "failed" and "died twice" in finished["ann"]["notes"][0]
    assert progress.updates == [finished["ann"]] and pool.started == [0]


def test_a_worker_that_hangs_past_the_patience_is_killed_and_replaced():
    pool = pool_of(patience=5.0)
    pool.processes = {0: Process(alive=True), 1: Process(alive=True), 2: Process(alive=False)}
    pool.running = {0: ("bob", time.monotonic() - 6.0), 1: ("cy", time.monotonic())}
    assert pool.needing_replacement() == [0, 2]          # hung, and dead; not the one still in time
    pool.replace(0, {}, Progress(), more=True)
    assert pool.processes[0].killed and pool.tasks == [("bob", pool.tasks[0][1])] and pool.started == [0]


def test_workers_that_keep_exiting_as_they_start_stop_the_run(monkeypatch):
    monkeypatch.setattr(workers, "_server_unsafe", None)
    pool = pool_of(count=2)
    for _ in range(2 * pool.count):
        pool.processes[1] = Process(exitcode=3)
        pool.replace(1, {}, Progress(), more=True)
    pool.processes[1] = Process(exitcode=3)
    with pytest.raises(SystemExit, match="exit as they start \\(exit code 3\\)"):
        pool.replace(1, {}, Progress(), more=True)


def test_a_worker_forked_from_an_unsafe_server_makes_later_ones_new_interpreters(monkeypatch):
    monkeypatch.setattr(workers, "_server_unsafe", None)
    pool = pool_of()
    pool.processes[0], pool.forked[0] = Process(exitcode=workers.FORKED_FROM_THREADS_EXIT), True
    assert workers.worker_start_method() == "forkserver"
    pool.replace(0, {}, Progress(), more=True)
    assert workers.worker_start_method() == "spawn" and pool.deaths_at_start == 0 and pool.started == [0]
