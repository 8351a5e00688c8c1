"""Telling attention where each token is: positional encodings, in NumPy.

Self-attention treats its input as a *set*: permute the tokens and the outputs
are permuted the same way (chapter 5).  To make order matter, the Transformer
adds to every token embedding a vector that depends only on the token's
position.  Vaswani et al. (2017) use sinusoids of geometrically spaced
frequencies::

    PE[pos, 2i]     = sin(pos / base^(2i / d_model))
    PE[pos, 2i + 1] = cos(pos / base^(2i / d_model)),      base = 10000

Each pair of columns ``(2i, 2i + 1)`` is a point turning on a circle at its own
speed, so shifting the position by ``k`` *rotates* every pair by a fixed angle:
``PE[pos + k] = PE[pos] @ M_k`` for a matrix ``M_k`` that depends on ``k`` but
not on ``pos`` (:func:`shift_matrix`).  That is the property the paper gives
for choosing sinusoids: relative positions are a linear function away.
"""

from __future__ import annotations

import numpy as np

from .checks import checked


def check_sinusoidal_encoding(length, d_model) -> None:
    """The sizes of :func:`sinusoidal_encoding` (chapter 7): ``length >= 0``, ``d_model`` even."""
    if int(length) != length or length < 0:
        raise ValueError(f"length must be a non-negative integer, got {length!r}")
    if int(d_model) != d_model or d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be an even integer >= 2 (pairs of sin and cos), got {d_model!r}")


def check_frequencies(d_model) -> None:
    """The width of :func:`frequencies` (chapter 7): an even integer ``>= 2``."""
    check_sinusoidal_encoding(0, d_model)


@checked(check_frequencies)
def frequencies(d_model: int, base: float = 10000.0, dtype=np.float64) -> np.ndarray:
    """``(d_model // 2,)`` angular frequencies ``omega_i = base^(-2i / d_model)``.

    From 1 radian per position (``i = 0``, a wavelength of ``2 pi``) down to
    ``base^(-(d_model - 2) / d_model)`` for the last pair (``i = d_model / 2 - 1``),
    a wavelength of ``2 pi * base^((d_model - 2) / d_model)``, which approaches
    ``2 pi * base`` only as ``d_model`` grows.

    Explained in chapter 7, *Positional encoding*, section "From binary counters to sinusoids".
    """
    return (base ** (-np.arange(0, d_model, 2) / d_model)).astype(dtype)


@checked(check_sinusoidal_encoding)
def sinusoidal_encoding(length: int, d_model: int, base: float = 10000.0,
                        dtype=np.float32) -> np.ndarray:
    """The sinusoidal positional encoding ``(length, d_model)`` of Vaswani et al. (2017).

    Row ``pos`` is the vector added to the embedding of the token at position
    ``pos`` (counting from 0); even columns are sines, odd columns cosines, as
    in the paper.  Computed in float64 and then cast, so that float32 values are
    correctly rounded even for long sequences.

    Explained in chapter 7, *Positional encoding*, section "From binary counters to sinusoids".
    """
    angles = np.arange(length)[:, None] * frequencies(d_model, base)  # (T, d/2)
    encoding = np.empty((length, d_model))
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles)
    return encoding.astype(dtype)


def shift_matrix(k: float, d_model: int, base: float = 10000.0) -> np.ndarray:
    """``(d_model, d_model)`` matrix ``M_k`` with ``PE[pos + k] = PE[pos] @ M_k`` for every ``pos``.

    Block diagonal: for the pair ``(sin(w p), cos(w p))`` the angle-addition
    formulas give ``sin(w (p + k)) = sin(w p) cos(w k) + cos(w p) sin(w k)`` and
    ``cos(w (p + k)) = cos(w p) cos(w k) - sin(w p) sin(w k)``, a rotation by
    ``w k`` that does not depend on ``p``.

    Explained in chapter 7, *Positional encoding*, section "Relative positions are a linear map away".
    """
    omega = frequencies(d_model, base)
    cos, sin = np.cos(omega * k), np.sin(omega * k)
    # One 2x2 rotation block per frequency, (d/2, 2, 2), laid out on the diagonal.
    blocks = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)
    matrix = np.zeros((d_model // 2, 2, d_model // 2, 2))
    index = np.arange(d_model // 2)
    matrix[index, :, index, :] = blocks
    return matrix.reshape(d_model, d_model)


def binary_encoding(length: int, bits: int) -> np.ndarray:
    """``(length, bits)`` the positions ``0 .. length - 1`` written in binary, lowest bit first.

    The discrete ancestor of the sinusoids: bit ``i`` flips every ``2^i``
    positions, so each column oscillates at half the frequency of the one before.

    Used in chapter 7, *Positional encoding*, section "From binary counters to sinusoids".
    """
    if bits < 1 or length > 2 ** bits:
        raise ValueError(f"{bits} bits cannot count {length} positions")
    return ((np.arange(length)[:, None] >> np.arange(bits)[None, :]) & 1).astype(np.float32)
