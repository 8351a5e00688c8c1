"""Chapter 14's experiment: a Vision Transformer and a small CNN trained on the digits, one recipe.

Explained in chapter 14, *The Vision Transformer*, section "Training on the
digits", and used again on its second page, *What the Vision Transformer
learned*.  Both models are trained (or loaded, through
:func:`~attention_course.training.cache.trained_model`) by :func:`fit`: AdamW
with weight decay, a learning rate that warms up linearly and then follows a
cosine down to zero, the same number of epochs for both.

The one setting the two models do not share is their dropout, which
:mod:`.vit_or_cnn` tunes for each alike.
"""

from __future__ import annotations

from ..models.vision import VisionTransformer, small_cnn
from . import fitting
from .cache import TrainedModel, trained_model

#: the Vision Transformer's settings: 8x8 greyscale digits cut into 2x2 patches
VIT = {"image_size": 8, "channels": 1, "patch_size": 2, "num_classes": 10, "d_model": 64,
       "num_heads": 4, "d_ff": 128, "num_layers": 2, "dropout": 0.1}
#: the CNN's three convolutions (about as many parameters as the ViT)
CNN_FILTERS = (32, 64, 80)
EPOCHS, BATCH_SIZE, PEAK_LR, WEIGHT_DECAY, WARMUP_EPOCHS = 50, 64, 3e-3, 0.05, 5


def fit(model, train) -> dict:
    """Train ``model`` on ``train``'s images (a :class:`~attention_course.data.digits.Digits`); returns its history."""
    import keras

    steps_per_epoch = -(-len(train) // BATCH_SIZE)
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0, (EPOCHS - WARMUP_EPOCHS) * steps_per_epoch, warmup_target=PEAK_LR,
        warmup_steps=WARMUP_EPOCHS * steps_per_epoch)
    optimizer = keras.optimizers.AdamW(schedule, weight_decay=WEIGHT_DECAY)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    fitting.compile_for_training(model, optimizer, loss, metrics=["accuracy"],
                                 steps_per_execution=8)
    history = model.fit(train.images, train.labels, epochs=EPOCHS,
                        batch_size=BATCH_SIZE, verbose=0)
    return history.history


def vision_transformer(train, dropout: float = VIT["dropout"], seed: int | None = None) -> TrainedModel:
    """The Vision Transformer of :data:`VIT` with dropout ``dropout``, trained on ``train`` by
    :func:`fit` under ``seed`` (default: the course seed).

    The default dropout is the recipe's before the search; the chapter passes the rate
    :mod:`.vit_or_cnn`'s search chose (``best_setting("ch14_vit_or_cnn", "Vision Transformer")``).
    """
    settings = {**VIT, "dropout": dropout}
    return trained_model("ch14-vit", lambda: VisionTransformer(**settings), lambda model: fit(model, train),
                         example=train.images[:2], seed=seed)


def cnn(train, dropout: float = 0.0, seed: int | None = None) -> TrainedModel:
    """The small CNN of :data:`CNN_FILTERS` with dropout ``dropout``, trained on ``train`` by
    :func:`fit` under ``seed`` (default: the course seed).

    The default (none) is the recipe's before the search; the chapter passes the rate
    :mod:`.vit_or_cnn`'s search chose (``best_setting("ch14_vit_or_cnn", "small CNN")``).
    """
    return trained_model("ch14-cnn", lambda: small_cnn(filters=CNN_FILTERS, dropout=dropout),
                         lambda model: fit(model, train), seed=seed)
