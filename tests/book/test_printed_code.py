"""The code a chapter prints reads at a glance and fits the book's code box.

Every ``show_source(...)`` and ``show_solution(...)`` call in the chapters'
code cells is found here, and its arguments are imported the way the chapter
imports them (the chapter's own ``import`` statements, run in a namespace of
their own), so that a new call cannot escape.  What the call prints
(:func:`attention_course.chapter_tools.display.readable_source`) is held to:

* **the code box's width**: every printed line at most
  :data:`~attention_course.chapter_tools.display.CODE_WIDTH` = 88 characters, what a
  cell output's code box shows without scrolling in the theme's widest
  layout (the derivation is beside the constant);
* **the size of an attention function**: at most :data:`BODY_LINES` = 15
  lines below its header (decorators, signature and one-line summary): every
  function chapters 2 to 6 print from the NumPy reference modules, and
  whatever any chapter prints whose name says attention, softmax, heads or
  a mask.  The argument checks live in a ``check_...`` function
  (:mod:`attention_course.checks`), not in what the reader reads.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import jupytext
import pytest

from attention_course.chapter_tools.display import CODE_WIDTH, readable_source

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book" / "chapters").glob("[0-9][0-9]_*.md"))
SHOWN_BY = ("show_source", "show_solution")
BODY_LINES = 15
#: the chapters whose printed functions are all attention (Part II of the book)
ATTENTION_CHAPTERS = range(2, 7)
#: a printed object whose name says it is (part of) attention
ATTENTION_NAME = re.compile(r"attention|softmax|heads|_mask$", re.I)

#: Printed code allowed, for the time being, to be wider than the box
#: (``"chapter: expression"`` keys; none today).  Wrap a wide line rather than
#: adding an entry: a line break inside brackets, or a comment moved above its
#: line, leaves the syntax tree, and so the training cache's keys, unchanged.
#: An entry whose code fits again fails the test until it is deleted.
WIDER_THAN_THE_BOX: set[str] = set()


def code_cells(chapter: Path):
    for cell in jupytext.read(chapter).cells:
        if cell.cell_type == "code":
            lines = [line for line in cell.source.splitlines()
                     if not line.lstrip().startswith(("%", "!"))]   # IPython magics
            yield ast.parse("\n".join(lines))


def shown(chapter: Path):
    """``(how, expression, object)`` for every argument of every show_source/show_solution call."""
    namespace: dict = {}
    calls = []
    for tree in code_cells(chapter):
        for node in tree.body:                                   # the chapter's own imports
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                exec(compile(ast.Module([node], []), str(chapter), "exec"), namespace)
        calls += [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and isinstance(node.func, ast.Name) and node.func.id in SHOWN_BY]
    for call in calls:
        for argument in call.args:
            expression = ast.unparse(argument)
            try:
                obj = eval(expression, namespace)
            except NameError as error:
                pytest.fail(f"{chapter.name}: {call.func.id}({expression}): {error}; "
                            "show what the chapter imports")
            yield call.func.id, expression, obj


@pytest.fixture(scope="module")
def printed():
    """``{"chapter: expression": (how, chapter number, printed code)}`` for the whole book."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    found = {}
    for chapter in CHAPTERS:
        for how, expression, obj in shown(chapter):
            found[f"{chapter.stem}: {expression}"] = (how, int(chapter.name[:2]), obj,
                                                      readable_source(obj))
    return found


def test_the_chapters_print_code(printed):
    assert len(printed) >= 80
    assert {how for how, *_ in printed.values()} == set(SHOWN_BY)


def header_lines(code: str) -> int:
    """How many lines the decorators, the signature and the summary docstring take."""
    node = ast.parse(code).body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return 0
    end = max([node.lineno] + [n.end_lineno for n in ast.walk(node.args) if hasattr(n, "end_lineno")]
              + ([node.returns.end_lineno] if node.returns else []))
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        end = first.end_lineno
    return end


def is_reference_code(obj) -> bool:
    """Defined in a NumPy reference module, at the package's top."""
    import inspect

    module = inspect.unwrap(obj).__module__
    return module.count(".") == 1 and module.startswith("attention_course.")


def test_every_printed_line_fits_the_code_box(printed):
    wide = {}
    for key, (_, _, _, code) in printed.items():
        lines = [line for line in code.splitlines() if len(line) > CODE_WIDTH]
        if lines:
            wide[key] = lines
    fixed = WIDER_THAN_THE_BOX - set(wide)
    assert not fixed, f"these now fit the box: delete them from WIDER_THAN_THE_BOX: {sorted(fixed)}"
    new = {key: lines for key, lines in wide.items() if key not in WIDER_THAN_THE_BOX}
    assert not new, "printed lines wider than the code box ({} characters):\n{}".format(
        CODE_WIDTH, "\n".join(f"{key}: ({len(line)}) {line}" for key, lines in new.items()
                              for line in lines))


def test_attention_functions_are_short(printed):
    long = {}
    for key, (_, number, obj, code) in printed.items():
        name = key.split(": ", 1)[1]
        attention = (number in ATTENTION_CHAPTERS and is_reference_code(obj)) \
            or ATTENTION_NAME.search(name)
        body = len(code.splitlines()) - header_lines(code)
        if attention and body > BODY_LINES:
            long[key] = body
    assert not long, f"attention functions longer than {BODY_LINES} lines below their header " \
                     f"(move argument checks into a check_... function): {long}"


def test_the_printed_code_parses(printed):
    for key, (_, _, _, code) in printed.items():
        ast.parse(code)


def test_printed_reference_code_leaves_its_checks_to_a_check_function(printed):
    """A NumPy reference function a chapter prints raises nothing itself: its ``check_...`` does."""
    raising = [key for key, (_, _, obj, code) in printed.items()
               if is_reference_code(obj) and any(isinstance(node, ast.Raise)
                                                 for node in ast.walk(ast.parse(code)))]
    assert not raising, f"printed with argument checks in them (move them into a check_...): {raising}"
