"""Running the instructor's code in the grader as the notebook would run it.

The grader runs some of the assignment's own code itself: the setup cells and
the tests (:mod:`course_grader.recheck`), the source notebook for the hidden
tests' ``reference`` (:mod:`course_grader.hidden_tests`) and the catalogue of
mistakes.  In a notebook that code runs in an IPython kernel, from the
assignment's folder; here it must run the same way, or an honest course fails
for reasons of the grader's own:

* IPython syntax (``%matplotlib inline``, ``%%html``, ``!ls``) is turned into
  Python by IPython's own transformer (:func:`python_source`), and the
  ``get_ipython()`` it calls answers every magic with nothing
  (:data:`NO_MAGIC`): magics display, time or configure, they define nothing
  a test needs;
* the assignment's own modules (a ``helpers.py`` shipped beside the source
  notebook) can be imported (:func:`importable_from`), from the instructor's
  folder, never the student's, and are forgotten afterwards, so that the next
  assignment's ``helpers`` is its own.

All of it is the instructor's code: the student's code never runs in the grader.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import os
import sys
from pathlib import Path


def python_source(source: str) -> str:
    """``source`` with IPython's syntax turned into plain Python calls (as the kernel does)."""
    if len(source) <= _REMEMBERED_LENGTH:
        return _remembered_python_source(source)
    return _python_source(source)


def _python_source(source: str) -> str:
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        return TransformerManager().transform_cell(source)
    except Exception:  # noqa: BLE001 - not IPython either: left as it is, for Python to judge
        return source


# A grading worker turns the same cells (the assignment's setup cells and tests) for every student:
# the answers for short cells are kept (a few thousand, at most a few dozen MiB).
_REMEMBERED_LENGTH = 8192
_remembered_python_source = functools.lru_cache(maxsize=4096)(_python_source)


def parse(source: str):
    """The cell's syntax tree (IPython syntax included), or None if it is not valid code."""
    try:
        return ast.parse(python_source(source))
    except (SyntaxError, ValueError):
        return None


class _NoMagic:
    """``get_ipython()`` for the instructor's code run in the grader: every magic does nothing."""

    def run_line_magic(self, *args, **kwargs):
        return None

    def run_cell_magic(self, *args, **kwargs):
        return None

    def system(self, *args, **kwargs):
        return None

    getoutput = system

    def __getattr__(self, name):
        raise AttributeError(f"the grader runs the instructor's code without an IPython shell ({name})")


NO_MAGIC = _NoMagic()


def namespace(name: str) -> dict:
    """A fresh namespace for the instructor's code, with its ``get_ipython``."""
    return {"__name__": name, "get_ipython": lambda: NO_MAGIC}


@contextlib.contextmanager
def importable_from(folder):
    """The modules in ``folder`` (the instructor's assignment folder) importable, then forgotten."""
    if folder is None or not Path(folder).is_dir():
        yield
        return
    folder = str(Path(folder).resolve())
    before = set(sys.modules)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
        for name in set(sys.modules) - before:
            origin = getattr(sys.modules[name], "__file__", None) or ""
            if origin.startswith(folder + "/"):
                del sys.modules[name]


def local_modules(folder) -> set[str]:
    """The names of the modules the assignment ships (``.py`` files and packages anywhere in ``folder``)."""
    if folder is None or not Path(folder).is_dir():
        return set()
    found = set()
    for path in sorted(Path(folder).rglob("*.py"))[:10_000]:
        found.add(path.parent.name if path.name == "__init__.py" else path.stem)
    return found


@contextlib.contextmanager
def working_directory(folder):
    """In ``folder`` while the block runs (none: where it is); ``contextlib.chdir`` from Python 3.11 on."""
    if folder is None:
        yield
        return
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def top_level_names(source: str) -> tuple[set[str], dict[str, tuple[str, str | None]]]:
    """What a cell defines at top level: ``(defined names, {name: (module, attribute)})`` of its imports.

    ``import numpy as np`` gives ``{"np": ("numpy", None)}``; ``from math import
    sqrt`` gives ``{"sqrt": ("math", "sqrt")}``; ``import os.path`` binds ``os``.
    """
    tree = parse(source)
    defined: set[str] = set()
    imports: dict[str, tuple[str, str | None]] = {}
    if tree is None:
        return defined, imports
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                defined.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = (alias.name, None)
                else:
                    top = alias.name.split(".")[0]
                    imports[top] = (top, None)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name != "*":
                    imports[alias.asname or alias.name] = (node.module, alias.name)
    return ({n for n in defined if not n.startswith("__")},
            {k: v for k, v in imports.items() if not k.startswith("__")})


@functools.lru_cache(maxsize=1024)
def names_used(source: str) -> frozenset[str]:
    """Every name a cell reads or writes (for what it needs from the grader).

    Cached: the re-check asks it of every instructor cell for each test cell of every
    submission (uncached, 0.16 s of the 2.5 s a submission of assignment 1 took under the profiler)."""
    tree = parse(source)
    return frozenset() if tree is None else frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
