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


def test_weight_on_keys_sums_each_sequences_own_keys(rng):
    weights = softmax(rng.normal(size=(4, 2, 5, 7)), axis=-1)
    keys = np.zeros((4, 7), bool)
    keys[0, 0] = keys[1, [1, 6]] = keys[2, 3] = True           # sequence 3: no key at all
    picked = ha.weight_on_keys(weights, keys)
    assert picked.shape == (4, 2, 5)
    for b in range(4):
        np.testing.assert_allclose(picked[b], weights[b][..., keys[b]].sum(axis=-1), rtol=1e-12)
    np.testing.assert_array_equal(picked[3], 0.0)
    np.testing.assert_allclose(ha.weight_on_keys(weights, np.ones((4, 7), bool)), 1.0, rtol=1e-12)
    with pytest.raises(ValueError, match="shape \\(B, T_k\\)"):
        ha.weight_on_keys(weights, keys[:2])
    with pytest.raises(ValueError, match="boolean"):
        ha.weight_on_keys(weights, keys.astype(int))


def test_head_parameters_are_each_heads_own_slices(rng):
    d, N, k, v, out = 5, 3, 2, 4, 6
    weights = MultiHeadAttentionWeights(
        rng.normal(size=(d, N, k)), rng.normal(size=(d, N, k)), rng.normal(size=(d, N, v)),
        rng.normal(size=(N, v, out)), rng.normal(size=(N, k)), rng.normal(size=(N, k)),
        rng.normal(size=(N, v)), rng.normal(size=out))
    rows = ha.head_parameters(weights)
    assert rows.shape == (N, 2 * d * k + d * v + 2 * k + v + v * out)
    for h in range(N):
        expected = np.concatenate([weights.query_kernel[:, h].ravel(), weights.key_kernel[:, h].ravel(),
                                   weights.value_kernel[:, h].ravel(), weights.query_bias[h],
                                   weights.key_bias[h], weights.value_bias[h],
                                   weights.output_kernel[h].ravel()])
        np.testing.assert_array_equal(rows[h], expected)
    # Changing one head's weight changes its row only.
    weights.value_kernel[2, 1, 3] += 1.0
    changed = ha.head_parameters(weights) != rows
    assert changed[1].sum() == 1 and not changed[[0, 2]].any()
    # Without biases: the kernels only.
    no_bias = MultiHeadAttentionWeights(weights.query_kernel, weights.key_kernel, weights.value_kernel,
                                        weights.output_kernel)
    assert ha.head_parameters(no_bias).shape == (N, 2 * d * k + d * v + v * out)


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
