"""attention_course.softmax: its properties, then against Keras' and TensorFlow's softmax."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from attention_course.softmax import softmax
from conftest import tolerance


def naive_softmax(x, axis):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_definition_on_any_axis(rng, axis, dtype):
    x = rng.normal(size=(3, 4, 5)).astype(dtype)
    out = softmax(x, axis=axis)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, naive_softmax(x.astype(np.float64), axis), rtol=1e-5)
    np.testing.assert_allclose(out.sum(axis=axis), 1.0, rtol=1e-6)


def test_large_inputs_do_not_overflow():
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]])
    out = softmax(x)
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out[0], naive_softmax(np.array([0.0, 1.0, 2.0]), -1))
    np.testing.assert_allclose(out[1], naive_softmax(np.array([0.0, -1.0, -2.0]), -1))


def test_shift_invariant(rng):
    x = rng.normal(size=(4, 6))
    np.testing.assert_allclose(softmax(x), softmax(x + 123.0), rtol=1e-12)


def test_mask_excludes_entries_and_renormalises(rng):
    x = rng.normal(size=(2, 5))
    mask = np.array([[1, 1, 0, 1, 0], [0, 1, 1, 1, 1]], dtype=bool)
    out = softmax(x, mask=mask)
    assert (out[~mask] == 0).all()
    np.testing.assert_allclose(out.sum(-1), 1.0)
    np.testing.assert_allclose(out[0, [0, 1, 3]], naive_softmax(x[0, [0, 1, 3]], -1))


def test_fully_masked_rows_are_zero_not_nan(rng):
    x = rng.normal(size=(3, 4)).astype(np.float32)
    mask = np.array([[True] * 4, [False] * 4, [True, False, False, False]])
    out = softmax(x, mask=mask)
    assert np.isfinite(out).all()
    assert (out[1] == 0).all()
    np.testing.assert_allclose(out[2], [1, 0, 0, 0])


def test_minus_infinity_scores_count_as_masked():
    out = softmax(np.array([[0.0, -np.inf], [-np.inf, -np.inf]]))
    np.testing.assert_array_equal(out, [[1.0, 0.0], [0.0, 0.0]])


def test_mask_broadcasts(rng):
    x = rng.normal(size=(2, 3, 4))
    key_mask = np.array([True, True, False, True])
    np.testing.assert_allclose(softmax(x, mask=key_mask), softmax(x, mask=np.broadcast_to(key_mask, x.shape)))


@pytest.mark.parametrize("temperature", [0.1, 1.0, 10.0])
def test_temperature_divides_the_scores(rng, temperature):
    x = rng.normal(size=(5,))
    np.testing.assert_allclose(softmax(x, temperature=temperature), naive_softmax(x / temperature, -1))


def test_temperature_limits():
    x = np.array([1.0, 3.0, 2.0])
    np.testing.assert_allclose(softmax(x, temperature=1e-3), [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(softmax(x, temperature=1e6), [1 / 3] * 3, atol=1e-5)


def test_integer_input_becomes_float():
    assert softmax(np.array([1, 2, 3])).dtype == np.float64


@pytest.mark.parametrize("kwargs, message", [
    ({"mask": np.ones((3, 3), bool)}, "does not broadcast"),
    ({"axis": 2}, "out of range"),
    ({"temperature": 0.0}, "temperature must be positive"),
    ({"mask": np.array(["a", "b"])}, "must be boolean"),
])
def test_bad_arguments_raise_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        softmax(np.zeros((2, 2)), **kwargs)


# ---------------------------------------------------------------------------
# The course's softmax == Keras' and TensorFlow's, on every axis, with masks and temperatures
# ---------------------------------------------------------------------------

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
