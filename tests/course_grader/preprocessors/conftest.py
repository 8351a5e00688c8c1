"""A one-notebook assignment in a gradebook of its own, for testing one preprocessor at a time.

The assignment ``hw`` has a notebook ``hw`` with a locked setup cell, a
solution cell, a test cell (2 points, with a hidden region) and a Markdown
cell, as ``nbgrader generate_assignment`` would record them; ``released()``
is the notebook a student gets, ``resources(...)`` what nbgrader hands a
preprocessor while autograding student ``alice``'s copy of it.
"""

import warnings

import nbformat
import pytest
from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

SETUP = "import math"
SOLUTION = "def double(x):\n    return 2 * x"
RELEASED_SOLUTION = "def double(x):\n    raise NotImplementedError()"
TEST = "assert double(2) == 4\n### BEGIN HIDDEN TESTS\nassert double(5) == 10\n### END HIDDEN TESTS"


def code(source, grade_id, *, grade=False, solution=False, locked=False, points=None):
    info = {"grade": grade, "solution": solution, "locked": locked, "grade_id": grade_id, "schema_version": 3}
    if points is not None:
        info["points"] = points
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": info})


def released():
    return nbformat.v4.new_notebook(
        cells=[code(SETUP, "setup", locked=True), code(RELEASED_SOLUTION, "answer", solution=True),
               code(TEST, "test", grade=True, locked=True, points=2),
               nbformat.v4.new_markdown_cell("Explain your answer.")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    """The gradebook (one per test module: creating one runs nbgrader's database migrations)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('course') / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("hw")
        gb.add_notebook("hw", "hw")
        gb.add_source_cell("setup", "hw", "hw", cell_type="code", locked=True, source=SETUP, checksum="s")
        gb.add_source_cell("answer", "hw", "hw", cell_type="code", locked=False, source=RELEASED_SOLUTION,
                           checksum="a")
        gb.add_source_cell("test", "hw", "hw", cell_type="code", locked=True, source=TEST, checksum="t")
        gb.add_solution_cell("answer", "hw", "hw")
        gb.add_grade_cell("test", "hw", "hw", max_score=2, cell_type="code")
        gb.add_student("alice")
    with Gradebook(url) as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore", SAWarning)   # nbgrader's own add_submission, as in its tests
        gb.add_submission("hw", "alice")
    return url


@pytest.fixture
def resources(gradebook, tmp_path):
    def make():
        return {"nbgrader": {"db_url": gradebook, "assignment": "hw", "notebook": "hw", "student": "alice"},
                "metadata": {"path": str(tmp_path)}}
    return make
