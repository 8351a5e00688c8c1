"""Every public name of the NumPy reference code says where the book teaches it (d2l's "Defined in")."""

import ast
import re
from pathlib import Path

import attention_course

PACKAGE = Path(attention_course.__file__).parent
#: the modules whose code the chapters teach (the package's top level, but for its helpers)
REFERENCE_MODULES = sorted(p for p in PACKAGE.glob("*.py")
                           if p.name not in {"__init__.py", "checks.py", "seeding.py"})
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
    headings = {}
    for chapter in (PACKAGE.parent / "book" / "chapters").glob("*.md"):
        number = int(chapter.name[:2])
        # docstrings write the maths of a heading in plain text
        headings[number] = {line[3:].strip().replace(r"$\sqrt{d_k}$", "√d_k")
                            for line in chapter.read_text().splitlines() if line.startswith("## ")}
    for path in REFERENCE_MODULES:
        for number, section in re.findall(r'in chapter (\d+), \*[^*]+\*,\s+section\s+"([^"]+)"',
                                          path.read_text()):
            assert section in headings[int(number)], f"{path.stem}: chapter {number} has no section {section!r}"
