"""Self-attention: a sequence attends to itself through learned projections."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import as_float_array, checked, require_ndim
from .attention import scaled_dot_product_attention


@dataclass
class SelfAttentionWeights:
    """The projections of single-head self-attention.

    Attributes:
        W_query: ``(d_model, d_k)``
        W_key: ``(d_model, d_k)``
        W_value: ``(d_model, d_v)``
        W_output: optional ``(d_v, d_out)``, applied to the attention's output.
            The textbook formula has none; ``keras.layers.MultiHeadAttention``
            always ends with one (see
            :func:`attention_course.weights.from_keras.self_attention`).

    Used in chapter 5, *Self-attention*, section "Queries, keys and values from one sequence".
    """

    W_query: np.ndarray
    W_key: np.ndarray
    W_value: np.ndarray
    W_output: np.ndarray | None = None

    def __post_init__(self):
        for name in ("W_query", "W_key", "W_value", "W_output"):
            if getattr(self, name) is None:
                continue
            w = as_float_array(getattr(self, name), name)
            if w.ndim != 2:
                raise ValueError(f"{name} must have shape (d_in, d_out); got {w.shape}")
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
        if self.W_output is not None and self.W_output.shape[0] != self.W_value.shape[1]:
            raise ValueError(
                f"W_output must read the d_v={self.W_value.shape[1]} features W_value makes; "
                f"got {self.W_output.shape}")

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


def check_self_attention(x, weights):
    """The input of :func:`self_attention` (chapter 5): floats ``(..., T, d_model)`` that fit the weights."""
    x = as_float_array(x, "x")
    require_ndim(x, "x", 2, "(..., T, d_model)")
    if x.shape[-1] != weights.W_query.shape[0]:
        raise ValueError(
            f"x has d_model={x.shape[-1]} features but the projections expect "
            f"{weights.W_query.shape[0]}")
    return dict(x=x)


@checked(check_self_attention)
def self_attention(x, weights: SelfAttentionWeights, mask=None):
    """Single-head self-attention: ``softmax((x W_q)(x W_k)^T / sqrt(d_k)) (x W_v)``.

    Args:
        x: ``(..., T, d_model)`` a sequence of token vectors.
        weights: the projections.
        mask: optional, broadcastable to ``(..., T, T)``; True = may attend.

    Returns:
        ``output (..., T, d_v)`` (``(..., T, d_out)`` when ``weights.W_output``
        is set: the output is then multiplied by it) and ``weights (..., T, T)``:
        row ``i`` says how much token ``i`` draws on every token of the same
        sequence.

    Explained in chapter 5, *Self-attention*, section "Queries, keys and values from one sequence".
    """
    query = x @ weights.W_query                                        # (..., T, d_k)
    key = x @ weights.W_key                                            # (..., T, d_k)
    value = x @ weights.W_value                                        # (..., T, d_v)
    output, attention = scaled_dot_product_attention(query, key, value, mask=mask)
    if weights.W_output is not None:
        output = output @ weights.W_output                             # (..., T, d_out)
    return output, attention
