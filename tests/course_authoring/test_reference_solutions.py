"""The reference solutions agree with Keras, so hidden tests may compute their expected values with them.

Hidden tests draw their inputs at grading time (from the course's secret) and
compare the student's answer with ``reference``: the source notebook's own
solution (:mod:`course_grader.hidden_tests`).  That is only as good as the
solution, so here every solution is checked against the real Keras layers (or,
where none exists, an independent implementation) on the cases
:mod:`course_authoring.references` generates with them: the comparisons the
hidden tests made when they stored Keras's outputs.
"""

import numpy as np
import pytest

from grading_support import SOLUTIONS

from course_authoring import references
from course_grader.hidden_tests import reference_solution

#: generator -> (assignment, a check run with the solution's names and ``data``, the Keras cases)
KERAS_CHECKS = {
    "softmax_stability_hidden": ("a1_softmax_additive", """
for name, case in data.items():
    check_close(softmax(case["x"]), case["expected"], name)"""),
    "softmax_axes_hidden": ("a1_softmax_additive", """
for name, case in data.items():
    check_close(softmax(case["x"], axis=int(case["axis"])), case["expected"], name)"""),
    "softmax_masks_hidden": ("a1_softmax_additive", """
for name, case in data.items():
    check_close(softmax(case["x"], mask=case["mask"]), case["expected"], name)"""),
    "additive_hidden": ("a1_softmax_additive", """
for name, case in data.items():
    output, weights = additive_attention(case["query"], case["key"], case["value"], scale=case.get("scale"),
                                         query_mask=case.get("query_mask"), value_mask=case.get("value_mask"))
    check_close(weights, case["weights"], name)
    check_close(output, case["output"], name)"""),
    "dot_scores_hidden": ("a2_dot_product", """
for name, case in data.items():
    check_close(dot_product_scores(case["query"], case["key"], scale=float(case["scale"])), case["expected"], name)"""),
    "causal_hidden": ("a2_dot_product", """
for name, case in data.items():
    check_equal(causal_mask(int(case["T_q"]), int(case["T_k"])), case["expected"], name)"""),
    "attention_hidden": ("a2_dot_product", """
for name, case in data.items():
    output, weights = attention(case["query"], case["key"], case["value"], scale=float(case["scale"]),
                                query_mask=case.get("query_mask"), value_mask=case.get("value_mask"))
    check_close(weights, case["weights"], name)
    check_close(output, case["output"], name)"""),
    "attention_causal_hidden": ("a2_dot_product", """
for name, case in data.items():
    output, weights = attention(case["query"], case["key"], case["value"], scale=float(case["scale"]),
                                value_mask=case.get("value_mask"), use_causal_mask=True)
    check_close(weights, case["weights"], name)
    check_close(output, case["output"], name)"""),
    "scaled_hidden": ("a2_dot_product", """
for name, case in data.items():
    output, weights = scaled_dot_product_attention(case["query"], case["key"], case["value"], mask=case.get("mask"))
    check_close(weights, case["weights"], name)
    check_close(output, case["output"], name)"""),
    "split_hidden": ("a4_multi_head", """
for name, case in data.items():
    check_equal(split_heads(case["x"], int(case["num_heads"])), case["expected"], name)
    check_equal(merge_heads(case["expected"]), case["x"], name)"""),
    "mha_hidden": ("a4_multi_head", """
for name, case in data.items():
    output, scores = multi_head_attention(case["query"], case["value"], layer_weights(case), key=case.get("key"))
    check_close(scores, case["scores"], name)
    check_close(output, case["output"], name)"""),
    "mha_masks_hidden": ("a4_multi_head", """
for name, case in data.items():
    output, scores = multi_head_attention(case["query"], case["value"], layer_weights(case),
                                          attention_mask=case.get("attention_mask"),
                                          use_causal_mask=bool(case["causal"]))
    check_close(scores, case["scores"], name)
    check_close(output, case["output"], name)"""),
    "positional_hidden": ("a6_position_norm", """
for name, case in data.items():
    check_close(positional_encoding(int(case["length"]), int(case["d_model"])), case["expected"], name)"""),
    # atol 2e-5: on inputs near 100 Keras's float32 layer norm is itself ~2.5e-5 from float64 (measured)
    "layer_norm_hidden": ("a6_position_norm", """
for name, case in data.items():
    check_close(layer_norm(case["x"], case["gamma"], case["beta"], epsilon=float(case["epsilon"])),
                case["expected"], name, atol=2e-5)"""),
    "residual_hidden": ("a6_position_norm", """
for name, case in data.items():
    if name.startswith("post"):
        result = add_and_norm(case["x"], case["sublayer_output"], case["gamma"], case["beta"])
    else:
        W, b = case["W"], case["b"]
        result = pre_norm_residual(case["x"], lambda h: h @ W + b, case["gamma"], case["beta"])
    check_close(result, case["expected"], name)"""),
    "ffn_hidden": ("a8_encoder_block", """
for name, case in data.items():
    check_close(feed_forward(case["x"], case["W1"], case["b1"], case["W2"], case["b2"]), case["expected"], name)"""),
    "encoder_hidden": ("a8_encoder_block", """
for name, case in data.items():
    check_close(encoder_block(case["x"], block_params(case), padding_mask=case.get("padding_mask")),
                case["expected"], name)"""),
    "encoder_pre_ln_hidden": ("a8_encoder_block", """
for name, case in data.items():
    check_close(encoder_block_pre_ln(case["x"], block_params(case), padding_mask=case.get("padding_mask")),
                case["expected"], name)"""),
    "patches_hidden": ("a12_vit_patches", """
for name, case in data.items():
    check_equal(patchify(case["images"], int(case["patch_size"])), case["expected"], name)
    _, H, W, _ = case["images"].shape
    check_equal(unpatchify(case["expected"], int(case["patch_size"]), H, W), case["images"], name)"""),
    "embed_hidden": ("a12_vit_patches", """
for name, case in data.items():
    tokens = embed_patches(case["images"], int(case["patch_size"]), case["W"], case["b"],
                           case["class_token"], case["position_embeddings"])
    check_close(tokens, case["expected"], name)"""),
    "gqa_hidden": ("a5_grouped_query_attention", """
for name, case in data.items():
    output, scores = grouped_query_attention(case["query"], case["value"], layer_weights(case), key=case.get("key"))
    check_close(scores, case["scores"], name)
    check_close(output, case["output"], name)"""),
    "gqa_masks_hidden": ("a5_grouped_query_attention", """
for name, case in data.items():
    output, scores = grouped_query_attention(case["query"], case["value"], layer_weights(case), key=case.get("key"),
                                             attention_mask=case.get("attention_mask"),
                                             use_causal_mask=bool(case["causal"]))
    check_close(scores, case["scores"], name)
    check_close(output, case["output"], name)"""),
    # mean pooling: by construction (heads = their group's head + a disturbance that averages to 0
    # in the group), and a keras.layers.MultiHeadAttention whose heads agree within each group
    "gqa_pool_hidden": ("a5_grouped_query_attention", """
for name, case in data.items():
    if name.endswith("_layer"):
        weights = layer_weights(case)
        for part in ("key", "value"):
            weights[part + "_kernel"], weights[part + "_bias"] = mean_pool_heads(
                weights[part + "_kernel"], weights[part + "_bias"], int(case["num_key_value_heads"]))
        output, _ = grouped_query_attention(case["query"], case["query"], weights)
        check_close(output, case["output"], name)
    else:
        kernel, bias = mean_pool_heads(case["kernel"], case["bias"], int(case["num_key_value_heads"]))
        check_close(kernel, case["kernel_expected"], name)
        check_close(bias, case["bias_expected"], name)"""),
    "gqa_params_hidden": ("a5_grouped_query_attention", """
for name, case in data.items():
    count = attention_parameters(int(case["d_model"]), int(case["head_dim"]), int(case["num_query_heads"]),
                                 int(case["num_key_value_heads"]))
    check_equal(count, case["expected"], name)"""),
    "rotary_angles_hidden": ("a7_rotary_positions", """
for name, case in data.items():
    check_close(rotary_angles(case["positions"], int(case["d"]), base=float(case["base"])), case["expected"], name)"""),
    "rotary_hidden": ("a7_rotary_positions", """
for name, case in data.items():
    check_close(apply_rotary(case["x"], case["positions"], base=float(case["base"])), case["expected"], name)"""),
    "rotary_attention_hidden": ("a7_rotary_positions", """
for name, case in data.items():
    output, weights = rotary_attention(case["query"], case["key"], case["value"], case["query_positions"],
                                       case["key_positions"], use_causal_mask=bool(case["causal"]))
    check_close(weights, case["weights"], name)
    check_close(output, case["output"], name)"""),
}


def test_every_generator_checks_a_solution_or_fills_a_block():
    import nbformat

    blocks = {name for path in SOLUTIONS.glob("*/*.ipynb")
              for cell in nbformat.read(path, as_version=4).cells for name in references.blocks_in(cell.source)}
    assert blocks.isdisjoint(KERAS_CHECKS)
    assert blocks | set(KERAS_CHECKS) == set(references.GENERATORS)


@pytest.mark.parametrize("generator", sorted(KERAS_CHECKS))
def test_the_reference_solution_matches_keras(generator):
    assignment, check = KERAS_CHECKS[generator]
    solution = reference_solution(SOLUTIONS / assignment / f"{assignment}.ipynb")
    namespace = dict(vars(solution), np=np, data=references.GENERATORS[generator]())
    exec(compile(check, f"<{generator}>", "exec"), namespace)


def test_a_wrong_solution_would_be_caught():
    """The checks can fail: a softmax without the max subtraction overflows on the large scores."""
    namespace = dict(vars(reference_solution(SOLUTIONS / "a1_softmax_additive" / "a1_softmax_additive.ipynb")))
    namespace.update(np=np, data=references.GENERATORS["softmax_stability_hidden"](),
                     softmax=lambda x, axis=-1, mask=None: np.exp(x) / np.exp(x).sum(axis, keepdims=True))
    with np.errstate(all="ignore"), pytest.raises(AssertionError):
        exec(compile(KERAS_CHECKS["softmax_stability_hidden"][1], "<check>", "exec"), namespace)
