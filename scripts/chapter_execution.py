"""Execute the book's chapters in parallel, each keyed by exactly what it depends on.

Used by ``build_book.py`` (which stores the executed chapters in Jupyter
Book's execution cache before Sphinx reads them) and by ``check_claims.py``
(which executes the chapters that train under several seeds).

* **Reading.** A chapter is read into a notebook by myst-nb's own reader, with
  the book's Markdown settings, so that the notebook executed here hashes like
  the one Sphinx reads and finds in the cache.
* **Keys.** A chapter's key hashes its code cells, the source of every module
  of ``attention_course`` it imports (directly or through other modules), the
  package data next to them, ``requirements.txt`` and the course seed.  A
  rebuild re-executes a chapter when its key changed, and only then: editing
  ``plotting.py`` re-executes the chapters that import it, not the others.
* **Parallel.** Chapters run in a pool of kernels, longest first; each kernel
  gets its share of the cores (CPUs of its own, where the OS can pin it, and
  TensorFlow's and the BLAS libraries' thread counts to match), so that two
  kernels on two cores do not fight over them (nor do
  tf.data's tuning threads: ``notebook.setup()`` turns them off).  A
  page that reuses a model an earlier page trains (chapter 3 compares
  against chapter 1's translator, through ``experiments.rnn_translator``;
  chapter 14's second page reuses its first page's ViT, through
  ``digit_classifiers.vision_transformer``) starts after that page, so that it loads the model instead of waiting
  for it or training it twice.
* **Hangs, not slowness.**  No cell has a time limit: a CPU three times
  slower than ours, or a machine busy with other work, only makes a cell take
  longer.  A :class:`HangWatchdog` watches the kernel instead and stops a cell
  that is *hung* (its kernel, with everything it started, has used almost no
  CPU for :attr:`CellLimits.idle_seconds`) or *runs away* (it has used more
  CPU than :attr:`CellLimits.cpu_seconds`, far beyond any chapter's longest
  cell on a slow CPU): it interrupts the kernel, and kills it if the
  interrupt does not end the cell.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
sys.path.insert(0, str(ROOT))   # the repository's package, even where another is installed
from attention_course.training.dependencies import module_closure  # noqa: E402

#: environment variables that set how many threads a kernel's libraries use
THREAD_VARIABLES = ("TF_NUM_INTRAOP_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                    "MKL_NUM_THREADS")


def markdown_config():
    """The MyST parser settings of the book (``parse:`` in ``_config.yml``)."""
    import yaml
    from myst_parser.config.main import MdParserConfig

    config = yaml.safe_load((BOOK / "_config.yml").read_text())
    extensions = config.get("parse", {}).get("myst_enable_extensions", [])
    return MdParserConfig(enable_extensions=set(extensions))


def read_chapter(path: Path):
    """The chapter ``path`` (MyST Markdown) as the notebook myst-nb reads it."""
    from myst_nb.core.read import read_myst_markdown_notebook

    return read_myst_markdown_notebook(path.read_text(), config=markdown_config(),
                                       add_source_map=True, path=str(path))


# --- what a chapter depends on -------------------------------------------------------

def dependencies(sources: list[str]) -> list[Path]:
    """The package files that code ``sources`` depends on: modules, their packages, data files.

    The modules are those :func:`attention_course.training.dependencies.module_closure`
    finds (the walker the model cache uses too: imports anywhere, relative ones
    resolved, packages on the way), plus the data files (anything not ``.py``)
    in their folders.
    """
    modules = module_closure(sources, root=ROOT)
    files = set(modules.values())
    for folder in {path.parent for path in modules.values()}:
        files.update(p for p in folder.iterdir()
                     if p.is_file() and p.suffix not in (".py", ".pyc"))
    return sorted(files)


def code_sources(notebook) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def chapter_key(path: Path, notebook, environment: dict[str, str]) -> str:
    """Hash of what the chapter's outputs depend on (see the module docstring).

    The package files count by their bytes, not by their syntax trees without
    docstrings (as a trained model's key in ``training/cache.py`` does): a page
    prints source code (``show_source``), docstrings and comments included, and
    its outputs change with them; a model's weights do not.
    """
    sources = code_sources(notebook)
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.encode() + b"\0")
    for dependency in [*dependencies(sources), ROOT / "requirements.txt",
                       ROOT / "requirements-nodeps.txt"]:
        digest.update(str(dependency.relative_to(ROOT)).encode() + b"\0" + dependency.read_bytes())
    for name in sorted(environment):
        digest.update(f"{name}={environment[name]}\0".encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def training_modules() -> list[str]:
    """The modules of ``attention_course.training`` that train models for chapters
    (through ``trained_model``): ``experiments``, and one module per chapter's experiment."""
    folder = ROOT / "attention_course" / "training"
    return sorted(path.stem for path in folder.glob("*.py")
                  if path.stem != "cache" and "trained_model(" in path.read_text(encoding="utf-8"))


#: a call of a function of a training module (``experiments.rnn_translator(``), which trains
#: a model or loads it
TRAINING_CALL = re.compile(rf"\b((?:{'|'.join(map(re.escape, training_modules()))})\.\w+)\(")
#: training-module functions that only make data
DATA_ONLY = {"experiments.translation_data"}


def shared_models(paths: list[Path]) -> dict[Path, set[Path]]:
    """``{chapter: earlier chapters that train models it reuses}``, ``paths`` in reading order.

    Two pages that call the same function of a training module
    (``experiments.rnn_translator(...)``, ``digit_classifiers.vision_transformer(...)``)
    share its cached models: the later one runs after the earlier one.
    """
    seen: dict[str, list[Path]] = {}
    needs = {}
    for path in paths:
        called = set(TRAINING_CALL.findall(path.read_text())) - DATA_ONLY
        needs[path] = {earlier for name in called for earlier in seen.get(name, [])}
        for name in called:
            seen.setdefault(name, []).append(path)
    return needs


# --- executing --------------------------------------------------------------------

@dataclass(frozen=True)
class CellLimits:
    """When a running cell counts as hung or runaway (see :class:`HangWatchdog`).

    The chapters' longest cell uses about a minute of CPU on our machine, three
    on a CPU three times slower; a machine busy with other work stretches the
    wall time, not the CPU time.  So the limits are on CPU, never on wall time:
    a cell that computes, however slowly, is never stopped.
    """

    idle_seconds: float = 300.0   # this long with (almost) no CPU used: hung
    idle_cpu_seconds: float = 1.0  # "almost no CPU": under a third of a percent of a core
    cpu_seconds: float = 3600.0   # CPU one cell may use: a loop that never ends
    grace_seconds: float = 30.0   # after the interrupt, before the kernel is killed
    poll_seconds: float = 2.0


def cpu_seconds_of(pid: int) -> float:
    """CPU time (user + system, s) used by process ``pid`` and every process it started."""
    import psutil

    total = 0.0
    try:
        process = psutil.Process(pid)
        family = [process, *process.children(recursive=True)]
    except psutil.Error:
        return total
    for member in family:
        try:
            times = member.cpu_times()
            # children that have exited were counted by their parent's children_* times
            total += times.user + times.system + times.children_user + times.children_system
        except psutil.Error:
            pass
    return total


class HangWatchdog:
    """Stops a kernel's cell that is hung or runs away; lets a slow one finish.

    nbclient calls :meth:`cell_started` and :meth:`cell_finished` (its
    ``on_cell_execute`` and ``on_cell_executed`` hooks); a thread samples the
    kernel's CPU time every ``limits.poll_seconds``.  A cell whose kernel used
    under ``idle_cpu_seconds`` and sent no output in the last ``idle_seconds``
    is hung (waiting on something that never comes: a lock, a sleep, input);
    one that used more
    than ``cpu_seconds`` in all runs away.  Either way the kernel is sent
    SIGINT (the cell ends with ``KeyboardInterrupt``) and, if it is still in
    the cell ``grace_seconds`` later, SIGKILL (nbclient then reports a dead
    kernel).  :attr:`verdict` says which and why, for the build's error message.
    """

    def __init__(self, kernel_pid, limits: CellLimits = CellLimits()):
        self._kernel_pid = kernel_pid   # a callable: the kernel starts after the watchdog
        self.limits = limits
        self.verdict: str | None = None
        self._cell = None         # (index, start time, CPU at start, samples) of the running cell
        self._last_output = 0.0   # when the kernel last sent output (monotonic)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="hang-watchdog", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def cell_started(self, cell=None, cell_index=None, **_):
        pid = self._kernel_pid()
        cpu = cpu_seconds_of(pid) if pid else 0.0
        with self._lock:
            self._cell = (cell_index, time.monotonic(), cpu, [(time.monotonic(), cpu)])

    def cell_finished(self, **_):
        with self._lock:
            self._cell = None

    def output_seen(self):
        """The kernel sent output (a progress line, a figure): it is not hung."""
        self._last_output = time.monotonic()

    def _watch(self):
        while not self._stop.wait(self.limits.poll_seconds):
            with self._lock:
                running = self._cell
            pid = self._kernel_pid()
            if running is None or not pid:
                continue
            index, started, cpu_at_start, samples = running
            now, cpu = time.monotonic(), cpu_seconds_of(pid)
            samples.append((now, cpu))
            while len(samples) > 1 and samples[1][0] <= now - self.limits.idle_seconds:
                samples.pop(0)    # keep the newest sample at least idle_seconds old
            window_start, window_cpu = samples[0]
            if now - window_start >= self.limits.idle_seconds and \
                    cpu - window_cpu < self.limits.idle_cpu_seconds and \
                    now - self._last_output >= self.limits.idle_seconds:
                self._stop_cell(pid, index, f"hung: its kernel used {cpu - window_cpu:.1f} s of CPU "
                                            f"in the last {now - window_start:.0f} s")
            elif cpu - cpu_at_start > self.limits.cpu_seconds:
                self._stop_cell(pid, index, f"ran away: it used {cpu - cpu_at_start:.0f} s of CPU, "
                                            f"more than the {self.limits.cpu_seconds:.0f} s a cell may use")

    def _stop_cell(self, pid: int, index, why: str):
        self.verdict = (f"cell {index} {why}; stopped by the build's watchdog (a cell that computes, "
                        f"however slowly, is never stopped)")
        with self._lock:
            running = self._cell
        try:
            os.kill(pid, signal.SIGINT)
            if not self._stop.wait(self.limits.grace_seconds):
                with self._lock:
                    still = self._cell is running
                if still:
                    os.kill(pid, signal.SIGKILL)
                    self.verdict += "; the interrupt did not end it, so the kernel was killed"
        except ProcessLookupError:
            pass
        with self._lock:
            if self._cell is running:   # one verdict per cell
                self._cell = None


def kernel_pid(client) -> int | None:
    """The process id of ``client``'s kernel, once it has started (None before)."""
    manager = getattr(client, "km", None)
    provisioner = getattr(manager, "provisioner", None) if manager is not None else None
    process = getattr(provisioner, "process", None)
    return getattr(process, "pid", None)


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
