"""The reviews of chapter 12's fine-tuning section: seeded, balanced, short, held-out words disjoint."""

import numpy as np
import pytest

from attention_course import bert_finetuning as bf
from attention_course.weights import pretrained


def test_same_seed_same_reviews_other_seed_others():
    a, b = bf.make_reviews(50, seed=3), bf.make_reviews(50, seed=3)
    assert a.texts == b.texts and np.array_equal(a.labels, b.labels)
    assert bf.make_reviews(50, seed=4).texts != a.texts


@pytest.mark.parametrize("split", bf.SPLITS)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 64])
def test_shapes_and_balance(split, n):
    reviews = bf.make_reviews(n, split, seed=0)
    assert len(reviews) == len(reviews.labels) == len(reviews.adjectives) == len(reviews.nouns) == n
    assert reviews.labels.dtype == np.int32 and set(reviews.labels.tolist()) <= {0, 1}
    assert abs(int(reviews.labels.sum()) - n / 2) <= 0.5          # exactly half, n even


@pytest.mark.parametrize("split", bf.SPLITS)
def test_the_adjective_decides_the_label(split):
    reviews = bf.make_reviews(200, split, seed=1)
    for text, label, adjective, noun in zip(reviews.texts, reviews.labels, reviews.adjectives,
                                            reviews.nouns):
        assert adjective in bf.ADJECTIVES[split][int(label)]
        assert noun in bf.NOUNS[split]
        assert adjective in text.split() or adjective + "." in text or adjective + "!" in text


def test_test_words_never_occur_in_fine_tuning_sentences():
    held_out = bf.split_words("test")
    assert not held_out & bf.split_words("fine-tuning")
    assert not set(bf.ADJECTIVES["test"][0]) & set(bf.ADJECTIVES["test"][1])
    words = {w.strip(".,!") for text in bf.make_reviews(1000, "fine-tuning", seed=0).texts
             for w in text.split()}
    assert not words & held_out


def test_every_word_is_one_wordpiece_and_reviews_fit_16_tokens():
    tokenizer = pretrained.load_tokenizer()
    for split in bf.SPLITS:
        for word in bf.split_words(split):
            assert tokenizer.tokenize(word) == [word], word
        batch = tokenizer.encode_batch(bf.make_reviews(300, split, seed=2).texts, max_length=16)
        assert (tokenizer.token_id("[UNK]") != batch.ids).all()


@pytest.mark.parametrize("n", [-1, 2.5, "3", True])
def test_bad_n(n):
    with pytest.raises(ValueError, match="n must be"):
        bf.make_reviews(n)


def test_bad_split():
    with pytest.raises(ValueError, match="split must be one of"):
        bf.make_reviews(4, "validation")
    with pytest.raises(ValueError, match="split must be one of"):
        bf.split_words("train")
