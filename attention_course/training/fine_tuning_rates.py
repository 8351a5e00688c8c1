"""Chapter 12's comparison: the pretrained classifier, the probe and the one from scratch, each at
the learning rate that suits it.

The three arms of :mod:`.review_classifiers` differ in where they start and in
their budgets (one pass, thirty passes of the head alone, twenty-four passes
with a warm-up), and each needs a learning rate of its own: a rate that
suits fine-tuning pretrained weights for eight steps could leave a model
from random weights untrained, and one that suits a single dense layer could
wreck a pretrained encoder.  So :data:`COMPARISONS` sweeps the (peak) Adam
rate of all three alike, each scored by its loss on *validation* reviews: new
sentences built from the training words, none of them a training sentence.
The test reviews, whose words no arm has seen with a label, are not looked
at: no arm is tuned on the test words.  ``make tune`` runs the
sweep (:mod:`.tuning`).

A module of its own, apart from the recipes: a change to the sweep (its grid,
its seeds) changes no trained run's key.
"""

from __future__ import annotations

import numpy as np

from ..bert_finetuning import Reviews, make_reviews
from . import review_classifiers
from .tuning import Comparison

#: how many validation reviews each seed draws (before those equal to a training sentence are left out)
VALIDATION_DRAWN = 200


def validation_reviews(training: Reviews, seed: int) -> Reviews:
    """New reviews with the training words, none of them one of ``training``'s sentences.

    Drawn from a stream of their own (``[seed, 12]``), which no integer seed of the chapter
    uses: independent of the chapter's other sentences, though a sentence may recur among
    them by chance (there are only 1,600 with the training words).
    """
    drawn = make_reviews(VALIDATION_DRAWN, "fine-tuning", seed=np.random.default_rng([seed, 12]))
    seen = set(training.texts)
    keep = [i for i, text in enumerate(drawn.texts) if text not in seen]
    return Reviews(texts=[drawn.texts[i] for i in keep], labels=drawn.labels[keep],
                   adjectives=[drawn.adjectives[i] for i in keep], nouns=[drawn.nouns[i] for i in keep])


def validation_loss(arm: str, learning_rate: float, seed: int) -> float:
    """The tuning metric: ``arm``'s cross-entropy on :func:`validation_reviews`, trained at
    ``learning_rate`` on the chapter's training reviews under ``seed``."""
    import keras

    if arm not in review_classifiers.ARMS:
        raise ValueError(f"arm must be one of {list(review_classifiers.ARMS)}, got {arm!r}")
    training = make_reviews(review_classifiers.TRAINING_REVIEWS, "fine-tuning", seed=seed)
    validation = validation_reviews(training, seed)
    model = review_classifiers.review_classifier(arm, training, learning_rate, seed).model
    logits = keras.ops.convert_to_numpy(model(review_classifiers.encode(validation.texts)))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return float(loss(validation.labels, logits))


COMPARISONS = [
    Comparison(
        name="ch12_fine_tuning",
        question="Does starting from the pretrained weights still beat training from random weights "
                 "on words never seen with a label, when each recipe has the learning rate that "
                 "suits it?",
        arms=review_classifiers.ARMS, setting="Adam learning rate (the peak, from scratch)",
        values=(1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1),
        metric="validation loss (cross-entropy) on new sentences with the training words",
        higher_is_better=False, run=validation_loss, seeds=(0, 1, 2, 3)),
]
