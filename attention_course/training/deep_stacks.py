"""Chapter 8's experiments: deep stacks with and without residual connections, and a 6-block
encoder, post-LN and pre-LN, with and without a learning-rate warm-up.

Both are comparisons whose verdict a learning rate can decide: a deep plain
stack may fail at a rate that suits a residual one and train at a smaller
one; post-LN without warm-up may fail at a rate where warm-up rescues it and
train at a lower constant rate.  So each arm's Adam rate is tuned alike
(:data:`COMPARISONS`, :mod:`attention_course.training.tuning`) on held-out
data, and the chapter runs every arm at its own best rate.

* **Rings** (:func:`train_stack`): ``Dense(tanh)`` stacks of width :data:`WIDTH`,
  :data:`SHALLOW` or :data:`DEEP` layers, plain or residual, learn to tell apart
  the points of two noisy rings in :data:`RING_STEPS` steps of Adam.
* **Warm-up** (:func:`train_encoders`): the 6-block encoder tagger of
  :func:`attention_course.models.transformer.encoder_tagger` labels each source
  position of the toy translation task with the target word at that position, for
  :data:`STEPS` steps of Adam at a constant rate or with a linear warm-up over the
  first :data:`WARMUP` steps to the peak rate (and constant after it).
"""

from __future__ import annotations

import numpy as np

from .cache import trained_model
from .tuning import Comparison

# --- plain and residual stacks on two rings ------------------------------------------------

#: width of the layers; the depths compared
WIDTH, SHALLOW, DEEP = 32, 3, 20
#: training steps, batch size, steps between two measurements of the loss on all the points
RING_STEPS, RING_BATCH, RING_EVERY = 300, 32, 25
#: the training points and the held-out points (drawn apart, with another seed)
RING_POINTS, RING_HELD_OUT = 512, 2048
STACKS = tuple(f"{kind}, {depth} layers" for depth in (SHALLOW, DEEP)
               for kind in ("plain", "residual"))


def rings(n: int, seed: int):
    """``n`` 2-d points on two noisy rings: radius 0.5 (label 0) and 1 (label 1)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    radius = np.where(labels == 1, 1.0, 0.5) + rng.normal(0, 0.08, n)
    angle = rng.uniform(0, 2 * np.pi, n)
    points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    return points.astype("float32"), labels.astype("float32")[:, None]


def stack(depth: int, residual_connections: bool):
    """Point -> Dense(WIDTH) -> ``depth`` Dense(tanh) layers (x + F(x) or F(x)) -> logit."""
    import keras

    inputs = keras.Input((2,))
    h = keras.layers.Dense(WIDTH)(inputs)
    for _ in range(depth):
        f = keras.layers.Dense(WIDTH, activation="tanh")(h)
        h = h + f if residual_connections else f
    return keras.Model(inputs, keras.layers.Dense(1)(h))


def train_stack(arm: str, learning_rate: float, seed: int):
    """Train the stack ``arm`` (one of :data:`STACKS`) with Adam at ``learning_rate``, or load it.

    The record: ``"curve"``, the loss on all the training points before training
    and every :data:`RING_EVERY` steps, and ``"held_out"``, the loss on
    :data:`RING_HELD_OUT` other points after training.
    """
    import keras

    if arm not in STACKS:
        raise ValueError(f"arm must be one of {STACKS}, got {arm!r}")
    kind, depth = arm.split(", ")
    depth = int(depth.split()[0])
    points, ring = rings(RING_POINTS, seed)
    held_out_points, held_out_ring = rings(RING_HELD_OUT, seed + 10_000)
    loss = keras.losses.BinaryCrossentropy(from_logits=True)

    def fit(model):
        """Adam on random batches; the loss on all the points every RING_EVERY steps."""
        model.compile(keras.optimizers.Adam(learning_rate), loss, steps_per_execution=RING_EVERY)
        batches = np.random.default_rng(seed + 1).integers(0, len(points), (RING_STEPS, RING_BATCH))
        curve = [float(loss(ring, model(points)))]
        for start in range(0, RING_STEPS, RING_EVERY):
            chunk = batches[start:start + RING_EVERY].ravel()
            model.fit(points[chunk], ring[chunk], batch_size=RING_BATCH, shuffle=False, verbose=0)
            curve.append(float(loss(ring, model(points))))
        return {"curve": np.array(curve),
                "held_out": float(loss(held_out_ring, model(held_out_points)))}

    return trained_model(f"ch8-rings-{kind}-{depth}", lambda: stack(depth, kind == "residual"),
                         fit, seed=seed)


def stack_held_out_loss(arm: str, learning_rate: float, seed: int) -> float:
    """The tuning metric of the rings: loss on the held-out points after training."""
    return float(train_stack(arm, learning_rate, seed).record["held_out"])


# --- post-LN and pre-LN, with and without warm-up ------------------------------------------

#: blocks of the encoder; steps of Adam; warm-up steps; sentences per batch
LAYERS, STEPS, WARMUP, BATCH = 6, 160, 80, 32
#: the held-out sentences: training sentences that no step reads (the runs read the first STEPS * BATCH)
HELD_OUT = slice(10_000, 11_000)
ENCODERS = ("post-LN, constant", "post-LN, warm-up", "pre-LN, constant", "pre-LN, warm-up")


def tagging_data(seed: int):
    """``(sources, labels)`` of the training split: each source position's label is the
    target word at that position (0 for padding and for the end token)."""
    from ..data import toy_translation as task
    from .experiments import translation_data

    train, _ = translation_data(seed)
    labels = train.decoder_target[:, :-1].copy()
    labels[labels == task.TARGET_VOCAB.index[task.END]] = 0
    return train.source, labels


def learning_rate(step: int, peak: float, warmup: bool) -> float:
    """Adam's rate at ``step`` (from 0): ``peak``, or rising from 0 over WARMUP steps."""
    return peak * min(step / WARMUP, 1.0) if warmup else peak


def train_encoders(pre_ln: bool, runs: tuple[tuple[bool, float], ...], seed: int):
    """Train the encoder once per ``(warm_up, peak rate)`` of ``runs``, each from the same initial
    weights with a fresh Adam, or load them.

    The record holds, for run ``i``, ``"loss_i"`` (the training loss of every step) and
    ``"held_out_i"`` (the loss on the :data:`HELD_OUT` sentences after training).  The runs
    share one compiled model: tracing a 6-block model's training step takes longer, on a
    CPU, than the steps themselves.
    """
    import keras

    from ..data import toy_translation as task
    from ..models.transformer import encoder_tagger
    from . import fitting

    sources, labels = tagging_data(seed)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)

    def build():
        return encoder_tagger(len(task.SOURCE_VOCAB), len(task.TARGET_VOCAB), num_layers=LAYERS,
                              pre_ln=pre_ln)

    def fit(model):
        fitting.compile_for_training(model, keras.optimizers.Adam(runs[0][1]), loss)
        initial, record = model.get_weights(), {}
        for i, (warmup, peak) in enumerate(runs):
            model.set_weights(initial)
            fitting.reset_optimizer(model.optimizer)
            losses = []
            for step in range(STEPS):
                model.optimizer.learning_rate = learning_rate(step, peak, warmup)
                batch = slice(step * BATCH, (step + 1) * BATCH)
                losses.append(float(model.train_on_batch(sources[batch], labels[batch])))
            record[f"loss_{i}"] = np.array(losses)
            record[f"held_out_{i}"] = float(model.evaluate(sources[HELD_OUT], labels[HELD_OUT],
                                                           batch_size=250, verbose=0))
        return record

    return trained_model(f"ch8-{'pre' if pre_ln else 'post'}-ln", build, fit, seed=seed)


def encoder_held_out_loss(arm: str, learning_rate: float, seed: int) -> float:
    """The tuning metric of the warm-up comparison: held-out loss after :data:`STEPS` steps."""
    if arm not in ENCODERS:
        raise ValueError(f"arm must be one of {ENCODERS}, got {arm!r}")
    ln, schedule = arm.split(", ")
    run = train_encoders(ln == "pre-LN", ((schedule == "warm-up", learning_rate),), seed)
    return float(run.record["held_out_0"])


COMPARISONS = [
    Comparison(
        name="ch8_plain_vs_residual",
        question="Does a deep stack of tanh layers train worse than a shallow one without "
                 "residual connections, and with them, when each is trained at its own best rate?",
        arms=STACKS, setting="Adam learning rate", values=(1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2),
        metric="held-out loss after 300 steps (nats)", higher_is_better=False,
        run=stack_held_out_loss),
    Comparison(
        name="ch8_warmup",
        question="Does post-LN need a warm-up, and pre-LN less, when the constant rate is tuned "
                 "as well as the warmed-up one?",
        arms=ENCODERS, setting="peak Adam learning rate", values=(5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2),
        metric="held-out loss after 160 steps (nats per word)", higher_is_better=False,
        run=encoder_held_out_loss),
]
