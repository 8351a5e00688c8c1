"""Trained runs of the course seed that ship inside the package.

A cold build (a fresh clone, a student's first run of a chapter) would train
every model of the book, and the slowest take a minute or more each.  Their
cache entries (:mod:`.cache`: the weights, the record and its arrays, in a
folder named by the run's content key) ship in ``attention_course/data/runs/``,
and :func:`install`, which every chapter's ``notebook.setup()`` calls, copies
those missing into the cache.  ``trained_model`` then finds them there and
loads them exactly as if this machine had trained them: the same float32
weights, so a page shows the same numbers either way.  Another seed, or a
recipe changed since, has another key and trains as before.

``python scripts/package_runs.py NAME ...`` packages, after ``make book``, the
entries that the build asked for under those names.  A packaged entry that no
chapter asks for any more (a recipe changed and the run was not packaged
again) costs a cold build its training time without a word, so the book's
tests fail for it (:func:`unasked`).

This module is not imported by the code that trains: no model's key depends
on it.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

from .cache import cache_dir, write_atomically

#: where the packaged entries live
PACKAGED = Path(__file__).resolve().parents[1] / "data" / "runs"
#: the files of a cache entry (``cache._write_run``)
RUN_FILES = ("model.weights.h5", "run.json", "arrays.npz")
#: a cache entry's folder name: the run's name, then its 16-digit content key
ENTRY = re.compile(r"(?P<name>.+)-(?P<key>[0-9a-f]{16})")
#: written into the cache by the book's build as it starts (:func:`note_build`)
BUILD_NOTE = "last-build.json"


def packaged_entries(folder: Path | None = None) -> list[Path]:
    """The packaged entries, sorted by name; anything else in ``folder`` is an error."""
    folder = PACKAGED if folder is None else folder
    if not folder.is_dir():
        return []
    entries = []
    for path in sorted(folder.iterdir()):
        if path.name in {"__init__.py", "__pycache__"}:
            continue
        missing = [name for name in RUN_FILES if not (path / name).is_file()]
        if not path.is_dir() or not ENTRY.fullmatch(path.name) or missing:
            raise ValueError(f"{path} is not a packaged run: a folder <name>-<16 hex digits> "
                             f"holding {', '.join(RUN_FILES)}"
                             + (f" (it lacks {', '.join(missing)})" if path.is_dir() else ""))
        entries.append(path)
    return entries


def install(cache: Path | None = None, folder: Path | None = None) -> list[str]:
    """Copy the packaged entries that ``cache`` lacks into it; returns their names.

    Each entry appears whole or not at all (a chapter executing at the same
    time never sees half of one), and an entry already in the cache is left
    as it is.
    """
    cache = cache_dir() if cache is None else cache
    installed = []
    for entry in packaged_entries(folder):
        target = cache / entry.name
        if not target.exists():
            write_atomically(target, _copier(entry))
            installed.append(entry.name)
    return installed


def was_asked(entry: str, cache: Path | None = None) -> bool:
    """Whether ``trained_model`` looked up the cache entry ``entry`` in ``cache``.

    It takes a lock file beside the entry (``<entry>.lock``) for every lookup,
    load or training; :func:`install` does not.
    """
    cache = cache_dir() if cache is None else cache
    return (cache / f"{entry}.lock").exists()


def unasked(cache: Path | None = None, folder: Path | None = None) -> list[str]:
    """The packaged entries that no lookup in ``cache`` asked for."""
    return [entry.name for entry in packaged_entries(folder) if not was_asked(entry.name, cache)]


def note_build(seed: int, cache: Path | None = None) -> None:
    """Record, in the cache, that a build under ``seed`` starts now (for :func:`entries_asked_by_last_build`)."""
    cache = cache_dir() if cache is None else cache
    (cache / BUILD_NOTE).write_text(json.dumps({"started": time.time(), "seed": seed}))


def entries_asked_by_last_build(name: str, cache: Path | None = None) -> list[Path]:
    """The cache entries of the run ``name`` that the last build looked up, sorted.

    Raises ``LookupError`` with what to do when there is no build of the
    course seed on record, or when it did not ask for ``name``.
    """
    cache = cache_dir() if cache is None else cache
    note = cache / BUILD_NOTE
    if not note.exists():
        raise LookupError(f"no build on record in {cache}: run `make book` first")
    build = json.loads(note.read_text())
    if build["seed"] != 0:
        raise LookupError(f"the last build ran under seed {build['seed']}; packaged runs are "
                          "the course seed's (0): run `make book` without ATTENTION_COURSE_SEED")
    found = []
    for lock in sorted(cache.glob("*.lock")):
        match = ENTRY.fullmatch(lock.name[:-len(".lock")])
        if match and match["name"] == name and lock.stat().st_mtime >= build["started"]:
            found.append(cache / match.group(0))
    if not found:
        raise LookupError(f"the last build asked for no run called {name!r}: check the name (the "
                          "first argument a chapter gives trained_model); if the chapter that "
                          "trains it was not executed again, empty _build/.jupyter_cache and "
                          "run `make book`")
    return found


def package(names: list[str], cache: Path | None = None, folder: Path | None = None) -> list[Path]:
    """Package the entries the last build asked for under ``names``; returns the new folders.

    A packaged entry of one of ``names`` that the build did not ask for is
    removed (its recipe changed).  Nothing is written unless every name was
    found.
    """
    cache = cache_dir() if cache is None else cache
    folder = PACKAGED if folder is None else folder
    wanted = {name: entries_asked_by_last_build(name, cache) for name in names}
    for name, entries in wanted.items():
        for entry in entries:
            missing = [file for file in RUN_FILES if not (entry / file).is_file()]
            if missing:
                raise FileNotFoundError(f"{name}: the cache entry {entry} lacks {', '.join(missing)}")
    keep = {entry.name for entries in wanted.values() for entry in entries}
    written = []
    folder.mkdir(parents=True, exist_ok=True)
    for old in packaged_entries(folder):
        if ENTRY.fullmatch(old.name)["name"] in wanted and old.name not in keep:
            shutil.rmtree(old)
    for entries in wanted.values():
        for entry in entries:
            target = folder / entry.name
            if not target.exists():
                write_atomically(target, _copier(entry))
                written.append(target)
    return written


def _copier(entry: Path):
    """A function that copies the files of ``entry`` into the folder it is given."""
    def copy(tmp: Path) -> None:
        for file in RUN_FILES:
            shutil.copyfile(entry / file, tmp / file)
    return copy
