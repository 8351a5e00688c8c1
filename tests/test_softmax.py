import numpy as np
import pytest

from attention_course.softmax import softmax


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
