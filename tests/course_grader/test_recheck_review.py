"""Every point the re-check takes reaches the instructor, with its reason, and is never given back unasked.

A submission whose answer behaves one way in the notebook's kernel and another
in the re-check's process (here: it raises only outside a Jupyter kernel) is
what an instructor must look at: either the re-check failed an honest student,
or a student tried to make the re-check disagree.  Either way the cell keeps the
re-check's 0 (a disagreement is reviewed, not rewarded), the submission is
flagged in the gradebook, and the flag, the report and the grades CSV's
``review`` column say which test, which error, in which process.
"""

import csv

import pytest

from grading_support import cell_scores, edited, graded_batch, max_scores, solved_notebook

ASSIGNMENT = "a1_softmax_additive"
ONLY_IN_A_KERNEL = ("if type(get_ipython()).__name__ != 'ZMQInteractiveShell':\n"
                    "    raise RuntimeError('this answer runs only in a Jupyter kernel')\n")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    honest = solved_notebook(ASSIGNMENT)
    first = next(c for c in honest.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "softmax")
    diverging = edited(honest, "softmax", first.source, ONLY_IN_A_KERNEL + first.source)
    return graded_batch(tmp_path_factory, "recheck-review", ASSIGNMENT, {"honest": honest, "diverging": diverging})


def test_an_honest_student_gets_every_point_and_no_flag(graded):
    assert graded["by_student"]["honest"]["flags"] == []
    assert cell_scores(graded, "honest") == {k: v for k, v in max_scores(ASSIGNMENT).items()}


def test_a_disagreement_keeps_the_re_checks_zero_and_is_flagged_with_its_reason(graded):
    scores = cell_scores(graded, "diverging")
    for test in ("softmax_visible", "softmax_stability", "softmax_axes", "softmax_masks"):
        assert scores[test] == 0, test           # not rewarded: the re-check's verdict stands
    flags = graded["by_student"]["diverging"]["flags"]
    cause = ("the student's cell softmax raised RuntimeError in the re-check's student process, "
             "and not in the notebook")
    visible = [f for f in flags if f.startswith("test 'softmax_visible' passes only inside the notebook")]
    hidden = [f for f in flags if f.startswith("hidden test 'softmax_stability' scored 0 in the re-check, "
                                               "for review")]
    assert visible and cause in visible[0] and "NameError raised in the grader's process" in visible[0]
    assert hidden and cause in hidden[0], flags


def test_the_grades_csv_and_the_gradebook_say_so(graded):
    from nbgrader.api import Gradebook

    with open(graded["grades_csv"], newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert rows["honest"]["review"] == ""
    assert "softmax_stability" in rows["diverging"]["review"] and "RuntimeError" in rows["diverging"]["review"]
    with Gradebook(f"sqlite:///{graded['course'] / 'gradebook.db'}") as gb:
        flagged = {nb.name: nb.flagged for nb in gb.find_submission(ASSIGNMENT, "diverging").notebooks}
    assert flagged == {ASSIGNMENT: True}
