"""Length-bucketed batches and the training helpers the chapters share."""

import keras
import numpy as np
import pytest

from attention_course.training import fitting


def padded(lengths, width, start=1):
    """Rows ``start, start+1, ...`` of the given lengths, right-padded with 0 to ``width``."""
    rows = np.zeros((len(lengths), width), dtype=np.int32)
    for i, n in enumerate(lengths):
        rows[i, :n] = np.arange(start, start + n) + 100 * i
    return rows


@pytest.fixture
def data():
    lengths = np.random.default_rng(0).integers(1, 12, size=203)
    source = padded(lengths, 12)
    target = padded(lengths + 1, 13)
    return lengths, source, target


def batches(dataset):
    return [((s.numpy(), d.numpy()), t.numpy()) for (s, d), t in dataset]


def small_classification(rows: int = 96):
    """``(x (rows, 5), y (rows,))``: is the sum of five numbers positive?"""
    x = np.random.default_rng(0).normal(size=(rows, 5)).astype("float32")
    return x, (x.sum(axis=1) > 0).astype("int32")


def trained_weights(x, y, hidden: int = 4, shuffle: bool = True):
    """The weights of a small classifier after 2 epochs of Adam on ``x, y`` (seeded: repeatable)."""
    keras.utils.set_random_seed(3)
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(hidden, activation="relu"),
                              keras.layers.Dense(2)])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=8, epochs=2, shuffle=shuffle, verbose=0)
    return model.get_weights()


def test_every_row_once_per_epoch_trimmed_to_the_batch(data):
    lengths, source, target = data
    dataset = fitting.bucketed_dataset([source, target], target, batch_size=16, seed=0)
    assert dataset.cardinality() == 13
    seen = []
    for (s, d), t in batches(dataset):
        assert len(s) <= 16
        widths = (s != 0).sum(1)
        assert s.shape[1] == widths.max()                     # trimmed to its longest row
        assert widths.max() - widths.min() <= 2               # neighbours in length
        assert d.shape[1] == t.shape[1] == (t != 0).sum(1).max()
        seen.extend(s[:, 0] // 100)                            # the row number (see padded)
        for row_s, row_t in zip(s, t):                         # inputs and targets stay paired
            i = row_s[0] // 100
            np.testing.assert_array_equal(row_s, source[i, :s.shape[1]])
            np.testing.assert_array_equal(row_t, target[i, :t.shape[1]])
    assert sorted(seen) == list(range(len(source)))


def test_batches_change_from_epoch_to_epoch_and_repeat_with_the_seed(data):
    _, source, target = data
    order = lambda ds: [tuple(s[:, 0]) for (s, _), _ in batches(ds)]
    dataset = fitting.bucketed_dataset([source, target], target, batch_size=16, seed=3)
    first, second = order(dataset), order(dataset)
    assert first != second
    assert first == order(fitting.bucketed_dataset([source, target], target, batch_size=16, seed=3))


def test_a_single_input_and_mismatched_rows(data):
    _, source, target = data
    (x, y), = [(x.numpy(), y.numpy()) for x, y in fitting.bucketed_dataset(source, target, 500, seed=0)]
    assert x.shape == (len(source), 11) and y.shape == (len(source), 12)
    with pytest.raises(ValueError, match="different numbers of rows"):
        fitting.bucketed_dataset([source, target[:-1]], target, 16, seed=0)


def test_padding_masked_models_train_the_same_on_trimmed_batches():
    """With masking, a trimmed batch gives the loss of the fully padded one."""
    keras.utils.set_random_seed(0)
    inputs = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(20, 8, mask_zero=True)(inputs)
    model = keras.Model(inputs, keras.layers.Dense(20)(keras.layers.LSTM(8, return_sequences=True)(x)))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
    source = padded([3, 5, 2], 9, start=1) % 20
    source[source == 0] = 1
    source[:, 5:] = 0
    source[0, 3:] = source[2, 2:] = 0
    full = float(loss(source, model(source)))
    trimmed = float(loss(source[:, :5], model(source[:, :5])))
    assert full == pytest.approx(trimmed, rel=1e-6)


def test_warmup_cosine_rises_then_decays_to_zero():
    schedule = fitting.warmup_cosine(1e-3, total_steps=100, warmup_steps=10)
    values = np.array([float(schedule(step)) for step in range(101)])
    assert values[0] == 0 and values[10] == pytest.approx(1e-3)
    assert np.all(np.diff(values[:11]) > 0) and np.all(np.diff(values[10:]) <= 1e-12)
    assert values[100] == pytest.approx(0, abs=1e-9)
    with pytest.raises(ValueError, match="warmup_steps"):
        fitting.warmup_cosine(1e-3, total_steps=10, warmup_steps=10)


def test_compile_for_training_creates_the_optimizer_state_at_once():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    fitting.compile_for_training(model, keras.optimizers.Adam(1e-3), "mse")
    assert model.optimizer.built and len(model.optimizer.variables) > 1


def test_compile_for_training_needs_a_built_model():
    model = keras.Sequential([keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="not built yet"):
        fitting.compile_for_training(model, keras.optimizers.Adam(1e-3), "mse")


def _small_regressor():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                              keras.layers.Dense(1)])
    return model


def _train(model, steps=5):
    x = np.random.default_rng(1).normal(size=(steps, 8, 3)).astype("float32")
    return [float(model.train_on_batch(x[i], x[i].sum(-1, keepdims=True))) for i in range(steps)]


def test_a_reset_optimizer_trains_again_like_a_new_one():
    model = _small_regressor()
    initial = model.get_weights()
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    first = _train(model)
    train_function = model.train_function
    model.set_weights(initial)
    fitting.reset_optimizer(model.optimizer)
    assert int(model.optimizer.iterations) == 0
    assert float(model.optimizer.learning_rate) == pytest.approx(0.05)
    again = _train(model)
    assert model.train_function is train_function          # not traced again
    np.testing.assert_allclose(again, first, rtol=1e-6)


def test_without_the_reset_adam_carries_its_moments_over():
    # What the reset is for: set_weights alone leaves Adam mid-run, and the
    # second run differs from the first.
    model = _small_regressor()
    initial = model.get_weights()
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    first = _train(model)
    model.set_weights(initial)
    assert not np.allclose(_train(model)[1:], first[1:], rtol=1e-3)


def test_resetting_an_unbuilt_optimizer_is_refused():
    with pytest.raises(ValueError, match="not built yet"):
        fitting.reset_optimizer(keras.optimizers.Adam(0.01))


def test_untuned_input_pipelines_train_the_same_weights(monkeypatch):
    """Keras's pipelines lose their autotuner, not a batch: the same weights, bit for bit."""
    import tensorflow as tf
    from keras.src.backend.tensorflow import trainer

    installed = trainer.TFEpochIterator.__init__
    keras_init = getattr(installed, "keras_init", installed)   # setup() may have run already
    monkeypatch.setattr(trainer.TFEpochIterator, "__init__", keras_init)   # restored afterwards
    x, y = small_classification()

    def autotuned() -> bool | None:
        iterator = trainer.TFEpochIterator(x=x, y=y, batch_size=8, shuffle=True,
                                           distribute_strategy=tf.distribute.get_strategy())
        return iterator._distributed_dataset.options().autotune.enabled

    assert autotuned() is not False          # Keras's default: tf.data tunes the pipeline
    before = trained_weights(x, y)
    fitting.untuned_input_pipelines()
    wrapped = trainer.TFEpochIterator.__init__
    fitting.untuned_input_pipelines()        # a second call wraps nothing more
    assert trainer.TFEpochIterator.__init__ is wrapped and wrapped.keras_init is keras_init
    assert autotuned() is False
    for a, b in zip(before, trained_weights(x, y)):
        np.testing.assert_array_equal(a, b)


def test_untuned_input_pipelines_leave_another_keras_alone(monkeypatch):
    """Another backend, or a Keras without that epoch iterator (Colab's): nothing changes, no error."""
    from keras.src.backend.tensorflow import trainer

    installed = trainer.TFEpochIterator.__init__
    monkeypatch.setattr(trainer.TFEpochIterator, "__init__", getattr(installed, "keras_init", installed))
    keras_init = trainer.TFEpochIterator.__init__
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    fitting.untuned_input_pipelines()
    assert trainer.TFEpochIterator.__init__ is keras_init
    monkeypatch.setattr(keras.backend, "backend", lambda: "tensorflow")
    monkeypatch.delattr(trainer, "TFEpochIterator")
    fitting.untuned_input_pipelines()      # no error


def test_without_graph_rewrites_the_same_model_trains(graph_rewrites_restored):
    """The same training, to float32 round-off."""
    x, y = small_classification(64)
    fitting.set_graph_rewrites(True)            # TensorFlow's default
    assert fitting.graph_rewrites_on()
    rewritten = trained_weights(x, y, hidden=8, shuffle=False)
    fitting.set_graph_rewrites(False)
    fitting.set_graph_rewrites(False)           # a second call changes nothing
    assert not fitting.graph_rewrites_on()
    for a, b in zip(rewritten, trained_weights(x, y, hidden=8, shuffle=False)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)   # float32 round-off at most
    fitting.set_graph_rewrites(True)
    assert fitting.graph_rewrites_on()
