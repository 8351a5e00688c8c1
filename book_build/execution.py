"""Executing the book's chapters: a pool of kernels, each on its share of the cores.

Used by :mod:`book_build.build` (which stores the executed chapters in Jupyter
Book's execution cache before Sphinx reads them) and by
:mod:`book_build.claims_run` (which executes the chapters that train under
several seeds).  Chapters run in a pool of kernels, longest first; each kernel
gets its share of the cores (CPUs of its own, where the OS can pin it, and
TensorFlow's and the BLAS libraries' thread counts to match), so that two
kernels on two cores do not fight over them (nor do tf.data's tuning threads:
``notebook.setup()`` turns them off).  A job waits for the jobs in its
``after`` (pages whose models it reuses, :func:`book_build.chapters.shared_models`).
No cell has a time limit; the :mod:`book_build.watchdog` stops one that hangs.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from nbclient import NotebookClient

from .chapters import read_chapter
from .watchdog import CellLimits, HangWatchdog, kernel_pid

#: environment variables that set how many threads a kernel's libraries use
THREAD_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MKL_NUM_THREADS")


@dataclass
class Job:
    """One chapter to execute, with the environment variables its kernel gets."""

    path: Path
    notebook: object = None
    environment: dict[str, str] = field(default_factory=dict)
    expected_seconds: float = 0.0   # for the order: longest first
    after: list = field(default_factory=list)   # jobs that must finish first
    cpus: set[int] | None = None    # the CPUs its kernel may run on (None: any)


@dataclass
class Result:
    job: Job
    seconds: float
    error: str | None    # None: every cell ran without an error
    failed_cell: int | None = None   # the index of the cell that failed (in job.notebook.cells)

    @property
    def name(self) -> str:
        return self.job.path.stem


def usable_cpus() -> list[int]:
    """The CPUs this process may run on (all of them where the OS cannot say)."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def thread_environment(workers: int) -> dict[str, str]:
    """Thread counts that give each of ``workers`` kernels its share of the cores."""
    threads = str(max(1, len(usable_cpus()) // workers))
    return {name: threads for name in THREAD_VARIABLES} | {"TF_NUM_INTEROP_THREADS": "1"}


def cpu_shares(workers: int) -> list[set[int]] | None:
    """Disjoint sets of CPUs, one per kernel; None where kernels cannot be pinned.

    A kernel kept on its own CPUs keeps its caches: left to the scheduler, two
    kernels' threads move between the two cores of a small machine (two
    training runs side by side on 2 cores: 4 % slower steps unpinned).  With
    more kernels than CPUs, or where the OS has no affinity calls (macOS,
    Windows), the scheduler shares them out.
    """
    cpus = usable_cpus()
    if not hasattr(os, "sched_setaffinity") or workers < 2 or workers > len(cpus):
        return None
    size = len(cpus) // workers
    return [set(cpus[i * size:(i + 1) * size]) for i in range(workers)]


#: the longest folder for a kernel's sockets: a Unix socket's path fits in 107 bytes
#: (Linux's sun_path), and jupyter_client names them "kernel-<number>" in it
SOCKET_FOLDER_LIMIT = 107 - len("/kernel-99999")


def socket_folder() -> str:
    """A new folder for one kernel's sockets (and temporary files), short enough for them.

    It goes where ``tempfile`` puts folders ($TMPDIR); a $TMPDIR so deep that
    the socket paths would not fit gets it in /tmp instead (a socket that does
    not fit fails the kernel's start with "File name too long").
    """
    folder = tempfile.mkdtemp(prefix="course-kernel-")
    if len(os.fsencode(folder)) <= SOCKET_FOLDER_LIMIT:
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix="course-kernel-", dir="/tmp")


class WatchedClient(NotebookClient):
    """nbclient's client, telling its :class:`HangWatchdog` when cells run and output arrives."""

    watchdog: HangWatchdog
    running_cell: int | None = None   # the index of the cell that runs (or ran last)

    async def async_execute_cell(self, cell, cell_index, *args, **kwargs):
        if cell.cell_type == "code" and cell.source.strip():
            self.running_cell = cell_index
            self.watchdog.cell_started(cell=cell, cell_index=cell_index)
        try:
            return await super().async_execute_cell(cell, cell_index, *args, **kwargs)
        finally:
            self.watchdog.cell_finished()

    def process_message(self, msg, cell, cell_index):
        self.watchdog.output_seen()
        return super().process_message(msg, cell, cell_index)


def execute(job: Job, limits: CellLimits = CellLimits()) -> Result:
    """Run every cell of ``job.notebook`` (in place) in a fresh kernel in the chapter's folder.

    No cell has a time limit; a :class:`HangWatchdog` with ``limits`` stops a
    cell that hangs or runs away.  On a failure the notebook keeps the outputs
    of the cells that ran, the failing cell's error among them, and
    ``Result.failed_cell`` says which cell it was.
    """
    from nbclient.exceptions import CellExecutionError
    from traitlets.config import Config

    if job.notebook is None:
        job.notebook = read_chapter(job.path)
    from attention_course.chapter_tools.claims import PAGE_VARIABLE

    # The kernel talks to us over Unix sockets in a folder of its own: over TCP, every
    # kernel logs a warning about unencrypted ports, and the sockets' default place
    # is the working directory (the chapters' folder, shared by parallel kernels).
    # The folder is the kernel's TMPDIR too: the kernel is killed (below), so the
    # temporary files it would delete on exit (AutoGraph's generated modules) are
    # deleted with the folder instead of piling up in /tmp.
    sockets = socket_folder()
    environment = os.environ | job.environment | {PAGE_VARIABLE: job.path.stem, "TMPDIR": sockets}
    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = os.path.join(sockets, "kernel")
    # record_timing=False: jupyter-cache hashes the code cells' metadata, and timings
    # stored there would keep Sphinx from finding the executed notebook in the cache.
    # shutdown_kernel="immediate": once the last cell has replied, the kernel is killed
    # rather than asked to exit; TensorFlow's own exit takes seconds and saves nothing
    # (every file a chapter writes, it writes atomically in a cell).
    # timeout=None: no cell has a time limit (the watchdog stops hangs).
    client = WatchedClient(job.notebook, timeout=None, allow_errors=False, record_timing=False,
                           shutdown_kernel="immediate",
                           resources={"metadata": {"path": str(job.path.parent)}}, config=config)
    watchdog = client.watchdog = HangWatchdog(lambda: kernel_pid(client), limits)
    if job.cpus is not None:
        # This thread starts the kernel, which inherits the thread's CPUs (and so
        # does every thread the kernel starts).
        os.sched_setaffinity(0, job.cpus)
    started_at = time.perf_counter()
    error = None
    try:
        with watchdog:
            client.execute(env=environment)
    except CellExecutionError as failure:
        error = str(failure)
    except Exception:  # a dead kernel: say what happened, keep the other chapters going
        error = traceback.format_exc()
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    if error is not None and watchdog.verdict:
        error = f"{watchdog.verdict}\n{error}"
    failed_cell = client.running_cell if error is not None else None
    return Result(job, time.perf_counter() - started_at, error, failed_cell)


#: the terminal's colour codes in an IPython traceback
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def error_summary(error: str | None, lines: int = 20) -> str:
    """The end of a failure's message, without colour codes: what a failed page shows.

    nbclient's message repeats the cell's source before the traceback; the page
    shows the cell itself, so only the traceback's last ``lines`` lines are kept
    (the watchdog's verdict, when it stopped the cell, stays first).
    """
    if not error:
        return ""
    text = ANSI_ESCAPE.sub("", error).strip()
    head = text.splitlines()[0] if text.startswith("cell ") and "watchdog" in text.splitlines()[0] else ""
    tail = text.split("------------------")[-1].strip().splitlines()[-lines:]
    return "\n".join(([head] if head and head not in tail else []) + tail)


def execute_all(jobs: list[Job], workers: int, report=print) -> list[Result]:
    """Execute ``jobs`` in ``workers`` parallel kernels, longest expected first.

    A job starts once the jobs in its ``after`` have finished (or were never
    among ``jobs``).  ``report(line)`` is called as each chapter finishes.  Every
    job runs, even after a failure, so that one build reports every failing
    chapter.
    """
    pending = sorted(jobs, key=lambda job: -job.expected_seconds)
    threads = thread_environment(workers)
    for job in pending:
        job.environment = threads | job.environment
    free_shares = cpu_shares(workers) or [None] * workers   # one per running kernel
    results, running = [], {}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while pending or running:
            unfinished = {id(job) for job in pending} | {id(job) for job in running.values()}
            for job in list(pending):
                if len(running) < workers and not {id(a) for a in job.after} & unfinished:
                    pending.remove(job)
                    job.cpus = free_shares.pop()
                    running[pool.submit(execute, job)] = job
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                free_shares.append(running.pop(future).cpus)
                result = future.result()
                results.append(result)
                status = "ok" if result.error is None else "FAILED"
                report(f"  {result.name}: {result.seconds:.0f} s, {status}")
    return results


def cpu_name() -> str:
    """The machine's CPU, as the tables that ``make claims`` and ``make tune`` write record it."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()
