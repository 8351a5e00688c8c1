"""Layer normalization and batch normalization, in NumPy.

Both subtract a mean, divide by a standard deviation and then apply a learned
scale ``gamma`` and shift ``beta``.  They differ in *what they average over*:

* **layer normalization** (Ba et al., 2016) takes the statistics of each
  example on its own, over its feature axis (or axes): every token vector of
  a Transformer is normalised by itself, whatever the batch holds;
* **batch normalization** (Ioffe & Szegedy, 2015) takes the statistics of each
  feature over the batch (and any other non-feature axes): one token's output
  depends on every other example in the batch during training.

:func:`layer_norm` mirrors ``keras.layers.LayerNormalization`` and
:func:`batch_norm` ``keras.layers.BatchNormalization``, argument for argument,
including Keras' default ``epsilon=1e-3`` (PyTorch's default is ``1e-5``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import as_float_array


def _normalise_axes(axis, ndim: int, name: str = "axis") -> tuple[int, ...]:
    """``axis`` (int or sequence) as sorted, non-negative, distinct axes of an ``ndim``-D array."""
    axes = [axis] if np.ndim(axis) == 0 else list(axis)
    if not axes:
        raise ValueError(f"{name} must name at least one axis")
    for a in axes:
        if int(a) != a or not -ndim <= a < ndim:
            raise ValueError(f"{name}={axis} is out of range for an input with {ndim} dimensions")
    normalised = sorted({int(a) % ndim for a in axes})
    if len(normalised) != len(axes):
        raise ValueError(f"{name}={axis} names the same axis twice")
    return tuple(normalised)


def _parameter(value, name: str, shape: tuple[int, ...], dtype) -> np.ndarray:
    """``gamma``/``beta`` as an array of ``shape`` (the sizes of the normalised axes)."""
    value = as_float_array(value, name)
    if value.shape != shape:
        raise ValueError(f"{name} must have shape {shape} (the sizes of the normalised axes); "
                         f"got {value.shape}")
    return value.astype(dtype, copy=False)


def _compute_dtype(dtype) -> np.dtype:
    # Half-precision inputs are normalised in float32 and cast back, as Keras
    # does: the variance of float16 activations loses too many digits.
    return np.result_type(dtype, np.float32)


def layer_norm(x, gamma=None, beta=None, axis=-1, epsilon: float = 1e-3) -> np.ndarray:
    """``keras.layers.LayerNormalization``: ``gamma * (x - mean) / sqrt(var + epsilon) + beta``.

    Args:
        x: any shape, e.g. ``(batch, T, d_model)``.
        gamma: scale, shaped like the normalised axes (``(d_model,)`` for
            ``axis=-1``; ``(T, d_model)`` for ``axis=(-2, -1)``); None = 1
            (Keras' ``scale=False``).
        beta: shift, same shape as ``gamma``; None = 0 (``center=False``).
        axis: the axis, or axes, whose values are normalised together: the mean
            and the (biased) variance are taken over them, separately for every
            index of the other axes.
        epsilon: added to the variance; Keras' default is ``1e-3``.

    Returns:
        An array of ``x``'s shape and dtype.

    Explained in chapter 8, *Residual connections and layer normalization*, section "Layer normalization".
    """
    x = as_float_array(x, "x")
    axes = _normalise_axes(axis, x.ndim)
    compute = x.astype(_compute_dtype(x.dtype), copy=False)
    mean = compute.mean(axis=axes, keepdims=True)
    variance = np.square(compute - mean).mean(axis=axes, keepdims=True)
    out = (compute - mean) / np.sqrt(variance + epsilon)
    # gamma/beta span the normalised axes; reshape them to broadcast along the others.
    shape = tuple(x.shape[a] for a in axes)
    broadcast = tuple(x.shape[a] if a in axes else 1 for a in range(x.ndim))
    if gamma is not None:
        out = out * _parameter(gamma, "gamma", shape, compute.dtype).reshape(broadcast)
    if beta is not None:
        out = out + _parameter(beta, "beta", shape, compute.dtype).reshape(broadcast)
    return out.astype(x.dtype, copy=False)


def batch_norm(x, gamma=None, beta=None, axis=-1, epsilon: float = 1e-3, *,
               moving_mean=None, moving_variance=None) -> np.ndarray:
    """``keras.layers.BatchNormalization``: normalise each *feature* over the batch.

    Args:
        x: any shape, e.g. ``(batch, T, d_model)``.
        gamma, beta: ``(x.shape[axis],)`` or None.
        axis: the feature axis (Keras' ``axis``, ``-1`` by default).  The
            statistics are taken over *all the other* axes.
        epsilon: added to the variance; Keras' default is ``1e-3``.
        moving_mean, moving_variance: ``(x.shape[axis],)``.  Given, they replace
            the batch statistics: that is inference mode (``training=False``).
            Omitted, the batch's own statistics are used (``training=True``).

    Returns:
        An array of ``x``'s shape and dtype.

    Explained in chapter 8, *Residual connections and layer normalization*, section "Layer norm versus batch norm".
    """
    x = as_float_array(x, "x")
    (feature,) = _normalise_axes(axis, x.ndim)
    compute = x.astype(_compute_dtype(x.dtype), copy=False)
    shape = (x.shape[feature],)
    broadcast = tuple(x.shape[a] if a == feature else 1 for a in range(x.ndim))
    if (moving_mean is None) != (moving_variance is None):
        raise ValueError("pass both moving_mean and moving_variance (inference) or neither (training)")
    if moving_mean is None:
        others = tuple(a for a in range(x.ndim) if a != feature)
        mean = compute.mean(axis=others, keepdims=True)
        variance = np.square(compute - mean).mean(axis=others, keepdims=True)
    else:
        mean = _parameter(moving_mean, "moving_mean", shape, compute.dtype).reshape(broadcast)
        variance = _parameter(moving_variance, "moving_variance", shape,
                              compute.dtype).reshape(broadcast)
    out = (compute - mean) / np.sqrt(variance + epsilon)
    if gamma is not None:
        out = out * _parameter(gamma, "gamma", shape, compute.dtype).reshape(broadcast)
    if beta is not None:
        out = out + _parameter(beta, "beta", shape, compute.dtype).reshape(broadcast)
    return out.astype(x.dtype, copy=False)


@dataclass
class LayerNormWeights:
    """The parameters and settings of one ``keras.layers.LayerNormalization``.

    Used in chapter 8, *Residual connections and layer normalization*, section "Layer normalization".
    """

    gamma: np.ndarray | None = None
    beta: np.ndarray | None = None
    axis: int | tuple[int, ...] = -1
    epsilon: float = 1e-3

    @classmethod
    def from_keras(cls, layer) -> "LayerNormWeights":
        """From a built ``keras.layers.LayerNormalization`` (the name mapping is
        :func:`attention_course.weights.from_keras.layer_norm`)."""
        from .weights import from_keras

        return from_keras.layer_norm(layer)

    def __call__(self, x) -> np.ndarray:
        return layer_norm(x, self.gamma, self.beta, axis=self.axis, epsilon=self.epsilon)
