"""An assignment's policy, and submissions whose metadata is broken: each ends graded, with a reason.

* The course forbids TensorFlow and Keras in every assignment (the exercises
  re-implement their layers in NumPy): a submission that calls the Keras layer
  loses those tests, and its feedback says why.
* A notebook whose nbgrader metadata is malformed in any of several ways is
  graded on its code, with a note: the assignment's cells get their metadata
  as released, other malformed metadata is dropped.  Nothing is left
  "failed", so the command's exit status stays 0.
"""

import copy

import pytest

from grading_support import (autograded, cell, cell_scores, feedback_html, graded_batch, max_scores,
                             outputs_text, solved_notebook)

A = "a1_softmax_additive"
KERAS_ADDITIVE = '''
import keras


def additive_attention(query, key, value, scale=None, query_mask=None, value_mask=None):
    layer = keras.layers.AdditiveAttention(use_scale=scale is not None)
    masks = None if value_mask is None else [query_mask, value_mask]
    output, weights = layer([query, value, key], mask=masks, return_attention_scores=True)
    return np.asarray(output), np.asarray(weights)
'''


def _with_metadata(change):
    nb = copy.deepcopy(solved_notebook(A))
    change(nb)
    return nb


def _set(gid, key, value):
    def change(nb):
        cell(nb, gid).metadata["nbgrader"][key] = value
    return change


MALFORMED = {
    "points-not-a-number": _set("softmax_visible", "points", "ten"),
    "grade-id-a-number": _set("softmax_visible", "grade_id", 5),
    "grade-id-a-list": _set("softmax", "grade_id", ["softmax"]),
    "schema-from-the-future": _set("softmax_visible", "schema_version", 99),
    "nbgrader-a-list": lambda nb: cell(nb, "softmax").metadata.update(nbgrader=["solution"]),
    "nbgrader-null": lambda nb: cell(nb, "softmax_visible").metadata.update(nbgrader=None),
    "graded-markdown-without-points": lambda nb: nb.cells[0].metadata.update(nbgrader={
        "grade": True, "solution": True, "locked": False, "schema_version": 3, "grade_id": "essay",
        "task": False}),
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    keras_user = copy.deepcopy(solved_notebook(A))
    cell(keras_user, "additive_attention").source = KERAS_ADDITIVE
    submissions = {"keras-user": keras_user}
    submissions.update({name: _with_metadata(change) for name, change in MALFORMED.items()})
    return graded_batch(tmp_path_factory, "policy", A, submissions)


def test_the_forbidden_layer_earns_nothing_and_the_feedback_says_why(report):
    scores, full = cell_scores(report, "keras-user"), max_scores(A)
    assert scores["additive_visible"] == scores["additive_keras"] == 0
    assert {c: scores[c] for c in full if c.startswith("softmax")} == \
        {c: full[c] for c in full if c.startswith("softmax")}
    assert "grading policy forbids it" in outputs_text(autograded(report, "keras-user"), "additive_attention")
    assert "grading policy forbids it" in feedback_html(report, "keras-user")


@pytest.mark.parametrize("student", sorted(MALFORMED))
def test_malformed_metadata_is_repaired_and_the_code_graded(report, student):
    result = report["by_student"][student]
    assert result["status"] == "graded" and cell_scores(report, student) == max_scores(A), result
    assert any("malformed nbgrader metadata was repaired" in flag or "unknown nbgrader ids" in flag
               for flag in result["flags"]), result["flags"]


def test_the_run_counts_no_failure(report):
    assert report["failed"] == 0
    assert report["graded"] + report["unreadable"] == len(report["results"])


def test_the_report_says_how_this_configuration_grades(report):
    policy = report["policy"]
    assert "Python kernel (whatever kernel it declares)" in policy and "partial credit off" in policy
    assert "stderr in a test cell does not fail it" in policy and "forbidden imports: tensorflow, keras" in policy
