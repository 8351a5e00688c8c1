"""The sqrt(d_k) measurements: the softmax Jacobian, the entropy and the saturation experiment."""

import numpy as np
import pytest
import scipy.stats
import tensorflow as tf

from attention_course.scaling import entropy, measure_saturation, softmax_jacobian
from attention_course.softmax import softmax
from conftest import tolerance


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 6)])
def test_softmax_jacobian_matches_tensorflow_autodiff(rng, shape, dtype):
    scores = (2 * rng.normal(size=shape)).astype(dtype)
    x = tf.constant(scores.reshape(-1, shape[-1]))
    with tf.GradientTape() as tape:
        tape.watch(x)
        p = tf.nn.softmax(x, axis=-1)
    expected = tape.batch_jacobian(p, x).numpy().reshape(*shape, shape[-1])
    ours = softmax_jacobian(softmax(scores))
    assert ours.shape == (*shape, shape[-1]) and ours.dtype == np.dtype(dtype)
    np.testing.assert_allclose(ours, expected, **tolerance(dtype))


def test_softmax_jacobian_matches_finite_differences(rng):
    s = rng.normal(size=6)
    eps = 1e-6
    numeric = np.stack([(softmax(s + eps * e) - softmax(s - eps * e)) / (2 * eps) for e in np.eye(6)],
                       axis=1)
    np.testing.assert_allclose(softmax_jacobian(softmax(s)), numeric, atol=1e-9)


def test_saturated_softmax_has_zero_jacobian_and_uniform_has_the_largest():
    np.testing.assert_array_equal(softmax_jacobian(np.array([0.0, 1.0, 0.0])), 0.0)
    n = 4
    uniform = softmax_jacobian(np.full(n, 1 / n))
    np.testing.assert_allclose(uniform, np.eye(n) / n - 1 / n ** 2, rtol=1e-12)
    np.testing.assert_allclose(uniform.sum(-1), 0.0, atol=1e-15)  # rows of a softmax Jacobian sum to 0


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_entropy_matches_scipy(rng, axis):
    p = softmax(rng.normal(size=(3, 4, 5)), axis=axis)
    np.testing.assert_allclose(entropy(p, axis=axis), scipy.stats.entropy(p, axis=axis), rtol=1e-12)


def test_entropy_limits():
    np.testing.assert_allclose(entropy(np.full(8, 1 / 8)), np.log(8), rtol=1e-12)
    assert entropy(np.array([0.0, 1.0, 0.0])) == 0.0  # 0 log 0 = 0, no NaN


def test_variance_of_unscaled_scores_grows_like_d_k_and_scaling_removes_it():
    d_ks = np.array([1, 4, 16, 64, 256])
    m = measure_saturation(d_ks, n_keys=8, n_queries=4000, seed=3)
    # 32 000 scores per width: the sample variance is within a few % of d_k
    np.testing.assert_allclose(m.score_variance / d_ks, 1.0, rtol=0.06)
    np.testing.assert_allclose(m.scaled_score_variance, 1.0, rtol=0.06)


def test_unscaled_softmax_saturates_and_scaled_does_not():
    m = measure_saturation([1, 16, 512], n_keys=16, n_queries=1000, seed=0)
    assert m.max_weight_unscaled[-1] > 0.9 and m.max_weight_scaled[-1] < 0.35
    assert np.all(np.diff(m.max_weight_unscaled) > 0) and np.all(np.diff(m.entropy_unscaled) < 0)
    assert m.entropy_scaled[-1] > 0.9 * m.entropy_scaled[0]
    assert m.jacobian_norm_unscaled[-1] < 0.3 * m.jacobian_norm_scaled[-1]
    # at d_k = 1 scaling changes nothing
    assert m.max_weight_scaled[0] == m.max_weight_unscaled[0]


@pytest.mark.parametrize("kwargs, message", [
    ({"d_ks": []}, "non-empty 1-D"),
    ({"d_ks": [0, 4]}, "positive integers"),
    ({"d_ks": [1.5]}, "positive integers"),
    ({"d_ks": [4], "n_keys": 1}, "n_keys >= 2"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        measure_saturation(**kwargs)


@pytest.mark.parametrize("call, message", [
    (lambda: entropy(np.array([0.5, -0.5, 1.0])), "non-negative"),
    (lambda: entropy(np.ones((2, 2)), axis=2), "out of range"),
    (lambda: softmax_jacobian(np.float64(1.0)), "at least 1 dimensions"),
])
def test_bad_probabilities(call, message):
    with pytest.raises(ValueError, match=message):
        call()
