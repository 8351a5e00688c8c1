"""Every assignment, graded end to end by the grading command (course_grader).

For each assignment: the instructor's solution scores full marks; the student
notebook as released scores zero and grading completes; plausible wrong answers
each lose the points of the tests aimed at them (and keep the others); nothing
honest is flagged; feedback shows no hidden test's code or data; the grades CSV agrees.
"""

import csv
import html
import runpy

import pytest

from grading_support import (ASSIGNMENTS, HIDDEN_BLOCK, ROOT, WRONG_ANSWERS, cell_scores, feedback_html,
                             graded_batch, max_scores, solved_notebook, student_notebook, wrong_answer,
                             written_answers)



def _batch(tmp_path_factory, assignment):
    submissions = {"solution": solved_notebook(assignment), "blank": student_notebook(assignment)}
    for name in WRONG_ANSWERS[assignment]:
        submissions[name.replace("_", "-")] = wrong_answer(assignment, name)
    return graded_batch(tmp_path_factory, assignment, assignment, submissions)


def test_every_assignment_has_wrong_answers():
    assert set(WRONG_ANSWERS) == set(ASSIGNMENTS)
    assert len(ASSIGNMENTS) >= 6


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_scores_full_marks(tmp_path_factory, assignment):
    report = _batch(tmp_path_factory, assignment)
    result = report["by_student"]["solution"]
    assert result["status"] == "graded" and result["flags"] == [] and result["events"] == []
    scores, written = cell_scores(report, "solution"), written_answers(assignment)
    assert {c: s for c, s in scores.items() if c not in written} == \
        {c: s for c, s in max_scores(assignment).items() if c not in written}
    # Written answers score nothing yet: they wait for the instructor, in the formgrader.
    assert all(scores[c] == 0 for c in written)
    assert result["manual_points"] == sum(written.values())
    assert result["score"] == result["max_score"] - result["manual_points"] == 10
    assert result["diagnoses"] == []


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_unchanged_exercise_scores_zero(tmp_path_factory, assignment):
    report = _batch(tmp_path_factory, assignment)
    result = report["by_student"]["blank"]
    assert result["status"] == "graded" and result["flags"] == []
    assert set(cell_scores(report, "blank").values()) == {0.0}
    assert result["diagnoses"] == []   # a stub that raises is no catalogued mistake


@pytest.mark.parametrize("assignment, wrong", [(a, w) for a in WRONG_ANSWERS for w in WRONG_ANSWERS[a]])
def test_wrong_answer_loses_the_points_aimed_at_it(tmp_path_factory, assignment, wrong):
    report = _batch(tmp_path_factory, assignment)
    student = wrong.replace("_", "-")
    scores, full = cell_scores(report, student), max_scores(assignment)
    _, loses, keeps = WRONG_ANSWERS[assignment][wrong]
    assert {c: scores[c] for c in loses} == {c: 0.0 for c in loses}
    assert {c: scores[c] for c in keeps} == {c: full[c] for c in keeps}
    assert report["by_student"][student]["flags"] == []   # wrong is not tampering


@pytest.mark.parametrize("assignment, wrong", [(a, w) for a in WRONG_ANSWERS for w in WRONG_ANSWERS[a]])
def test_wrong_answer_is_named_in_the_feedback(tmp_path_factory, assignment, wrong):
    """A catalogued mistake, handed in, is diagnosed as itself, and as nothing else but a part of
    itself (a test of patchify alone sees only the patchify half of a two-function mistake)."""
    report = _batch(tmp_path_factory, assignment)
    student = wrong.replace("_", "-")
    diagnoses = report["by_student"][student]["diagnoses"]
    named = {name for d in diagnoses for name in d.split(": ", 1)[1].split(", ")}
    catalogue = runpy.run_path(str(ROOT / "solutions" / assignment / "mistakes.py"))["MISTAKES"]
    own = {tuple(e) for e in catalogue[wrong]["edits"]}
    assert wrong in named, f"{wrong}: no failed hidden test named it ({diagnoses})"
    assert all({tuple(e) for e in catalogue[n]["edits"]} <= own for n in named), diagnoses
    assert catalogue[wrong]["explain"] in html.unescape(feedback_html(report, student))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_feedback_hides_hidden_tests(tmp_path_factory, assignment):
    report = _batch(tmp_path_factory, assignment)
    for student in ("solution", "blank"):
        html = feedback_html(report, student)
        assert "BEGIN HIDDEN TESTS" not in html and not HIDDEN_BLOCK.search(html)
        assert "Hidden tests (" in html          # the visible comment of each hidden cell remains
    # The blank exercise fails its hidden tests in the grader: the feedback names the test's
    # complaint (the stub raised), never the test's code or data.
    assert "HiddenTestFailed" in feedback_html(report, "blank")
    assert "your code raised NotImplementedError during a hidden test" in feedback_html(report, "blank")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grades_csv_matches_the_gradebook(tmp_path_factory, assignment):
    report = _batch(tmp_path_factory, assignment)
    with open(report["grades_csv"]) as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert set(rows) == set(report["by_student"])
    for student, row in rows.items():
        assert row["assignment"] == assignment
        assert float(row["score"]) == sum(cell_scores(report, student).values())


def test_a_graded_run_does_not_execute_the_practice_call(tmp_path_factory):
    """The last cell (course_grader.practice, tagged skip-execution) is skipped by the graded run."""
    from grading_support import autograded

    report = _batch(tmp_path_factory, "a1_softmax_additive")
    last = autograded(report, "solution").cells[-1]
    assert "course_grader.practice" in last.source and last.metadata.get("tags") == ["skip-execution"]
    assert last.outputs == [] and last.execution_count is None
