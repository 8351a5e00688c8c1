"""Argument checks shared by the reference implementations.

They turn a wrong shape into a ``ValueError`` that names the argument, the
expected shape and the shape received, instead of a broadcasting error deep
inside NumPy (or, worse, a silently wrong result).
"""

from __future__ import annotations

import numpy as np


def as_float_array(x, name: str) -> np.ndarray:
    """``x`` as a floating-point array; integers become float64, floats keep their dtype."""
    try:
        array = np.asarray(x)
    except Exception as error:  # pragma: no cover - numpy's own message is kept
        raise ValueError(f"{name} must be array-like: {error}") from error
    if array.dtype == object:
        raise ValueError(f"{name} must be a numeric array, got dtype object")
    if not np.issubdtype(array.dtype, np.floating):
        array = array.astype(np.float64)
    return array


def require_ndim(x: np.ndarray, name: str, min_ndim: int, layout: str) -> None:
    if x.ndim < min_ndim:
        raise ValueError(
            f"{name} must have shape {layout} (at least {min_ndim} dimensions); "
            f"got shape {x.shape}")


def as_mask(mask, name: str, target_shape: tuple[int, ...], layout: str) -> np.ndarray:
    """A boolean mask (True = keep) that broadcasts to ``target_shape``."""
    mask = np.asarray(mask)
    if mask.dtype != bool:
        if not (np.issubdtype(mask.dtype, np.integer) or np.issubdtype(mask.dtype, np.floating)):
            raise ValueError(f"{name} must be boolean (True = attend), got dtype {mask.dtype}")
        mask = mask > 0.5  # Keras' convention for numeric masks
    try:
        broadcast = np.broadcast_shapes(mask.shape, target_shape)
    except ValueError:
        broadcast = None
    if broadcast != tuple(target_shape):
        raise ValueError(
            f"{name} of shape {mask.shape} does not broadcast to {layout} = {tuple(target_shape)}")
    return mask
