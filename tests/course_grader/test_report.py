"""The grading report (course_grader.report): typed, round-tripped, and shown as inert text."""

import nbformat
import pytest
from nbconvert.filters.markdown_mistune import markdown2html_mistune

from course_grader.report import (Diagnosis, Event, GradingReport, inert_markdown, note_for_review, notes_cell,
                                  take_notes_for_review, terminal_text)


def test_the_report_lives_once_in_nbgraders_resources_and_refuses_anything_else():
    resources = {}
    report = GradingReport.of(resources)
    assert GradingReport.of(resources) is report and resources["grading"] is report
    with pytest.raises(TypeError, match="not a GradingReport"):
        GradingReport.of({"grading": {"flags": ["planted"]}})


def test_events_are_of_known_kinds_and_say_where_they_happened():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "x", metadata={"nbgrader": {"grade_id": "q1"}}), nbformat.v4.new_code_cell("y")])
    report = GradingReport()
    report.event("cell_timeout", "slow", nb, 0)
    report.event("kernel_died", "died", nb, 1)
    report.event("not_run", "late")
    report.flag("look at this")
    assert [e.where for e in report.events] == ["cell q1", "cell 1", "the notebook"]
    assert report.notes() == ["cell q1: slow", "cell 1: died", "the notebook: late", "flagged for review: look at this"]
    with pytest.raises(ValueError, match="unknown grading event 'timeout'"):
        Event("timeout", "a kind nothing reads")


def test_the_json_report_reads_back_as_the_same_report(tmp_path):
    report = GradingReport(flags=["f"], hidden_pending=["q2"], recheck_seconds=0.5)
    report.event("budget", "ran out")
    report.diagnoses.append(Diagnosis(3, "q3", ["m"]))
    report.write(tmp_path / "r.json")
    assert GradingReport.read(tmp_path / "r.json") == report


def test_notes_are_inert_markdown_and_inert_terminal_text():
    hostile = "[click](javascript:alert(1)) <img src=x onerror=alert(1)>\n# heading\x1b[2J"
    html = markdown2html_mistune(notes_cell([hostile]).source)     # as nbconvert renders the feedback
    assert "<a " not in html and "<img" not in html and "<h1" not in html and "\x1b" not in html
    assert "javascript:alert(1)" in html                              # shown, as text
    assert inert_markdown("a_b*c") == r"a\_b\*c"
    assert terminal_text("ok\x1b[2J\nforged") == r"ok\x1b[2J\nforged"
    assert "id" not in notes_cell(["x"], nbformat_minor=4)


def test_only_the_sanitizing_pass_hands_notes_over_never_the_submission():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", metadata={"grading_notes": True})])
    nb.metadata["grading_notes"] = ["forged"]
    note_for_review(nb, "repaired")
    assert take_notes_for_review(nb) == ["repaired"]
    assert "grading_notes" not in nb.metadata and "grading_notes" not in nb.cells[0].metadata
    assert take_notes_for_review(nb) == []
