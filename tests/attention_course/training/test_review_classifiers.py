"""Chapter 12's fine-tuning comparison tuned alike: each arm's learning rate swept, chosen on
validation reviews with the training words, never on the test words."""

import numpy as np
import pytest

from attention_course.bert_finetuning import make_reviews, split_words
from attention_course.models.bert import BertClassifier, BertEncoder
from attention_course.training import fine_tuning_rates, review_classifiers
from attention_course.training.fine_tuning_rates import (COMPARISONS, validation_loss,
                                                          validation_reviews)
from attention_course.training.review_classifiers import ARMS, review_classifier

from run_keys import run_key  # noqa: F401  (a fixture)


@pytest.fixture(scope="module")
def reviews():
    return make_reviews(review_classifiers.TRAINING_REVIEWS, "fine-tuning", seed=0)


def test_rate_seed_and_reviews_are_part_of_each_run(run_key, reviews):
    other = make_reviews(review_classifiers.TRAINING_REVIEWS, "fine-tuning", seed=1)

    def key(*args, **kwargs):
        return run_key(review_classifier, *args, **kwargs)

    for arm in ARMS:
        keys = {key(arm, reviews, 1e-4), key(arm, reviews, 3e-4), key(arm, reviews, 1e-4, seed=1),
                key(arm, other, 1e-4)}
        assert len(keys) == 4, arm
    assert len({key(arm, reviews, 1e-4) for arm in ARMS}) == 3


def test_the_sweep_is_no_part_of_the_runs_keys():
    """The comparison lives apart from the recipes, so a new grid re-trains nothing the page uses."""
    from attention_course.training import dependencies

    imported = dependencies.module_closure(["from attention_course.training import review_classifiers"])
    assert "attention_course.training.review_classifiers" in imported
    assert not {"attention_course.training.fine_tuning_rates", "attention_course.training.tuning"} \
        & set(imported)


def test_the_comparison_sweeps_every_arm_over_the_rates_each_recipe_used_before():
    (comparison,) = COMPARISONS
    assert comparison.arms == ARMS and comparison.run is validation_loss
    assert not comparison.higher_is_better
    # the recipes' rates before the search (fine-tuning and from scratch 1e-4, the probe 1e-2)
    # lie inside the grid, with a value on each side
    for rate in (1e-4, 1e-2):
        assert comparison.values[0] < rate < comparison.values[-1]


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_the_validation_reviews_are_new_sentences_with_the_training_words(seed):
    training = make_reviews(review_classifiers.TRAINING_REVIEWS, "fine-tuning", seed=seed)
    validation = validation_reviews(training, seed)
    assert 150 <= len(validation) <= fine_tuning_rates.VALIDATION_DRAWN
    assert not set(validation.texts) & set(training.texts)            # no training sentence
    words = {w.strip(".,!") for text in validation.texts for w in text.split()}
    assert not words & split_words("test")                          # the test words stay unseen
    assert set(validation.adjectives) | set(validation.nouns) <= split_words("fine-tuning")
    assert 0.35 <= validation.labels.mean() <= 0.65
    for text, adjective, noun in zip(validation.texts, validation.adjectives, validation.nouns):
        assert adjective in text and noun in text
    # the chapter's own sentences under any seed are other draws
    for k in range(3):
        assert validation.texts[:20] != make_reviews(200, "fine-tuning", seed=seed + k).texts[:20]
    assert validation_reviews(training, seed).texts == validation.texts


def test_an_unknown_arm_is_refused(reviews):
    with pytest.raises(ValueError, match="arm must be one of"):
        validation_loss("logistic regression", 1e-3, 0)
    with pytest.raises(ValueError, match="arm must be one of"):
        review_classifier("fine-tuned", reviews, 1e-3)


def _tiny_classifier():
    encoder = BertEncoder(vocab_size=64, d_model=8, num_heads=2, d_ff=16, num_layers=1, max_length=16)
    classifier = BertClassifier(encoder)
    ids = np.array([[2, 5, 7, 3], [2, 9, 3, 0]], dtype="int32")
    classifier((ids, np.zeros_like(ids)))
    return classifier, ids


@pytest.mark.parametrize("arm", ARMS)
def test_each_recipe_trains_what_it_says_and_keeps_the_word_table(arm, monkeypatch):
    """The probe moves only the head; the others move the encoder too, never the word table."""
    import keras

    monkeypatch.setitem(review_classifiers.EPOCHS, arm, 3)   # three steps show what moves
    monkeypatch.setattr(review_classifiers, "WARMUP_STEPS", 1)
    keras.utils.set_random_seed(0)
    classifier, ids = _tiny_classifier()
    word_table = np.array(classifier.encoder.embedding.word_embedding.embeddings)
    encoder_before = [np.array(w) for w in classifier.encoder.weights]
    head_before = np.array(classifier.head.kernel)
    history = review_classifiers.fit(classifier, arm, (ids, np.zeros_like(ids)), np.array([1, 0]), 1e-2)
    assert len(history["loss"]) == 3
    np.testing.assert_array_equal(classifier.encoder.embedding.word_embedding.embeddings, word_table)
    assert not np.allclose(classifier.head.kernel, head_before)
    encoder_moved = any(not np.allclose(w, b) for w, b in zip(classifier.encoder.weights, encoder_before))
    assert encoder_moved == (arm != "pretrained, frozen (probe)")
