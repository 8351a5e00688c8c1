"""RepairCellMetadata: malformed nbgrader metadata is restored as released, or dropped, and noted."""

from conftest import released

from course_grader.preprocessors import RepairCellMetadata
from course_grader.report import take_notes_for_review


def test_a_known_cell_with_malformed_metadata_is_restored_as_released(resources):
    nb = released()
    nb.cells[2].metadata["nbgrader"]["points"] = "lots"          # a test cell whose points are text
    nb.cells[1].metadata["nbgrader"] = {"grade_id": "answer", "solution": "yes"}
    nb, _ = RepairCellMetadata().preprocess(nb, resources())
    test, answer = nb.cells[2].metadata["nbgrader"], nb.cells[1].metadata["nbgrader"]
    assert test["points"] == 2 and test["grade"] is True and test["locked"] is True and test["solution"] is False
    assert answer["solution"] is True and answer["grade"] is False and answer["locked"] is False
    [note] = take_notes_for_review(nb)
    assert "answer (restored as released)" in note and "test (restored as released)" in note


def test_malformed_metadata_of_an_unknown_or_mistyped_cell_is_dropped(resources):
    nb = released()
    nb.cells[0].metadata["nbgrader"] = ["not", "a", "mapping"]
    nb.cells[3].metadata["nbgrader"] = {"grade_id": "test", "grade": "maybe"}   # a Markdown cell claiming a test's id
    nb, _ = RepairCellMetadata().preprocess(nb, resources())
    assert "nbgrader" not in nb.cells[0].metadata and "nbgrader" not in nb.cells[3].metadata
    [note] = take_notes_for_review(nb)
    assert "cell 0 (dropped: now the student's own)" in note and "cell 3" in note


def test_well_formed_metadata_is_left_to_nbgrader_and_nothing_is_noted(resources):
    nb = released()
    before = [dict(cell.metadata) for cell in nb.cells]
    nb, _ = RepairCellMetadata().preprocess(nb, resources())
    assert [dict(cell.metadata) for cell in nb.cells] == before
    assert take_notes_for_review(nb) == []
