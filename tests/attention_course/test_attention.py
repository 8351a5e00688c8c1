"""NumPy attention == Keras' Attention and AdditiveAttention layers, with their own weights."""

import keras
import numpy as np
import pytest

from attention_course.attention import additive_attention, dot_product_attention, scaled_dot_product_attention
from attention_course.masks import causal_mask, combine_masks, key_padding_mask
from conftest import tolerance


def random_inputs(rng, dtype, B=3, T_q=4, T_k=6, d=5):
    query = rng.normal(size=(B, T_q, d)).astype(dtype)
    value = rng.normal(size=(B, T_k, d)).astype(dtype)
    key = rng.normal(size=(B, T_k, d)).astype(dtype)
    # every row keeps at least its first key, so no query is fully masked
    value_mask = rng.random((B, T_k)) > 0.4
    value_mask[:, 0] = True
    query_mask = rng.random((B, T_q)) > 0.3
    return query, value, key, value_mask, query_mask


def keras_layer(layer, query, value, key, masks, causal, rng):
    inputs = [query, value, key]
    layer(inputs)  # build
    # Non-default learned weights, so that a NumPy version ignoring them fails.
    layer.set_weights([rng.uniform(0.5, 2.0, size=w.shape).astype(w.dtype) for w in layer.get_weights()])
    out, weights = layer(inputs, mask=masks, use_causal_mask=causal, return_attention_scores=True)
    return keras.ops.convert_to_numpy(out), keras.ops.convert_to_numpy(weights)


def numpy_mask(value_mask, causal, T_q, T_k):
    return combine_masks(None if value_mask is None else key_padding_mask(value_mask),
                         causal_mask(T_q, T_k) if causal else None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_scale", [False, True])
@pytest.mark.parametrize("score_mode", ["dot", "concat"])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_keras_attention_layer(rng, dtype, use_scale, score_mode, masked, causal):
    query, value, key, value_mask, query_mask = random_inputs(rng, dtype)
    layer = keras.layers.Attention(use_scale=use_scale, score_mode=score_mode, dtype=dtype)
    masks = [query_mask, value_mask] if masked else None
    expected, expected_weights = keras_layer(layer, query, value, key, masks, causal, rng)

    weights = layer.get_weights()
    scale = float(layer.scale.numpy()) if use_scale else 1.0
    mask = numpy_mask(value_mask if masked else None, causal, query.shape[1], key.shape[1])
    if score_mode == "dot":
        out, attention = dot_product_attention(query, key, value, mask=mask, scale=scale)
    else:
        # Keras' "concat" score is additive attention with identity projections
        # scaled by `scale`, and v = concat_score_weight * ones.
        d = query.shape[-1]
        v = float(layer.concat_score_weight.numpy()) * np.ones(d, dtype)
        W = scale * np.eye(d, dtype=dtype)
        out, attention = additive_attention(query, key, value, mask=mask, v=v, W_query=W, W_key=W)
    if masked:
        out = np.where(query_mask[..., None], out, 0.0)
    assert len(weights) == int(use_scale) + int(score_mode == "concat")
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(attention, expected_weights, **tolerance(dtype))
    np.testing.assert_allclose(out, expected, **tolerance(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("use_scale", [False, True])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_keras_additive_attention_layer(rng, dtype, use_scale, masked, causal):
    query, value, key, value_mask, query_mask = random_inputs(rng, dtype)
    layer = keras.layers.AdditiveAttention(use_scale=use_scale, dtype=dtype)
    masks = [query_mask, value_mask] if masked else None
    expected, expected_weights = keras_layer(layer, query, value, key, masks, causal, rng)

    v = np.asarray(layer.scale.numpy()) if use_scale else None
    mask = numpy_mask(value_mask if masked else None, causal, query.shape[1], key.shape[1])
    out, attention = additive_attention(query, key, value, mask=mask, v=v)
    if masked:
        out = np.where(query_mask[..., None], out, 0.0)
    np.testing.assert_allclose(attention, expected_weights, **tolerance(dtype))
    np.testing.assert_allclose(out, expected, **tolerance(dtype))


def test_fully_masked_query_rows_differ_from_keras_attention_by_design(rng):
    """Keras subtracts 1e9 from masked scores, so a row with *every* key masked
    becomes uniform: the mean of the values.  The course returns zeros for such
    a row (nothing to attend to).  Both behaviours are pinned down here."""
    query, value, key, _, _ = random_inputs(rng, "float32", B=1)
    value_mask = np.zeros((1, key.shape[1]), bool)
    layer = keras.layers.Attention()
    _, keras_weights = layer([query, value, key], mask=[None, value_mask], return_attention_scores=True)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(keras_weights), 1.0 / key.shape[1], rtol=1e-6)
    out, weights = dot_product_attention(query, key, value, mask=key_padding_mask(value_mask))
    assert np.isfinite(out).all() and (weights == 0).all() and (out == 0).all()


def test_scaled_dot_product_attention_formula(rng):
    q, k, v = rng.normal(size=(2, 3, 8)), rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 5, 4))
    out, w = scaled_dot_product_attention(q, k, v)
    scores = np.einsum("bid,bjd->bij", q, k) / np.sqrt(8)
    expected_w = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    np.testing.assert_allclose(w, expected_w, rtol=1e-12)
    np.testing.assert_allclose(out, expected_w @ v, rtol=1e-12)


def test_scaled_attention_survives_huge_scores():
    q = np.full((1, 2, 4), 1e4)
    k = np.stack([np.full(4, 1e4), np.full(4, -1e4)])[None]
    out, w = scaled_dot_product_attention(q, k, np.eye(2)[None])
    assert np.isfinite(out).all()
    np.testing.assert_allclose(w[0], [[1, 0], [1, 0]])


def test_additive_attention_with_projections_is_bahdanaus_score(rng):
    s, h = rng.normal(size=(1, 2, 3)), rng.normal(size=(1, 4, 5))
    W_s, W_h, v = rng.normal(size=(3, 6)), rng.normal(size=(5, 6)), rng.normal(size=6)
    _, w = additive_attention(s, h, h, v=v, W_query=W_s, W_key=W_h)
    for i in range(2):
        scores = np.array([v @ np.tanh(W_s.T @ s[0, i] + W_h.T @ h[0, j]) for j in range(4)])
        np.testing.assert_allclose(w[0, i], np.exp(scores) / np.exp(scores).sum(), rtol=1e-12)


def test_leading_batch_dimensions_broadcast(rng):
    q = rng.normal(size=(2, 3, 4, 8))  # (batch, heads, T_q, d)
    k = rng.normal(size=(2, 3, 5, 8))
    v = rng.normal(size=(2, 3, 5, 7))
    out, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(4, 5))
    assert out.shape == (2, 3, 4, 7) and w.shape == (2, 3, 4, 5)
    np.testing.assert_allclose(out[1, 2], scaled_dot_product_attention(q[1, 2], k[1, 2], v[1, 2],
                                                                       mask=causal_mask(4, 5))[0])


@pytest.mark.parametrize("function", [dot_product_attention, scaled_dot_product_attention,
                                      additive_attention])
@pytest.mark.parametrize("shapes, mask_shape, message", [
    (((2, 3, 4), (2, 5, 6), (2, 5, 6)), None, "same last dimension|same width"),
    (((2, 3, 4), (2, 5, 4), (2, 6, 4)), None, "same number of positions"),
    (((4,), (2, 5, 4), (2, 5, 4)), None, "query must have shape"),
    (((2, 3, 4), (2, 5, 4), (2, 5, 4)), (2, 5, 3), "does not broadcast"),
    (((2, 3, 4), (3, 5, 4), (3, 5, 4)), None, "batch dimensions"),
])
def test_wrong_shapes_raise_clear_errors(function, shapes, mask_shape, message):
    q, k, v = (np.zeros(s) for s in shapes)
    mask = None if mask_shape is None else np.ones(mask_shape, bool)
    with pytest.raises(ValueError, match=message):
        function(q, k, v, mask=mask)


# ---------------------------------------------------------------------------
# scaled_dot_product_attention == keras.ops.dot_product_attention, and == keras.layers.Attention
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("heads", [1, 3])
@pytest.mark.parametrize("T_q, T_k", [(5, 5), (4, 7)])
@pytest.mark.parametrize("mask_kind", ["none", "padding", "causal", "padding_and_causal", "arbitrary"])
def test_matches_keras_ops_dot_product_attention(rng, dtype, heads, T_q, T_k, mask_kind):
    B, d = 2, 8
    # the course's layout: (batch, heads, T, d)
    q, k, v = (rng.normal(size=(B, heads, T, d)).astype(dtype) for T in (T_q, T_k, T_k))
    padding = rng.random((B, T_k)) > 0.4
    padding[:, 0] = True  # the first key stays visible, so no query is left without keys
    arbitrary = rng.random((B, heads, T_q, T_k)) > 0.5
    arbitrary[..., 0] = True
    mask = {"none": None,
            "padding": key_padding_mask(padding)[:, None],           # (B, 1, 1, T_k)
            "causal": causal_mask(T_q, T_k),
            "padding_and_causal": combine_masks(key_padding_mask(padding)[:, None], causal_mask(T_q, T_k)),
            "arbitrary": arbitrary}[mask_kind]
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)

    keras_mask = None if mask is None or mask_kind == "causal" else mask
    # Keras' layout is (batch, T, heads, d).  Its default scale is computed in
    # float32, so pass it in the inputs' dtype to keep float64 exact.
    expected = keras.ops.dot_product_attention(
        *(np.swapaxes(x, 1, 2) for x in (q, k, v)), mask=keras_mask,
        is_causal=mask_kind == "causal", scale=np.asarray(1 / np.sqrt(d), dtype))
    expected = np.swapaxes(keras.ops.convert_to_numpy(expected), 1, 2)
    assert out.dtype == np.dtype(dtype) and weights.shape == (B, heads, T_q, T_k)
    np.testing.assert_allclose(out, expected, **tolerance(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("causal", [False, True])
def test_keras_attention_layer_with_scale_one_over_sqrt_dk_is_scaled_dot_product(rng, dtype, causal):
    B, T_q, T_k, d = 2, 4, 6, 16
    q, v, k = (rng.normal(size=(B, T, d)).astype(dtype) for T in (T_q, T_k, T_k))
    value_mask = rng.random((B, T_k)) > 0.3
    value_mask[:, 0] = True
    layer = keras.layers.Attention(use_scale=True, dtype=dtype)
    layer([q, v, k])
    layer.scale.assign(np.asarray(1 / np.sqrt(d), dtype))
    expected, expected_weights = layer([q, v, k], mask=[None, value_mask], use_causal_mask=causal,
                                       return_attention_scores=True)
    mask = combine_masks(key_padding_mask(value_mask), causal_mask(T_q, T_k) if causal else None)
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(weights, keras.ops.convert_to_numpy(expected_weights), **tolerance(dtype))
    np.testing.assert_allclose(out, keras.ops.convert_to_numpy(expected), **tolerance(dtype))


def test_default_keras_attention_is_unscaled(rng):
    """Keras' learned scale starts at 1, not 1/sqrt(d_k): out of the box the
    layer computes *unscaled* dot-product attention."""
    q, v = rng.normal(size=(1, 3, 64)).astype("float32"), rng.normal(size=(1, 5, 64)).astype("float32")
    layer = keras.layers.Attention(use_scale=True)
    _, weights = layer([q, v], return_attention_scores=True)
    assert float(layer.scale.numpy()) == 1.0
    _, scaled = scaled_dot_product_attention(q, v, v)
    assert not np.allclose(keras.ops.convert_to_numpy(weights), scaled, atol=1e-3)
