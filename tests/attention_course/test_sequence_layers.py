"""One layer of recurrence and of convolution in NumPy == keras.layers.SimpleRNN and Conv1D; their costs."""

import math

import keras
import numpy as np
import pytest

from attention_course.self_attention import SelfAttentionWeights, self_attention
from attention_course.sequence_layers import LayerCost, convolution_layer, layer_costs, recurrent_layer
from conftest import numpy, tolerance


def randomised(layer, x, rng, dtype):
    """``layer`` built on ``x``, every weight random (none at Keras' initial values)."""
    layer(x)
    layer.set_weights([rng.normal(scale=0.5, size=w.shape).astype(dtype) for w in layer.get_weights()])
    return layer


def recurrence_by_definition(x, W_input, W_hidden):
    """h_t = tanh(x_t W_input + h_{t-1} W_hidden), one position at a time, as written."""
    h = np.zeros(x.shape[:-2] + (W_hidden.shape[0],))
    states = []
    for t in range(x.shape[-2]):
        h = np.tanh(x[..., t, :] @ W_input + h @ W_hidden)
        states.append(h)
    return np.stack(states, axis=-2)


def convolution_by_definition(x, kernel):
    """y_t = sum_i x_{t-k+1+i} kernel[i], with x_s = 0 for s < 0."""
    k, n = kernel.shape[0], x.shape[-2]
    y = np.zeros(x.shape[:-1] + (kernel.shape[2],))
    for t in range(n):
        for i in range(k):
            if t - k + 1 + i >= 0:
                y[..., t, :] += x[..., t - k + 1 + i, :] @ kernel[i]
    return y


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("B, n, d_in, d", [(2, 7, 5, 4), (3, 1, 3, 6), (1, 12, 8, 8)])
def test_recurrent_layer_matches_keras_simple_rnn(rng, B, n, d_in, d, dtype):
    x = rng.normal(size=(B, n, d_in)).astype(dtype)
    layer = randomised(keras.layers.SimpleRNN(d, use_bias=False, return_sequences=True, dtype=dtype),
                       x, rng, dtype)
    W_input, W_hidden = layer.get_weights()
    states = recurrent_layer(x, W_input, W_hidden)
    assert states.shape == (B, n, d) and states.dtype == np.dtype(dtype)
    np.testing.assert_allclose(states, numpy(layer(x)), **tolerance(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("B, n, d_in, d_out", [(2, 9, 4, 6), (1, 3, 5, 5)])
def test_convolution_layer_matches_keras_causal_conv1d(rng, k, B, n, d_in, d_out, dtype):
    x = rng.normal(size=(B, n, d_in)).astype(dtype)
    layer = randomised(keras.layers.Conv1D(d_out, kernel_size=k, padding="causal", use_bias=False,
                                           dtype=dtype), x, rng, dtype)
    (kernel,) = layer.get_weights()
    y = convolution_layer(x, kernel)
    assert y.shape == (B, n, d_out) and y.dtype == np.dtype(dtype)
    np.testing.assert_allclose(y, numpy(layer(x)), **tolerance(dtype))


@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 6, 3)])
def test_both_layers_follow_their_definition_with_any_leading_axes(rng, shape):
    x = rng.normal(size=shape)
    W_input, W_hidden, kernel = rng.normal(size=(3, 4)), rng.normal(size=(4, 4)), rng.normal(size=(3, 3, 5))
    np.testing.assert_allclose(recurrent_layer(x, W_input, W_hidden),
                               recurrence_by_definition(x, W_input, W_hidden), **tolerance("float64"))
    np.testing.assert_allclose(convolution_layer(x, kernel), convolution_by_definition(x, kernel),
                               **tolerance("float64"))


def test_a_sequence_shorter_than_the_kernel_reads_zeros_before_it(rng):
    x, kernel = rng.normal(size=(2, 3)), rng.normal(size=(5, 3, 2))
    np.testing.assert_allclose(convolution_layer(x, kernel), convolution_by_definition(x, kernel),
                               **tolerance("float64"))
    # position 0 sees only itself, through the kernel's last slice
    np.testing.assert_allclose(convolution_layer(x, kernel)[0], x[0] @ kernel[-1], **tolerance("float64"))


def test_what_each_output_depends_on(rng):
    """Convolution: output t reads inputs t-k+1..t; recurrence: every input up to t; neither a later one."""
    n, d, k, s = 10, 4, 3, 4
    x = rng.normal(size=(n, d))
    changed = x.copy()
    changed[s] += 1.0
    W_input, W_hidden, kernel = rng.normal(size=(d, d)), rng.normal(size=(d, d)), rng.normal(size=(k, d, d))
    moved_conv = np.any(convolution_layer(changed, kernel) != convolution_layer(x, kernel), axis=-1)
    moved_rnn = np.any(recurrent_layer(changed, W_input, W_hidden) != recurrent_layer(x, W_input, W_hidden),
                       axis=-1)
    assert np.flatnonzero(moved_conv).tolist() == list(range(s, s + k))
    assert np.flatnonzero(moved_rnn).tolist() == list(range(s, n))


def test_layer_costs_counts_from_the_shapes():
    n, d, k = 10, 4, 3
    costs = layer_costs(n, d, k)
    assert costs == {
        "self-attention": LayerCost(multiply_adds=4 * 10 * 16 + 2 * 100 * 4, sequential_steps=1, path_length=1),
        "recurrence": LayerCost(multiply_adds=2 * 10 * 16, sequential_steps=10, path_length=9),
        "convolution": LayerCost(multiply_adds=3 * 10 * 16, sequential_steps=1, path_length=5),
    }
    # the terms of Vaswani et al.'s Table 1 dominate where they should
    big = layer_costs(4096, 64, 3)
    assert big["self-attention"].multiply_adds > 2 * 4096**2 * 64
    assert big["convolution"].multiply_adds == 3 * big["recurrence"].multiply_adds // 2


def layers_until_last_feels_first(layer, x):
    nudged = x.copy()
    nudged[0] += 1.0
    for depth in range(1, len(x) + 1):
        x, nudged = layer(x), layer(nudged)
        if not np.array_equal(x[-1], nudged[-1]):
            return depth
    return None


@pytest.mark.parametrize("n, k", [(2, 2), (9, 3), (12, 3), (16, 5), (7, 7), (20, 4)])
def test_path_lengths_are_what_stacking_the_layers_shows(rng, n, k):
    d = 3
    costs = layer_costs(n, d, k)
    x = rng.normal(size=(n, d))
    kernel = rng.normal(size=(k, d, d))
    assert layers_until_last_feels_first(lambda h: convolution_layer(h, kernel), x) \
        == costs["convolution"].path_length == math.ceil((n - 1) / (k - 1))
    weights = SelfAttentionWeights(*rng.normal(size=(3, d, d)), W_output=rng.normal(size=(d, d)))
    assert layers_until_last_feels_first(lambda h: self_attention(h, weights)[0], x) \
        == costs["self-attention"].path_length == 1
    # one recurrent layer reaches the end, through n - 1 steps of h_{t-1} -> h_t
    W_input, W_hidden = rng.normal(size=(d, d)), rng.normal(size=(d, d))
    assert layers_until_last_feels_first(lambda h: recurrent_layer(h, W_input, W_hidden), x) == 1
    assert costs["recurrence"].path_length == n - 1 and costs["recurrence"].sequential_steps == n


@pytest.mark.parametrize("call, message", [
    (lambda: recurrent_layer(np.zeros(5), np.zeros((5, 4)), np.zeros((4, 4))),
     r"x must have shape \(\.\.\., n, d_in\) \(at least 2 dimensions\); got shape \(5,\)"),
    (lambda: recurrent_layer(np.zeros((6, 5)), np.zeros((3, 4)), np.zeros((4, 4))),
     r"W_input must have shape \(d_in, d\) = \(5, d\) to read x of shape \(6, 5\); got \(3, 4\)"),
    (lambda: recurrent_layer(np.zeros((6, 5)), np.zeros((5, 4)), np.zeros((4, 3))),
     r"W_hidden must have shape \(d, d\) = \(4, 4\).*got \(4, 3\)"),
    (lambda: convolution_layer(np.zeros(5), np.zeros((3, 5, 2))),
     r"x must have shape \(\.\.\., n, d_in\)"),
    (lambda: convolution_layer(np.zeros((6, 5)), np.zeros((5, 2))),
     r"kernel must have shape \(k, d_in, d_out\) with d_in = 5 to read x of shape \(6, 5\); got \(5, 2\)"),
    (lambda: convolution_layer(np.zeros((6, 5)), np.zeros((3, 4, 2))),
     r"kernel must have shape \(k, d_in, d_out\) with d_in = 5.*got \(3, 4, 2\)"),
    (lambda: layer_costs(8, 4, k=1), r"k must be an integer >= 2, got 1"),
    (lambda: layer_costs(0, 4), r"n must be an integer >= 1, got 0"),
    (lambda: layer_costs(8, 2.5), r"d must be an integer >= 1, got 2.5"),
])
def test_wrong_shapes_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
