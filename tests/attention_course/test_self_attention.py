"""NumPy self-attention == keras.layers.MultiHeadAttention(num_heads=1, use_bias=False)."""

import keras
import numpy as np
import pytest

from attention_course.masks import causal_mask, padding_mask
from attention_course.self_attention import SelfAttentionWeights, self_attention
from attention_course.weights import from_keras
from conftest import tolerance


def keras_tolerance(dtype) -> dict:
    """float64: Keras scales the queries by a float32 constant (see test_multi_head.py)."""
    return tolerance(dtype) if dtype == "float32" else {"rtol": 1e-6, "atol": 1e-7}


def one_head_layer(x, d_k, d_v, rng, dtype):
    layer = keras.layers.MultiHeadAttention(num_heads=1, key_dim=d_k, value_dim=d_v,
                                            use_bias=False, dtype=dtype)
    layer(x, x)
    layer.set_weights([rng.normal(scale=0.5, size=w.shape).astype(dtype) for w in layer.get_weights()])
    return layer


SHAPES = {
    # name: (B, T, d_model, d_k, d_v)
    "square": (2, 5, 8, 4, 4),
    "d_v != d_k": (3, 6, 12, 5, 7),
    "one token": (2, 1, 6, 3, 3),
}


@pytest.mark.filterwarnings("ignore:You are using a softmax over axis")  # the one-token case
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "fully_masked_row"])
@pytest.mark.parametrize("shape", SHAPES)
def test_matches_keras(rng, shape, mask_kind, dtype):
    B, T, d_model, d_k, d_v = SHAPES[shape]
    x = rng.normal(size=(B, T, d_model)).astype(dtype)
    layer = one_head_layer(x, d_k, d_v, rng, dtype)
    mask = None
    if mask_kind == "causal":
        mask = np.broadcast_to(causal_mask(T), (B, T, T))
    elif mask_kind == "padding":
        lengths = rng.integers(1, T + 1, size=B)
        mask = np.broadcast_to(padding_mask(lengths, T)[:, None, :], (B, T, T))
    elif mask_kind == "fully_masked_row":
        mask = rng.random((B, T, T)) > 0.4
        mask[..., 0] = True
        mask[0, T - 1] = False  # the last query of the first sequence sees nothing
    kwargs = {} if mask is None else {"attention_mask": mask}
    expected, expected_attention = layer(x, x, return_attention_scores=True, **kwargs)

    weights = from_keras.self_attention(layer)
    assert weights.W_query.shape == (d_model, d_k) and weights.W_value.shape == (d_model, d_v)
    assert weights.W_output.shape == (d_v, d_model)
    output, attention = self_attention(x, weights, mask=mask)
    assert output.dtype == np.dtype(dtype) and attention.shape == (B, T, T)
    np.testing.assert_allclose(attention, keras.ops.convert_to_numpy(expected_attention)[:, 0],
                               **keras_tolerance(dtype))
    np.testing.assert_allclose(output, keras.ops.convert_to_numpy(expected), **keras_tolerance(dtype))
    if mask_kind == "fully_masked_row":
        assert (attention[0, T - 1] == 0).all() and (output[0, T - 1] == 0).all()


def test_without_output_projection_is_the_textbook_formula(rng):
    w = SelfAttentionWeights.random(d_model=6, d_k=3, d_v=4, seed=2, dtype=np.float64)
    x = rng.normal(size=(5, 6))
    q, k, v = x @ w.W_query, x @ w.W_key, x @ w.W_value
    scores = q @ k.T / np.sqrt(3)
    a = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    output, attention = self_attention(x, w)
    np.testing.assert_allclose(attention, a, rtol=1e-12)
    np.testing.assert_allclose(output, a @ v, rtol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_permutation_equivariance(seed):
    """Shuffling the tokens shuffles the outputs (and the weights' rows and columns) alike."""
    rng = np.random.default_rng(seed)
    w = SelfAttentionWeights.random(d_model=8, d_k=4, seed=seed, dtype=np.float64)
    x = rng.normal(size=(2, 7, 8))
    perm = rng.permutation(7)
    out, att = self_attention(x, w)
    out_p, att_p = self_attention(x[:, perm], w)
    np.testing.assert_allclose(out_p, out[:, perm], rtol=1e-12)
    np.testing.assert_allclose(att_p, att[:, perm][:, :, perm], rtol=1e-12, atol=1e-15)


def test_causal_mask_breaks_permutation_equivariance(rng):
    w = SelfAttentionWeights.random(d_model=8, d_k=4, seed=0, dtype=np.float64)
    x = rng.normal(size=(5, 8))
    perm = np.array([4, 3, 2, 1, 0])
    out, _ = self_attention(x, w, mask=causal_mask(5))
    out_p, _ = self_attention(x[perm], w, mask=causal_mask(5))
    assert not np.allclose(out_p, out[perm])


def test_from_keras_rejects_layers_that_are_not_one_plain_head(rng):
    x = rng.normal(size=(1, 3, 4)).astype("float32")
    with pytest.raises(ValueError, match="no weights yet"):
        from_keras.self_attention(keras.layers.MultiHeadAttention(num_heads=1, key_dim=2))
    two_heads = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2, use_bias=False)
    two_heads(x, x)
    with pytest.raises(ValueError, match="one head"):
        from_keras.self_attention(two_heads)
    with_bias = keras.layers.MultiHeadAttention(num_heads=1, key_dim=2)
    with_bias(x, x)
    with pytest.raises(ValueError, match="use_bias=False"):
        from_keras.self_attention(with_bias)


def test_wrong_shapes_raise_clear_errors():
    w = SelfAttentionWeights.random(d_model=8, d_k=4)
    with pytest.raises(ValueError, match="d_model=7"):
        self_attention(np.zeros((3, 7)), w)
    with pytest.raises(ValueError, match="W_output must read"):
        SelfAttentionWeights(w.W_query, w.W_key, w.W_value, W_output=np.zeros((5, 8)))
    with pytest.raises(ValueError, match="same d_k"):
        SelfAttentionWeights(w.W_query, np.zeros((8, 3)), w.W_value)
