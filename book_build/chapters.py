"""The book's chapters as the build sees them: read as notebooks, keyed by what they depend on.

* **Reading.** A chapter is read into a notebook by myst-nb's own reader, with
  the book's Markdown settings, so that the notebook executed here hashes like
  the one Sphinx reads and finds in the cache.
* **Keys.** A chapter's key hashes its code cells, the source of every module
  of ``attention_course`` it imports (directly or through other modules), the
  package data next to them, ``requirements.txt`` and the keyed environment
  (the course seed, and the CPU code paths where set).  A rebuild re-executes
  a chapter when its key changed, and only then: editing ``plotting.py``
  re-executes the chapters that import it, not the others.
* **Order.** A page that reuses a model an earlier page trains (chapter 3
  compares against chapter 1's translator, through
  ``experiments.rnn_translator``; chapter 14's second page reuses its first
  page's ViT, through ``digit_classifiers.vision_transformer``) executes after
  that page (:func:`shared_models`), so that it loads the model instead of
  waiting for it or training it twice.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

from attention_course.training.dependencies import module_closure

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"


def toc_docnames(root: Path = BOOK) -> list[str]:
    """Every page of ``_toc.yml`` in reading order (depth first), root page first."""
    from sphinx_external_toc.parsing import parse_toc_yaml

    site_map = parse_toc_yaml(root / "_toc.yml")
    order: list[str] = []

    def visit(docname: str) -> None:
        order.append(docname)
        for subtree in site_map[docname].subtrees:
            for item in subtree.items:
                if isinstance(item, str):  # not a URL or a glob
                    visit(item)

    visit(site_map.root.docname)
    return order


def source_path(docname: str, root: Path = BOOK) -> Path:
    """The source file of a page (``.md`` or ``.ipynb``)."""
    for suffix in (".md", ".ipynb"):
        path = root / f"{docname}{suffix}"
        if path.exists():
            return path
    raise FileNotFoundError(f"no source file for the page {docname!r} in _toc.yml")


def chapters(root: Path = BOOK) -> list[Path]:
    """The executable pages of the book (MyST notebooks in ``_toc.yml``), in reading order."""
    from myst_nb.core.read import is_myst_markdown_notebook

    paths = []
    for docname in toc_docnames(root):
        path = source_path(docname, root)
        if path.suffix == ".md" and is_myst_markdown_notebook(path.read_text()):
            paths.append(path)
    return paths


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


