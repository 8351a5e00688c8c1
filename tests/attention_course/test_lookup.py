"""Chapter 2's lookups: cosine similarity, hard, sampled, location-based and local attention."""

import keras
import numpy as np
import pytest

from attention_course.attention import dot_product_attention, scaled_dot_product_attention
from attention_course.lookup import (cosine_attention, cosine_similarity, hard_attention,
                                     local_attention, location_attention, sample_attention,
                                     similarity_scores)
from attention_course.masks import key_padding_mask, local_window_mask
from attention_course.softmax import softmax
from conftest import tolerance


# --- cosine similarity ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("B, T_q, T_k, d", [(1, 1, 1, 1), (2, 3, 5, 4), (3, 6, 2, 16)])
def test_cosine_similarity_matches_keras_dot_layer_with_normalize(rng, B, T_q, T_k, d, dtype):
    # norms from 0.01 to 100, so that the normalisation matters
    query = (rng.normal(size=(B, T_q, d)) * 10 ** rng.uniform(-2, 2, size=(B, T_q, 1))).astype(dtype)
    key = (rng.normal(size=(B, T_k, d)) * 10 ** rng.uniform(-2, 2, size=(B, T_k, 1))).astype(dtype)
    expected = keras.layers.Dot(axes=(2, 2), normalize=True, dtype=dtype)([query, key])
    ours = cosine_similarity(query, key)
    assert ours.shape == (B, T_q, T_k) and ours.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ours, keras.ops.convert_to_numpy(expected), **tolerance(dtype))


def test_cosine_similarity_is_the_definition(rng):
    q, k = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    expected = np.array([[qi @ kj / np.linalg.norm(qi) / np.linalg.norm(kj) for kj in k] for qi in q])
    np.testing.assert_allclose(cosine_similarity(q, k), expected, rtol=1e-12)


def test_cosine_ignores_length_but_dot_does_not(rng):
    q, k = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    lengths = rng.uniform(0.1, 10, size=(5, 1))
    np.testing.assert_allclose(cosine_similarity(q, k * lengths), cosine_similarity(q, k), rtol=1e-12)
    assert not np.allclose(similarity_scores(q, k * lengths), similarity_scores(q, k))
    assert (np.abs(cosine_similarity(q, k)) <= 1 + 1e-12).all()


def test_zero_vectors_have_cosine_zero_like_keras():
    q = np.zeros((1, 2, 3), np.float32)
    k = np.ones((1, 2, 3), np.float32)
    expected = keras.layers.Dot(axes=(2, 2), normalize=True)([q, k])
    np.testing.assert_array_equal(cosine_similarity(q, k), 0.0)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(expected), 0.0)


def test_cosine_attention_is_softmax_of_cosines_over_temperature(rng):
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))
    out, w = cosine_attention(q, k, v, temperature=0.1)
    np.testing.assert_allclose(w, softmax(cosine_similarity(q, k) / 0.1), rtol=1e-12)
    np.testing.assert_allclose(out, w @ v, rtol=1e-12)


# --- hard attention ---------------------------------------------------------------------------

@pytest.mark.parametrize("similarity", ["dot", "cosine"])
def test_hard_attention_returns_the_value_of_the_best_key(rng, similarity):
    q, k, v = rng.normal(size=(4, 3, 5)), rng.normal(size=(4, 6, 5)), rng.normal(size=(4, 6, 2))
    out, w = hard_attention(q, k, v, similarity=similarity)
    best = similarity_scores(q, k, similarity).argmax(-1)
    np.testing.assert_array_equal(w.argmax(-1), best)
    np.testing.assert_array_equal(w.sum(-1), 1.0)
    assert set(np.unique(w)) == {0.0, 1.0}
    np.testing.assert_allclose(out, np.take_along_axis(v, best[..., None], axis=1))


def test_hard_attention_is_the_zero_temperature_limit_of_soft_attention(rng):
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    out_hard, w_hard = hard_attention(q, k, v)
    out_cold, w_cold = dot_product_attention(q, k, v, scale=1e6)  # temperature 1e-6
    np.testing.assert_allclose(w_cold, w_hard, atol=1e-9)
    np.testing.assert_allclose(out_cold, out_hard, atol=1e-9)


def test_dot_and_cosine_can_pick_different_keys():
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.1],    # nearly the same direction, short
                  [3.0, 3.0]])   # 45 degrees off, but long
    v = np.array([[10.0], [20.0]])
    np.testing.assert_array_equal(hard_attention(q, k, v, similarity="dot")[1], [[0, 1]])
    np.testing.assert_array_equal(hard_attention(q, k, v, similarity="cosine")[1], [[1, 0]])


def test_hard_attention_respects_masks(rng):
    q, k, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    key_mask = np.array([[True, False, True, False, False], [False] * 5])
    out, w = hard_attention(q, k, v, mask=key_padding_mask(key_mask))
    assert (w[0][:, ~key_mask[0]] == 0).all() and (w[0].sum(-1) == 1).all()
    np.testing.assert_array_equal(w[1], 0.0)  # nothing to look up
    np.testing.assert_array_equal(out[1], 0.0)


# --- sampled (stochastic hard) attention ------------------------------------------------------

def test_sampled_attention_draws_one_key_with_the_soft_probabilities(rng):
    q, k, v = rng.normal(size=(1, 2, 3)), rng.normal(size=(1, 4, 3)), rng.normal(size=(1, 4, 5))
    n = 40_000
    out, w = sample_attention(np.broadcast_to(q, (n, 2, 3)), k, v, np.random.default_rng(0))
    assert w.shape == (n, 2, 4) and (w.sum(-1) == 1).all()
    soft_out, soft_w = dot_product_attention(q, k, v)
    # frequencies -> probabilities, mean of sampled values -> soft output (law of large numbers)
    np.testing.assert_allclose(w.mean(0), soft_w[0], atol=0.01)
    np.testing.assert_allclose(out.mean(0), soft_out[0], atol=0.03)
    # yet every single draw is one of the values, not a blend
    np.testing.assert_allclose(out, w @ v)


def test_sampled_attention_never_picks_masked_keys(rng):
    q, k, v = rng.normal(size=(500, 3, 4)), rng.normal(size=(500, 6, 4)), rng.normal(size=(500, 6, 2))
    mask = rng.random((500, 1, 6)) > 0.5
    mask[:7] = False  # some queries have nothing to attend to
    _, w = sample_attention(q, k, v, rng, mask=mask)
    assert (w[np.broadcast_to(~mask, w.shape)] == 0).all()
    np.testing.assert_array_equal(w.sum(-1), np.broadcast_to(mask.any(-1), w.shape[:-1]))


def test_sampled_attention_scale_sharpens(rng):
    q, k, v = rng.normal(size=(2000, 1, 4)), rng.normal(size=(1, 5, 4)), np.eye(5)[None]
    _, w = sample_attention(q, k, v, np.random.default_rng(1), scale=1e6)
    np.testing.assert_array_equal(w, hard_attention(q, k, v)[1])


def test_sampled_attention_needs_a_generator(rng):
    x = np.zeros((1, 2, 3))
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        sample_attention(x, x, x, rng=0)


# --- location-based attention -----------------------------------------------------------------

def test_location_attention_is_softmax_of_W_h(rng):
    q, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 6))
    W = rng.normal(size=(4, 8))
    out, w = location_attention(q, v, W)
    np.testing.assert_allclose(w, softmax(q @ W[:, :5]), rtol=1e-12)
    np.testing.assert_allclose(out, w @ v, rtol=1e-12)


def test_location_attention_ignores_the_contents_of_the_source(rng):
    q, v = rng.normal(size=(1, 3, 4)), rng.normal(size=(1, 5, 6))
    W = rng.normal(size=(4, 5))
    _, w = location_attention(q, v, W)
    _, w_other = location_attention(q, rng.normal(size=(1, 5, 6)), W)
    np.testing.assert_array_equal(w, w_other)
    # content-based weights, by contrast, change with the keys
    k = rng.normal(size=(1, 5, 4))
    assert not np.allclose(scaled_dot_product_attention(q, k, v)[1],
                           scaled_dot_product_attention(q, k[:, ::-1], v)[1])


def test_location_attention_masks(rng):
    q, v = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 6))
    key_mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    _, w = location_attention(q, v, rng.normal(size=(4, 5)), mask=key_padding_mask(key_mask))
    assert (w[0][:, 3:] == 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0)


# --- local attention --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("T_q, T_k, window", [(6, 6, 0), (6, 6, 1), (7, 7, 2), (4, 6, 1), (5, 9, 3)])
def test_local_attention_matches_keras_dot_product_attention_with_the_window_mask(
        rng, T_q, T_k, window, dtype):
    B, d = 2, 8
    q, k, v = (rng.normal(size=(B, T, d)).astype(dtype) for T in (T_q, T_k, T_k))
    out, w = local_attention(q, k, v, window=window)
    # keras.ops.dot_product_attention takes (batch, T, heads, d): one head here.  Its
    # default scale is computed in float32; passed as a NumPy scalar of the inputs'
    # dtype, it keeps float64 exact.
    expected = keras.ops.dot_product_attention(q[:, :, None], k[:, :, None], v[:, :, None],
                                               mask=local_window_mask(T_q, T_k, window),
                                               scale=np.asarray(1 / np.sqrt(d), dtype))
    np.testing.assert_allclose(out, keras.ops.convert_to_numpy(expected)[:, :, 0], **tolerance(dtype))
    outside = ~local_window_mask(T_q, T_k, window)
    assert (w[:, outside] == 0).all()
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)


def test_wide_local_attention_is_global_attention(rng):
    q, k, v = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 7, 4)), rng.normal(size=(2, 7, 3))
    for a, b in zip(local_attention(q, k, v, window=7), scaled_dot_product_attention(q, k, v)):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_local_attention_combines_window_and_padding(rng):
    q, k, v = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 3))
    key_mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], bool)
    _, w = local_attention(q, k, v, window=1, mask=key_padding_mask(key_mask))
    allowed = local_window_mask(5, 5, 1) & key_mask[:, None, :]
    assert (w[~allowed] == 0).all()
    np.testing.assert_array_equal(w[1, 4], 0.0)  # its window holds only padding
    np.testing.assert_allclose(w[1, :4].sum(-1), 1.0)


# --- argument checks --------------------------------------------------------------------------

@pytest.mark.parametrize("call, message", [
    (lambda: cosine_similarity(np.zeros((2, 3)), np.zeros((2, 4))), "same last dimension"),
    (lambda: cosine_similarity(np.zeros(3), np.zeros((2, 3))), "query must have shape"),
    (lambda: similarity_scores(np.zeros((2, 3)), np.zeros((2, 3)), "euclid"), "similarity must be one of"),
    (lambda: similarity_scores(np.zeros((2, 3)), np.zeros((2, 4))), "same last dimension"),
    (lambda: cosine_attention(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), temperature=0),
     "temperature must be positive"),
    (lambda: hard_attention(np.zeros((2, 3)), np.zeros((4, 3)), np.zeros((5, 3))), "same number of positions"),
    (lambda: hard_attention(np.zeros((2, 3)), np.zeros((4, 3)), np.zeros((4, 3)), mask=np.ones((3, 4), bool)),
     "does not broadcast"),
    (lambda: location_attention(np.zeros((2, 3)), np.zeros((5, 2)), np.zeros((3, 4))), "max_length >= T_k"),
    (lambda: location_attention(np.zeros((2, 3)), np.zeros((5, 2)), np.zeros((4, 5))), "W_location must have"),
    (lambda: location_attention(np.zeros((2, 2, 3)), np.zeros((3, 5, 2)), np.zeros((3, 5))), "do not broadcast"),
    (lambda: local_attention(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), window=-1), "window must be"),
    (lambda: local_attention(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), window=1.5), "window must be"),
    (lambda: local_attention(np.zeros((2, 3)), np.zeros((2, 4)), np.zeros((2, 3)), window=1), "same last dimension"),
])
def test_wrong_arguments_raise_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
