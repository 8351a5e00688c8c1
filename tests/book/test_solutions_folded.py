"""A chapter never shows a graded function's solution before the reader can try the exercise.

Where a chapter prints the course's version of a function that an assignment
grades, it does so with ``show_solution`` (never ``show_source``): a fold titled as
a solution whose code stays out of the page's text until it is opened
(``attention_course.chapter_tools.display``; the built pages are searched for answers in
``tests/site/test_site_links.py``), and the Markdown just before it links to the
assignment.
"""

import ast
import json
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book" / "chapters").glob("[0-9][0-9]_*.md"))


def graded_names() -> dict[str, str]:
    """``{function name: assignment}`` for every function a solution cell defines."""
    names = {}
    for source in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        for cell in json.loads(source.read_text())["cells"]:
            if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution"):
                for name in re.findall(r"^def (\w+)", "".join(cell["source"]), re.M):
                    names[name] = source.stem
    return names


def shown_functions(code: str, how: str = "show_source") -> set[str]:
    """The functions a ``show_source(a, m.b, C.c)`` cell prints: {"a", "b", "c"}."""
    shown = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == how:
            shown |= {arg.attr if isinstance(arg, ast.Attribute) else arg.id for arg in node.args
                      if isinstance(arg, (ast.Attribute, ast.Name))}
    return shown


def graded_reveals():
    graded = graded_names()
    for chapter in CHAPTERS:
        cells = jupytext.read(chapter).cells
        for index, cell in enumerate(cells):
            if cell.cell_type == "code":
                shown = shown_functions(cell.source) | shown_functions(cell.source, "show_solution")
                assignments = {graded[n] for n in shown if n in graded}
                for assignment in assignments:
                    yield pytest.param(chapter, cells, index, assignment,
                                       id=f"{chapter.stem}-{cell.source.strip()[:40]}")


@pytest.mark.parametrize("chapter, cells, index, assignment", list(graded_reveals()))
def test_a_graded_solution_is_folded_after_a_link_to_its_exercise(chapter, cells, index, assignment):
    cell = cells[index]
    graded = graded_names()
    assert not set(graded) & shown_functions(cell.source), \
        f"{chapter.name}: show a graded function with show_solution, not show_source: {cell.source!r}"
    before = cells[index - 1]
    assert before.cell_type == "markdown" and f"exercises/{assignment}/{assignment}" in before.source, \
        f"{chapter.name}: link to {assignment} just before {cell.source!r}"


def test_every_assignment_is_linked_from_a_chapter():
    """From the reveal of its solution, or, for an assignment whose answer the book never prints,
    from the point in a chapter where the reader should try it."""
    linked = {assignment for *_, assignment in (p.values for p in graded_reveals())}
    text = "".join(chapter.read_text() for chapter in CHAPTERS)
    linked |= {a for a in graded_names().values() if f"<../exercises/{a}/{a}>" in text}
    assert linked == set(graded_names().values())
