"""windowed_attention: local attention that computes only the scores inside each window.

The reference is chapter 2's masked version, ``lookup.local_attention``, which
computes all ``T_q x T_k`` scores and masks those outside the window.
"""

import numpy as np
import pytest

from attention_course.attention import scaled_dot_product_attention, windowed_attention
from attention_course.lookup import local_attention
from conftest import tolerance


def band_to_dense(band, T_k, window):
    """``(..., T_q, 2D + 1)`` band of weights -> ``(..., T_q, T_k)``, zeros outside the window."""
    T_q, width = band.shape[-2:]
    j = np.arange(T_q)[:, None] - window + np.arange(width)   # key index of each slot
    inside = (j >= 0) & (j < T_k)
    rows = np.broadcast_to(np.arange(T_q)[:, None], j.shape)
    dense = np.zeros(band.shape[:-1] + (T_k,), band.dtype)
    dense[..., rows[inside], j[inside]] = band[..., inside]
    return dense


def band_slots_outside(T_q, T_k, window):
    j = np.arange(T_q)[:, None] - window + np.arange(2 * window + 1)
    return (j < 0) | (j >= T_k)


SIZES = [
    # (T_q, T_k, D)
    (1, 1, 0), (6, 6, 0),              # D = 0: every query sees its own key only
    (6, 6, 1), (7, 7, 2), (12, 12, 3),
    (5, 5, 5), (3, 3, 7),              # D >= T: the window covers every key
    (4, 6, 1), (5, 9, 3),              # more keys than queries
    (9, 5, 2), (8, 3, 1),              # more queries than keys (the last rows see no key)
]


@pytest.mark.parametrize("T_q, T_k, window", SIZES)
def test_windowed_equals_masked_full_attention_float64(rng, T_q, T_k, window):
    B, d, d_v = 2, 8, 5
    q, k, v = rng.normal(size=(B, T_q, d)), rng.normal(size=(B, T_k, d)), rng.normal(size=(B, T_k, d_v))
    out, band = windowed_attention(q, k, v, window=window)
    expected_out, expected_weights = local_attention(q, k, v, window=window)
    assert out.shape == (B, T_q, d_v) and band.shape == (B, T_q, 2 * window + 1)
    assert out.dtype == band.dtype == np.float64
    # float64: the two differ only in the order of the additions
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(band_to_dense(band, T_k, window), expected_weights, rtol=1e-12, atol=1e-14)
    assert (band[:, band_slots_outside(T_q, T_k, window)] == 0).all()   # padding slots: exactly 0


@pytest.mark.parametrize("T_q, T_k, window", [(6, 6, 1), (9, 5, 2), (3, 3, 7)])
def test_windowed_keeps_float32(rng, T_q, T_k, window):
    q, k, v = (rng.normal(size=(2, T, 4)).astype("float32") for T in (T_q, T_k, T_k))
    out, band = windowed_attention(q, k, v, window=window)
    assert out.dtype == band.dtype == np.float32
    expected_out, expected_weights = local_attention(q, k, v, window=window)
    # float32 round-off: einsum over the window and matmul over all keys add in different orders
    np.testing.assert_allclose(out, expected_out, **tolerance("float32"))
    np.testing.assert_allclose(band_to_dense(band, T_k, window), expected_weights, **tolerance("float32"))


def test_window_zero_returns_each_querys_own_value(rng):
    q, k, v = rng.normal(size=(5, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    out, band = windowed_attention(q, k, v, window=0)
    np.testing.assert_array_equal(band, np.ones((5, 1)))
    np.testing.assert_array_equal(out, v)


def test_a_window_as_wide_as_the_sequence_is_global_attention(rng):
    q, k, v = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 3))
    expected_out, expected_weights = scaled_dot_product_attention(q, k, v)
    out, band = windowed_attention(q, k, v, window=7)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(band_to_dense(band, 7, 7), expected_weights, rtol=1e-12, atol=1e-14)


def test_queries_beyond_every_key_get_zeros(rng):
    q, k, v = rng.normal(size=(8, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 2))
    out, band = windowed_attention(q, k, v, window=1)
    # query i sees keys i-1 .. i+1: from i = 4 on, none of the three keys
    np.testing.assert_array_equal(band[4:], 0.0)
    np.testing.assert_array_equal(out[4:], 0.0)
    np.testing.assert_allclose(band[:4].sum(-1), 1.0, rtol=1e-12)


def test_batch_dimensions_broadcast(rng):
    q = rng.normal(size=(2, 3, 6, 4))          # (batch, heads, T_q, d)
    k, v = rng.normal(size=(6, 4)), rng.normal(size=(6, 5))
    out, band = windowed_attention(q, k, v, window=2)
    expected_out, expected_weights = local_attention(q, k, v, window=2)
    assert out.shape == (2, 3, 6, 5) and band.shape == (2, 3, 6, 5)
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(band_to_dense(band, 6, 2), expected_weights, rtol=1e-12, atol=1e-14)


def test_a_long_sequence_needs_only_the_band(rng):
    # T x (2D + 1) = 70,000 weights, where the full score matrix would have 10^8 entries
    T, d, D = 10_000, 4, 3
    q, k, v = rng.normal(size=(T, d)), rng.normal(size=(T, d)), rng.normal(size=(T, 2))
    out, band = windowed_attention(q, k, v, window=D)
    assert band.shape == (T, 2 * D + 1) and out.shape == (T, 2)
    i = 5000
    expected_out, _ = scaled_dot_product_attention(q[i:i + 1], k[i - D:i + D + 1], v[i - D:i + D + 1])
    np.testing.assert_allclose(out[i], expected_out[0], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("window", [-1, 1.5, 2.0, True, "2", None])
def test_a_bad_window_raises_a_clear_error(rng, window):
    q = rng.normal(size=(4, 3))
    with pytest.raises(ValueError, match=r"window must be an integer >= 0 \(the half-width D"):
        windowed_attention(q, q, q, window=window)


def test_mismatched_shapes_raise(rng):
    with pytest.raises(ValueError, match="same last dimension"):
        windowed_attention(rng.normal(size=(4, 3)), rng.normal(size=(4, 2)), rng.normal(size=(4, 2)), 1)
    with pytest.raises(ValueError, match="same number of positions"):
        windowed_attention(rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(5, 2)), 1)
