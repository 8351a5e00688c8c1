import numpy as np
import pytest

from attention_course.decoding import greedy_decode
from attention_course.evaluation import accuracy_by_length, exact_match

START, END, V = 1, 2, 6


def table_model(table):
    """A model whose next-token logits depend only on the previous token."""
    table = np.asarray(table, dtype=float)

    def step(tokens, state):
        calls = 0 if state is None else state
        return table[tokens[:, -1]], calls + 1, None

    return step


def test_greedy_follows_the_argmax_chain_and_stops_at_end():
    table = np.zeros((V, V))
    table[START, 4] = table[4, 3] = table[3, 5] = table[5, END] = 1.0
    tokens, attention = greedy_decode(table_model(table), None, batch_size=2, start_id=START,
                                      end_id=END, max_steps=8)
    np.testing.assert_array_equal(tokens, [[4, 3, 5, END, 0, 0, 0, 0]] * 2)
    assert attention is None


def test_greedy_stops_after_max_steps_without_end():
    table = np.zeros((V, V))
    table[:, 3] = 1.0
    tokens, _ = greedy_decode(table_model(table), None, 1, START, END, max_steps=5)
    np.testing.assert_array_equal(tokens, [[3, 3, 3, 3, 3]])


def test_rows_finish_independently_and_attention_is_zeroed_after_end():
    def step(tokens, state):
        t = tokens.shape[1]
        logits = np.zeros((2, V))
        logits[0, END if t == 1 else 3] = 1  # row 0 ends at once
        logits[1, END if t == 3 else 4] = 1  # row 1 after two words
        return logits, state, np.full((2, 3), 1 / 3)

    tokens, attention = greedy_decode(step, None, 2, START, END, max_steps=4)
    np.testing.assert_array_equal(tokens, [[END, 0, 0, 0], [4, 4, END, 0]])
    np.testing.assert_allclose(attention[0, 1:], 0)
    np.testing.assert_allclose(attention[1, :3], 1 / 3)


def test_exact_match_requires_every_word_and_the_end():
    target = np.array([[3, 4, END, 0], [3, 4, END, 0], [3, 4, END, 0]])
    predicted = np.array([[3, 4, END, 0], [3, 5, END, 0], [3, 4, 4, END]])
    np.testing.assert_array_equal(exact_match(predicted, target), [True, False, False])
    np.testing.assert_array_equal(exact_match(predicted[:, :3], target), [True, False, False])


def test_accuracy_by_length_bins():
    lengths = np.array([2, 3, 4, 5, 6, 7])
    correct = np.array([1, 1, 0, 1, 0, 0])
    mean_length, accuracy, count = accuracy_by_length(correct, lengths, bin_width=2)
    np.testing.assert_allclose(mean_length, [2.5, 4.5, 6.5])
    np.testing.assert_allclose(accuracy, [1.0, 0.5, 0.0])
    np.testing.assert_array_equal(count, [2, 2, 2])


def test_shape_errors():
    with pytest.raises(ValueError, match="same n"):
        exact_match(np.zeros((2, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="same shape"):
        accuracy_by_length(np.zeros(3), np.zeros(4))
