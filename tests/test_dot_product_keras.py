"""scaled_dot_product_attention == keras.ops.dot_product_attention, and == keras.layers.Attention
with its learned scale set to 1/sqrt(d_k): heads, masks, causal, T_q != T_k, dtypes."""

import keras
import numpy as np
import pytest

from attention_course.attention import scaled_dot_product_attention
from attention_course.masks import causal_mask, combine_masks, key_padding_mask
from conftest import tolerance


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
