"""A numerically stable softmax that understands masks."""

from __future__ import annotations

import numpy as np

from .checks import as_float_array, as_mask


def softmax(x, axis: int = -1, mask=None, temperature: float = 1.0) -> np.ndarray:
    """Softmax of ``x`` along ``axis``: ``exp(x_i / T) / sum_j exp(x_j / T)``.

    Stable for any input: the maximum along ``axis`` is subtracted first, which
    leaves the result unchanged (softmax is shift-invariant) but keeps every
    exponent ``<= 0``, so ``exp`` cannot overflow.

    Args:
        x: scores, any shape; float dtypes are kept, integers become float64.
        axis: the axis that sums to one.
        mask: optional boolean array broadcastable to ``x``; ``True`` marks the
            entries that take part. Masked entries get probability exactly 0.
            A slice in which *every* entry is masked has nothing to attend to:
            it comes out as all zeros, never NaN.
        temperature: ``T > 0``; large ``T`` flattens the distribution, small
            ``T`` sharpens it towards the arg-max.

    Returns:
        An array of ``x``'s shape whose slices along ``axis`` sum to 1 (or to 0
        where fully masked).

    Explained in chapter 2, *Attention as a soft lookup*, section "The softmax, done safely".
    """
    x = as_float_array(x, "x")
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"axis {axis} is out of range for x of shape {x.shape}")
    if temperature != 1.0:
        x = x / temperature
    if mask is None:
        row_max = x.max(axis=axis, keepdims=True)
        if np.isfinite(row_max).all():
            # One temporary, then everything in place: this is the hot loop
            # of every attention layer in the course.
            out = x - row_max
            np.exp(out, out=out)
            out /= out.sum(axis=axis, keepdims=True)
            return out
        mask = x > -np.inf  # scores already set to -inf count as masked
    mask = as_mask(mask, "mask", x.shape, "the shape of x")
    out = np.where(mask, x, -np.inf)
    row_max = out.max(axis=axis, keepdims=True)
    # A fully masked slice has max -inf; subtracting it would give NaN.
    row_max[~np.isfinite(row_max)] = 0.0
    out -= row_max
    np.exp(out, out=out)  # exp(-inf) = 0: masked entries vanish here
    total = out.sum(axis=axis, keepdims=True)
    np.divide(out, total, out=out, where=total > 0)
    return out


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """``log(softmax(logits))`` along the last axis, computed stably.

    Used in chapter 11, *Training a Transformer*, section "Beam search" (sequence
    scores are sums of log-probabilities), and for the loss of chapter 13's character GPT.
    """
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
