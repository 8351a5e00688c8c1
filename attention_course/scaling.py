"""Why scaled dot-product attention divides by ``sqrt(d_k)``: the measurements of chapter 4.

For a query and a key whose ``d_k`` components are independent with mean 0 and
variance 1, the dot product ``q . k`` is a sum of ``d_k`` such products, so its
variance is ``d_k``.  Scores that spread that widely push the softmax into
saturation: one weight near 1, the rest near 0, and a Jacobian near zero, so
almost no gradient reaches the scores.  Dividing by ``sqrt(d_k)`` brings the
variance back to 1 whatever the width.  The functions here measure all three.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from .checks import as_float_array, checked, require_ndim
from .softmax import softmax


def check_softmax_jacobian(weights):
    """The softmax outputs of :func:`softmax_jacobian` (chapter 4): floats, ``(..., n)``."""
    weights = as_float_array(weights, "weights")
    require_ndim(weights, "weights", 1, "(..., n)")
    return dict(weights=weights)


@checked(check_softmax_jacobian)
def softmax_jacobian(weights) -> np.ndarray:
    """The softmax's Jacobian at its output ``p``: ``d p_i / d s_j = p_i (delta_ij - p_j)``.

    Args:
        weights: ``(..., n)`` softmax outputs (each slice sums to 1).

    Returns:
        ``(..., n, n)``: ``diag(p) - p p^T`` for every slice.  Symmetric, and
        zero when ``p`` is one-hot: a saturated softmax passes no gradient.

    Explained in chapter 4, *Dot-product and scaled dot-product attention*, section "Why divide by √d_k?".
    """
    p = weights                                                     # (..., n)
    diagonal = p[..., :, None] * np.eye(p.shape[-1], dtype=p.dtype)  # (..., n, n)
    return diagonal - p[..., :, None] * p[..., None, :]             # diag(p) - p p^T


def entropy(weights, axis: int = -1) -> np.ndarray:
    """Shannon entropy in nats, ``-sum p log p`` (with ``0 log 0 = 0``), along ``axis``.

    ``log n`` for the uniform distribution over ``n`` entries, 0 for a one-hot one.

    Used in chapter 2, *Attention as a soft lookup*, section "The softmax, done safely".
    """
    p = as_float_array(weights, "weights")
    if not -p.ndim <= axis < max(p.ndim, 1):
        raise ValueError(f"axis {axis} is out of range for weights of shape {p.shape}")
    if (p < 0).any():
        raise ValueError("weights must be non-negative probabilities")
    terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=axis)


@dataclass
class SaturationMeasurement:
    """One row per width ``d_k``; every array has shape ``(len(d_k),)``.

    Attributes:
        d_k: the widths measured.
        score_variance: the variance of the unscaled scores ``q . k``.
        scaled_score_variance: the variance of ``q . k / sqrt(d_k)``.
        max_weight: the mean, over queries, of the largest attention weight
            (``unscaled`` / ``scaled``).
        entropy: the mean entropy of the attention distributions, in nats.
        jacobian_norm: the mean Frobenius norm of the softmax Jacobian.

    Used by the code of chapter 4, *Dot-product and scaled dot-product attention*.
    """

    d_k: np.ndarray
    score_variance: np.ndarray
    scaled_score_variance: np.ndarray
    max_weight_unscaled: np.ndarray
    max_weight_scaled: np.ndarray
    entropy_unscaled: np.ndarray
    entropy_scaled: np.ndarray
    jacobian_norm_unscaled: np.ndarray
    jacobian_norm_scaled: np.ndarray


def check_measure_saturation(d_ks, n_keys, n_queries):
    """The settings of :func:`measure_saturation` (chapter 4): positive widths, two or more draws."""
    d_ks = np.asarray(d_ks)
    if d_ks.ndim != 1 or d_ks.size == 0 or not np.issubdtype(d_ks.dtype, np.integer) \
            or (d_ks < 1).any():
        raise ValueError(
            f"d_ks must be a non-empty 1-D sequence of positive integers; got {d_ks!r}")
    if n_keys < 2 or n_queries < 2:
        raise ValueError(f"need n_keys >= 2 and n_queries >= 2; got {n_keys} and {n_queries}")
    return dict(d_ks=d_ks)


@checked(check_measure_saturation)
def measure_saturation(d_ks, n_keys: int = 16, n_queries: int = 2000,
                       seed: int = 0) -> SaturationMeasurement:
    """Draw random queries and keys and measure how the softmax behaves, per width.

    For every ``d_k``: ``n_queries`` independent queries, each with its own
    ``n_keys`` keys, all components standard normal.  The scores are used as
    they are (``unscaled``) and divided by ``sqrt(d_k)`` (``scaled``).

    Args:
        d_ks: the widths to measure, e.g. ``[1, 2, 4, ..., 1024]``.
        n_keys: keys per query (the ``T_k`` the softmax normalises over).
        n_queries: independent queries per width.
        seed: seeds the generator.

    Returns:
        A :class:`SaturationMeasurement`.

    Explained in chapter 4, *Dot-product and scaled dot-product attention*, section "Why divide by √d_k?".
    """
    rng = np.random.default_rng(seed)
    rows = defaultdict(list)  # one list per field of SaturationMeasurement
    for d_k in d_ks:  # one experiment per width (the widths differ in shape)
        query = rng.standard_normal((n_queries, 1, d_k))
        key = rng.standard_normal((n_queries, n_keys, d_k))
        scores = (query @ np.swapaxes(key, -1, -2))[:, 0, :]     # (n_queries, n_keys)
        for name, s in (("unscaled", scores), ("scaled", scores / np.sqrt(d_k))):
            p = softmax(s, axis=-1)
            norms = np.linalg.norm(softmax_jacobian(p), axis=(-2, -1))  # (n_queries,)
            rows[f"max_weight_{name}"].append(p.max(axis=-1).mean())
            rows[f"entropy_{name}"].append(entropy(p).mean())
            rows[f"jacobian_norm_{name}"].append(norms.mean())
        rows["score_variance"].append(scores.var())
        rows["scaled_score_variance"].append((scores / np.sqrt(d_k)).var())
    return SaturationMeasurement(d_k=d_ks, **{k: np.array(v) for k, v in rows.items()})
