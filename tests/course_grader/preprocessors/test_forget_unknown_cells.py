"""ForgetUnknownCells: a cell whose nbgrader id the assignment does not have becomes the student's own."""

from conftest import released

from course_grader.preprocessors import ForgetUnknownCells
from course_grader.report import take_notes_for_review


def test_a_renamed_cell_loses_its_nbgrader_metadata_and_keeps_its_code(resources):
    nb = released()
    nb.cells[2].metadata["nbgrader"]["grade_id"] = "my-own-test"
    nb.cells[2].source = "assert True"
    nb, _ = ForgetUnknownCells().preprocess(nb, resources())
    assert "nbgrader" not in nb.cells[2].metadata and nb.cells[2].source == "assert True"
    assert nb.cells[1].metadata["nbgrader"]["grade_id"] == "answer"      # known ids keep theirs
    assert take_notes_for_review(nb) == ["cells with unknown nbgrader ids were treated as the student's own: "
                                         "my-own-test"]


def test_a_notebook_with_only_the_assignments_ids_is_unchanged(resources):
    nb = released()
    nb, _ = ForgetUnknownCells().preprocess(nb, resources())
    assert [c.metadata["nbgrader"]["grade_id"] for c in nb.cells[:3]] == ["setup", "answer", "test"]
    assert take_notes_for_review(nb) == []
