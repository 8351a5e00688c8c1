"""Beam search: width 1 is greedy decoding; wider beams find what greedy misses."""

import itertools

import numpy as np
import pytest

from attention_course.decoding import beam_search, greedy_decode
from attention_course.softmax import log_softmax

PAD, START, END = 0, 1, 2


def markov_step(table):
    """A toy "model": the next-word logits depend on the step and the previous word only.

    ``table (steps, V, V)``: ``table[t, w]`` are the logits after word ``w`` at step ``t``.
    """
    def step(tokens, state):
        tokens = np.asarray(tokens)
        return table[tokens.shape[1] - 1, tokens[:, -1]], state, None
    return step


def random_table(rng, steps, V, end_bias=0.0):
    table = rng.normal(scale=2.0, size=(steps, V, V))
    table[..., PAD] = -1e9     # never predicts padding or <s>
    table[..., START] = -1e9
    table[..., END] += end_bias
    return table


def sequence_log_prob(table, sequence):
    """log p(sequence) under the Markov model, scoring up to and including </s>."""
    total, previous = 0.0, START
    for t, word in enumerate(sequence):
        total += log_softmax(table[t, previous])[word]
        if word == END:
            break
        previous = word
    return total


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("end_bias", [-1.0, 1.0])
def test_width_one_is_greedy(seed, end_bias):
    rng = np.random.default_rng(seed)
    table = random_table(rng, steps=8, V=6, end_bias=end_bias)
    B = 4
    step = markov_step(np.broadcast_to(table, table.shape))
    greedy, _ = greedy_decode(step, None, B, START, END, max_steps=8)
    beams, scores = beam_search(step, None, B, beam_width=1, start_id=START, end_id=END, max_steps=8)
    assert beams.shape == (B, 1, 8) and scores.shape == (B, 1)
    np.testing.assert_array_equal(beams[:, 0], greedy)


def test_width_one_is_greedy_with_different_sentences(rng):
    """Rows of a batch decode independently: per-row logits depend on a per-row offset."""
    table = random_table(rng, steps=6, V=7)
    offsets = rng.normal(scale=3.0, size=(5, 7))

    def step(tokens, state):
        return table[tokens.shape[1] - 1, tokens[:, -1]] + offsets[: len(tokens)], state, None

    greedy, _ = greedy_decode(step, None, 5, START, END, max_steps=6)
    beams, _ = beam_search(step, None, 5, beam_width=1, start_id=START, end_id=END, max_steps=6)
    np.testing.assert_array_equal(beams[:, 0], greedy)


def test_beam_finds_the_sequence_greedy_misses():
    """Word A is likelier first (0.6 vs 0.4), but every continuation of A is uncertain.

    p(A </s>) = 0.6 * 0.4 = 0.24 (greedy's choice) < p(B </s>) = 0.4 * 0.99 = 0.396.
    """
    A, B = 3, 4
    probabilities = {(START,): {A: 0.6, B: 0.4},
                     (START, A): {END: 0.4, A: 0.3, B: 0.3},
                     (START, B): {END: 0.99, A: 0.005, B: 0.005}}

    def step(tokens, state):
        logits = np.full((len(tokens), 5), -30.0)
        for row, prefix in enumerate(np.asarray(tokens).tolist()):
            for word, p in probabilities.get(tuple(prefix), {END: 1.0}).items():
                logits[row, word] = np.log(p)
        return logits, state, None

    greedy, _ = greedy_decode(step, None, 1, START, END, max_steps=4)
    np.testing.assert_array_equal(greedy[0], [A, END, 0, 0])
    beams, scores = beam_search(step, None, 1, beam_width=2, start_id=START, end_id=END, max_steps=4)
    np.testing.assert_array_equal(beams[0, 0], [B, END, 0, 0])
    np.testing.assert_allclose(scores[0, 0], np.log(0.4 * 0.99), rtol=1e-6)
    np.testing.assert_array_equal(beams[0, 1], [A, END, 0, 0])
    np.testing.assert_allclose(scores[0, 1], np.log(0.6 * 0.4), rtol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_a_wide_enough_beam_is_exact(seed):
    """With as many beams as sequences, beam search finds the most probable one (brute force)."""
    rng = np.random.default_rng(seed)
    V, steps = 5, 3
    table = random_table(rng, steps, V)
    words = [w for w in range(V) if w not in (PAD, START)]
    candidates = [seq for n in range(1, steps + 1) for seq in itertools.product(words, repeat=n)
                  if (END not in seq[:-1]) and (seq[-1] == END or n == steps)]
    best = max(candidates, key=lambda seq: sequence_log_prob(table, seq))
    beams, scores = beam_search(markov_step(table), None, 1, beam_width=len(candidates),
                                start_id=START, end_id=END, max_steps=steps)
    np.testing.assert_array_equal(beams[0, 0, :len(best)], best)
    np.testing.assert_allclose(scores[0, 0], sequence_log_prob(table, best), rtol=1e-9)


def test_scores_are_the_log_probabilities_of_the_beams_in_order(rng):
    table = random_table(rng, steps=6, V=6)
    beams, scores = beam_search(markov_step(table), None, 3, beam_width=4, start_id=START,
                                end_id=END, max_steps=6)
    assert (np.diff(scores, axis=1) <= 0).all()  # best first
    for b, k in itertools.product(range(3), range(4)):
        np.testing.assert_allclose(scores[b, k], sequence_log_prob(table, beams[b, k]), rtol=1e-9)
    # The beams of one sentence are different sequences.
    assert all(len({tuple(s) for s in beams[b]}) == 4 for b in range(3))


def test_state_follows_its_beam(rng):
    """An RNN-like step that keeps the running sum of its words in its state.

    The same model written without state (it recomputes the sum from the prefix)
    must give the same beams: reordering the state with the beams is needed.
    """
    table = random_table(rng, steps=5, V=6)
    weights = rng.normal(size=(6,))

    def stateful(tokens, state):
        state = state + weights[tokens[:, -1]]
        return table[tokens.shape[1] - 1, tokens[:, -1]] + state[:, None] * weights, state, None

    def stateless(tokens, state):
        total = weights[tokens].sum(axis=1)
        return table[tokens.shape[1] - 1, tokens[:, -1]] + total[:, None] * weights, state, None

    B, K = 2, 3
    expected, expected_scores = beam_search(stateless, None, B, K, START, END, max_steps=5)
    got, scores = beam_search(stateful, np.zeros(B * K), B, K, START, END, max_steps=5)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-12)


def test_length_penalty_prefers_longer_outputs():
    """Short: "</s>" at p=0.5 (log p = -0.69).  Long: "A A A A </s>" at
    p = 0.5 * 0.85^3 (log p = -1.18 in total, but -0.24 per word)."""
    A = 3

    def step(tokens, state):
        logits = np.full((len(tokens), 4), -30.0)
        t = tokens.shape[1]
        for row, prefix in enumerate(np.asarray(tokens).tolist()):
            if t == 1:
                logits[row, [END, A]] = np.log([0.5, 0.5])
            elif prefix[-1] == A and t < 5:
                logits[row, [A, END]] = np.log([0.85, 0.15])
            else:
                logits[row, END] = 0.0
        return logits, state, None

    plain, _ = beam_search(step, None, 1, 3, START, END, max_steps=6)
    np.testing.assert_array_equal(plain[0, 0, :1], [END])
    normalised, scores = beam_search(step, None, 1, 3, START, END, max_steps=6, length_penalty=1.0)
    assert (normalised[0, 0] != 0).sum() > 1
    assert scores[0, 0] > scores[0, 1]


def test_beam_width_must_be_positive():
    with pytest.raises(ValueError, match="beam_width"):
        beam_search(markov_step(np.zeros((2, 4, 4))), None, 1, 0, START, END, 2)
