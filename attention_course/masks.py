"""Boolean attention masks. Convention everywhere: ``True`` = may attend.

A mask for attention scores of shape ``(..., T_q, T_k)`` says, for every query
position, which key positions it may look at.  Masks combine with ``&``; the
helpers below return arrays that broadcast against the scores.
"""

from __future__ import annotations

import numpy as np

from .checks import checked


def padding_mask(lengths, max_length: int) -> np.ndarray:
    """``(batch, max_length)``: True for the first ``lengths[b]`` positions of row ``b``.

    Used in chapter 6, *Multi-head attention*, section "NumPy == Keras".
    """
    lengths = np.asarray(lengths)
    if lengths.ndim != 1:
        raise ValueError(f"lengths must have shape (batch,), got {lengths.shape}")
    if (lengths < 0).any() or (lengths > max_length).any():
        raise ValueError(f"lengths must lie in [0, {max_length}], got {lengths.tolist()}")
    return np.arange(max_length) < lengths[:, None]


def key_padding_mask(key_mask) -> np.ndarray:
    """``(batch, T_k)`` -> ``(batch, 1, T_k)``: the same keys are hidden from every query.

    Used in chapter 3, *Additive (Bahdanau) attention*, section "What `keras.layers.AdditiveAttention` computes".
    """
    key_mask = np.asarray(key_mask, dtype=bool)
    if key_mask.ndim != 2:
        raise ValueError(f"key_mask must have shape (batch, T_k), got {key_mask.shape}")
    return key_mask[:, None, :]


def causal_mask(T_q: int, T_k: int | None = None) -> np.ndarray:
    """``(T_q, T_k)`` lower-triangular: query ``i`` may attend to keys ``j <= i``.

    With ``T_k > T_q`` this is Keras' convention too: row ``i`` sees keys
    ``0..i`` (the mask is aligned at the top-left corner).

    Used in chapter 4, *Dot-product and scaled dot-product attention*, section "NumPy == `keras.layers.Attention`".
    """
    T_k = T_q if T_k is None else T_k
    return np.tril(np.ones((T_q, T_k), dtype=bool))


def check_local_window_mask(window):
    """The window of :func:`local_window_mask` (chapter 2): a half-width ``>= 0``."""
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")


@checked(check_local_window_mask)
def local_window_mask(T_q: int, T_k: int | None = None, window: int = 2) -> np.ndarray:
    """``(T_q, T_k)``: query ``i`` may attend to keys ``j`` with ``|i - j| <= window``.

    Explained in chapter 2, *A taxonomy of attention*, section "Global and local".
    """
    T_k = T_q if T_k is None else T_k
    i = np.arange(T_q)[:, None]                 # (T_q, 1)
    j = np.arange(T_k)[None, :]                 # (1, T_k)
    return np.abs(i - j) <= window


def combine_masks(*masks) -> np.ndarray | None:
    """Logical AND of the masks that are not None (None if all are None).

    Used in chapter 4, *Dot-product and scaled dot-product attention*, section "NumPy == `keras.layers.Attention`".
    """
    present = [np.asarray(m, dtype=bool) for m in masks if m is not None]
    if not present:
        return None
    combined = present[0]
    for m in present[1:]:
        combined = combined & m
    return combined
