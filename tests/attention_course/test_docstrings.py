"""Every public name of the NumPy reference code says where the book teaches it (d2l's "Defined in")."""

import ast
import re
from pathlib import Path

import attention_course

PACKAGE = Path(attention_course.__file__).parent
#: the modules whose code the chapters teach (the package's top level, but for its helpers)
REFERENCE_MODULES = sorted(p for p in PACKAGE.glob("*.py")
                           if p.name not in {"__init__.py", "checks.py", "seeding.py", "cpu_code_paths.py"})
CHAPTER = re.compile(r"(Explained|Used) in chapter \d+|Used by the code of chapter \d+|chapters? \d+")


def test_every_public_function_and_class_names_its_chapter():
    missing = []
    for path in REFERENCE_MODULES:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                if not CHAPTER.search(ast.get_docstring(node) or ""):
                    missing.append(f"{path.stem}.{node.name}")
    assert not missing, f"docstrings that name no chapter: {missing}"


def test_the_named_sections_exist():
    """A docstring's "chapter N, *Title*, section "S"" names a page of chapter N (a chapter
    may have several pages, each with its own title) and a section or subsection of that page."""
    headings = {}   # (chapter number, page title) -> the page's section headings
    for chapter in (PACKAGE.parent / "book" / "chapters").glob("*.md"):
        lines = chapter.read_text().splitlines()
        title = next(line[2:].strip() for line in lines if line.startswith("# "))
        # docstrings write the maths of a heading in plain text
        headings[int(chapter.name[:2]), title] = {
            line.lstrip("#").strip().replace(r"$\sqrt{d_k}$", "√d_k")
            for line in lines if line.startswith(("## ", "### "))}
    for path in REFERENCE_MODULES:
        for number, title, section in re.findall(
                r'in chapter (\d+), \*([^*]+)\*,\s+section\s+"([^"]+)"', path.read_text()):
            page = (int(number), " ".join(title.split()))
            assert page in headings, f"{path.stem}: chapter {number} has no page titled {title!r}"
            assert section in headings[page], f"{path.stem}: {title!r} has no section {section!r}"
