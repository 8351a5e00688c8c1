"""Chapter 14's comparison: the Vision Transformer and the small CNN, each with the dropout that suits it.

The two models of :mod:`.digit_classifiers` share their recipe but for one
setting, dropout (the ViT's sits in its blocks, the CNN's before its
classifier), and that setting could decide the comparison: a regulariser
that suits one model may not suit the other.  So :data:`COMPARISONS` sweeps
the dropout rate of both alike, each scored by its loss on validation images
cut from the training images (the test images, which the chapter scores, are
not looked at), and the chapter trains each at its best.  ``make tune`` runs
the sweep (:mod:`.tuning`).

A module of its own, apart from the models' recipe: a change to the sweep
(its grid, its seeds) changes no trained run's key.
"""

from __future__ import annotations

from ..data import digits
from . import digit_classifiers
from .tuning import Comparison

#: the two arms, by the names the chapter's search table shows
ARMS = {"Vision Transformer": digit_classifiers.vision_transformer, "small CNN": digit_classifiers.cnn}


def validation_loss(arm: str, dropout: float, seed: int) -> float:
    """The tuning metric: the arm's cross-entropy on the validation images
    (:func:`~attention_course.data.digits.validation_split`), trained on the rest of the
    training images of the chapter's split under ``seed``."""
    import keras

    if arm not in ARMS:
        raise ValueError(f"arm must be one of {list(ARMS)}, got {arm!r}")
    fit_part, validation = digits.validation_split(digits.load_splits(seed=seed)[0])
    model = ARMS[arm](fit_part, dropout, seed).model
    logits = keras.ops.convert_to_numpy(model(validation.images))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return float(loss(validation.labels, logits))


COMPARISONS = [
    Comparison(
        name="ch14_vit_or_cnn",
        question="Does the CNN generalise better than the ViT when each has the dropout that "
                 "suits it, not only the ViT?",
        arms=tuple(ARMS), setting="dropout rate", values=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8),
        metric="validation loss (cross-entropy) after the recipe's epochs", higher_is_better=False,
        run=validation_loss, seeds=(0, 1, 2, 3)),
]
