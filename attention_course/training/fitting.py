"""Training helpers the chapters share: length-bucketed batches, compiling, the warm-up schedule.

Sequences in the course's toy tasks vary in length (the translation task's
sentences have 2 to 29 words, 15 on average), and padding every batch to the
longest sentence of the whole set wastes half of every step.  A
:func:`bucketed_dataset` sorts the examples by length (with a little noise, so
that batches differ from epoch to epoch), cuts them into batches, shuffles the
order of the batches every epoch and trims each batch to its own longest
sequence.  The padding that is left is masked, as before: the models'
outputs and the loss are the same as with full padding, only cheaper.

:func:`untuned_input_pipelines` and :func:`set_graph_rewrites`, which
``notebook.setup()`` calls in every chapter, keep tf.data's autotuner out of
Keras's input pipelines and (in most chapters) Grappler's rewrites out of its
traced steps.
"""

from __future__ import annotations

import math

import numpy as np


def bucketed_dataset(inputs, targets, batch_size: int, seed: int, pad: int = 0):
    """A ``tf.data.Dataset`` of length-bucketed batches, reshuffled every epoch.

    ``inputs``: an array ``(N, T_i)`` or a list of them, ``targets`` an array
    ``(N, T_o)``; ``pad`` is the padding id (at the end of each row).  Every
    array of a batch is trimmed to the longest unpadded row of that array in
    the batch.  The ``(N,)`` lengths used for sorting are those of the first
    input.  Yields ``(inputs, targets)`` with the same structure as given.
    """
    import tensorflow as tf

    single = not isinstance(inputs, (list, tuple))
    arrays = [np.asarray(inputs)] if single else [np.asarray(a) for a in inputs]
    targets = np.asarray(targets)
    n = len(targets)
    if any(len(a) != n for a in arrays):
        raise ValueError(f"inputs and targets have different numbers of rows: "
                         f"{[len(a) for a in arrays]} and {n}")
    lengths = (arrays[0] != pad).sum(axis=1)
    rng = np.random.default_rng(seed)

    def trim(array, rows):
        batch = array[rows]
        width = int((batch != pad).sum(axis=1).max()) if batch.ndim == 2 else None
        return batch[:, :max(width, 1)] if width is not None else batch

    def batches():
        noisy = lengths + rng.uniform(0, 2, size=n)  # neighbours of similar length mix
        order = np.argsort(noisy, kind="stable")
        groups = [order[i:i + batch_size] for i in range(0, n, batch_size)]
        for g in rng.permutation(len(groups)):
            rows = np.sort(groups[g])
            x = [trim(a, rows) for a in arrays]
            yield (x[0] if single else tuple(x)), trim(targets, rows)

    def spec(array):
        return tf.TensorSpec((None,) * array.ndim, tf.as_dtype(array.dtype))

    signature = (spec(arrays[0]) if single else tuple(spec(a) for a in arrays), spec(targets))
    return tf.data.Dataset.from_generator(batches, output_signature=signature) \
        .apply(tf.data.experimental.assert_cardinality(math.ceil(n / batch_size))) \
        .prefetch(2)


def untuned_input_pipelines() -> None:
    """Train and evaluate Keras models on input pipelines that do not tune themselves.

    ``Model.fit``, ``evaluate`` and ``predict`` feed a model through a
    ``tf.data`` pipeline, and tf.data's autotuner keeps background threads
    that measure the pipeline and retune it while the model trains.  When the
    book executes two chapters side by side, one per core, those threads take
    turns with the *other* chapter's training: chapter 14's ViT trained in 35 s
    next to another training run and in 26 s with the autotuner off, and the
    other run was slowed as much.  The course's pipelines only gather a batch
    of rows from arrays, which needs no tuning.  Turning the autotuner off
    changes neither the batches nor their order, so every model trains to the
    same weights, bit for bit.

    Keras builds its pipelines inside ``fit``, so this wraps the one place
    where it takes them (its TensorFlow epoch iterator; ``keras`` is pinned in
    ``requirements.txt``).  Where that place is not found (another Keras, as
    in Colab, or another backend), nothing changes: this only saves time.
    Calling it again changes nothing either.
    """
    import keras

    if keras.backend.backend() != "tensorflow":
        return
    try:
        import tensorflow as tf
        from keras.src.backend.tensorflow import trainer

        iterator = trainer.TFEpochIterator
    except (ImportError, AttributeError):
        return
    if getattr(iterator.__init__, "untuned", False):
        return
    keras_init = iterator.__init__

    def __init__(self, *args, **kwargs):
        keras_init(self, *args, **kwargs)
        if isinstance(getattr(self, "_distributed_dataset", None), tf.data.Dataset):
            options = tf.data.Options()
            options.autotune.enabled = False
            self._distributed_dataset = self._distributed_dataset.with_options(options)

    __init__.untuned, __init__.keras_init = True, keras_init
    iterator.__init__ = __init__


def set_graph_rewrites(on: bool) -> None:
    """Whether the graphs that ``tf.function`` traces run with Grappler's rewrites or as traced.

    TensorFlow hands every traced graph (Keras's training, evaluation and
    prediction steps, the course's decoding steps) to Grappler, its graph
    optimizer, before the first call: constant folding, op fusion, layout and
    arithmetic rewrites.  For the course's small models that costs more than
    it saves.  Measured on one core, one chapter at a time, the cells that
    train and score chapter 10's models took 33 s without the rewrites against
    38 s with them, chapter 8's 23 s against 27 s, chapter 14's ViT and CNN
    24 s and 11 s against 28 s and 15 s; a 2-layer Transformer's steps took
    33 ms either way, and its first step (the tracing) 5.5 s against 5.7-6.9 s.

    The arithmetic is the same but not bit for bit (a fused kernel rounds
    differently), so a model trains to slightly different weights, as it
    would on another CPU.  The trained-model cache does not tell the two
    apart (its key covers this module's code, not the setting in force):
    :func:`~attention_course.chapter_tools.notebook.setup` turns the rewrites off in
    every chapter, and ``scripts/check_claims.py --graph-rewrites``, which
    turns them on, keeps its own cache.  The setting holds for the whole
    process, for the graphs that run for the first time after it.
    """
    try:
        import tensorflow as tf
    except ImportError:
        return
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": not on})


def graph_rewrites_on() -> bool:
    """Whether Grappler rewrites traced graphs in this process (see :func:`set_graph_rewrites`)."""
    import tensorflow as tf

    return not tf.config.optimizer.get_experimental_options().get("disable_meta_optimizer", False)


def warmup_cosine(learning_rate: float, total_steps: int, warmup_steps: int):
    """Learning rate rising linearly from 0 over ``warmup_steps``, then a cosine to 0."""
    import keras

    if not 0 <= warmup_steps < total_steps:
        raise ValueError(f"warmup_steps must be in [0, total_steps={total_steps}), got {warmup_steps}")
    return keras.optimizers.schedules.CosineDecay(
        0.0, total_steps - warmup_steps, warmup_target=learning_rate, warmup_steps=warmup_steps)


def compile_for_training(model, optimizer, loss, **kwargs):
    """``model.compile(...)``, then create the optimizer's variables now.

    Keras otherwise creates them inside the first training step, which makes
    TensorFlow trace that step twice: several seconds on a small model.  The
    model must be built (called once on a batch), so that its variables exist.
    """
    if not model.built or not model.trainable_variables:
        raise ValueError(f"{model.name} is not built yet: call it once on a batch of inputs "
                         "before compile_for_training, so that the optimizer sees its variables")
    model.compile(optimizer=optimizer, loss=loss, **kwargs)
    model.optimizer.build(model.trainable_variables)
    return model


def reset_optimizer(optimizer) -> None:
    """Put a built Keras optimizer back at step 0: its step count and every slot at zero.

    Adam's moment estimates, for example, start again from zero, as in a new
    optimizer; the learning rate is kept.  A model compiled once can then be
    trained again from the same initial weights (``model.set_weights``)
    without tracing its training step a second time: Keras traces it again
    for a new optimizer, which costs several seconds on a CPU, often more than
    a short run's steps.
    """
    if not optimizer.built:
        raise ValueError(f"{optimizer.name} is not built yet: it has nothing to reset "
                         "(build it, or train one step, first)")
    for variable in optimizer.variables:
        if variable.name != "learning_rate":
            variable.assign(np.zeros(variable.shape, dtype=variable.dtype))
