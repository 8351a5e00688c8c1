"""A numerically stable softmax that understands masks."""

from __future__ import annotations

import numpy as np

from .checks import as_float_array, as_mask, checked


def check_softmax(x, axis, mask, temperature):
    """The arguments of :func:`softmax` (chapter 2), checked: ``x`` as floats, ``mask`` as booleans."""
    x = as_float_array(x, "x")
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    if not -x.ndim <= axis < max(x.ndim, 1):
        raise ValueError(f"axis {axis} is out of range for x of shape {x.shape}")
    if mask is not None:
        mask = as_mask(mask, "mask", x.shape, "the shape of x")
    return dict(x=x, mask=mask)


@checked(check_softmax)
def softmax(x, axis: int = -1, mask=None, temperature: float = 1.0) -> np.ndarray:
    """Softmax of ``x`` along ``axis``: ``exp(x_i / T) / sum_j exp(x_j / T)``.

    Stable for any input: the maximum along ``axis`` is subtracted first, which
    leaves the result unchanged (softmax is shift-invariant) but keeps every
    exponent ``<= 0``, so ``exp`` cannot overflow.

    Args:
        x: scores, any shape; float dtypes are kept, integers become float64.
        axis: the axis that sums to one.
        mask: optional boolean array broadcastable to ``x``; ``True`` marks the
            entries that take part. Masked entries get probability exactly 0,
            and so do scores that are already ``-inf``.
            A slice in which *every* entry is masked has nothing to attend to:
            it comes out as all zeros, never NaN.
        temperature: ``T > 0``; large ``T`` flattens the distribution, small
            ``T`` sharpens it towards the arg-max.

    Returns:
        An array of ``x``'s shape whose slices along ``axis`` sum to 1 (or to 0
        where fully masked).

    Explained in chapter 2, *Attention as a soft lookup*, section "The softmax, done safely".
    """
    if temperature != 1.0:
        x = x / temperature
    if mask is not None:
        x = np.where(mask, x, -np.inf)             # masked entries: exp(-inf) = 0
    row_max = x.max(axis=axis, keepdims=True)
    row_max[~np.isfinite(row_max)] = 0.0           # a fully masked row's max is -inf
    out = x - row_max                               # every exponent <= 0: no overflow
    np.exp(out, out=out)
    total = out.sum(axis=axis, keepdims=True)
    total[total == 0] = 1.0                         # a fully masked row stays all zeros
    out /= total
    return out


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """``log(softmax(logits))`` along the last axis, computed stably.

    Used in chapter 11, *Beam search and ablations*, section "Beam search" (sequence
    scores are sums of log-probabilities), and for the loss of chapter 13's character GPT.
    """
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
