"""Chapter 4's learned lookup (``attention_course.training.learned_lookup``): the three versions
differ exactly as the page says."""

import numpy as np
import pytest

from attention_course.training import learned_lookup as lookup


def _scores(model, x, keys):
    """The model's scores before the softmax, ``(n, N_KEYS)``."""
    q, k = np.asarray(x @ model.W_q), np.einsum("btd,de->bte", keys, np.asarray(model.W_k))
    return np.einsum("bd,btd->bt", q, k) * model.scale


def test_small_init_starts_with_exactly_the_scaled_scores_and_unscaled_with_sqrt_d_k_times_them():
    x, keys, values, _ = lookup.lookup_examples(np.random.default_rng(5), 4)
    models = {arm: lookup.learned_lookup(arm, seed=3) for arm in lookup.SCORES}
    for model in models.values():
        model([x, keys, values])
    scaled, unscaled, small = (_scores(models[arm], x, keys) for arm in lookup.SCORES)
    np.testing.assert_allclose(small, scaled, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(unscaled, scaled * lookup.D_K ** 0.5, rtol=1e-4, atol=1e-4)
    assert np.std(scaled) == pytest.approx(1.0, rel=0.5)   # unit-variance scores, as the page says


def test_the_held_out_lookups_are_not_the_training_ones():
    first = lookup.lookup_examples(np.random.default_rng(0), 8)
    again = lookup.lookup_examples(np.random.default_rng(0), 8)
    other = lookup.lookup_examples(np.random.default_rng(10_000), 8)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not np.array_equal(first[1], other[1])
    x, keys, _, right = first
    nearest = np.argmin(np.linalg.norm(keys - x[:, None], axis=-1), axis=1)
    assert np.mean(nearest == right.argmax(1)) > 0.9     # the input is the right key, with noise


def test_small_init_with_the_rate_divided_by_d_k_to_the_quarter_retraces_the_scaled_model():
    """Adam's step hardly depends on the gradient's size, so the reparametrised model follows the
    scaled one step for step; at the scaled model's own rate it does not."""
    rate = 1e-2
    scaled = lookup.train_lookup("scaled", rate, seed=0).record
    retraced = lookup.train_lookup("unscaled, small init", rate * lookup.D_K ** -0.25, seed=0).record
    same_rate = lookup.train_lookup("unscaled, small init", rate, seed=0).record
    np.testing.assert_allclose(retraced["loss"], scaled["loss"], rtol=0.05)
    assert retraced["held_out_error"] == pytest.approx(scaled["held_out_error"], rel=0.1)
    assert not np.allclose(same_rate["loss"], scaled["loss"], rtol=0.05)


def test_unknown_versions_are_refused_by_name():
    with pytest.raises(ValueError, match="scores must be one of"):
        lookup.learned_lookup("halved", seed=0)
