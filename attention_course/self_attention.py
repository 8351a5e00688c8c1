"""Self-attention: a sequence attends to itself through learned projections."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._checks import as_float_array, require_ndim
from .attention import scaled_dot_product_attention


@dataclass
class SelfAttentionWeights:
    """The three projections of single-head self-attention.

    Attributes:
        W_query: ``(d_model, d_k)``
        W_key: ``(d_model, d_k)``
        W_value: ``(d_model, d_v)``
    """

    W_query: np.ndarray
    W_key: np.ndarray
    W_value: np.ndarray

    def __post_init__(self):
        for name in ("W_query", "W_key", "W_value"):
            w = as_float_array(getattr(self, name), name)
            if w.ndim != 2:
                raise ValueError(f"{name} must have shape (d_model, d); got {w.shape}")
            setattr(self, name, w)
        d_model = self.W_query.shape[0]
        if self.W_key.shape[0] != d_model or self.W_value.shape[0] != d_model:
            raise ValueError(
                "W_query, W_key and W_value must all read d_model inputs; got shapes "
                f"{self.W_query.shape}, {self.W_key.shape}, {self.W_value.shape}")
        if self.W_query.shape[1] != self.W_key.shape[1]:
            raise ValueError(
                f"W_query and W_key must project to the same d_k; got {self.W_query.shape} "
                f"and {self.W_key.shape}")

    @classmethod
    def random(cls, d_model: int, d_k: int, d_v: int | None = None, seed: int = 0,
               dtype=np.float32) -> "SelfAttentionWeights":
        """Glorot-uniform projections, as Keras initialises ``Dense`` kernels."""
        rng = np.random.default_rng(seed)
        d_v = d_k if d_v is None else d_v

        def glorot(n_in, n_out):
            limit = np.sqrt(6.0 / (n_in + n_out))
            return rng.uniform(-limit, limit, size=(n_in, n_out)).astype(dtype)

        return cls(glorot(d_model, d_k), glorot(d_model, d_k), glorot(d_model, d_v))


def self_attention(x, weights: SelfAttentionWeights, mask=None):
    """Single-head self-attention: ``softmax((x W_q)(x W_k)^T / sqrt(d_k)) (x W_v)``.

    Args:
        x: ``(..., T, d_model)`` a sequence of token vectors.
        weights: the three projections.
        mask: optional, broadcastable to ``(..., T, T)``; True = may attend.

    Returns:
        ``output (..., T, d_v)`` and ``weights (..., T, T)``: row ``i`` says how
        much token ``i`` draws on every token of the same sequence.
    """
    x = as_float_array(x, "x")
    require_ndim(x, "x", 2, "(..., T, d_model)")
    if x.shape[-1] != weights.W_query.shape[0]:
        raise ValueError(
            f"x has d_model={x.shape[-1]} features but the projections expect "
            f"{weights.W_query.shape[0]}")
    query = x @ weights.W_query
    key = x @ weights.W_key
    value = x @ weights.W_value
    return scaled_dot_product_attention(query, key, value, mask=mask)
