"""Train once, reuse everywhere: a small on-disk cache for trained models.

Several chapters compare against a model an earlier chapter trained (chapter 3
plots chapter 1's model next to its own; chapter 11 compares against both).
Rather than train the same model again, an experiment stores its weights and
results under a key that hashes everything that could change them: the
configuration, the source code of the modules that build, train and score the
model, and the library versions.  Change any of those and the key changes, so
a stale result is never reused.

The cache lives in ``$ATTENTION_COURSE_CACHE`` (the book's build points it
into ``_build/``) or, by default, in ``~/.cache/attention-course``.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import shutil
from pathlib import Path


def cache_dir() -> Path:
    path = Path(os.environ.get("ATTENTION_COURSE_CACHE",
                               Path.home() / ".cache" / "attention-course"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def fingerprint(config: dict, modules=()) -> str:
    """A short hash of ``config`` (JSON-able), the modules' source and library versions."""
    import keras
    import numpy
    import tensorflow

    digest = hashlib.sha256()
    digest.update(json.dumps(config, sort_keys=True).encode())
    for module in modules:
        digest.update(inspect.getsource(module).encode())
    digest.update(f"{keras.__version__} {tensorflow.__version__} {numpy.__version__}".encode())
    return digest.hexdigest()[:16]


def entry(name: str, config: dict, modules=()) -> Path:
    """The folder for one cached result (it exists once the result is complete)."""
    return cache_dir() / f"{name}-{fingerprint(config, modules)}"


@contextlib.contextmanager
def locked(folder: Path):
    """Hold an exclusive lock on the entry ``folder`` while it is looked up or made.

    The book executes two chapters at a time, and two chapters may ask for the
    same model (chapters 3 and 11 compare against chapter 1's): the second
    waits for the first to finish training and then loads its result instead
    of training it again.  Where ``fcntl`` does not exist (Windows), there is
    no lock and both train; the result is the same.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_atomically(folder: Path, write) -> None:
    """Call ``write(tmp_folder)`` and then move the folder into place.

    A half-written entry (an interrupted build) is never mistaken for a result.
    """
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        write(tmp)
        tmp.rename(folder)
    except OSError:
        if not folder.exists():
            raise
        # another process finished the same entry first; its result is as good
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
