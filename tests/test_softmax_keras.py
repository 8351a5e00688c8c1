"""The course's softmax == Keras' and TensorFlow's, on every axis, with masks and temperatures."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from attention_course.softmax import softmax
from conftest import tolerance

SHAPES_AND_AXES = [((7,), 0), ((3, 5), 0), ((3, 5), 1), ((2, 3, 4), 0), ((2, 3, 4), 1),
                   ((2, 3, 4), -1), ((2, 3, 4, 5), 2), ((2, 3, 4, 5), -3)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, axis", SHAPES_AND_AXES)
def test_matches_keras_ops_and_tf_nn_softmax(rng, shape, axis, dtype):
    x = (3 * rng.normal(size=shape)).astype(dtype)
    ours = softmax(x, axis=axis)
    assert ours.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ours, keras.ops.convert_to_numpy(keras.ops.softmax(x, axis=axis)),
                               **tolerance(dtype))
    np.testing.assert_allclose(ours, tf.nn.softmax(x, axis=axis).numpy(), **tolerance(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("temperature", [0.05, 0.5, 2.0, 50.0])
def test_temperature_matches_keras_on_divided_scores(rng, temperature, dtype):
    x = rng.normal(size=(4, 6)).astype(dtype)
    expected = keras.ops.convert_to_numpy(keras.ops.softmax(x / np.asarray(temperature, dtype)))
    np.testing.assert_allclose(softmax(x, temperature=temperature), expected, **tolerance(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, axis, mask_shape", [
    ((3, 6), -1, (3, 6)),              # a full mask
    ((2, 4, 6), -1, (2, 1, 6)),        # a key-padding mask, broadcast over queries
    ((2, 4, 6), -1, (6,)),             # one mask for everything
    ((2, 4, 6), 1, (2, 4, 1)),         # normalising over a middle axis
    ((2, 3, 4, 5), 0, (2, 3, 4, 5)),   # over the first axis
])
def test_masked_softmax_matches_keras_softmax_layer(rng, shape, axis, mask_shape, dtype):
    x = (2 * rng.normal(size=shape)).astype(dtype)
    mask = rng.random(mask_shape) > 0.4
    layer = keras.layers.Softmax(axis=axis, dtype=dtype)
    expected = keras.ops.convert_to_numpy(layer(x, mask=mask))
    np.testing.assert_allclose(softmax(x, axis=axis, mask=mask), expected, **tolerance(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fully_masked_slices_are_zero_in_both(rng, dtype):
    """keras.layers.Softmax zeroes masked entries after the softmax, so a slice
    with every entry masked comes out as zeros there too (unlike
    keras.layers.Attention, see test_attention.py)."""
    x = rng.normal(size=(3, 5)).astype(dtype)
    mask = np.ones((3, 5), bool)
    mask[1] = False
    mask[2, 1:] = False
    expected = keras.ops.convert_to_numpy(keras.layers.Softmax(dtype=dtype)(x, mask=mask))
    ours = softmax(x, mask=mask)
    np.testing.assert_array_equal(ours[1], 0.0)
    np.testing.assert_array_equal(expected[1], 0.0)
    np.testing.assert_allclose(ours[2], [1, 0, 0, 0, 0])
    np.testing.assert_allclose(ours, expected, **tolerance(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numeric_masks_follow_keras_convention(rng, dtype):
    """Keras reads a numeric mask as ``mask > 0.5``; so does the course."""
    x = rng.normal(size=(2, 5)).astype(dtype)
    mask = rng.random((2, 5)).astype(dtype)
    mask[:, 0] = 1.0
    expected = keras.ops.convert_to_numpy(keras.layers.Softmax(dtype=dtype)(x, mask=mask))
    np.testing.assert_allclose(softmax(x, mask=mask), expected, **tolerance(dtype))


@pytest.mark.parametrize("scale", [1e2, 1e3, 1e4])
def test_huge_scores_stay_finite_and_agree_with_keras(rng, scale):
    x = (scale * rng.normal(size=(4, 7))).astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    assert not np.isfinite(naive).all()  # the naive formula overflows here ...
    ours = softmax(x)
    assert np.isfinite(ours).all()       # ... the stable one does not
    np.testing.assert_allclose(ours, keras.ops.convert_to_numpy(keras.ops.softmax(x)), **tolerance("float32"))
