"""Heads that start identical stay identical (chapter 6): make_heads_identical, keep_heads_identical."""

import dataclasses

import keras
import numpy as np
import pytest

from attention_course import attention_only
from attention_course.data import marker_task
from attention_course.models import attention_only as keras_attention_only
from attention_course.weights.from_keras import attention_only as attention_only_from_keras

PER_HEAD = {"query_kernel": 1, "key_kernel": 1, "value_kernel": 1,          # (d_model, N, width)
            "query_bias": 0, "key_bias": 0, "value_bias": 0, "output_kernel": 0}   # (N, ...)


def heads(layer, name):
    """``layer.<name>`` as one array per head."""
    return np.moveaxis(getattr(layer, name), PER_HEAD[name], 0)


def marker_model(seed, num_heads=4, key_dim=4, identical=False, source=0):
    keras.utils.set_random_seed(seed)
    model = keras_attention_only.build_model(16, 16, 64, d_model=16, num_heads=(num_heads,),
                                             key_dim=key_dim, mark_embedding=True)
    if identical:
        keras_attention_only.make_heads_identical(model.get_layer("attention_0"), source)
    return model


@pytest.mark.parametrize("source", [0, 2])
def test_every_head_becomes_a_copy_of_the_source_head(source):
    before = attention_only_from_keras.attention_only(marker_model(0)).layers[0]
    after = attention_only_from_keras.attention_only(marker_model(0, identical=True,
                                                                         source=source)).layers[0]
    for name in PER_HEAD:
        for head in heads(after, name):
            np.testing.assert_array_equal(head, heads(before, name)[source])
    np.testing.assert_array_equal(after.output_bias, before.output_bias)   # shared by all heads


def test_identical_heads_are_one_head_with_four_times_its_output():
    """Four copies of a head add up to that head, once, with its output kernel times 4."""
    weights = attention_only_from_keras.attention_only(marker_model(1, identical=True))
    layer = weights.layers[0]
    one_head = dataclasses.replace(
        layer, **{name: getattr(layer, name)[:, :1] for name in ("query_kernel", "key_kernel",
                                                                 "value_kernel")},
        **{name: getattr(layer, name)[:1] for name in ("query_bias", "key_bias", "value_bias")},
        output_kernel=4 * layer.output_kernel[:1])
    tokens = marker_task.make_data(20, seed=1).tokens
    logits, attention = attention_only.numpy_forward(weights, tokens)
    expected, one_attention = attention_only.numpy_forward(weights.with_layer(0, one_head), tokens)
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)
    for h in range(4):
        # float32, the course's tolerance: one head and four add up in other orders (NumPy's
        # AVX2 code paths, for one, round them differently from its AVX-512 ones)
        np.testing.assert_allclose(attention[0][:, h], one_attention[0][:, 0], rtol=1e-5, atol=1e-6)


def train(model, seed, epochs=2):
    data = marker_task.make_data(512, seed=seed)
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(data.tokens, data.targets, sample_weight=data.sample_weight, batch_size=64, epochs=epochs,
              verbose=0)
    return attention_only_from_keras.attention_only(model).layers[0]


def test_identical_heads_get_the_same_updates_up_to_round_off():
    """Identical heads compute the same numbers, get the same gradients, take the same Adam steps.

    In exact arithmetic.  A computer may round one head's numbers differently
    from another's (TensorFlow's AVX2 kernels do; its AVX-512 ones do not), and
    training then amplifies the difference: after a few steps it is still
    round-off, long before it grows.
    """
    model = marker_model(2, identical=True)
    start = attention_only_from_keras.attention_only(model).layers[0]
    trained = train(model, seed=2, epochs=1)                                  # 8 steps
    assert not np.allclose(trained.query_kernel, start.query_kernel)          # it did train
    for name in PER_HEAD:
        per_head = heads(trained, name)
        for head in per_head[1:]:
            np.testing.assert_allclose(head, per_head[0], rtol=1e-5, atol=1e-6, err_msg=name)


def test_kept_identical_heads_stay_exactly_identical_through_training():
    """keep_heads_identical copies head 0 into the others after every step: bit for bit, on any CPU."""
    model = marker_model(2, identical=True)
    keras_attention_only.keep_heads_identical(model.get_layer("attention_0"))
    start = attention_only_from_keras.attention_only(model).layers[0]
    trained = train(model, seed=2)
    assert not np.allclose(trained.query_kernel, start.query_kernel)          # it did train
    for name in PER_HEAD:
        per_head = heads(trained, name)
        for head in per_head[1:]:
            np.testing.assert_array_equal(head, per_head[0], err_msg=name)


@pytest.mark.parametrize("source", [0, 2])
def test_the_copy_changes_nothing_on_identical_heads_and_copies_the_source(source):
    layer = marker_model(0, identical=True, source=source).get_layer("attention_0")
    keras_attention_only.keep_heads_identical(layer, source)
    variables = [layer.query_dense.kernel, layer.query_dense.bias, layer.key_dense.kernel,
                 layer.value_dense.bias, layer.output_dense.kernel]
    for variable in variables:
        weight = keras.ops.convert_to_numpy(variable)
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(variable.constraint(variable)), weight)
    assert layer.output_dense.bias.constraint is None                         # shared by all heads
    random = marker_model(0).get_layer("attention_0")
    keras_attention_only.keep_heads_identical(random, source)
    kernel = keras.ops.convert_to_numpy(random.query_dense.kernel)            # (d_model, N, width)
    copied = keras.ops.convert_to_numpy(random.query_dense.kernel.constraint(random.query_dense.kernel))
    np.testing.assert_array_equal(copied, np.repeat(kernel[:, source:source + 1], 4, axis=1))


def test_randomly_initialised_heads_stay_different():
    trained = train(marker_model(2), seed=2)
    for name in PER_HEAD:
        per_head = heads(trained, name)
        assert not any(np.allclose(head, per_head[0]) for head in per_head[1:]), name


def test_make_heads_identical_checks_its_arguments():
    layer = marker_model(0).get_layer("attention_0")
    with pytest.raises(ValueError, match="source must be a head in \\[0, 4\\)"):
        keras_attention_only.make_heads_identical(layer, 4)
    with pytest.raises(ValueError, match="built keras.layers.MultiHeadAttention"):
        keras_attention_only.make_heads_identical(keras.layers.MultiHeadAttention(2, 4))
    with pytest.raises(ValueError, match="built keras.layers.MultiHeadAttention"):
        keras_attention_only.make_heads_identical(keras.layers.Dense(3))
    with pytest.raises(ValueError, match="source must be a head in \\[0, 4\\)"):
        keras_attention_only.keep_heads_identical(layer, 4)
