import numpy as np
import pytest

from attention_course.data import toy_translation as task


@pytest.mark.parametrize("length", [2, 3, 4, 5, 6, 7, 11, 30, 57])
def test_pairs_have_the_requested_length_and_follow_the_rule(length):
    rng = np.random.default_rng(length)
    for _ in range(20):
        source, target = task.sample_pair(rng, length)
        assert len(source) == len(target) == length
        assert task.translate(source) == target


def test_adjectives_follow_the_noun_in_reverse_order():
    assert task.translate("the big red dog and a cat".split()) == "le chien rouge grand et un chat".split()


def test_alignment_links_each_target_word_to_its_source_word():
    translation = {**task.DETERMINERS, **task.ADJECTIVES, **task.NOUNS, "and": "et"}
    rng = np.random.default_rng(0)
    for length in range(2, 31):
        source, target = task.sample_pair(rng, length)
        links = task.alignment(source)
        assert sorted(links.tolist()) == list(range(length))  # a permutation
        assert [translation[source[j]] for j in links] == target


def test_alignment_is_reversed_inside_a_phrase():
    np.testing.assert_array_equal(task.alignment("the big red dog and a cat".split()), [0, 3, 2, 1, 4, 5, 6])


def test_dataset_arrays_are_consistent():
    data = task.make_dataset(200, max_length=12, seed=3)
    start, end = task.TARGET_VOCAB.index[task.START], task.TARGET_VOCAB.index[task.END]
    assert data.source.shape == (200, 12) and data.decoder_input.shape == (200, 13)
    for i in range(200):
        n = data.lengths[i]
        assert (data.source[i, :n] > 0).all() and (data.source[i, n:] == 0).all()
        assert data.decoder_input[i, 0] == start and data.decoder_target[i, n] == end
        # teacher forcing: the input is the label shifted right by one
        np.testing.assert_array_equal(data.decoder_input[i, 1:n + 1], data.decoder_target[i, :n])
        source = task.SOURCE_VOCAB.decode(data.source[i])
        assert task.TARGET_VOCAB.decode(data.decoder_target[i]) == task.translate(source)


def test_same_seed_same_data_and_splits_differ():
    a, b = task.make_dataset(50, seed=7), task.make_dataset(50, seed=7)
    np.testing.assert_array_equal(a.source, b.source)
    train, test = task.make_splits(n_train=100, n_test=100, seed=0)
    assert not np.array_equal(train.source, test.source)


def test_lengths_cover_the_range_uniformly():
    data = task.make_dataset(6000, min_length=2, max_length=30, seed=0)
    counts = np.bincount(data.lengths, minlength=31)[2:]
    assert counts.min() > 0.6 * counts.mean()


def test_vocabularies_reserve_zero_for_padding_and_reject_unknown_words():
    assert task.SOURCE_VOCAB.tokens[0] == task.PAD == task.TARGET_VOCAB.tokens[0]
    with pytest.raises(ValueError, match="not in the vocabulary: \\['zebra'\\]"):
        task.SOURCE_VOCAB.encode(["the", "zebra"])


@pytest.mark.parametrize("kwargs", [{"min_length": 1}, {"min_length": 9, "max_length": 5}])
def test_bad_lengths_raise(kwargs):
    with pytest.raises(ValueError, match="min_length"):
        task.make_dataset(10, **kwargs)
