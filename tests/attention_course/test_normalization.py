"""NumPy layer / batch normalization == keras.layers.LayerNormalization / BatchNormalization."""

import keras
import numpy as np
import pytest

from attention_course.normalization import LayerNormWeights, batch_norm, layer_norm
from attention_course.weights import from_keras
from conftest import tolerance

SHAPE = (3, 5, 6)


def keras_tolerance(dtype):
    # float16: both sides compute in float32 and round the result to float16,
    # whose spacing is ~1e-3 relative; a different float32 rounding order can
    # flip the last bit.
    return {"rtol": 2e-3, "atol": 2e-3} if dtype == "float16" else tolerance(dtype)


def randomise(layer, rng):
    """Non-default weights: gamma != 1, beta != 0 (and moving statistics for batch norm)."""
    weights = []
    for w in layer.get_weights():
        value = rng.normal(loc=1.0, scale=0.5, size=w.shape)
        weights.append(np.abs(value).astype(w.dtype))  # positive: valid as a moving variance too
    layer.set_weights(weights)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("epsilon", [1e-3, 1e-6, 0.5])
@pytest.mark.parametrize("axis", [-1, 1, 0, [1, 2], [-1, -2], [0, 2]])
@pytest.mark.parametrize("center, scale", [(True, True), (False, True), (True, False), (False, False)])
def test_layer_norm_matches_keras(rng, dtype, epsilon, axis, center, scale):
    x = (3.0 + 2.0 * rng.normal(size=SHAPE)).astype(dtype)  # mean and scale far from 0 and 1
    layer = keras.layers.LayerNormalization(axis=axis, epsilon=epsilon, center=center, scale=scale,
                                            dtype=dtype)
    layer(x)
    randomise(layer, rng)
    expected = keras.ops.convert_to_numpy(layer(x))
    weights = from_keras.layer_norm(layer)
    assert (weights.gamma is None) != scale and (weights.beta is None) != center
    got = weights(x)
    assert got.dtype == np.dtype(dtype) and got.shape == x.shape
    np.testing.assert_allclose(got, expected, **keras_tolerance(dtype))


def test_layer_norm_default_epsilon_is_keras_default(rng):
    x = rng.normal(scale=0.05, size=(4, 8)).astype("float32")  # small variance: epsilon matters
    expected = keras.ops.convert_to_numpy(keras.layers.LayerNormalization()(x))
    np.testing.assert_allclose(layer_norm(x), expected, rtol=1e-5, atol=1e-6)
    assert not np.allclose(layer_norm(x, epsilon=1e-6), expected, rtol=1e-3)


def test_layer_norm_statistics_per_example(rng):
    x = rng.normal(loc=5.0, scale=3.0, size=(4, 7, 16))
    y = layer_norm(x, epsilon=0.0)
    np.testing.assert_allclose(y.mean(axis=-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=-1), 1.0, rtol=1e-12)
    # Each token is normalised on its own: the rest of the batch does not matter.
    np.testing.assert_allclose(layer_norm(x[:1], epsilon=0.0), y[:1], rtol=1e-12)


def test_layer_norm_over_two_axes_uses_their_joint_statistics(rng):
    x = rng.normal(size=(2, 3, 4))
    y = layer_norm(x, axis=(1, 2), epsilon=0.0)
    np.testing.assert_allclose(y.reshape(2, -1).mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.reshape(2, -1).var(axis=1), 1.0, rtol=1e-12)
    assert not np.allclose(y.var(axis=-1), 1.0)  # not per row


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [-1, 1])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_keras(rng, dtype, axis, training):
    x = (2.0 + 3.0 * rng.normal(size=SHAPE)).astype(dtype)
    layer = keras.layers.BatchNormalization(axis=axis, epsilon=1e-2, dtype=dtype)
    layer(x)
    randomise(layer, rng)
    gamma, beta, moving_mean, moving_variance = (keras.ops.convert_to_numpy(w) for w in layer.weights)
    expected = keras.ops.convert_to_numpy(layer(x, training=training))
    moving = {} if training else {"moving_mean": moving_mean, "moving_variance": moving_variance}
    got = batch_norm(x, gamma, beta, axis=axis, epsilon=1e-2, **moving)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, expected, **tolerance(dtype))


def test_batch_norm_statistics_per_feature(rng):
    x = rng.normal(loc=5.0, scale=3.0, size=(8, 7, 16))
    y = batch_norm(x, epsilon=0.0)
    np.testing.assert_allclose(y.mean(axis=(0, 1)), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.var(axis=(0, 1)), 1.0, rtol=1e-12)
    # In training mode an example's output depends on the rest of the batch.
    assert not np.allclose(batch_norm(x[:1], epsilon=0.0), y[:1])


@pytest.mark.parametrize("call, message", [
    (lambda: layer_norm(np.ones((2, 3)), gamma=np.ones(2)), "gamma must have shape"),
    (lambda: layer_norm(np.ones((2, 3)), beta=np.ones((2, 3)), axis=-1), "beta must have shape"),
    (lambda: layer_norm(np.ones((2, 3)), axis=2), "out of range"),
    (lambda: layer_norm(np.ones((2, 3)), axis=(1, -1)), "same axis twice"),
    (lambda: layer_norm(np.ones((2, 3)), axis=()), "at least one axis"),
    (lambda: batch_norm(np.ones((2, 3)), moving_mean=np.zeros(3)), "both moving_mean"),
    (lambda: batch_norm(np.ones((2, 3)), gamma=np.ones(2)), "gamma must have shape"),
])
def test_bad_arguments_raise(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_from_keras_needs_a_built_layer():
    with pytest.raises(ValueError, match="no weights yet"):
        from_keras.layer_norm(keras.layers.LayerNormalization())
