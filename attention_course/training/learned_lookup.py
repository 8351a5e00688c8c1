"""Chapter 4's experiment: a lookup learned with scaled scores, unscaled ones, and unscaled
ones whose initial weights are shrunk.

Each example has :data:`N_KEYS` random keys of width :data:`D_K` and their
values; the input is a noisy copy of one key, the target that key's value.  A
model with learned query and key projections, ``softmax(x W_q (K W_k)^T s) V``,
learns to find the right key.  Three ways to score (the arms of
:data:`COMPARISONS`):

* ``"scaled"``: ``s = 1 / sqrt(d_k)``, Glorot-initialised ``W_q`` and ``W_k``
  (Vaswani et al.'s scaling);
* ``"unscaled"``: ``s = 1``, the same initial weights, so the initial scores are
  ``sqrt(d_k)`` times larger;
* ``"unscaled, small init"``: ``s = 1`` with both initial matrices multiplied by
  ``d_k ** -0.25``, so that the initial scores equal the scaled model's exactly;
  only the parametrisation differs from then on.

The third arm separates the two things the division does: where training
starts (the softmax's saturation at initialisation) and how every later step
of the weights moves the scores.  Each arm's learning rate is tuned alike
(:mod:`attention_course.training.tuning`) on held-out lookups, fresh keys that
no training step saw.
"""

from __future__ import annotations

import numpy as np

from .cache import TrainedModel, trained_model
from .tuning import Comparison

#: the task: keys of width D_K, N_KEYS per example, values of width D_V, input noise NOISE
D_K, N_KEYS, D_V, NOISE = 128, 16, 8, 0.5
#: training: STEPS steps of Adam on batches of BATCH fresh examples; HELD_OUT examples scored after
STEPS, BATCH, HELD_OUT = 200, 64, 1024
#: the three ways to score (see the module's docstring)
SCORES = ("scaled", "unscaled", "unscaled, small init")


def lookup_examples(rng: np.random.Generator, n: int):
    """``n`` lookups: input ``x (n, D_K)``, keys ``(n, N_KEYS, D_K)``, values
    ``(n, N_KEYS, D_V)`` and the one-hot right key ``(n, N_KEYS)``."""
    keys = rng.normal(size=(n, N_KEYS, D_K)).astype("float32")
    values = rng.normal(size=(n, N_KEYS, D_V)).astype("float32")
    right = rng.integers(N_KEYS, size=n)
    x = keys[np.arange(n), right] + NOISE * rng.normal(size=(n, D_K)).astype("float32")
    return x, keys, values, np.eye(N_KEYS, dtype="float32")[right]


def learned_lookup(scores: str, seed: int):
    """The model: ``W_q``, ``W_k`` (Glorot, shrunk for ``"unscaled, small init"``) and its scale."""
    import keras

    if scores not in SCORES:
        raise ValueError(f"scores must be one of {SCORES}, got {scores!r}")
    shrink = D_K ** -0.25 if scores == "unscaled, small init" else 1.0

    def initial(offset):   # Glorot uniform with its variance times shrink ** 2
        return keras.initializers.VarianceScaling(
            shrink ** 2, "fan_avg", "uniform", seed=seed + offset)

    class LearnedLookup(keras.Model):
        def __init__(self):
            super().__init__(name="learned_lookup")
            self.scale = D_K ** -0.5 if scores == "scaled" else 1.0
            self.W_q = self.add_weight((D_K, D_K), initial(1), name="W_q")
            self.W_k = self.add_weight((D_K, D_K), initial(2), name="W_k")

        def call(self, inputs):
            """``(x, keys, values)`` -> output ``(n, D_V)`` and weights ``(n, N_KEYS)``."""
            x, keys, values = inputs
            q, k = x @ self.W_q, keras.ops.einsum("btd,de->bte", keys, self.W_k)
            logits = keras.ops.einsum("bd,btd->bt", q, k) * self.scale
            weights = keras.ops.softmax(logits)
            return keras.ops.einsum("bt,btv->bv", weights, values), weights

    return LearnedLookup()


def train_lookup(scores: str, learning_rate: float, seed: int) -> TrainedModel:
    """Train the lookup with Adam at ``learning_rate``, or load the run.

    The record holds, per step, the squared error of the output, the mean
    weight on the right key and the mean largest weight (``"loss"``,
    ``"right"``, ``"largest"``), and the squared error on :data:`HELD_OUT`
    held-out lookups (``"held_out_error"``).
    """
    import keras
    import tensorflow as tf

    def fit(model):
        optimizer = keras.optimizers.Adam(learning_rate)
        optimizer.build(model.trainable_variables)

        @tf.function
        def step(x, keys, values, right):
            with tf.GradientTape() as tape:
                output, weights = model([x, keys, values])
                target = tf.einsum("bt,btv->bv", right, values)
                loss = tf.reduce_mean(tf.reduce_sum((output - target) ** 2, axis=-1))
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            return (loss, tf.reduce_mean(tf.reduce_sum(weights * right, axis=-1)),
                    tf.reduce_mean(tf.reduce_max(weights, axis=-1)))

        rng = np.random.default_rng(seed)
        history = np.array([[float(v) for v in step(*lookup_examples(rng, BATCH))]
                            for _ in range(STEPS)])
        x, keys, values, right = lookup_examples(np.random.default_rng(seed + 10_000), HELD_OUT)
        output, _ = model([x, keys, values])
        target = np.einsum("bt,btv->bv", right, values)
        held_out = float(np.mean(np.sum((keras.ops.convert_to_numpy(output) - target) ** 2, -1)))
        return {"loss": history[:, 0], "right": history[:, 1], "largest": history[:, 2],
                "held_out_error": held_out}

    example = [a[:2] for a in lookup_examples(np.random.default_rng(0), 2)[:3]]
    return trained_model(f"ch4-lookup-{scores.replace(', ', '-').replace(' ', '-')}",
                         lambda: learned_lookup(scores, seed), fit, example=example, seed=seed,
                         config={"learning_rate": learning_rate})


def held_out_error(scores: str, learning_rate: float, seed: int) -> float:
    """The tuning metric: squared error on the held-out lookups after training."""
    return float(train_lookup(scores, learning_rate, seed).record["held_out_error"])


COMPARISONS = [
    Comparison(
        name="ch4_scaled_vs_unscaled",
        question="Does dividing the scores by sqrt(d_k) make the lookup learn better, and is it "
                 "the division itself or where it starts training?",
        arms=SCORES, setting="Adam learning rate", values=(1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2),
        metric="held-out squared error after 200 steps", higher_is_better=False,
        run=held_out_error),
]
