"""Three ways for the positions of a sequence to exchange information, one layer of each.

Vaswani et al. (2017), Table 1, compare self-attention with recurrence and with
convolution by three costs: the work of one layer, the number of operations that
must run one after another, and the longest path a signal travels between two
positions.  Self-attention is :func:`attention_course.self_attention.self_attention`;
this module holds the other two, in NumPy, and the costs of all three counted
from the shapes (:func:`layer_costs`).  The recurrent layer is
``keras.layers.SimpleRNN(use_bias=False, return_sequences=True)`` and the
convolution ``keras.layers.Conv1D(padding="causal", use_bias=False)``: their
Keras weights load as they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .checks import as_float_array, checked, require_ndim


def check_recurrent_layer(x, W_input, W_hidden):
    """The arguments of :func:`recurrent_layer` (chapter 5): float arrays whose shapes fit."""
    x = as_float_array(x, "x")
    require_ndim(x, "x", 2, "(..., n, d_in)")
    W_input, W_hidden = as_float_array(W_input, "W_input"), as_float_array(W_hidden, "W_hidden")
    if W_input.ndim != 2 or W_input.shape[0] != x.shape[-1]:
        raise ValueError(f"W_input must have shape (d_in, d) = ({x.shape[-1]}, d) to read x of "
                         f"shape {x.shape}; got {W_input.shape}")
    d = W_input.shape[1]
    if W_hidden.shape != (d, d):
        raise ValueError(f"W_hidden must have shape (d, d) = ({d}, {d}), the width of W_input's "
                         f"output; got {W_hidden.shape}")
    return dict(x=x, W_input=W_input, W_hidden=W_hidden)


@checked(check_recurrent_layer)
def recurrent_layer(x, W_input, W_hidden):
    """A simple recurrent layer: ``h_t = tanh(x_t W_input + h_{t-1} W_hidden)``.

    Args:
        x: ``(..., n, d_in)``.
        W_input: ``(d_in, d)``; ``W_hidden``: ``(d, d)``.

    Returns:
        every state ``h``, ``(..., n, d)``; before the first, ``h`` is zero.

    Explained in chapter 5, *Self-attention, recurrence and convolution*,
    section "One layer of each, in NumPy".
    """
    inputs = x @ W_input                  # all positions at once: none waits
    h = np.zeros_like(inputs[..., 0, :])  # the state before the first position
    states = np.empty_like(inputs)
    for t in range(x.shape[-2]):          # n steps, each waiting for the one before
        h = np.tanh(inputs[..., t, :] + h @ W_hidden)
        states[..., t, :] = h
    return states


def check_convolution_layer(x, kernel):
    """The arguments of :func:`convolution_layer` (chapter 5): float arrays whose shapes fit."""
    x = as_float_array(x, "x")
    require_ndim(x, "x", 2, "(..., n, d_in)")
    kernel = as_float_array(kernel, "kernel")
    if kernel.ndim != 3 or kernel.shape[0] < 1 or kernel.shape[1] != x.shape[-1]:
        raise ValueError(f"kernel must have shape (k, d_in, d_out) with d_in = {x.shape[-1]} to "
                         f"read x of shape {x.shape}; got {kernel.shape}")
    return dict(x=x, kernel=kernel)


@checked(check_convolution_layer)
def convolution_layer(x, kernel):
    """A causal 1-D convolution of width ``k``: ``y_t = sum_i x_{t-k+1+i} kernel[i]``.

    Positions before the first count as zeros, so ``y_t`` reads ``x_{t-k+1}, ..., x_t``.
    All positions are computed by one matrix product over the unfolded windows.

    Args:
        x: ``(..., n, d_in)``.
        kernel: ``(k, d_in, d_out)``, Keras' ``Conv1D`` layout.

    Returns:
        ``(..., n, d_out)``.

    Explained in chapter 5, *Self-attention, recurrence and convolution*,
    section "One layer of each, in NumPy".
    """
    k, d_in, d_out = kernel.shape
    front = [(0, 0)] * (x.ndim - 2) + [(k - 1, 0), (0, 0)]  # k - 1 zeros first
    padded = np.pad(x, front)
    windows = sliding_window_view(padded, k, axis=-2)        # (..., n, d_in, k): a view
    windows = np.swapaxes(windows, -1, -2)                    # (..., n, k, d_in)
    windows = windows.reshape(*x.shape[:-1], k * d_in)        # (..., n, k d_in), a copy
    return windows @ kernel.reshape(k * d_in, d_out)


@dataclass(frozen=True)
class LayerCost:
    """What one layer costs on a sequence of ``n`` vectors of width ``d`` (Vaswani et al., Table 1).

    Attributes:
        multiply_adds: scalar multiply-adds of the layer's matrix products.
        sequential_steps: matrix-product steps that must run one after another.
        path_length: steps (layers, or recurrent steps) from the first position's
            input to the last position's output.

    Explained in chapter 5, *Self-attention, recurrence and convolution*,
    section "Three kinds of layer".
    """

    multiply_adds: int
    sequential_steps: int
    path_length: int


def layer_costs(n: int, d: int, k: int = 3) -> dict[str, LayerCost]:
    """The costs of one layer of each kind, counted from the shapes.

    * self-attention (:func:`~attention_course.self_attention.self_attention`
      with an output projection): four ``(n, d) @ (d, d)`` projections, then
      ``Q K^T`` and ``A V``, ``n * n * d`` each;
    * recurrence (:func:`recurrent_layer`): ``x W_input`` at once, then ``n``
      steps of ``h W_hidden``; the first input reaches the last output after
      ``n - 1`` of them;
    * convolution (:func:`convolution_layer`): one ``(n, k d) @ (k d, d)``
      product; each layer reaches ``k - 1`` positions further back, so a stack
      of ``ceil((n - 1) / (k - 1))`` layers joins the first position to the
      last (dilated convolutions need ``ceil(log_k n)``).

    Softmax and ``tanh`` are not counted.

    Explained in chapter 5, *Self-attention, recurrence and convolution*,
    section "Three kinds of layer".
    """
    for name, value, least in (("n", n, 1), ("d", d, 1), ("k", k, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return {
        "self-attention": LayerCost(4 * n * d * d + 2 * n * n * d, 1, 1),
        "recurrence": LayerCost(2 * n * d * d, n, n - 1),
        "convolution": LayerCost(k * n * d * d, 1, math.ceil((n - 1) / (k - 1))),
    }

