"""The measurements chapter 6 makes of attention heads."""

import numpy as np
import pytest

from attention_course import head_analysis as ha
from attention_course.multi_head import MultiHeadAttentionWeights, multi_head_attention
from attention_course.softmax import softmax


def previous_token_attention(T: int) -> np.ndarray:
    """Each query i >= 1 looks only at i - 1; query 0 looks at itself."""
    a = np.zeros((T, T))
    a[np.arange(1, T), np.arange(T - 1)] = 1.0
    a[0, 0] = 1.0
    return a


def test_entropy_of_uniform_one_hot_and_masked_rows():
    T = 6
    weights = np.stack([np.full((T, T), 1 / T), np.eye(T), np.zeros((T, T))])
    entropy = ha.attention_entropy(weights)
    assert entropy.shape == (3, T)
    np.testing.assert_allclose(entropy[0], np.log(T), rtol=1e-12)
    np.testing.assert_array_equal(entropy[1], 0.0)
    np.testing.assert_array_equal(entropy[2], 0.0)  # fully masked rows: 0, not NaN


def test_entropy_matches_the_formula(rng):
    weights = softmax(rng.normal(size=(2, 3, 4, 5)), axis=-1)
    expected = -(weights * np.log(weights)).sum(axis=-1)
    np.testing.assert_allclose(ha.attention_entropy(weights), expected, rtol=1e-12)


def test_mean_offset():
    T = 5
    np.testing.assert_allclose(ha.mean_offset(previous_token_attention(T))[1:], -1.0)
    np.testing.assert_allclose(ha.mean_offset(np.eye(T)), 0.0)
    uniform = np.full((T, T), 1 / T)  # query i looks on average at position 2: offset 2 - i
    np.testing.assert_allclose(ha.mean_offset(uniform), 2.0 - np.arange(T), atol=1e-12)


@pytest.mark.parametrize("offset", [-2, -1, 0, 1, 3])
def test_weight_at_offset_matches_a_loop(rng, offset):
    weights = softmax(rng.normal(size=(2, 3, 6, 6)), axis=-1)
    expected = np.zeros((2, 3, 6))
    for i in range(6):
        if 0 <= i + offset < 6:
            expected[..., i] = weights[..., i, i + offset]
    np.testing.assert_array_equal(ha.weight_at_offset(weights, offset), expected)


def test_weight_on_positions_picks_each_sequences_own_position(rng):
    weights = softmax(rng.normal(size=(4, 2, 5, 7)), axis=-1)
    positions = np.array([0, 6, 3, 3])
    picked = ha.weight_on_positions(weights, positions)
    assert picked.shape == (4, 2, 5)
    for b, p in enumerate(positions):
        np.testing.assert_array_equal(picked[b], weights[b, :, :, p])
    with pytest.raises(ValueError, match="shape \\(B,\\)"):
        ha.weight_on_positions(weights, np.array([0, 1]))
    with pytest.raises(ValueError, match="must lie in"):
        ha.weight_on_positions(weights, np.array([0, 1, 2, 7]))


def test_head_similarity():
    T = 5
    prev = previous_token_attention(T)
    nxt = np.roll(np.eye(T), 1, axis=1)  # i -> i + 1 (wrapping): no overlap with prev except row 0
    heads = np.stack([prev, prev, np.eye(T), nxt])[None]  # (1, 4, T, T)
    similarity = ha.head_similarity(heads)
    assert similarity.shape == (4, 4)
    np.testing.assert_allclose(similarity, similarity.T)
    np.testing.assert_allclose(np.diag(similarity), 1.0)
    assert similarity[0, 1] == pytest.approx(1.0)
    assert similarity[0, 3] == pytest.approx(0.0)
    assert similarity[0, 2] == pytest.approx(1 / T)  # they share only row 0's weight on key 0
    with pytest.raises(ValueError, match="\\(B, N, T_q, T_k\\)"):
        ha.head_similarity(prev)


def test_ablating_a_head_removes_exactly_its_contribution(rng):
    w = MultiHeadAttentionWeights.random(d_model=8, num_heads=3, key_dim=4, value_dim=2, seed=0,
                                         dtype=np.float64)
    x = rng.normal(size=(2, 5, 8))
    full, attention = multi_head_attention(x, x, w)
    # Head 1's own contribution, from the formula.
    v = x @ w.value_kernel[:, 1] + w.value_bias[1]
    contribution = (attention[:, 1] @ v) @ w.output_kernel[1]

    ablated = ha.ablate_heads(w, [1])
    out, ablated_attention = multi_head_attention(x, x, ablated)
    np.testing.assert_allclose(out, full - contribution, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ablated_attention, attention)      # weights still computed
    assert np.abs(w.output_kernel[1]).sum() > 0                      # the original is untouched

    none_left, _ = multi_head_attention(x, x, ha.ablate_heads(w, range(3)))
    np.testing.assert_allclose(none_left, np.broadcast_to(w.output_bias, none_left.shape))
    with pytest.raises(ValueError, match="heads must lie in"):
        ha.ablate_heads(w, [3])


def test_wrong_shapes_raise():
    with pytest.raises(ValueError, match="weights must have shape"):
        ha.attention_entropy(np.ones(3))
