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
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
sys.path.insert(0, str(ROOT))   # the repository's package, even where another is installed
from attention_course.training.dependencies import module_closure  # noqa: E402
CELL_TIMEOUT = 300  # seconds per cell, as _config.yml's execute.timeout

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


def execute(job: Job, timeout: int = CELL_TIMEOUT) -> Result:
    """Run every cell of ``job.notebook`` (in place) in a fresh kernel in the chapter's folder."""
    from nbclient import NotebookClient
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
    client = NotebookClient(job.notebook, timeout=timeout, allow_errors=False, record_timing=False,
                            shutdown_kernel="immediate",
                            resources={"metadata": {"path": str(job.path.parent)}}, config=config)
    if job.cpus is not None:
        # This thread starts the kernel, which inherits the thread's CPUs (and so
        # does every thread the kernel starts).
        os.sched_setaffinity(0, job.cpus)
    started = time.perf_counter()
    error = None
    try:
        client.execute(env=environment)
    except CellExecutionError as failure:
        error = str(failure)
    except Exception:  # a timeout, a dead kernel: say what happened, keep the other chapters going
        error = traceback.format_exc()
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
    return Result(job, time.perf_counter() - started, error)


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
