"""WriteGradingReport: the report as JSON, as a notes cell and as the gradebook's flag; nothing of the
submission's own writes it; hidden tests that nothing ran score 0."""

from conftest import released
from nbgrader.api import Gradebook

from course_grader import cells
from course_grader.preprocessors import WriteGradingReport
from course_grader.report import NOTES_CELL_KEY, NOTES_TITLE, GradingReport, note_for_review


def _flagged(url) -> bool:
    with Gradebook(url) as gb:
        return gb.find_submission_notebook("hw", "hw", "alice").flagged


def test_events_and_flags_become_the_json_report_a_notes_cell_and_the_gradebooks_flag(resources, tmp_path):
    nb, res = released(), resources()
    report = GradingReport.of(res)
    report.event("cell_timeout", "the cell reached its time limit", nb, 1)
    note_for_review(nb, "malformed nbgrader metadata was repaired: cell 3")
    assert not _flagged(res["nbgrader"]["db_url"])
    nb, _ = WriteGradingReport().preprocess(nb, res)
    written = GradingReport.read(tmp_path / ".grading-report-hw.json")
    assert written == report and written.flags == ["malformed nbgrader metadata was repaired: cell 3"]
    notes = nb.cells[0]
    assert notes.metadata == {NOTES_CELL_KEY: True} and notes.source.startswith(NOTES_TITLE)
    assert "cell answer: the cell reached its time limit" in notes.source
    assert "flagged for review: malformed nbgrader metadata was repaired: cell 3" in notes.source
    assert _flagged(res["nbgrader"]["db_url"])


def test_grading_notes_the_submission_wrote_itself_are_dropped(resources):
    nb, res = released(), resources()
    nb.metadata[NOTES_CELL_KEY] = ["forged: all tests passed"]
    nb.cells[1].metadata[NOTES_CELL_KEY] = True
    nb.metadata["grading_notes_0123456789abcdef"] = ["forged flag under a guessed key"]
    nb, _ = WriteGradingReport().preprocess(nb, res)
    report = GradingReport.of(res)
    assert report.flags == [] and report.events == []
    assert NOTES_CELL_KEY not in nb.metadata and NOTES_CELL_KEY not in nb.cells[1].metadata
    assert not nb.cells[0].source.startswith(NOTES_TITLE)     # nothing happened: no notes cell


def test_hidden_tests_withheld_and_never_run_score_0(resources):
    nb, res = released(), resources()
    GradingReport.of(res).hidden_pending = ["test"]
    nb, _ = WriteGradingReport().preprocess(nb, res)
    test = [c for c in nb.cells if cells.grade_id(c) == "test"][0]
    assert cells.has_error(test, cells.HIDDEN_NOT_RUN)
    report = GradingReport.of(res)
    assert report.hidden_pending == [] and [e.kind for e in report.events] == ["hidden_not_run"]
