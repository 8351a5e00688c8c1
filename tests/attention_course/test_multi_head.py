"""NumPy multi-head attention == keras.layers.MultiHeadAttention with the layer's own weights."""

import keras
import numpy as np
import pytest

from attention_course.multi_head import (MultiHeadAttentionWeights, merge_heads,
                                         multi_head_attention, split_heads)
from attention_course.weights import from_keras
from conftest import randomise, tolerance


def keras_tolerance(dtype) -> dict:
    """float32: the course's ~1e-5.  float64: Keras' own float64 MultiHeadAttention is
    only accurate to ~1e-7, because it scales the queries by
    ``ops.cast(1 / sqrt(key_dim), float64)``, and a Python float is first made a
    float32 tensor.  Exactness in float64 is tested against the formula instead
    (``test_float64_is_exact``)."""
    return tolerance(dtype) if dtype == "float32" else {"rtol": 1e-6, "atol": 1e-7}


def keras_mha(num_heads, key_dim, value_dim=None, use_bias=True, output_shape=None, dtype="float32"):
    return keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim, value_dim=value_dim,
                                           use_bias=use_bias, output_shape=output_shape, dtype=dtype)


CASES = {
    # name: (B, T, S, d_query, d_value, heads, key_dim, value_dim, use_bias, output_shape)
    "self-attention shapes": (2, 5, 5, 16, 16, 4, 4, None, True, None),
    "cross-attention T != S": (3, 4, 7, 12, 10, 2, 6, None, True, None),
    "key_dim != value_dim": (2, 6, 6, 8, 8, 3, 5, 7, True, None),
    "no biases": (2, 5, 3, 8, 8, 2, 4, None, False, None),
    "one head": (1, 4, 4, 6, 6, 1, 6, None, True, None),
    "projected output width": (2, 3, 5, 8, 8, 2, 3, None, True, 11),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask_kind", ["none", "attention_mask", "causal", "attention_and_causal",
                                       "query_and_value_masks", "fully_masked_row"])
@pytest.mark.parametrize("case", CASES)
def test_matches_keras(rng, case, mask_kind, dtype):
    B, T, S, d_q, d_v, heads, key_dim, value_dim, use_bias, output_shape = CASES[case]
    query = rng.normal(size=(B, T, d_q)).astype(dtype)
    value = rng.normal(size=(B, S, d_v)).astype(dtype)
    key = rng.normal(size=(B, S, d_v)).astype(dtype)
    layer = keras_mha(heads, key_dim, value_dim, use_bias, output_shape, dtype)
    layer(query, value, key)
    randomise(layer, rng)

    kwargs = {}
    attention_mask = rng.random((B, T, S)) > 0.3
    attention_mask[..., 0] = True  # keep one key per query unless a case wants otherwise
    if mask_kind in ("attention_mask", "attention_and_causal"):
        kwargs["attention_mask"] = attention_mask
    if mask_kind in ("causal", "attention_and_causal"):
        kwargs["use_causal_mask"] = True
    if mask_kind == "fully_masked_row":
        attention_mask[0, 1] = False
        kwargs["attention_mask"] = attention_mask
    expected, expected_scores = layer(query, value, key, return_attention_scores=True, **kwargs)

    numpy_kwargs = dict(kwargs)
    if mask_kind == "query_and_value_masks":
        query_mask = rng.random((B, T)) > 0.3
        value_mask = rng.random((B, S)) > 0.3
        value_mask[:, 0] = True
        # Keras reads these masks from the inputs' `_keras_mask`; an explicit
        # attention mask built the same way is what it computes internally.
        expected, expected_scores = layer(query, value, key, return_attention_scores=True,
                                          attention_mask=query_mask[:, :, None] & value_mask[:, None, :])
        numpy_kwargs = {"query_mask": query_mask, "value_mask": value_mask}

    weights = from_keras.multi_head_attention(layer)
    out, scores = multi_head_attention(query, value, weights, key=key, **numpy_kwargs)
    assert out.dtype == np.dtype(dtype) and scores.shape == (B, heads, T, S)
    np.testing.assert_allclose(scores, keras.ops.convert_to_numpy(expected_scores), **keras_tolerance(dtype))
    np.testing.assert_allclose(out, keras.ops.convert_to_numpy(expected), **keras_tolerance(dtype))
    if mask_kind == "fully_masked_row":
        assert (scores[0, :, 1] == 0).all()
        np.testing.assert_allclose(out[0, 1], weights.output_bias if use_bias else 0.0, atol=1e-6)


def test_float64_is_exact(rng):
    """Against the textbook formula, head by head, in float64."""
    w = MultiHeadAttentionWeights.random(d_model=8, num_heads=2, key_dim=3, value_dim=5, seed=3,
                                         dtype=np.float64)
    x, y = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 6, 8))
    out, scores = multi_head_attention(x, y, w)
    expected = np.zeros((2, 4, 8)) + w.output_bias
    for h in range(2):
        q = x @ w.query_kernel[:, h] + w.query_bias[h]
        k = y @ w.key_kernel[:, h] + w.key_bias[h]
        v = y @ w.value_kernel[:, h] + w.value_bias[h]
        s = q @ k.swapaxes(1, 2) / np.sqrt(3)
        a = np.exp(s) / np.exp(s).sum(-1, keepdims=True)
        np.testing.assert_allclose(scores[:, h], a, rtol=1e-12)
        expected += (a @ v) @ w.output_kernel[h]
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_key_defaults_to_value(rng):
    layer = keras_mha(2, 4)
    x, y = rng.normal(size=(2, 3, 8)).astype("float32"), rng.normal(size=(2, 5, 8)).astype("float32")
    layer(x, y)
    randomise(layer, rng)
    out, _ = multi_head_attention(x, y, from_keras.multi_head_attention(layer))
    np.testing.assert_allclose(out, keras.ops.convert_to_numpy(layer(x, y)), rtol=1e-5, atol=1e-6)


def test_split_and_merge_heads_invert_each_other(rng):
    x = rng.normal(size=(2, 5, 12))
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    np.testing.assert_array_equal(heads[:, 1], x[:, :, 4:8])  # head h owns a contiguous block
    np.testing.assert_array_equal(merge_heads(heads), x)


def test_heads_are_independent(rng):
    """Changing one head's query weights changes only that head's attention."""
    w = MultiHeadAttentionWeights.random(d_model=8, num_heads=4, key_dim=2, seed=1)
    x = rng.normal(size=(1, 5, 8))
    _, before = multi_head_attention(x, x, w)
    w.query_kernel[:, 2] += 1.0
    _, after = multi_head_attention(x, x, w)
    changed = ~np.isclose(before, after).all(axis=(0, 2, 3))
    np.testing.assert_array_equal(changed, [False, False, True, False])


def test_causal_output_ignores_the_future(rng):
    w = MultiHeadAttentionWeights.random(d_model=8, num_heads=2, key_dim=4, seed=2)
    x = rng.normal(size=(1, 6, 8))
    y = x.copy()
    y[:, 4:] = rng.normal(size=(1, 2, 8))
    out_x, _ = multi_head_attention(x, x, w, use_causal_mask=True)
    out_y, _ = multi_head_attention(y, y, w, use_causal_mask=True)
    np.testing.assert_allclose(out_x[:, :4], out_y[:, :4], rtol=1e-12)
    assert not np.allclose(out_x[:, 4:], out_y[:, 4:])


def test_from_keras_needs_a_built_layer():
    with pytest.raises(ValueError, match="no weights yet"):
        from_keras.multi_head_attention(keras_mha(2, 4))


@pytest.mark.parametrize("query_shape, value_shape, kwargs, message", [
    ((2, 3), (2, 3, 8), {}, "query must have shape"),
    ((2, 3, 7), (2, 3, 8), {}, "query has 7 features"),
    ((2, 3, 8), (3, 3, 8), {}, "same batch size"),
    ((2, 3, 8), (2, 4, 8), {"attention_mask": np.ones((2, 4, 3), bool)}, "attention_mask of shape"),
    ((2, 3, 8), (2, 4, 8), {"query_mask": np.ones((2, 4), bool)}, "query_mask of shape"),
    ((2, 3, 8), (2, 4, 8), {"value_mask": np.ones((2, 3), bool)}, "value_mask of shape"),
])
def test_wrong_shapes_raise_clear_errors(query_shape, value_shape, kwargs, message):
    w = MultiHeadAttentionWeights.random(d_model=8, num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match=message):
        multi_head_attention(np.zeros(query_shape), np.zeros(value_shape), w, **kwargs)


def test_inconsistent_weights_are_rejected():
    w = MultiHeadAttentionWeights.random(d_model=8, num_heads=2, key_dim=4)
    with pytest.raises(ValueError, match="output_kernel must have shape"):
        MultiHeadAttentionWeights(w.query_kernel, w.key_kernel, w.value_kernel,
                                  np.zeros((3, 4, 8)))
    with pytest.raises(ValueError, match="query_bias must have shape"):
        MultiHeadAttentionWeights(w.query_kernel, w.key_kernel, w.value_kernel, w.output_kernel,
                                  query_bias=np.zeros((2, 5)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("key_dim, value_dim, use_bias", [(4, None, True), (3, 5, True), (4, None, False)])
@pytest.mark.parametrize("call", ["key omitted", "key is value"])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
def test_self_attention_path_matches_keras(rng, call, key_dim, value_dim, use_bias, mask_kind, dtype):
    """query is value (is key): the projections run as one fused matmul; same numbers as Keras."""
    B, T, d = 3, 6, 12
    x = rng.normal(size=(B, T, d)).astype(dtype)
    layer = keras_mha(3, key_dim, value_dim, use_bias, dtype=dtype)
    layer(x, x)
    randomise(layer, rng)
    kwargs = {}
    if mask_kind == "causal":
        kwargs["use_causal_mask"] = True
    elif mask_kind == "padding":
        keep = np.arange(T) < rng.integers(1, T + 1, size=B)[:, None]
        kwargs["attention_mask"] = keep[:, None, :] & np.ones((B, T, 1), bool)
    expected, expected_scores = layer(x, x, return_attention_scores=True, **kwargs)
    weights = from_keras.multi_head_attention(layer)
    out, scores = multi_head_attention(x, x, weights, key=None if call == "key omitted" else x, **kwargs)
    np.testing.assert_allclose(scores, keras.ops.convert_to_numpy(expected_scores), **keras_tolerance(dtype))
    np.testing.assert_allclose(out, keras.ops.convert_to_numpy(expected), **keras_tolerance(dtype))


def test_fused_and_separate_projections_agree_with_partial_biases(rng):
    """Some biases None, others not: the fused self-attention path treats a missing bias as zero."""
    w = MultiHeadAttentionWeights.random(d_model=8, num_heads=2, key_dim=3, value_dim=5, seed=4,
                                         dtype=np.float64)
    w.key_bias = None
    x = rng.normal(size=(2, 5, 8))
    fused, fused_scores = multi_head_attention(x, x, w)             # query is value: fused path
    separate, separate_scores = multi_head_attention(x, x.copy(), w)  # different objects: three matmuls
    np.testing.assert_allclose(fused_scores, separate_scores, rtol=1e-12)
    np.testing.assert_allclose(fused, separate, rtol=1e-12)
    w.key_bias = np.zeros((2, 3))
    np.testing.assert_allclose(multi_head_attention(x, x, w)[0], fused, rtol=1e-12)
