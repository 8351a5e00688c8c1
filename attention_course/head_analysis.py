"""Measuring what attention heads do.

Everything here reads attention weights of shape ``(..., T_q, T_k)`` -- for a
multi-head layer ``(B, N, T_q, T_k)``, as :func:`attention_course.multi_head.multi_head_attention`
returns them -- and gives one number per query (or per pair of heads), to be
averaged as the question asks:

* :func:`attention_entropy` -- how spread out a query's attention is
  (0 nats: all on one key; ``log T_k``: uniform);
* :func:`mean_offset` -- where a query looks, relative to itself
  (-1: on average one position back);
* :func:`weight_at_offset` / :func:`weight_on_keys` -- how much weight
  goes to one relative position, or to a set of keys (the marked ones);
* :func:`head_similarity` -- how alike two heads' attention maps are;
* :func:`head_parameters` -- each head's own weights, one row per head, to
  compare the heads' weights themselves;
* :func:`ablate_heads` -- a copy of a layer's weights with some heads switched
  off, to measure what the model loses without them (Michel et al., 2019;
  Voita et al., 2019).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from .checks import as_float_array, checked, require_ndim
from .multi_head import MultiHeadAttentionWeights
from .scaling import entropy


def _weights(weights, min_ndim: int = 2, layout: str = "(..., T_q, T_k)") -> np.ndarray:
    weights = as_float_array(weights, "weights")
    require_ndim(weights, "weights", min_ndim, layout)
    return weights


def attention_entropy(weights) -> np.ndarray:
    """``(..., T_q, T_k)`` -> ``(..., T_q)``: the entropy ``-sum_j a_ij log a_ij`` of each row, in nats.

    Zero weights contribute 0 (the limit of ``a log a``), so a fully masked
    (all-zero) row has entropy 0.

    Used in chapter 6, *Do different heads learn different things?*,
    section "What the four heads do".
    """
    return entropy(_weights(weights), axis=-1)


def mean_offset(weights) -> np.ndarray:
    """``(..., T_q, T_k)`` -> ``(..., T_q)``: ``sum_j a_ij (j - i)``, where query ``i`` looks on average.

    Negative: to earlier positions (-1 = the previous token), positive: to
    later ones.  Self-attention only: query ``i`` and key ``i`` are the same
    position.

    Used in chapter 6, *Do different heads learn different things?*,
    section "What the four heads do".
    """
    weights = _weights(weights)
    T_q, T_k = weights.shape[-2:]
    offsets = np.arange(T_k)[None, :] - np.arange(T_q)[:, None]  # (T_q, T_k): j - i
    return (weights * offsets).sum(axis=-1)


def weight_at_offset(weights, offset: int) -> np.ndarray:
    """``(..., T_q, T_k)`` -> ``(..., T_q)``: the weight query ``i`` puts on key ``i + offset``.

    Zero for queries whose key ``i + offset`` lies outside the sequence.

    Used in chapter 6, *Do different heads learn different things?*,
    section "What the four heads do".
    """
    weights = _weights(weights)
    T_q, T_k = weights.shape[-2:]
    i = np.arange(T_q)
    j = i + offset
    inside = (j >= 0) & (j < T_k)
    picked = weights[..., i, np.clip(j, 0, T_k - 1)]
    return np.where(inside, picked, 0.0)


def weight_on_keys(weights, keys) -> np.ndarray:
    """``(B, ..., T_q, T_k)``, ``keys (B, T_k)`` boolean -> ``(B, ..., T_q)``: total weight on the keys.

    For a question like "how much does every query look at the marked
    tokens?", when they sit at different positions, and are more or fewer,
    in every sequence of the batch.

    Used in chapter 6, *Do different heads learn different things?*,
    section "What the four heads do".
    """
    weights = _weights(weights, 3, "(B, ..., T_q, T_k)")
    keys = np.asarray(keys)
    if keys.dtype != bool or keys.shape != (weights.shape[0], weights.shape[-1]):
        raise ValueError(f"keys must be a boolean mask of shape (B, T_k) = "
                         f"({weights.shape[0]}, {weights.shape[-1]}); got {keys.dtype} {keys.shape}")
    mask = keys.reshape(keys.shape[0], *[1] * (weights.ndim - 2), keys.shape[1])  # (B, 1, .., T_k)
    return (weights * mask).sum(axis=-1)


def head_similarity(weights) -> np.ndarray:
    """``(B, N, T_q, T_k)`` -> ``(N, N)``: mean cosine similarity of the heads' attention maps.

    Each head's map for one sequence is flattened to a vector of ``T_q * T_k``
    weights; entry ``(g, h)`` is the cosine of the angle between head ``g``'s
    and head ``h``'s vectors, averaged over the batch.  1: the two heads attend
    identically (up to scale); near 0: they look at different places.

    Used in chapter 6, *Do different heads learn different things?*,
    section "What the four heads do".
    """
    weights = _weights(weights, 4, "(B, N, T_q, T_k)")
    if weights.ndim != 4:
        raise ValueError(f"weights must have shape (B, N, T_q, T_k); got {weights.shape}")
    flat = weights.reshape(*weights.shape[:2], -1)                       # (B, N, T_q*T_k)
    norms = np.linalg.norm(flat, axis=-1, keepdims=True)
    unit = np.divide(flat, norms, out=np.zeros_like(flat), where=norms > 0)
    return (unit @ unit.swapaxes(1, 2)).mean(axis=0)                     # (N, N)


def head_parameters(weights: MultiHeadAttentionWeights) -> np.ndarray:
    """``(N, parameters per head)``: every weight that belongs to one head, flattened, a row per head.

    A head owns its slices of the query, key and value kernels
    ``(d_model, N, width)`` and biases ``(N, width)`` and of the output kernel
    ``(N, width, d_out)``; the output bias is shared.  Two heads are identical
    when their rows are.

    Used in chapter 6, *Why do the heads differ?*, section "Heads that start identical".
    """
    N = weights.num_heads
    kernels = [np.moveaxis(k, 1, 0).reshape(N, -1)                        # (N, d_model * width)
               for k in (weights.query_kernel, weights.key_kernel, weights.value_kernel)]
    biases = [b.reshape(N, -1) for b in (weights.query_bias, weights.key_bias, weights.value_bias)
              if b is not None]
    return np.concatenate(kernels + biases + [weights.output_kernel.reshape(N, -1)], axis=1)


def check_ablate_heads(weights, heads):
    """The heads of :func:`ablate_heads` (chapter 6): distinct, sorted, and heads of the layer."""
    heads = sorted({int(h) for h in heads})
    if any(not 0 <= h < weights.num_heads for h in heads):
        raise ValueError(f"heads must lie in [0, {weights.num_heads}); got {heads}")
    return dict(heads=heads)


@checked(check_ablate_heads)
def ablate_heads(weights: MultiHeadAttentionWeights,
                 heads: Iterable[int]) -> MultiHeadAttentionWeights:
    """A copy of ``weights`` in which the given heads add nothing to the layer's output.

    The layer's output is ``sum_h head_h @ output_kernel[h] + output_bias``, so
    zeroing ``output_kernel[h]`` removes head ``h`` exactly and leaves every
    other head (and the bias) untouched.  The heads' attention weights are
    still computed; only their contribution is dropped.

    Explained in chapter 6, *Do different heads learn different things?*,
    section "What the four heads do".
    """
    output_kernel = weights.output_kernel.copy()             # (N, value_dim, d_out)
    output_kernel[heads] = 0.0
    return dataclasses.replace(weights, output_kernel=output_kernel)
