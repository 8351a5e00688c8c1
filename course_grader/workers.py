"""Grading in parallel: one worker process per core (one more for a big batch), each with its own
shard of the gradebook.

nbgrader's SQLite gradebook is not safe for concurrent writers, so each worker
grades into a copy ("shard") and :func:`run_workers`, the one writer, merges
each student into the course's gradebook as soon as a worker has graded them.
A worker that dies or hangs on a submission is replaced and the submission
graded once more; twice, and it is marked failed.

Stopping the grader (Ctrl-C, SIGTERM) stops every process it started: each
worker, told with SIGTERM, kills its own descendants (kernels, sandboxes,
re-check processes, whatever session they run in) and exits; the grader then
kills whatever is left of the workers' trees, and merges the students that
were graded in full.  The others are reported as not graded.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from . import limits as default_limits
from . import nbgrader_patches, sandbox
from .gradebook import GradebookMerger, copy_student_folders, points_to_grade_by_hand
from .intake import write_blank
from .nbgrader_api import make_api
from .progress import Progress
from .report import GradingReport, report_file, terminal_text


@dataclass
class Result:
    student: str
    status: str = "graded"         # graded | unreadable (graded as the blank) | failed | not graded (stopped)
    score: float = 0.0
    max_score: float = 0.0
    manual_points: float = 0.0     # of max_score, points in cells graded by hand (the formgrader)
    to_grade_by_hand: float = 0.0  # of manual_points, those no one has graded yet (score counts them as 0)
    seconds: float = 0.0
    flags: list = field(default_factory=list)
    events: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    feedback: list = field(default_factory=list)   # the feedback pages, one per notebook
    diagnoses: list = field(default_factory=list)  # "test: mistake" named in the feedback (mistakes.py)
    time_limits: int = 0           # cells that reached a time limit (a cell's, the notebook's, the re-check's)


#: The grading report's events that say a time limit, not the student's code, ended a cell
TIME_LIMIT_EVENTS = frozenset({"cell_timeout", "kernel_unresponsive", "budget"})

#: Submissions per core from which one more worker than cores pays (see :func:`worker_count`)
EXTRA_WORKER_FROM = 10


def worker_count(requested: int | None, submissions: int, cores: int | None = None) -> int:
    """How many workers grade ``submissions``: ``requested`` if given, else one per core, and one
    more for a batch of at least :data:`EXTRA_WORKER_FROM` submissions per core.

    A worker spends about a third of its time waiting for its sandboxed kernel and re-check
    process, so one per core leaves the cores idle now and then; another worker fills those gaps,
    but costs its start (a fork of the warm server, its zygote, a first submission with cold
    caches) and its memory.  Measured on 2 cores: 8 and 16 submissions about as fast with 2
    workers as with 3, 24 faster with 3 (by 11-16%), and 96 and 200 faster with 3."""
    cores = cores or os.cpu_count() or 1
    if requested:
        count = requested
    else:
        count = cores + (1 if submissions >= EXTRA_WORKER_FROM * cores else 0)
    return max(1, min(count, submissions))


def start_worker_server():
    """Start the process the workers are forked from, if it is not running: it warms up (imports,
    compiles; :mod:`course_grader.worker_warmup`) while this process prepares the assignment."""
    from multiprocessing import forkserver

    multiprocessing.get_context("forkserver").set_forkserver_preload([WARM_UP_MODULE])
    forkserver.ensure_running()


#: The module the workers' server imports once, before it forks any worker
WARM_UP_MODULE = "course_grader.worker_warmup"
#: A worker's exit status when it finds itself forked from a server that runs threads
#: (``worker_warmup.FORK_UNSAFE``); the command then starts its workers as new interpreters
FORKED_FROM_THREADS_EXIT = 75
#: Set once a worker has found the server unsafe to fork from: this process starts workers with spawn
_server_unsafe: str | None = None


def worker_start_method() -> str:
    """How workers start: forked from the warm server, or as new interpreters where it is unsafe."""
    return "spawn" if _server_unsafe else "forkserver"


@dataclass(frozen=True)
class WorkerRun:
    """What every worker of one grading run is given (a slot's shard and log follow from its number)."""

    course_dir: str           # the course directory: the graded go there
    run_dir: str              # this run's scratch folder: the workers' shards (shard-<slot>)
    assignment: str
    releases: dict            # notebook name -> its release notebook (paths as text)
    config: object            # the run's nbgrader configuration
    feedback: bool            # write the feedback pages
    environment: dict         # the grading command's environment, which every worker takes

    def shard(self, slot: int) -> Path:
        return Path(self.run_dir) / f"shard-{slot}"

    def log(self, slot: int) -> Path:
        return Path(self.course_dir) / "logs" / f"grade-{self.assignment}-worker{slot}.log"


def worker(run: WorkerRun, slot: int, forked: bool, tasks, results):
    """One worker: grade the students ``tasks`` hands out into the slot's shard, and say so in ``results``
    (``forked``: it was forked from the workers' server, which it first checks is safe to fork from)."""
    server = sys.modules.get(WARM_UP_MODULE) if forked else None   # forked: from the workers' server
    if server is not None and server.FORK_UNSAFE:
        with open(run.log(slot), "a") as log:        # and nothing else: another thread's lock may be held
            log.write(f"=== not started from the workers' server: {server.FORK_UNSAFE}\n")
        os._exit(FORKED_FROM_THREADS_EXIT)
    # The server it was forked from keeps the environment of its own start (an earlier run's):
    # the worker takes the grading command's, as a new process would.
    os.environ.clear()
    os.environ.update(run.environment)
    os.environ[f"{sandbox.ENV_PREFIX}_SLOT"] = str(slot)
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    log = open(run.log(slot), "a", buffering=1)
    os.dup2(log.fileno(), 2)         # kernels' and nbgrader's own noise goes to the log, not the terminal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    signal.signal(signal.SIGTERM, _stop_worker)   # ... and stops the workers with SIGTERM
    shard_dir, course = run.shard(slot), Path(run.course_dir)
    nbgrader_patches.for_workers()
    api = make_api(run.config, shard_dir)
    zygote = sandbox.Zygote.start(slot)   # every kernel and re-check of this worker forks from it
    while True:
        task = tasks.get()
        if task is None:
            if zygote is not None:
                zygote.close()
            return
        student, notes = task
        results.put(("started", student, slot))
        started = time.monotonic()
        result = grade_one(api, shard_dir, course, run.assignment, run.releases, student, notes, run.feedback, log)
        result.seconds = round(time.monotonic() - started, 2)
        results.put(("done", asdict(result), slot))


def kill_all(processes: list[psutil.Process], timeout: float = 10.0):
    """SIGKILL ``processes`` (psutil checks each is still the process it was) and wait for them."""
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(processes, timeout=timeout)


def _stop_worker(signum, frame):
    """Everything this worker started goes with it: kernels and re-check processes run in
    sessions of their own, so only their ancestry ties them to the worker."""
    kill_all(psutil.Process().children(recursive=True))
    os._exit(128 + signum)


def grade_one(api, shard: Path, course: Path, assignment: str, releases: dict, student: str,
              notes: list, feedback: bool, log) -> Result:
    """Autograde one student's notebooks of ``assignment`` (``releases``: name -> released notebook)."""
    from nbgrader.api import Gradebook

    result = Result(student, notes=list(notes))
    if any(n.startswith("unreadable") for n in notes):
        result.status = "unreadable"
    submitted = shard / "submitted" / student / assignment
    if submitted.exists():
        shutil.rmtree(submitted)
    shutil.copytree(course / "submitted" / student / assignment, submitted)
    outcome = api.autograde(assignment, student, force=True, create=True)
    log.write(f"=== autograde {student}\n{outcome.get('log', '')}\n{outcome.get('error', '') or ''}\n")
    if not outcome["success"]:
        # nbgrader itself could not process the files (e.g. broken nbgrader metadata):
        # grade the blank exercise so that the student gets 0 and a clear note.
        error = (outcome.get("error") or "").strip().splitlines()
        reason = error[-1][:300] if error else "nbgrader failed"
        result.status = "unreadable"     # graded: 0 points, with a note; "failed" is for the run
        result.notes.append(f"nbgrader could not grade this submission ({reason}); graded as the blank exercise")
        shutil.rmtree(submitted)
        submitted.mkdir(parents=True)
        for name, release in releases.items():
            write_blank(Path(release), submitted / f"{name}.ipynb", [
                "The notebook you handed in could not be graded "
                f"({reason}). It was graded as the unchanged exercise, which scores 0 points."])
        outcome = api.autograde(assignment, student, force=True, create=True)
        log.write(f"=== autograde blank {student}\n{outcome.get('log', '')}\n")
        if not outcome["success"]:
            result.status = "failed"
            result.notes.append("grading the blank exercise failed too; see the log")
            return result
    several = len(releases) > 1
    for name in releases:
        report_path = report_file(shard / "autograded" / student / assignment, name)
        if report_path.exists():
            report = GradingReport.read(report_path)
            where = f"{name}: " if several else ""
            result.flags += [where + flag for flag in report.flags]
            result.events += [f"{where}{e.grade_id or e.cell}: {e.message}" for e in report.events]
            result.time_limits += sum(e.kind in TIME_LIMIT_EVENTS for e in report.events)
            result.diagnoses += [f"{where}{d.grade_id}: {', '.join(d.mistakes)}" for d in report.diagnoses]
    with Gradebook(api.coursedir.db_url) as gb:
        submission = gb.find_submission(assignment, student)
        result.score, result.max_score = submission.score, submission.max_score
        result.manual_points = sum(g.max_score for nb in submission.notebooks for g in nb.grades
                                   if g.auto_score is None)
        result.to_grade_by_hand = points_to_grade_by_hand(submission)
    if feedback:
        outcome = api.generate_feedback(assignment, student, force=True)
        if outcome["success"]:
            result.feedback = [str(Path("feedback") / student / assignment / f"{name}.html") for name in releases]
        else:
            result.notes.append("feedback could not be generated; see the log")
            log.write(f"=== feedback {student}\n{outcome.get('log', '')}\n{outcome.get('error', '')}\n")
    return result


class WorkerPool:
    """The workers of one run, in four named steps: :meth:`start` a slot's worker, :meth:`bring_home` a
    student it graded, :meth:`replace` a worker that died or hangs, :meth:`stop` them all.

    Workers are forks of a server process, never of this one: a worker forked from a process that
    has run threads (TensorFlow's pools, kernels' ZeroMQ, a browser driver: an instructor's
    notebook, a test run) inherits their locks and state half-copied; forked from the test suite's
    processes, workers died (SIGABRT, SIGSEGV) on a few submissions of a run.  The server is a
    fresh interpreter that runs no thread; it imports and warms up once what each new interpreter
    did before its first student (3 workers grading 3 submissions: 9 core-s, not 25).  Where
    something has started a thread in the server (a sitecustomize, say), its forks exit at once
    (:data:`FORKED_FROM_THREADS_EXIT`) and every worker from then on starts as a new interpreter.
    """

    def __init__(self, run: WorkerRun, count: int, students: list, quiet: bool, patience: float):
        self.run, self.count, self.quiet, self.patience = run, count, quiet, patience
        queues = multiprocessing.get_context(worker_start_method())
        self.tasks, self.results = queues.Queue(), queues.Queue()
        self.processes: dict[int, multiprocessing.Process] = {}
        self.forked: dict[int, bool] = {}      # slot -> its worker was forked from the workers' server
        self.running: dict[int, tuple] = {}    # slot -> (student, when it started)
        self.graded_by: dict[int, list[str]] = {slot: [] for slot in range(count)}
        self.retried: set[str] = set()
        # Workers that died holding no submission since one last took a submission: each is replaced,
        # but workers that cannot start at all (a broken environment) would be replaced for ever.
        self.deaths_at_start = 0
        course_dir = Path(run.course_dir)
        (course_dir / "logs").mkdir(exist_ok=True)
        for slot in range(count):
            run.shard(slot).mkdir()
            shutil.copyfile(course_dir / "gradebook.db", run.shard(slot) / "gradebook.db")
        for student, notes in students:
            self.tasks.put((student, notes))
        # One writer, this process: each student goes into the course's gradebook (and their notebooks
        # and feedback into the course directory) as soon as a worker has graded them.
        self.merger = GradebookMerger(f"sqlite:///{course_dir / 'gradebook.db'}", copies=True)  # shards: copies

    def start(self, slot: int) -> None:
        """Start the worker of ``slot`` (forked from the warm server, or a new interpreter)."""
        method = worker_start_method()
        self.forked[slot] = method == "forkserver"
        process = multiprocessing.get_context(method).Process(
            target=worker, daemon=True, args=(self.run, slot, self.forked[slot], self.tasks, self.results))
        process.start()
        self.processes[slot] = process

    def bring_home(self, slot: int, student: str) -> None:
        """Merge ``student``, graded by ``slot``'s worker, into the course's gradebook and folders."""
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:       # a stop waits for the student being merged: none is half in the gradebook
            shard, course_dir = self.run.shard(slot), Path(self.run.course_dir)
            self.merger.merge(f"sqlite:///{shard / 'gradebook.db'}", self.run.assignment, [student])
            copy_student_folders(shard, course_dir, self.run.assignment, [student], ("autograded", "feedback"))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        self.graded_by[slot].append(student)

    def replace(self, slot: int, finished: dict, progress, more: bool) -> None:
        """``slot``'s worker died, or hangs: its student (if any) is graded once more, or marked failed
        the second time; a worker forked from an unsafe server makes every later one a new interpreter;
        and a new worker takes the slot while ``more`` students are left."""
        global _server_unsafe
        process = self.processes[slot]
        if process.is_alive():
            process.kill()
        process.join(timeout=5)
        if slot in self.running:   # the worker died or hung with a submission in hand
            student = self.running.pop(slot)[0]
            if student in self.retried:
                finished[student] = asdict(Result(student, status="failed", notes=[
                    "the grading worker died twice on this submission; not graded"]))
                progress.update(finished[student])
            else:
                self.retried.add(student)
                self.tasks.put((student, ["the first grading attempt crashed the grader; graded again"]))
        elif process.exitcode == FORKED_FROM_THREADS_EXIT and self.forked[slot]:
            if not _server_unsafe and not self.quiet:
                print(f"grading workers start as new interpreters (slower): the process they are "
                      f"forked from runs threads; see {self.run.log(slot)}", file=sys.stderr, flush=True)
            _server_unsafe = str(self.run.log(slot))
        else:
            self.deaths_at_start += 1
            if self.deaths_at_start > 2 * self.count:
                raise SystemExit(
                    f"the grading workers exit as they start (exit code {process.exitcode}), before "
                    f"grading anything: see the messages above and {self.run.log(slot)}")
        if more:
            self.start(slot)

    def needing_replacement(self) -> list[int]:
        """The slots whose worker has died, or has held one submission longer than the patience."""
        now = time.monotonic()
        return [slot for slot, process in self.processes.items()
                if not process.is_alive() or (slot in self.running and now - self.running[slot][1] > self.patience)]

    def stop(self) -> None:
        """Stop every worker and everything it started (Ctrl-C, SIGTERM; see the module's docstring)."""
        stop_workers(list(self.processes.values()))

    def close(self) -> None:
        """Let the workers finish (each told there is nothing more), kill any that will not, and close."""
        for _ in self.processes:
            self.tasks.put(None)
        for process in self.processes.values():
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
        self.merger.close()


def run_workers(submissions, config, course_dir, run_dir, assignment, releases: dict, workers,
                feedback, quiet, phase=lambda name: None) -> dict:
    """Grade ``submissions`` in a :class:`WorkerPool`; returns ``{student: Result as a dict}``."""
    if worker_start_method() == "forkserver":
        start_worker_server()
    count = worker_count(workers, len(submissions))
    run = WorkerRun(str(course_dir), str(run_dir), assignment, {k: str(v) for k, v in releases.items()}, config,
                    feedback, dict(os.environ))
    patience = float(config.GradingLimits.get("notebook_timeout", default_limits.NOTEBOOK_SECONDS)) * 3 \
        + default_limits.WORKER_SILENCE_SLACK_SECONDS
    pool = WorkerPool(run, count, [(sub.student, sub.notes) for sub in submissions], quiet, patience)
    progress = Progress(len(submissions), quiet)
    finished: dict[str, dict] = {}
    stopped = False
    try:
        for slot in range(count):
            pool.start(slot)
        progress.show()
        while len(finished) < len(submissions):
            try:
                kind, payload, slot = pool.results.get(timeout=1.0)
            except Exception:  # queue.Empty
                kind = None
            if kind == "started":
                pool.running[slot] = (payload, time.monotonic())
                pool.deaths_at_start = 0
            elif kind == "done":
                finished[payload["student"]] = payload
                pool.running.pop(slot, None)
                pool.bring_home(slot, payload["student"])
                progress.update(payload)
            for slot in pool.needing_replacement():
                pool.replace(slot, finished, progress, more=len(finished) < len(submissions))
    except KeyboardInterrupt:      # Ctrl-C, or SIGTERM (the command turns it into this)
        stopped = True
        # A second signal must not cut the clean-up short.
        handlers = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
        pool.stop()
    finally:
        pool.close()
        progress.show(final=True)
    for sub in submissions:
        if sub.student not in finished:
            finished[sub.student] = asdict(Result(sub.student, status="not graded", notes=[
                "grading was stopped before this submission was graded"]))
    if stopped:
        graded = sorted(s for students in pool.graded_by.values() for s in students)   # in the gradebook
        ungraded = sorted(set(finished) - set(graded))
        print(terminal_text(f"grading stopped: graded {', '.join(graded) or 'nobody'}; "
                            f"not graded {', '.join(ungraded) or 'nobody'}"), file=sys.stderr, flush=True)
    phase("grade in parallel (each student merged as graded)")
    if stopped:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return finished


def stop_workers(workers: list, timeout: float = 15.0):
    """Stop the workers and everything they started (see the module's docstring)."""
    tree = []
    for worker_process in workers:
        try:
            root = psutil.Process(worker_process.pid)
            tree += [root, *root.children(recursive=True)]
        except (psutil.Error, ValueError, TypeError):
            pass
    for worker_process in workers:
        if worker_process.is_alive():
            worker_process.terminate()
    worker_pids = {w.pid for w in workers}
    psutil.wait_procs([p for p in tree if p.pid in worker_pids], timeout=timeout)
    kill_all(tree)      # whatever a worker could not stop, or started after it was asked to stop
