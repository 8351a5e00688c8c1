"""Every failure the grader writes into a cell is built one way (course_grader.cells)."""

import nbformat
import pytest

from course_grader import cells


def test_a_failure_is_an_error_output_first_in_the_cell_under_one_of_the_graders_names():
    cell = nbformat.v4.new_code_cell("assert f(1) == 2")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
    cells.fail(cell, cells.HIDDEN_FAILED, "AssertionError in a hidden test")
    first = cell.outputs[0]
    assert (first.output_type, first.ename, first.evalue) == ("error", "HiddenTestFailed",
                                                               "AssertionError in a hidden test")
    assert cells.has_error(cell, cells.HIDDEN_FAILED) and not cells.has_error(cell, cells.NOT_RUN)
    nbformat.validate(nbformat.v4.new_notebook(cells=[cell]))


def test_a_name_that_is_not_the_graders_is_refused():
    with pytest.raises(ValueError, match="not one of the grader's failures"):
        cells.error_output("AssertionError", "looks like a test's own failure")


def test_what_a_cell_is_to_the_grader():
    test = nbformat.v4.new_code_cell("", metadata={"nbgrader": {"grade": True, "solution": False, "grade_id": "t"}})
    answer = nbformat.v4.new_code_cell("", metadata={"nbgrader": {"grade": True, "solution": True, "grade_id": "a"}})
    plain = nbformat.v4.new_code_cell("")
    assert [cells.is_test(c) for c in (test, answer, plain)] == [True, False, False]
    assert [cells.grade_id(c) for c in (test, answer, plain)] == ["t", "a", ""]
