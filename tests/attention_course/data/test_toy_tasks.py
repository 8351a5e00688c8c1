"""The toy data of chapters 5 and 6: coreference sentences and the marker task."""

import numpy as np
import pytest

from attention_course.data import coreference as cr
from attention_course.data import marker_task


def test_every_sentence_is_well_formed():
    data = cr.encode(cr.all_sentences())
    words = np.array(cr.VOCAB.tokens)[data.tokens]
    assert data.tokens.shape == (len(data), cr.LENGTH)
    assert (words[:, cr.PRONOUN_POSITION] == "it").all()
    # The label is the word at the referent's position, and the adjective decides the position.
    referent_words = words[np.arange(len(data)), data.referent_position]
    np.testing.assert_array_equal(referent_words, np.array(cr.NOUNS)[data.referent])
    subject = np.isin(words[:, cr.ADJECTIVE_POSITION], cr.SUBJECT_ADJECTIVES)
    np.testing.assert_array_equal(data.referent_position == cr.SUBJECT_POSITION, subject)
    np.testing.assert_array_equal(data.other_position + data.referent_position,
                                  cr.SUBJECT_POSITION + cr.OBJECT_POSITION)
    catch = data.frame == "catch"
    assert (words[catch, 1] != words[catch, 5]).all()
    assert np.isin(words[catch][:, [1, 5]], cr.ANIMALS).all()
    assert np.isin(words[~catch, 5], cr.PLACES).all()


def test_split_is_disjoint_complete_and_reproducible():
    train, test = cr.make_splits(test_fraction=0.25, seed=0)
    everything = {tuple(row) for row in cr.encode(cr.all_sentences()).tokens}
    train_rows, test_rows = {tuple(r) for r in train.tokens}, {tuple(r) for r in test.tokens}
    assert not train_rows & test_rows and train_rows | test_rows == everything
    assert len(test) == round(0.25 * len(everything))
    again, _ = cr.make_splits(test_fraction=0.25, seed=0)
    np.testing.assert_array_equal(again.tokens, train.tokens)
    other, _ = cr.make_splits(test_fraction=0.25, seed=1)
    assert not np.array_equal(other.tokens, train.tokens)


def test_the_example_pair():
    examples = cr.encode_examples()
    assert [cr.NOUNS[i] for i in examples.referent] == ["animal", "street"]
    assert examples.sentences() == list(cr.EXAMPLES)
    with pytest.raises(ValueError, match="known adjectives"):
        cr.encode_examples(["the animal didn't cross the street because it was too green"])
    with pytest.raises(ValueError, match="expected 11 words"):
        cr.encode_examples(["the animal didn't cross because it was too tired"])


def test_marker_task_targets():
    data = marker_task.make_data(600, length=10, digits=5, max_marks=3, seed=3)
    marked = data.tokens >= data.digits
    np.testing.assert_array_equal(marked, data.marked)                  # the mask is the marked tokens
    np.testing.assert_array_equal(data.mark_count, marked.sum(axis=1))
    assert set(data.mark_count.tolist()) == {1, 2, 3}                    # 1 to max_marks marks, each count
    values = data.tokens % data.digits
    # Every mark carries the sequence's one marked digit.
    np.testing.assert_array_equal(np.where(marked, values, -1),
                                  np.where(marked, data.marked_digit[:, None], -1))
    previous, marked_digit = data.split_classes(data.targets)
    np.testing.assert_array_equal(previous[:, 1:], values[:, :-1])        # the digit one step back
    np.testing.assert_array_equal(marked_digit[:, 1:],
                                  np.broadcast_to(data.marked_digit[:, None], (600, 9)))
    np.testing.assert_array_equal(data.targets[:, 0], 0)
    np.testing.assert_array_equal(data.sample_weight[:, 0], 0)
    np.testing.assert_array_equal(data.sample_weight[:, 1:], 1)
    assert data.vocab_size == 10 and data.num_classes == 25
    assert data.tokens.dtype == data.targets.dtype == np.int32 and data.marked.dtype == bool
    assert data.describe(0).count("*") == data.mark_count[0]
    assert [int(t.lstrip("*")) for t in data.describe(0).split()] == values[0].tolist()


def test_marker_task_places_marks_uniformly():
    data = marker_task.make_data(30_000, length=8, digits=4, max_marks=3, seed=0)
    # Each count 1..3 about a third of the time; each position marked with probability 2/8.
    np.testing.assert_allclose(np.bincount(data.mark_count, minlength=4)[1:] / 30_000, 1 / 3, atol=0.01)
    np.testing.assert_allclose(data.marked.mean(axis=0), 2 / 8, atol=0.01)
    np.testing.assert_allclose(np.bincount(data.marked_digit) / 30_000, 1 / 4, atol=0.01)


def test_one_mark_at_most():
    data = marker_task.make_data(200, max_marks=1, seed=5)
    np.testing.assert_array_equal(data.mark_count, 1)


def test_marker_task_is_reproducible_and_checks_its_arguments():
    a, b = marker_task.make_data(50, seed=7), marker_task.make_data(50, seed=7)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_array_equal(a.marked, b.marked)
    assert not np.array_equal(a.tokens, marker_task.make_data(50, seed=8).tokens)
    with pytest.raises(ValueError, match="length >= 2"):
        marker_task.make_data(10, length=1)
    with pytest.raises(ValueError, match="max_marks"):
        marker_task.make_data(10, length=4, max_marks=5)
    with pytest.raises(ValueError, match="max_marks"):
        marker_task.make_data(10, max_marks=0)
