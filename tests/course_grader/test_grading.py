"""Every assignment, graded end to end by the grading command (course_grader).

For each assignment: the instructor's solution scores full marks; the student
notebook as released scores zero and grading completes; plausible wrong answers
each lose the points of the tests aimed at them (and keep the others); nothing
honest is flagged; feedback shows no hidden test's code or data; the grades CSV agrees.
"""

import csv

import pytest

from grading_support import (ASSIGNMENTS, HIDDEN_BLOCK, cell_scores, edited, feedback_html,
                             graded_batch, max_scores, solved_notebook, student_notebook)

# name: ([(cell, old, new), ...], cells that must score 0, cells that must keep full marks)
WRONG_ANSWERS = {
    "a1_softmax_additive": {
        "no_max_subtraction": (
            [("softmax", "shifted = x - x.max(axis=axis, keepdims=True)", "shifted = x"),
             ("softmax", "e = np.exp(masked - row_max)", "e = np.exp(masked)")],
            ["softmax_stability"], ["softmax_visible", "softmax_axes", "additive_keras"]),
        "softmax_over_last_axis_only": (
            [("softmax", "axis=axis", "axis=-1", 4)],
            ["softmax_axes"], ["softmax_visible", "softmax_stability", "softmax_masks"]),
        "mask_applied_after_softmax": (
            [("softmax", "mask = np.broadcast_to(np.asarray(mask, dtype=bool), x.shape)",
              "return np.where(mask, softmax(x, axis), 0.0)")],
            ["softmax_visible", "softmax_masks"], ["softmax_stability", "softmax_axes"]),
        "no_tanh": (
            [("additive_attention", "np.tanh(query[:, :, None, :] + key[:, None, :, :])",
              "(query[:, :, None, :] + key[:, None, :, :])")],
            ["additive_visible", "additive_keras"], ["softmax_visible", "softmax_masks"]),
        "query_mask_ignored": (
            [("additive_attention", "if query_mask is not None:", "if False:")],
            ["additive_keras"], ["additive_visible"]),
    },
    "a2_dot_product": {
        "unscaled_scores": (
            [("scaled_dot_product_attention", "1.0 / np.sqrt(d_k)", "1.0")],
            ["scaled_visible", "scaled_hidden"], ["attention_visible", "attention_masks"]),
        "off_by_one_causal_mask": (
            [("causal_mask", "<= np.arange(T_q)", "< np.arange(T_q)")],
            ["causal_visible", "causal_hidden", "attention_causal"], ["attention_masks", "scaled_hidden"]),
        "mask_applied_after_softmax": (
            [("attention", "scores = np.where(visible, scores, scores - 1e9)\n    weights = softmax(scores, axis=-1)",
              "weights = softmax(scores, axis=-1) * visible")],
            ["attention_visible", "attention_masks", "attention_causal"], ["scaled_hidden", "causal_hidden"]),
        "softmax_over_queries": (
            [("attention", "weights = softmax(scores, axis=-1)", "weights = softmax(scores, axis=-2)")],
            ["attention_visible", "attention_masks"], ["scores_hidden", "scaled_hidden"]),
    },
    "a3_multi_head": {
        "heads_split_in_wrong_order": (
            [("heads", "x.reshape(batch, T, num_heads, width // num_heads).transpose(0, 2, 1, 3)",
              "x.reshape(batch, num_heads, T, width // num_heads)")],
            ["heads_visible", "heads_hidden", "mha_visible", "mha_hidden"], []),
        "heads_merged_in_wrong_order": (
            [("heads", "x.transpose(0, 2, 1, 3).reshape(batch, T, num_heads * depth)",
              "x.reshape(batch, T, num_heads * depth)")],
            ["heads_visible", "heads_hidden", "mha_visible", "mha_hidden"], []),
        "unscaled_scores": (
            [("multi_head_attention", " / np.sqrt(q.shape[-1])", "")],
            ["mha_visible", "mha_hidden", "mha_masks_hidden"], ["heads_visible", "heads_hidden"]),
        "mask_applied_after_softmax": (
            [("multi_head_attention", "scores = np.where(visible[:, None], scores, -np.inf)", "pass"),
             ("multi_head_attention", "where=total > 0)", "where=total > 0) * visible[:, None]")],
            ["mha_masks_hidden"], ["mha_visible", "mha_hidden"]),
    },
    "a4_position_norm": {
        "sin_and_cos_swapped": (
            [("positional_encoding", "pe[:, 0::2] = np.sin(angles)", "pe[:, 0::2] = np.cos(angles)"),
             ("positional_encoding", "pe[:, 1::2] = np.cos(angles)", "pe[:, 1::2] = np.sin(angles)")],
            ["positional_visible", "positional_hidden"], ["layer_norm_hidden"]),
        "no_epsilon": (
            [("layer_norm", "np.sqrt(variance + epsilon)", "np.sqrt(variance)")],
            ["layer_norm_visible", "layer_norm_hidden"], ["positional_hidden"]),
        "missing_residual": (
            [("residuals", "layer_norm(np.asarray(x) + sublayer_output, gamma, beta)",
              "layer_norm(sublayer_output, gamma, beta)")],
            ["residual_visible", "residual_hidden"], ["layer_norm_hidden"]),
        # Every function wrong together: the residual tests' references do not come from layer_norm.
        "layer_norm_without_normalising": (
            [("layer_norm", "return gamma * (x - mean) / np.sqrt(variance + epsilon) + beta",
              "return gamma * x + beta")],
            ["layer_norm_visible", "layer_norm_hidden", "residual_visible", "residual_hidden"],
            ["positional_visible", "positional_hidden"]),
    },
    "a5_encoder_block": {
        "missing_residual": (
            [("encoder_block", "layer_norm(x + multi_head_attention(", "layer_norm(multi_head_attention(")],
            ["encoder_visible", "encoder_hidden"], ["ffn_hidden", "pre_ln_hidden"]),
        "padding_mask_ignored": (
            [("encoder_block", "mask = None if padding_mask is None else", "mask = None if True else")],
            ["encoder_hidden"], ["encoder_visible", "pre_ln_hidden"]),
        "pre_ln_missing_residual": (
            [("encoder_block_pre_ln", "h = x + multi_head_attention(", "h = multi_head_attention(")],
            ["pre_ln_visible", "pre_ln_hidden"], ["encoder_hidden"]),
    },
    "a6_vit_patches": {
        "reshape_without_transpose": (
            [("patchify", "P, C).transpose(0, 1, 3, 2, 4, 5)", "P, C)")],
            ["patchify_visible", "patchify_hidden", "embed_hidden"], ["unpatchify_hidden"]),
        "channels_flattened_first": (   # the visible test uses one channel: only hidden tests see it
            [("patchify", "transpose(0, 1, 3, 2, 4, 5)", "transpose(0, 1, 3, 5, 2, 4)")],
            ["patchify_hidden", "embed_hidden"], ["patchify_visible"]),
        "class_token_last": (
            [("embed_patches", "np.concatenate([cls, tokens], axis=1)", "np.concatenate([tokens, cls], axis=1)")],
            ["embed_visible", "embed_hidden"], ["patchify_hidden"]),
        # patchify and unpatchify wrong in the same way: a round trip alone would not see it.
        "patches_without_transpose_both_ways": (
            [("patchify", "P, C).transpose(0, 1, 3, 2, 4, 5)", "P, C)"),
             ("unpatchify", "grid = patches.reshape(batch, height // P, width // P, P, P, C).transpose(0, 1, 3, 2, 4, 5)\n"
                            "    return grid.reshape(batch, height, width, C)",
              "return patches.reshape(batch, height, width, C)")],
            ["patchify_visible", "patchify_hidden", "unpatchify_visible", "unpatchify_hidden"], []),
    },
}


def _wrong(assignment, name):
    nb = solved_notebook(assignment)
    for edit in WRONG_ANSWERS[assignment][name][0]:
        cell_id, old, new, *count = edit
        nb = edited(nb, cell_id, old.replace("\n", "\n"), new, *(count or [1]))
    return nb


def _batch(tmp_path_factory, assignment):
    submissions = {"solution": solved_notebook(assignment), "blank": student_notebook(assignment)}
    for name in WRONG_ANSWERS[assignment]:
        submissions[name.replace("_", "-")] = _wrong(assignment, name)
    return graded_batch(tmp_path_factory, assignment, assignment, submissions)


def test_every_assignment_has_wrong_answers():
    assert set(WRONG_ANSWERS) == set(ASSIGNMENTS)
    assert len(ASSIGNMENTS) >= 6


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_scores_full_marks(tmp_path_factory, assignment):
    report = _batch(tmp_path_factory, assignment)
    result = report["by_student"]["solution"]
    assert result["status"] == "graded" and result["flags"] == [] and result["events"] == []
    assert cell_scores(report, "solution") == max_scores(assignment)
    assert result["score"] == result["max_score"] == 10


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_unchanged_exercise_scores_zero(tmp_path_factory, assignment):
    report = _batch(tmp_path_factory, assignment)
    result = report["by_student"]["blank"]
    assert result["status"] == "graded" and result["flags"] == []
    assert set(cell_scores(report, "blank").values()) == {0.0}


@pytest.mark.parametrize("assignment, wrong", [(a, w) for a in WRONG_ANSWERS for w in WRONG_ANSWERS[a]])
def test_wrong_answer_loses_the_points_aimed_at_it(tmp_path_factory, assignment, wrong):
    report = _batch(tmp_path_factory, assignment)
    student = wrong.replace("_", "-")
    scores, full = cell_scores(report, student), max_scores(assignment)
    _, loses, keeps = WRONG_ANSWERS[assignment][wrong]
    assert {c: scores[c] for c in loses} == {c: 0.0 for c in loses}
    assert {c: scores[c] for c in keeps} == {c: full[c] for c in keeps}
    assert report["by_student"][student]["flags"] == []   # wrong is not tampering


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
