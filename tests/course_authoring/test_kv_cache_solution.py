"""Assignment 11's reference solution (a key/value cache for the notebook's small GPT) checked
against the notebook's own full forward pass, for models and seeds other than the tests'."""

import numpy as np
import pytest

from grading_support import SOLUTIONS

from course_grader.hidden_tests import reference_solution


@pytest.fixture(scope="module")
def nb():
    return reference_solution(SOLUTIONS / "a11_kv_cache" / "a11_kv_cache.ipynb")


CONFIGS = [dict(vocab_size=7, d_model=8, num_heads=1, num_layers=1, max_length=10),
           dict(vocab_size=20, d_model=32, num_heads=4, num_layers=4, max_length=24),
           dict(vocab_size=5, d_model=6, num_heads=3, num_layers=2, max_length=12)]


@pytest.mark.parametrize("config", CONFIGS)
def test_cached_steps_give_the_full_pass_logits(nb, config, rng):
    params = nb.make_gpt(seed=int(rng.integers(1 << 30)), **config)
    T, B = config["max_length"], 3
    tokens = rng.integers(0, config["vocab_size"], size=(B, T))
    full = nb.gpt_forward(params, tokens)
    cache = nb.empty_cache(params, B)
    for t in range(T):
        before = [dict(layer) for layer in cache]
        logits, cache = nb.decode_with_cache(params, tokens[:, t], cache)
        np.testing.assert_allclose(logits, full[:, t], rtol=1e-10, atol=1e-10)
        assert all(layer["keys"].shape[2] == t + 1 == layer["values"].shape[2] for layer in cache)
        assert all(b["keys"].shape[2] == t for b in before)          # the given cache is left as it was


def test_the_full_pass_is_causal(nb, rng):
    """What the cache relies on: a later token changes no earlier position's logits."""
    params = nb.make_gpt(seed=3)
    tokens = rng.integers(0, 12, size=(2, 10))
    changed = tokens.copy()
    changed[:, 6:] = (changed[:, 6:] + 1) % 12
    a, b = nb.gpt_forward(params, tokens), nb.gpt_forward(params, changed)
    np.testing.assert_allclose(a[:, :6], b[:, :6], rtol=0, atol=1e-12)
    assert not np.allclose(a[:, 6:], b[:, 6:])


@pytest.mark.parametrize("config", CONFIGS)
def test_greedy_generation_equals_the_full_pass(nb, config, rng):
    params = nb.make_gpt(seed=int(rng.integers(1 << 30)), **config)
    prompt = rng.integers(0, config["vocab_size"], size=(2, 2))
    expected = prompt
    for _ in range(config["max_length"] - 2):
        expected = np.concatenate([expected, nb.gpt_forward(params, expected)[:, -1].argmax(-1)[:, None]], axis=1)
    tokens, logits = nb.generate_greedy(params, prompt, config["max_length"] - 2)
    np.testing.assert_array_equal(tokens, expected)
    np.testing.assert_allclose(logits, nb.gpt_forward(params, expected[:, :-1])[:, 1:], rtol=1e-10, atol=1e-10)
