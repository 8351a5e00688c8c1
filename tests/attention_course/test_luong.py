"""Luong's dot / general / concat scores: the definitions, and == keras.layers.Attention."""

import keras
import numpy as np
import pytest

from attention_course.attention import additive_attention, dot_product_attention
from attention_course.luong import luong_attention, luong_scores
from attention_course.masks import causal_mask, combine_masks, key_padding_mask
from attention_course.softmax import softmax
from conftest import tolerance


def loop_scores(h_t, h_s, score, W_a=None, v_a=None):
    """The paper's formulas, one pair (t, s) at a time: the slow, obvious reference."""
    out = np.empty((len(h_t), len(h_s)))
    for t, q in enumerate(h_t):
        for s, k in enumerate(h_s):
            if score == "dot":
                out[t, s] = q @ k
            elif score == "general":
                out[t, s] = q @ W_a @ k
            else:
                out[t, s] = v_a @ np.tanh(np.concatenate([q, k]) @ W_a)
    return out


@pytest.mark.parametrize("score, d_q, d_k", [("dot", 4, 4), ("general", 4, 4), ("general", 3, 5),
                                              ("concat", 4, 4), ("concat", 3, 5)])
def test_scores_are_the_papers_formulas(rng, score, d_q, d_k):
    B, T_q, T_k, d_a = 2, 3, 4, 6
    q, k = rng.normal(size=(B, T_q, d_q)), rng.normal(size=(B, T_k, d_k))
    weights = {"dot": {}, "general": {"W_a": rng.normal(size=(d_q, d_k))},
               "concat": {"W_a": rng.normal(size=(d_q + d_k, d_a)), "v_a": rng.normal(size=d_a)}}[score]
    scores = luong_scores(q, k, score, **weights)
    assert scores.shape == (B, T_q, T_k)
    for b in range(B):
        np.testing.assert_allclose(scores[b], loop_scores(q[b], k[b], score, **weights), rtol=1e-12)


def test_general_with_identity_is_dot(rng):
    q, k = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    np.testing.assert_allclose(luong_scores(q, k, "general", W_a=np.eye(4)), luong_scores(q, k, "dot"),
                               rtol=1e-12)


def test_concat_is_bahdanaus_additive_score(rng):
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 6)), rng.normal(size=(2, 5, 2))
    W_a, v_a = rng.normal(size=(10, 7)), rng.normal(size=7)
    ours = luong_attention(q, k, v, "concat", W_a=W_a, v_a=v_a)
    additive = additive_attention(q, k, v, v=v_a, W_query=W_a[:4], W_key=W_a[4:])
    for a, b in zip(ours, additive):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_attention_is_softmax_of_scores_times_values(rng):
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    W_a = rng.normal(size=(4, 4))
    out, w = luong_attention(q, k, v, "general", W_a=W_a, mask=causal_mask(3, 5))
    expected_w = softmax(luong_scores(q, k, "general", W_a=W_a), mask=causal_mask(3, 5))
    np.testing.assert_allclose(w, expected_w, rtol=1e-12)
    np.testing.assert_allclose(out, expected_w @ v, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("score_mode", ["dot", "concat"])
@pytest.mark.parametrize("masks", ["none", "value", "query_and_value", "causal", "value_and_causal"])
def test_matches_keras_attention_layer(rng, dtype, score_mode, masks):
    """keras.layers.Attention(use_scale=True) with its own, non-default weights:
    "dot" is Luong's dot score times the learned scalar; "concat" is Luong's
    concat score with W_a = scale * [I; I] and v_a = concat_score_weight * ones."""
    B, T_q, T_k, d = 3, 4, 6, 5
    q, v, k = (rng.normal(size=(B, T, d)).astype(dtype) for T in (T_q, T_k, T_k))
    value_mask = rng.random((B, T_k)) > 0.4
    value_mask[:, 0] = True
    query_mask = rng.random((B, T_q)) > 0.3
    layer = keras.layers.Attention(use_scale=True, score_mode=score_mode, dtype=dtype)
    layer([q, v, k])
    layer.set_weights([np.asarray(rng.uniform(0.3, 2.0), dtype) for _ in layer.get_weights()])
    keras_masks = {"none": None, "value": [None, value_mask], "query_and_value": [query_mask, value_mask],
                   "causal": None, "value_and_causal": [None, value_mask]}[masks]
    causal = "causal" in masks
    expected, expected_w = layer([q, v, k], mask=keras_masks, use_causal_mask=causal,
                                 return_attention_scores=True)

    scale = float(layer.scale.numpy())
    mask = combine_masks(key_padding_mask(value_mask) if "value" in masks else None,
                         causal_mask(T_q, T_k) if causal else None)
    if score_mode == "dot":
        out, w = luong_attention(q * np.asarray(scale, dtype), k, v, "dot", mask=mask)
    else:
        W_a = (scale * np.concatenate([np.eye(d), np.eye(d)])).astype(dtype)
        v_a = (float(layer.concat_score_weight.numpy()) * np.ones(d)).astype(dtype)
        out, w = luong_attention(q, k, v, "concat", mask=mask, W_a=W_a, v_a=v_a)
    if masks == "query_and_value":
        out = np.where(query_mask[..., None], out, 0.0)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(w, keras.ops.convert_to_numpy(expected_w), **tolerance(dtype))
    np.testing.assert_allclose(out, keras.ops.convert_to_numpy(expected), **tolerance(dtype))


def test_dot_score_is_dot_product_attention(rng):
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    for a, b in zip(luong_attention(q, k, v, "dot"), dot_product_attention(q, k, v)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    ({"score": "bilinear"}, "score must be one of"),
    ({"score": "dot", "W_a": np.eye(4)}, "has no weights"),
    ({"score": "general"}, r"needs W_a of shape \(d_q, d_k\)"),
    ({"score": "general", "W_a": np.eye(3)}, r"needs W_a of shape \(d_q, d_k\)"),
    ({"score": "general", "W_a": np.eye(4), "v_a": np.ones(4)}, "has no v_a"),
    ({"score": "concat", "W_a": np.ones((4, 3)), "v_a": np.ones(3)}, r"d_q \+ d_k"),
    ({"score": "concat", "W_a": np.ones((8, 3))}, r"needs v_a of shape \(d_a,\)"),
    ({"score": "concat", "W_a": np.ones((8, 3)), "v_a": np.ones(4)}, r"needs v_a of shape \(d_a,\)"),
])
def test_wrong_arguments_raise_clear_errors(kwargs, message):
    q, k = np.zeros((2, 3, 4)), np.zeros((2, 5, 4))
    with pytest.raises(ValueError, match=message):
        luong_scores(q, k, **kwargs)


def test_dot_needs_equal_widths():
    with pytest.raises(ValueError, match="same last dimension"):
        luong_attention(np.zeros((2, 3)), np.zeros((4, 5)), np.zeros((4, 2)), "dot")
