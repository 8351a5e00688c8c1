"""Sinusoidal positions: NumPy == the TensorFlow implementation in the Keras model, and their properties."""

import math

import keras
import numpy as np
import pytest

from attention_course.models.transformer import PositionalEmbedding, sinusoids
from attention_course.positional_encoding import (binary_encoding, frequencies, shift_matrix,
                                                  sinusoidal_encoding)


@pytest.mark.parametrize("length, d_model", [(1, 2), (7, 4), (50, 16), (128, 64), (2048, 512)])
def test_matches_the_tensorflow_implementation(length, d_model):
    expected = keras.ops.convert_to_numpy(sinusoids(length, d_model))
    got = sinusoidal_encoding(length, d_model)
    assert got.shape == (length, d_model) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_entries_follow_the_papers_formula(dtype):
    d_model, base = 10, 10000.0
    pe = sinusoidal_encoding(30, d_model, base=base, dtype=dtype)
    assert pe.dtype == dtype
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-13, "atol": 1e-14}
    for pos in (0, 1, 17, 29):
        for i in range(d_model // 2):
            angle = pos / base ** (2 * i / d_model)
            np.testing.assert_allclose(pe[pos, 2 * i], math.sin(angle), **tol)      # even: sine
            np.testing.assert_allclose(pe[pos, 2 * i + 1], math.cos(angle), **tol)  # odd: cosine


def test_base_changes_the_frequencies():
    np.testing.assert_allclose(frequencies(8, base=100.0), [1.0, 100 ** -0.25, 0.1, 100 ** -0.75])
    assert not np.allclose(sinusoidal_encoding(10, 8, base=100.0), sinusoidal_encoding(10, 8))


@pytest.mark.parametrize("k", [0, 1, 5, -3, 2.5])
@pytest.mark.parametrize("d_model", [2, 16, 64])
def test_a_shift_is_a_fixed_linear_map(k, d_model):
    """PE(pos + k) = PE(pos) @ M_k with one M_k for every pos (Vaswani et al.'s motivation)."""
    positions = np.arange(40.0)
    M = shift_matrix(k, d_model)
    np.testing.assert_allclose(_encoding_at(positions, d_model) @ M,
                               _encoding_at(positions + k, d_model), atol=1e-12)
    np.testing.assert_allclose(M @ M.T, np.eye(d_model), atol=1e-12)  # a rotation: norms kept


def _encoding_at(positions, d_model):
    """Sinusoids at arbitrary (also fractional or negative) positions, float64."""
    angles = np.asarray(positions)[:, None] * frequencies(d_model)[None, :]
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(len(positions), d_model)


def test_integer_positions_agree_with_the_helper():
    np.testing.assert_allclose(_encoding_at(np.arange(12.0), 8), sinusoidal_encoding(12, 8, dtype=np.float64),
                               atol=1e-15)


def test_shift_matrices_compose_and_invert():
    a, b = shift_matrix(3, 8), shift_matrix(4, 8)
    np.testing.assert_allclose(a @ b, shift_matrix(7, 8), atol=1e-12)
    np.testing.assert_allclose(shift_matrix(3, 8) @ shift_matrix(-3, 8), np.eye(8), atol=1e-12)
    np.testing.assert_allclose(shift_matrix(0, 8), np.eye(8))


def test_rows_are_distinct_and_have_the_same_norm():
    pe = sinusoidal_encoding(200, 32, dtype=np.float64)
    np.testing.assert_allclose(np.linalg.norm(pe, axis=1), np.sqrt(16))
    distances = np.linalg.norm(pe[:, None] - pe[None], axis=-1)
    assert (distances + np.eye(200) * 1e9).min() > 0.1


def test_binary_encoding_counts():
    bits = binary_encoding(8, 3)
    np.testing.assert_array_equal(bits @ [1, 2, 4], np.arange(8))
    with pytest.raises(ValueError, match="cannot count"):
        binary_encoding(9, 3)


@pytest.mark.parametrize("length, d_model", [(5, 3), (5, 0), (-1, 4), (2.5, 4)])
def test_bad_sizes_raise(length, d_model):
    with pytest.raises(ValueError):
        sinusoidal_encoding(length, d_model)


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "none"])
@pytest.mark.parametrize("scale", [True, False])
def test_keras_positional_embedding(rng, positions, scale):
    layer = PositionalEmbedding(vocab_size=11, d_model=8, max_length=12, positions=positions, scale=scale)
    tokens = rng.integers(0, 11, size=(3, 9))
    layer(tokens)
    layer.set_weights([rng.normal(size=w.shape).astype(w.dtype) for w in layer.get_weights()])
    table = keras.ops.convert_to_numpy(layer.token_embedding.embeddings)
    expected = table[tokens] * (np.sqrt(8) if scale else 1.0)
    if positions == "sinusoidal":
        expected = expected + sinusoidal_encoding(9, 8)
    elif positions == "learned":
        expected = expected + keras.ops.convert_to_numpy(layer.position_embedding.embeddings)[:9]
    np.testing.assert_allclose(keras.ops.convert_to_numpy(layer(tokens)), expected, rtol=1e-5, atol=1e-6)


def test_unknown_position_kind_is_rejected():
    with pytest.raises(ValueError, match="positions must be one of"):
        PositionalEmbedding(5, 4, 8, positions="rotary")
