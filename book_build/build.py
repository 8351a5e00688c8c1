"""Build the book strictly: every chapter executed, any warning or cell error fails.

Run by ``make book`` (``scripts/build_book.py``).  The book is the folder
``book/`` (its configuration, pages, chapters and Sphinx extension); what the
build writes goes to ``_build/`` at the repository's root.  Two steps:

1. **Execute what changed, in parallel.**  Every chapter of ``book/_toc.yml`` has a
   key (``book_build.chapters.chapter_key``): its code cells, the package modules
   it imports, the pinned requirements and the course seed.  A chapter whose
   key differs from the one its cached outputs were made with is executed
   again -- in a pool of kernels, one per core, longest first -- and its
   outputs are stored in Jupyter Book's execution cache
   (``_build/.jupyter_cache``).  Editing a display helper re-executes the
   chapters that import it and no other; every model is trained through
   ``attention_course.training.cache.trained_model``, keyed by the content of what it
   depends on, so re-executing such a chapter loads its models instead of
   re-training them.  No cell has a time limit: a watchdog stops a cell that
   hangs (``book_build.watchdog.HangWatchdog``), never one that is slow.
2. **Sphinx** (``jupyter-book build -W -n --keep-going``) renders the book from
   the cache; any warning fails the build.

A chapter that fails still gets its page: its notebook goes into the cache
with the outputs of the cells that ran (the failing cell's error among them),
its key is not recorded (so the next build executes it again), and
``_build/failed-pages.json`` names it, its cell and the error, which the book's
Sphinx extension puts at the top of the page.  The build prints every failure,
writes the whole site, and exits non-zero.

At the end it prints how long each chapter took to execute.  The kernels
record every claim about a trained result in ``_build/claims``
(``attention_course.chapter_tools.claims``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import chapters as book_chapters
from . import execution

ROOT = book_chapters.ROOT
BOOK = book_chapters.BOOK

BUILD = ROOT / "_build"
EXECUTION_CACHE = BUILD / ".jupyter_cache"
DOCTREES = BUILD / ".doctrees"
KEYS = BUILD / ".chapter-keys.json"       # chapter -> key of the outputs in the cache
CLAIMS = BUILD / "claims"
TOC_BUILT = BUILD / ".toc-built.yml"      # the table of contents the site was last written with
FAILED_PAGES = BUILD / "failed-pages.json"  # pages whose chapter failed (read by _ext/course_sphinx.py)


def chapters() -> list[Path]:
    """The executable pages of the book (MyST notebooks in ``_toc.yml``), in reading order."""
    return book_chapters.chapters(BOOK)


def keyed_environment() -> dict[str, str]:
    """The environment variables that change a chapter's outputs (part of its key):
    the seed, and the CPU code paths the libraries were told to take, if any."""
    from attention_course.cpu_code_paths import code_path_settings
    from attention_course.seeding import SEED_VARIABLE, course_seed

    return {SEED_VARIABLE: str(course_seed())} | code_path_settings()


def workers() -> int:
    return max(1, int(os.environ.get("BOOK_JOBS", os.cpu_count() or 1)))


def execute_changed(cache, keys: dict, paths: list[Path]) -> list:
    """Execute every chapter of ``paths`` whose key changed; returns their results."""
    from jupyter_cache.base import CacheBundleIn
    from attention_course.chapter_tools import claims

    keyed = keyed_environment()
    seed = int(keyed["ATTENTION_COURSE_SEED"])
    environment = keyed | {claims.FOLDER_VARIABLE: str(CLAIMS), claims.MODE_VARIABLE: "assert"}
    jobs, current = [], {}
    for path in paths:
        docname = str(path.relative_to(BOOK).with_suffix(""))
        notebook = book_chapters.read_chapter(path)
        current[docname] = book_chapters.chapter_key(path, notebook, keyed)
        try:
            record = cache.match_cache_notebook(notebook)
        except KeyError:
            record = None
        if record is not None and keys.get(docname) == current[docname]:
            continue
        expected = record.data.get("execution_seconds", 0) if record is not None else 0
        if record is not None:  # same code, other dependencies: the outputs are stale
            cache.remove_cache(record.pk)
        jobs.append(execution.Job(path, notebook, dict(environment), expected))

    by_path = {job.path: job for job in jobs}
    for path, earlier in book_chapters.shared_models(paths).items():
        if path in by_path:
            by_path[path].after = [by_path[e] for e in earlier if e in by_path]

    if jobs:
        print(f"executing {len(jobs)} chapter(s) in {workers()} kernel(s): "
              + ", ".join(job.path.stem for job in jobs))
    for job in jobs:  # a page that executes again records its claims afresh
        claims.forget_page(CLAIMS, job.path.stem, seed)
    results = execution.execute_all(jobs, workers())
    failed = json.loads(FAILED_PAGES.read_text()) if FAILED_PAGES.exists() else {}
    failed = {docname: record for docname, record in failed.items() if docname in current}
    for result in results:
        docname = str(result.job.path.relative_to(BOOK).with_suffix(""))
        # A failed chapter's outputs (up to its failing cell) are cached too, so that
        # Sphinx shows them instead of executing the chapter itself; without its key
        # the next build executes it again.
        cache.cache_notebook_bundle(
            CacheBundleIn(result.job.notebook, str(result.job.path),
                          data={"execution_seconds": result.seconds}),
            check_validity=False, overwrite=True)
        if result.error is None:
            keys[docname] = current[docname]
            failed.pop(docname, None)
        else:
            keys.pop(docname, None)
            failed[docname] = failure_record(result)
        # Sphinx re-reads a page when its source changed; here only its outputs did.
        (DOCTREES / f"{docname}.doctree").unlink(missing_ok=True)
    KEYS.write_text(json.dumps(keys, indent=1))
    FAILED_PAGES.write_text(json.dumps(failed, indent=1))
    return results


def failure_record(result) -> dict:
    """What the failed page says at its top: which cell failed and why.

    ``line`` is the line of the source file where the failed cell's code begins
    (myst-nb's source map gives the line of the cell's opening fence).
    """
    notebook = result.job.notebook
    cells = notebook.cells if notebook is not None else []
    source_map = notebook.metadata.get("source_map", []) if notebook is not None else []
    index = result.failed_cell
    line = source_map[index] + 1 if index is not None and index < len(source_map) else None
    source = cells[index].source if index is not None and index < len(cells) else ""
    return {"cell": index, "line": line, "source": source,
            "error": execution.error_summary(result.error)}


def chapter_times(cache) -> list[tuple[str, float | None]]:
    """(chapter, seconds its cached outputs took to execute) in reading order."""
    times = []
    for path in chapters():
        try:
            record = cache.match_cache_notebook(book_chapters.read_chapter(path))
            times.append((path.stem, record.data.get("execution_seconds")))
        except KeyError:
            times.append((path.stem, None))
    return times


def main(argv: list[str] | None = None) -> int:
    import argparse

    from jupyter_cache import get_cache

    argparse.ArgumentParser(
        prog="scripts/build_book.py",
        description="Build the book strictly (make book): execute the chapters whose key changed, "
                    "then the site, with -W.").parse_args(argv)

    BUILD.mkdir(exist_ok=True)
    # trained models, cached by content (attention_course.training.cache), live in the build folder
    os.environ.setdefault("ATTENTION_COURSE_CACHE", str(BUILD / "course_cache"))
    # which cache entries this build asks for, for scripts/package_runs.py
    from attention_course.seeding import course_seed
    from attention_course.training import packaged_runs

    packaged_runs.note_build(course_seed())
    cache = get_cache(str(EXECUTION_CACHE))
    keys = json.loads(KEYS.read_text()) if KEYS.exists() else {}
    started = time.perf_counter()
    results = execute_changed(cache, keys, chapters())
    executed = {result.name for result in results}
    executing = time.perf_counter() - started
    for result in results:
        if result.error is not None:
            print(f"\n===== {result.job.path.relative_to(ROOT)} failed, at the code cell of line "
                  f"{failure_record(result)['line']} =====\n{result.error}", file=sys.stderr)
    # a page that failed in an earlier build and was not executed again fails still
    failed_pages = json.loads(FAILED_PAGES.read_text()) if FAILED_PAGES.exists() else {}

    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(BOOK),
               "--path-output", str(ROOT), "-W", "-n", "--keep-going"]
    # Sphinx rewrites only the pages whose source changed; a new table of contents
    # changes every page's previous/next links and sidebar, so then it writes them all.
    toc = (BOOK / "_toc.yml").read_text()
    if not TOC_BUILT.exists() or TOC_BUILT.read_text() != toc:
        command.append("--all")
    # the pages' claims tables read what the kernels recorded, from the folder they recorded into
    from attention_course.chapter_tools import claims

    code = subprocess.call(command, cwd=ROOT, env=os.environ | {claims.FOLDER_VARIABLE: str(CLAIMS)})
    if code == 0:
        TOC_BUILT.write_text(toc)
    seconds = time.perf_counter() - started

    times = chapter_times(cache)
    print("\nchapter execution times (s; * = executed in this build, else from the cache):")
    for name, value in times:
        mark = "*" if name in executed else " "
        print(f"  {mark} {name:32s} {'—' if value is None else f'{value:6.1f}'}")
    total = sum(value for _, value in times if value is not None)
    print(f"  sum {total:.0f} s; executing {executing:.0f} s with {workers()} kernel(s)")
    if failed_pages:
        print(f"\nbook build FAILED: {len(failed_pages)} chapter(s) failed to execute:", file=sys.stderr)
        for docname, record in failed_pages.items():
            print(f"  book/{docname}.md, the code cell of line {record['line']}: "
                  f"{record['error'].strip().splitlines()[-1] if record['error'].strip() else '?'}",
                  file=sys.stderr)
        print(f"the rest of the site was written to {(BUILD / 'html').relative_to(ROOT)}/; each "
              "failed page says at its top which cell failed and why", file=sys.stderr)
        code = code or 1
    print(f"book build {'succeeded' if code == 0 else 'FAILED'} in {seconds:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
