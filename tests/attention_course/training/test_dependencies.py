"""The one import walker: what the model cache and the book's build both follow."""

import textwrap
from pathlib import Path

from attention_course.training import dependencies
from attention_course.training.dependencies import PACKAGE, imported_modules, module_closure

REPOSITORY = Path(__file__).resolve().parents[3]


def make_package(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: source}`` under ``root/<PACKAGE>``; return ``root``."""
    for name, source in files.items():
        path = root / PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return root


def test_relative_imports_resolve_against_the_module_they_are_in(tmp_path):
    root = make_package(tmp_path, {"__init__.py": "", "a.py": "", "sub/__init__.py": "",
                                   "sub/b.py": "", "sub/c.py": "from . import b\nfrom .. import a\n"})
    assert imported_modules("from . import b\nfrom .. import a\n", f"{PACKAGE}.sub.c", root=root) \
        == {f"{PACKAGE}.sub", f"{PACKAGE}.sub.b", PACKAGE, f"{PACKAGE}.a"}
    # in a package's __init__, "." is the package itself
    assert imported_modules("from .b import x", f"{PACKAGE}.sub", is_package=True, root=root) \
        == {f"{PACKAGE}.sub.b"}
    # a page has no package: its relative imports name nothing
    assert imported_modules("from . import a", None, root=root) == set()


def test_from_package_import_name_counts_the_submodule_only_where_it_exists(tmp_path):
    root = make_package(tmp_path, {"__init__.py": "", "sub/__init__.py": "VALUE = 1", "sub/b.py": ""})
    found = imported_modules(f"from {PACKAGE}.sub import b, VALUE", root=root)
    assert found == {f"{PACKAGE}.sub", f"{PACKAGE}.sub.b"}     # VALUE is not a module
    assert imported_modules("import numpy\nfrom os import path", root=root) == set()


def test_imports_inside_functions_count(tmp_path):
    root = make_package(tmp_path, {"__init__.py": "", "a.py": "def f():\n    from . import b\n",
                                   "b.py": ""})
    assert module_closure([f"from {PACKAGE} import a"], root=root).keys() \
        == {PACKAGE, f"{PACKAGE}.a", f"{PACKAGE}.b"}


def test_the_closure_adds_every_package_on_the_way_and_walks_a_cycle_once(tmp_path):
    root = make_package(tmp_path, {"__init__.py": "", "x/__init__.py": "", "x/y/__init__.py": "",
                                   "x/y/z.py": "from ... import w\n",
                                   "w.py": f"import {PACKAGE}.x.y.z\n",   # z -> w -> z
                                   "unused.py": ""})
    found = module_closure([f"import {PACKAGE}.x.y.z"], root=root)
    assert found == {name: root / path for name, path in {
        PACKAGE: f"{PACKAGE}/__init__.py", f"{PACKAGE}.x": f"{PACKAGE}/x/__init__.py",
        f"{PACKAGE}.x.y": f"{PACKAGE}/x/y/__init__.py", f"{PACKAGE}.x.y.z": f"{PACKAGE}/x/y/z.py",
        f"{PACKAGE}.w": f"{PACKAGE}/w.py"}.items()}


def test_the_numpy_modules_import_nothing_from_the_weights_package():
    """The loaders import the math; the math never imports the loaders (anywhere in a module)."""
    package = REPOSITORY / PACKAGE
    for path in package.glob("*.py"):
        name = f"{PACKAGE}.{path.stem}" if path.stem != "__init__" else PACKAGE
        imported = imported_modules(path.read_text(), name, path.stem == "__init__", root=REPOSITORY)
        assert not {m for m in imported if m.startswith(f"{PACKAGE}.weights")}, path.name


def test_a_change_to_vision_py_reaches_only_the_vision_transformer_chapter():
    """Issue 35: editing vision.py used to re-execute 11 pages (chapters 5-14) through a cycle."""
    from book_build import chapters as book_chapters

    vision = REPOSITORY / PACKAGE / "vision.py"
    chapters = sorted((REPOSITORY / "book" / "chapters").glob("*.md"))
    reached = {path.stem for path in chapters
               if vision in book_chapters.dependencies(
                   book_chapters.code_sources(book_chapters.read_chapter(path)))}
    assert reached == {"14_vision_transformer", "14_what_the_vit_learned"}   # chapter 14's two pages


def test_the_walker_is_where_the_model_cache_and_the_build_both_look():
    from attention_course.training import cache
    from book_build import chapters as book_chapters

    assert cache.dependencies is dependencies
    assert book_chapters.module_closure is dependencies.module_closure
