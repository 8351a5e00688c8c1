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

from .checks import as_float_array, checked


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


def check_layer_norm(x, gamma, beta, axis):
    """The arguments of :func:`layer_norm` (chapter 8), checked and converted.

    ``axis`` comes back as a sorted tuple of non-negative axes, ``gamma`` and
    ``beta`` in the dtype the statistics are computed in.
    """
    x = as_float_array(x, "x")
    axes = _normalise_axes(axis, x.ndim)
    shape = tuple(x.shape[a] for a in axes)
    dtype = _compute_dtype(x.dtype)
    if gamma is not None:
        gamma = _parameter(gamma, "gamma", shape, dtype)
    if beta is not None:
        beta = _parameter(beta, "beta", shape, dtype)
    return dict(x=x, gamma=gamma, beta=beta, axis=axes)


@checked(check_layer_norm)
def layer_norm(x, gamma=None, beta=None, axis=-1, epsilon: float = 1e-3) -> np.ndarray:
    """Layer normalization: ``gamma * (x - mean) / sqrt(var + epsilon) + beta``.

    What ``keras.layers.LayerNormalization`` computes.

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
    compute = x.astype(_compute_dtype(x.dtype), copy=False)   # float16: in float32
    mean = compute.mean(axis=axis, keepdims=True)
    variance = np.square(compute - mean).mean(axis=axis, keepdims=True)
    out = (compute - mean) / np.sqrt(variance + epsilon)
    # gamma and beta span the normalised axes; reshaped to broadcast along the others.
    broadcast = tuple(n if a in axis else 1 for a, n in enumerate(x.shape))
    if gamma is not None:
        out = out * gamma.reshape(broadcast)
    if beta is not None:
        out = out + beta.reshape(broadcast)
    return out.astype(x.dtype, copy=False)


def check_batch_norm(x, gamma, beta, axis, moving_mean, moving_variance):
    """The arguments of :func:`batch_norm` (chapter 8), checked and converted.

    ``axis`` comes back as the one non-negative feature axis, the parameters
    in the dtype the statistics are computed in.
    """
    x = as_float_array(x, "x")
    (feature,) = _normalise_axes(axis, x.ndim)
    shape, dtype = (x.shape[feature],), _compute_dtype(x.dtype)
    if (moving_mean is None) != (moving_variance is None):
        raise ValueError(
            "pass both moving_mean and moving_variance (inference) or neither (training)")
    parameters = dict(moving_mean=moving_mean, moving_variance=moving_variance,
                      gamma=gamma, beta=beta)
    for name, value in parameters.items():
        if value is not None:
            parameters[name] = _parameter(value, name, shape, dtype)
    return dict(x=x, axis=feature, **parameters)


@checked(check_batch_norm)
def batch_norm(x, gamma=None, beta=None, axis=-1, epsilon: float = 1e-3, *,
               moving_mean=None, moving_variance=None) -> np.ndarray:
    """Batch normalization: normalise each *feature* over the batch.

    What ``keras.layers.BatchNormalization`` computes.

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
    compute = x.astype(_compute_dtype(x.dtype), copy=False)   # float16: in float32
    broadcast = tuple(n if a == axis else 1 for a, n in enumerate(x.shape))  # (1, d, 1)
    if moving_mean is None:  # training: the batch's statistics, over all other axes
        others = tuple(a for a in range(x.ndim) if a != axis)
        mean = compute.mean(axis=others, keepdims=True)
        variance = np.square(compute - mean).mean(axis=others, keepdims=True)
    else:                    # inference: the moving averages
        mean = moving_mean.reshape(broadcast)
        variance = moving_variance.reshape(broadcast)
    out = (compute - mean) / np.sqrt(variance + epsilon)
    if gamma is not None:
        out = out * gamma.reshape(broadcast)
    if beta is not None:
        out = out + beta.reshape(broadcast)
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

    def __call__(self, x) -> np.ndarray:
        return layer_norm(x, self.gamma, self.beta, axis=self.axis, epsilon=self.epsilon)
