"""Chapter 6's experiment: the attention-only model with one or several heads on the marker task.

Explained in chapter 6, *Do different heads learn different things?*,
section "A task with two jobs", and used again in *Why do the heads differ?*.
:func:`train_model` trains (or loads, through
:func:`~attention_course.training.cache.trained_model`) the attention-only
model of chapter 5 with ``mark_embedding=True`` on
:mod:`~attention_course.data.marker_task`; while it trains it records the
held-out pair accuracy after every epoch and how alike the heads attend
every 20 steps.  The other functions score a trained model and read its
learning curve.
"""

from __future__ import annotations

import numpy as np

from .. import attention_only, head_analysis
from ..models import attention_only as keras_attention_only
from ..weights.from_keras import attention_only as attention_only_from_keras
from . import fitting
from .cache import trained_model

#: passes over the training sequences, for every model
EPOCHS = 12
#: held-out sequences the heads are watched on during training
PROBE_SIZE = 256


def heads_alike(model, probe) -> float:
    """Mean similarity of the heads' attention maps on ``probe``, over pairs of heads (1: identical)."""
    weights = attention_only_from_keras.attention_only(model)
    similarity = head_analysis.head_similarity(attention_only.numpy_forward(weights, probe)[1][0])
    pairs = ~np.eye(len(similarity), dtype=bool)
    return float(similarity[pairs].mean()) if pairs.any() else 1.0


def train_model(train, test, num_heads, key_dim, identical_heads=False, epochs=EPOCHS, seed=None):
    """The attention-only model with ``num_heads`` heads of width ``key_dim``: (model, record, seconds).

    ``record`` holds Keras' history, ``"held_out"`` (the pair accuracy on
    ``test`` after every epoch) and ``"heads_alike"`` (rows of training step
    and :func:`heads_alike` on the first :data:`PROBE_SIZE` held-out
    sequences).  With ``identical_heads``, every head starts as a copy of
    head 0 and is copied from it again after every step
    (:func:`~attention_course.models.attention_only.keep_heads_identical`: in
    exact arithmetic that changes nothing; it keeps another CPU's round-off from
    setting the heads apart).  ``seed``: the course seed by default.
    """
    import keras

    probe = test.tokens[:PROBE_SIZE]

    def build():
        model = keras_attention_only.build_model(train.vocab_size, 16, train.num_classes, d_model=32,
                                                 num_heads=(num_heads,), key_dim=key_dim,
                                                 mark_embedding=True)
        if identical_heads:   # every head starts as a copy of head 0, and stays one
            keras_attention_only.make_heads_identical(model.get_layer("attention_0"))
            keras_attention_only.keep_heads_identical(model.get_layer("attention_0"))
        return model

    def fit(model):
        fitting.compile_for_training(model, keras.optimizers.Adam(3e-3),
                                     keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                                     weighted_metrics=["accuracy"])
        alike = [(0, heads_alike(model, probe))]     # (training step, similarity), every 20 steps
        held_out = []                                # held-out pair accuracy after every epoch
        def record(batch, logs):
            step = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
            if num_heads > 1 and step % 20 == 0:
                alike.append((step, heads_alike(model, probe)))
        def evaluate(epoch, logs):
            predicted = model.predict(test.tokens, batch_size=500, verbose=0).argmax(-1)
            held_out.append(float((predicted == test.targets)[:, 1:].mean()))
        history = model.fit(train.tokens, train.targets, sample_weight=train.sample_weight,
                            batch_size=128, epochs=epochs, verbose=0,
                            callbacks=[keras.callbacks.LambdaCallback(on_train_batch_end=record,
                                                                      on_epoch_end=evaluate)])
        return {**history.history, "held_out": held_out, "heads_alike": np.array(alike)}

    name = f"ch6-heads-{num_heads}x{key_dim}" + ("-identical" if identical_heads else "")
    run = trained_model(name, build, fit, seed=seed)
    return run.model, run.record, run.seconds


def score(weights, test):
    """Held-out accuracy (positions 1..15): the whole pair, the previous digit, the marked digit.

    Returns ``(accuracy, attention)``: a dict of the three accuracies, and the
    first layer's attention weights ``(n, heads, T, T)`` on ``test``.
    """
    logits, attention = attention_only.numpy_forward(weights, test.tokens)
    predicted = logits.argmax(-1)[:, 1:]
    target = test.targets[:, 1:]
    (p_prev, p_mark), (t_prev, t_mark) = test.split_classes(predicted), test.split_classes(target)
    return {"pair": (predicted == target).mean(), "previous digit": (p_prev == t_prev).mean(),
            "marked digit": (p_mark == t_mark).mean()}, attention[0]


def epochs_to(curve, level=0.99):
    """The first epoch (counted from 1) after which the held-out accuracy reached ``level``;
    one more than the epochs trained if it never did."""
    reached = np.flatnonzero(np.asarray(curve) >= level)
    return int(reached[0]) + 1 if len(reached) else len(curve) + 1


def when(epochs, trained=EPOCHS):
    """:func:`epochs_to`'s answer in words, for a model trained ``trained`` epochs."""
    return f"after epoch {epochs}" if epochs <= trained else f"not within the {trained} epochs"
