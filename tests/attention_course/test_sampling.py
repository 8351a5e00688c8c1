"""Temperature and top-k sampling: the right distribution, the right support, reproducible."""

import numpy as np
import pytest

from attention_course.sampling import next_token_probabilities, sample_next_token
from attention_course.softmax import softmax


def draws(logits, n, seed=0, **settings):
    """``n`` samples for every row: ``(n, B)``, all drawn in one vectorized call."""
    tiled = np.tile(logits, (n, 1))
    return sample_next_token(tiled, seed, **settings).reshape(n, len(logits))


@pytest.mark.parametrize("top_k", [1, 2, 5, 9])
def test_top_k_never_samples_outside_the_k_most_likely(rng, top_k):
    logits = rng.normal(scale=3.0, size=(6, 10))
    samples = draws(logits, 4000, temperature=2.0, top_k=top_k)   # a flat distribution: a hard test
    allowed = np.argsort(-logits, axis=1)[:, :top_k]
    for row in range(6):
        assert set(samples[:, row]) <= set(allowed[row])
        if top_k > 1:   # and every allowed token does occur
            assert set(samples[:, row]) == set(allowed[row])


def test_top_k_keeps_exactly_k_tokens_among_ties():
    logits = np.array([[1.0, 1.0, 1.0, 1.0, 0.0]])
    probabilities = next_token_probabilities(logits, top_k=2)
    assert (probabilities > 0).sum() == 2
    np.testing.assert_allclose(probabilities.sum(), 1.0)


@pytest.mark.parametrize("temperature, top_k", [(1.0, None), (0.5, None), (2.0, None), (1.0, 3),
                                                (0.7, 4)])
def test_samples_follow_the_scaled_softmax(rng, temperature, top_k):
    logits = rng.normal(size=(2, 6))
    n = 40_000
    samples = draws(logits, n, seed=1, temperature=temperature, top_k=top_k)
    expected = softmax(logits / temperature)
    if top_k is not None:
        expected = np.where(expected >= np.sort(expected, axis=1)[:, [-top_k]], expected, 0.0)
        expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(next_token_probabilities(logits, temperature, top_k), expected,
                               rtol=1e-12, atol=1e-15)
    frequencies = np.stack([np.bincount(samples[:, b], minlength=6) / n for b in range(2)])
    # binomial standard error <= sqrt(0.25 / n) = 0.0025: 5 standard errors
    np.testing.assert_allclose(frequencies, expected, atol=0.0125)


def test_temperature_towards_zero_is_greedy(rng):
    logits = rng.normal(size=(50, 20))
    greedy = logits.argmax(axis=1)
    np.testing.assert_array_equal(sample_next_token(logits, 0, temperature=0), greedy)
    for seed in range(5):
        np.testing.assert_array_equal(sample_next_token(logits, seed, temperature=1e-6), greedy)
    # ...while temperature 1 does not always pick the arg-max
    assert (sample_next_token(logits, 0, temperature=1.0) != greedy).any()


def test_higher_temperature_flattens_the_distribution(rng):
    logits = rng.normal(size=(1, 8)) * 2
    entropy = [float(-(p * np.log(p)).sum()) for p in
               (next_token_probabilities(logits, t)[0] for t in (0.25, 0.5, 1.0, 2.0, 8.0))]
    assert np.all(np.diff(entropy) > 0) and entropy[-1] < np.log(8)


def test_same_seed_same_tokens(rng):
    logits = rng.normal(size=(100, 30))
    a = sample_next_token(logits, 42, temperature=1.0, top_k=10)
    np.testing.assert_array_equal(a, sample_next_token(logits, 42, temperature=1.0, top_k=10))
    generator = np.random.default_rng(42)   # a Generator works too, and advances
    np.testing.assert_array_equal(a, sample_next_token(logits, generator, top_k=10))
    assert not np.array_equal(a, sample_next_token(logits, generator, top_k=10))
    assert not np.array_equal(a, sample_next_token(logits, 43, top_k=10))
    assert a.dtype == np.int32 and a.shape == (100,)


@pytest.mark.parametrize("logits, settings, message", [
    (np.zeros(5), {}, r"shape \(B, V\)"),
    (np.zeros((2, 0)), {}, "V >= 1"),
    (np.zeros((2, 5)), {"temperature": -1.0}, "temperature must be positive"),
    (np.zeros((2, 5)), {"top_k": 0}, r"top_k must lie in \[1, V=5\]"),
    (np.zeros((2, 5)), {"top_k": 6}, r"top_k must lie in \[1, V=5\]"),
    (np.zeros(5), {"temperature": 0}, r"shape \(B, V\)"),
])
def test_bad_arguments(logits, settings, message):
    with pytest.raises(ValueError, match=message):
        sample_next_token(logits, 0, **settings)
