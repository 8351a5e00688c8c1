"""Which modules of the package a piece of code depends on: the one import walker.

Two keys ask this question, and both ask it here:

* the model cache (:mod:`attention_course.training.cache`): a trained model's
  key covers the package modules its build and fit functions import,
  recursively;
* the book's build (:mod:`book_build.chapters`): a page's key covers the
  package modules its code cells import, recursively.

An import counts wherever it is written, at the top of a module or inside a
function (the code runs it when the function runs).  Relative imports are
resolved against the module they are written in.  ``from package import x``
may import the submodule ``x`` or a name the package defines: the submodule
counts when it exists.  Only modules of this package count; a library counts
through the versions each key records, not through its source.

The walker answers with module names and files; what to hash of a file is the
key's business (the two keys hash different things, and say why).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = __name__.split(".")[0]

#: the folder that holds the package (the repository root, or site-packages)
ROOT = Path(__file__).resolve().parents[2]


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The file of the package module ``name`` (``a.b`` -> ``a/b.py`` or ``a/b/__init__.py``); None if none."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _resolve(node: ast.ImportFrom, package: str | None) -> str | None:
    """The absolute module name of ``from <node.module> import ...``; None if relative outside a package."""
    if not node.level:
        return node.module or ""
    if not package:
        return None
    parts = package.split(".")
    if node.level - 1 >= len(parts):
        return None   # goes above the top package: Python refuses it too
    base = ".".join(parts[:len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def imported_modules(source: str, module: str | None = None, is_package: bool = False,
                     root: Path = ROOT) -> set[str]:
    """Names of the package modules that ``source`` imports, anywhere in it.

    ``module`` is the dotted name of the module ``source`` is (None for a
    page's code: no relative imports there), ``is_package`` whether it is a
    package's ``__init__``.  The module itself is not in the answer.
    """
    package = module if is_package else (module.rpartition(".")[0] if module else None)
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, package)
            if base is None:
                continue
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    names.discard(module)
    return {name for name in names if module_file(name, root) is not None}


def module_closure(sources: list[str], root: Path = ROOT) -> dict[str, Path]:
    """``{module name: file}`` of every package module that running ``sources`` imports.

    Follows imports from module to module (a cycle is walked once) and adds
    every package on the way (``import a.b.c`` runs ``a/__init__.py`` and
    ``a/b/__init__.py`` first).
    """
    pending: set[str] = set()
    for source in sources:
        pending |= imported_modules(source, root=root)
    found: dict[str, Path] = {}
    while pending:
        name = pending.pop()
        if name in found:
            continue
        path = module_file(name, root)
        found[name] = path
        parts = name.split(".")
        pending.update(".".join(parts[:i]) for i in range(1, len(parts)))   # its packages
        pending |= imported_modules(path.read_text(), name, path.name == "__init__.py", root)
    return found
