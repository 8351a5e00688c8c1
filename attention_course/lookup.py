"""Attention as a lookup: similarity, hard and soft, content and location, global and local.

Chapter 2 builds attention up from a Python ``dict``: an exact-key lookup
becomes a *hard* lookup of the most similar key, which becomes a *soft*
lookup, a softmax-weighted average of all the values.  This module holds the
variants the chapter compares.  Shapes follow :mod:`attention_course.attention`:

* ``query`` ``(..., T_q, d)``, ``key`` ``(..., T_k, d)``, ``value`` ``(..., T_k, d_v)``;
* an optional boolean ``mask`` broadcastable to ``(..., T_q, T_k)``, True where a
  query may attend to a key;
* every attention function returns ``(output (..., T_q, d_v), weights (..., T_q, T_k))``.
  A query whose keys are all masked gets all-zero weights and a zero output.
"""

from __future__ import annotations

import numpy as np

from .checks import as_float_array, as_mask, checked, require_ndim
from .attention import (attend, check_dot_product_attention, check_qkv, scaled_dot_product_attention,
                        scores_shape)
from .masks import combine_masks, local_window_mask
from .softmax import softmax

SIMILARITIES = ("dot", "cosine")


def _check_query_key(query, key) -> tuple[np.ndarray, np.ndarray]:
    query = as_float_array(query, "query")
    key = as_float_array(key, "key")
    require_ndim(query, "query", 2, "(..., T_q, d)")
    require_ndim(key, "key", 2, "(..., T_k, d)")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            "query and key must have the same last dimension d to be compared; "
            f"got query {query.shape} and key {key.shape}")
    return query, key


def check_query_key(query, key):
    """``query (..., T_q, d)`` and ``key (..., T_k, d)`` as float arrays of one width (chapter 2)."""
    query, key = _check_query_key(query, key)
    return dict(query=query, key=key)


@checked(check_query_key)
def cosine_similarity(query, key, epsilon: float = 1e-7) -> np.ndarray:
    """Cosine of the angle between every query and every key: ``q.k / (|q| |k|)``.

    Args:
        query: ``(..., T_q, d)``.
        key: ``(..., T_k, d)``; leading dimensions broadcast with ``query``'s.
        epsilon: a floor for the norms, so that a zero vector has similarity 0
            with everything instead of NaN.  ``1e-7`` is Keras' ``epsilon()``,
            which ``keras.layers.Dot(normalize=True)`` uses the same way.

    Returns:
        ``(..., T_q, T_k)``, every entry in ``[-1, 1]``.

    Explained in chapter 2, *Attention as a soft lookup*, section "Measuring similarity: dot product or cosine?".
    """
    query_norm = np.linalg.norm(query, axis=-1, keepdims=True)         # (..., T_q, 1)
    key_norm = np.linalg.norm(key, axis=-1, keepdims=True)             # (..., T_k, 1)
    unit_query = query / np.maximum(query_norm, epsilon)
    unit_key = key / np.maximum(key_norm, epsilon)
    return unit_query @ np.swapaxes(unit_key, -1, -2)                  # (..., T_q, T_k)


def similarity_scores(query, key, similarity: str = "dot") -> np.ndarray:
    """``(..., T_q, T_k)`` scores: the dot product ``q.k`` or the cosine similarity.

    Used by the code of chapter 2, *Attention as a soft lookup*.
    """
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {SIMILARITIES}; got {similarity!r}")
    if similarity == "cosine":
        return cosine_similarity(query, key)
    query, key = _check_query_key(query, key)
    return query @ np.swapaxes(key, -1, -2)


def cosine_attention(query, key, value, mask=None, temperature: float = 1.0):
    """Soft lookup with cosine scores: ``softmax(cos(q, k) / temperature) V``.

    Cosine scores lie in ``[-1, 1]``, so without a small ``temperature`` the
    weights can never be sharper than ``e^2 : 1`` between the best and the
    worst key.  Shapes as in the module docstring.

    Used by the code of chapter 2, *Attention as a soft lookup*.
    """
    query, key, value, scores_shape = check_qkv(query, key, value, same_width=True)
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    if mask is not None:
        as_mask(mask, "mask", scores_shape, "the scores' shape (..., T_q, T_k)")
    scores = cosine_similarity(query, key) / temperature
    return attend(scores.astype(np.result_type(query, key), copy=False), value, mask)


def _one_hot(index: np.ndarray, T_k: int, dtype) -> np.ndarray:
    return (index[..., None] == np.arange(T_k)).astype(dtype)


def hard_attention(query, key, value, mask=None, similarity: str = "dot"):
    """Hard lookup: every query returns the value of its single most similar key.

    The weights are one-hot: 1 at the arg-max of the scores (the first one on a
    tie), 0 elsewhere.  The output is a piecewise-constant function of the
    query and the keys, so its gradient is zero almost everywhere: hard
    attention cannot be trained by backpropagation alone.

    Args:
        query, key, value, mask: as in the module docstring.
        similarity: ``"dot"`` or ``"cosine"``.

    Returns:
        ``output (..., T_q, d_v)`` and one-hot ``weights (..., T_q, T_k)``
        (all zero for a query whose keys are all masked).

    Used in chapter 2, *Attention as a soft lookup*, section "From a dictionary to attention".
    """
    query, key, value, scores_shape = check_qkv(query, key, value, same_width=True)
    scores = np.broadcast_to(similarity_scores(query, key, similarity), scores_shape)
    available = np.ones(scores_shape, bool)
    if mask is not None:
        available = np.broadcast_to(
            as_mask(mask, "mask", scores_shape, "the scores' shape (..., T_q, T_k)"), scores_shape)
    best = np.where(available, scores, -np.inf).argmax(axis=-1)
    weights = _one_hot(best, scores_shape[-1], np.result_type(query, key, value))
    weights *= available.any(axis=-1, keepdims=True)  # nothing to look up: zeros
    return weights @ value, weights


def check_sample_attention(query, key, value, rng, mask):
    """The arguments of :func:`sample_attention` (chapter 2): a generator, fitting shapes."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    query, key, value, scores_shape = check_qkv(query, key, value, same_width=True)
    if mask is not None:
        mask = as_mask(mask, "mask", scores_shape, "the scores' shape (..., T_q, T_k)")
    return dict(query=query, key=key, value=value, mask=mask)


@checked(check_sample_attention)
def sample_attention(query, key, value, rng: np.random.Generator, mask=None,
                     scale: float = 1.0):
    """Stochastic hard attention (Xu et al., 2015): *sample* one key per query.

    The key is drawn from the soft attention distribution
    ``softmax(scale * q.k)``, and its value is returned unchanged.  On average
    over many draws the output equals the soft-attention output (the
    expectation of ``value[j]`` under the weights), but a single draw is one
    value, not a blend.

    Args:
        query, key, value, mask: as in the module docstring.
        rng: the random generator that draws the keys.
        scale: multiplies the dot-product scores (``1/sqrt(d)`` for scaled scores).

    Returns:
        ``output (..., T_q, d_v)`` and one-hot ``weights (..., T_q, T_k)``
        marking the sampled key (all zero for a fully masked query).

    Explained in chapter 2, *A taxonomy of attention*, section "Soft and hard".
    """
    *batch, T_q, T_k = scores_shape(query, key, value)
    scores = (query * scale) @ np.swapaxes(key, -1, -2)
    scores = np.broadcast_to(scores, (*batch, T_q, T_k))
    probabilities = softmax(scores, axis=-1, mask=mask)
    # Inverse-CDF sampling, all queries at once: the first key whose cumulative
    # probability reaches u (a masked key adds nothing to the CDF: never first).
    cdf = np.cumsum(probabilities, axis=-1)                      # (..., T_q, T_k)
    total = cdf[..., -1:]                                        # 0: all keys masked
    u = rng.random((*batch, T_q, 1)) * total
    chosen = np.minimum((cdf < u).sum(axis=-1), T_k - 1)         # (..., T_q)
    weights = _one_hot(chosen, T_k, np.result_type(query, key, value)) * (total > 0)
    return weights @ value, weights


def check_location_attention(query, value, W_location, mask):
    """The arguments of :func:`location_attention` (chapter 2), checked and converted."""
    query = as_float_array(query, "query")
    value = as_float_array(value, "value")
    W_location = as_float_array(W_location, "W_location")
    require_ndim(query, "query", 2, "(..., T_q, d_q)")
    require_ndim(value, "value", 2, "(..., T_k, d_v)")
    T_k = value.shape[-2]
    if W_location.ndim != 2 or W_location.shape[0] != query.shape[-1] or W_location.shape[1] < T_k:
        raise ValueError(
            f"W_location must have shape (d_q={query.shape[-1]}, max_length >= T_k={T_k}); "
            f"got {W_location.shape}")
    try:
        batch = np.broadcast_shapes(query.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError(f"the batch dimensions of query {query.shape} and value "
                         f"{value.shape} do not broadcast") from None
    if mask is not None:
        mask = as_mask(mask, "mask", (*batch, query.shape[-2], T_k),
                       "the scores' shape (..., T_q, T_k)")
    return dict(query=query, value=value, W_location=W_location, mask=mask)


@checked(check_location_attention)
def location_attention(query, value, W_location, mask=None):
    """Location-based attention (Luong et al., 2015, eq. 9): ``a_t = softmax(W_a h_t)``.

    The weights are computed from the query alone: the keys' *contents* play no
    part, only their positions.  ``W_location`` holds one column per source
    position, up to a maximum length; the first ``T_k`` are used.

    Args:
        query: ``(..., T_q, d_q)``, e.g. the decoder states ``h_t``.
        value: ``(..., T_k, d_v)``, e.g. the encoder states.
        W_location: ``(d_q, max_length)`` with ``max_length >= T_k``.
        mask: optional, broadcastable to ``(..., T_q, T_k)``.

    Returns:
        ``output (..., T_q, d_v)`` and ``weights (..., T_q, T_k)``.

    Explained in chapter 2, *A taxonomy of attention*, section "Content-based and location-based".
    """
    T_k = value.shape[-2]
    scores = query @ W_location[:, :T_k]                               # (..., T_q, T_k)
    batch = np.broadcast_shapes(scores.shape[:-2], value.shape[:-2])
    return attend(np.broadcast_to(scores, (*batch, *scores.shape[-2:])), value, mask)


def check_local_attention(query, key, value, window, mask):
    """The arguments of :func:`local_attention` (chapter 2): a window ``D >= 0``, fitting shapes."""
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
        raise ValueError(f"window must be an integer >= 0, got {window!r}")
    return {**check_dot_product_attention(query, key, value, mask), "window": int(window)}


@checked(check_local_attention)
def local_attention(query, key, value, window: int, mask=None):
    """Local attention ("local-m"): query ``i`` sees the keys ``j`` with ``|i - j| <= window``.

    Scaled dot-product attention (Luong et al., 2015) restricted to a window of
    ``2 * window + 1`` keys centred on the query's own position (monotonic
    alignment, ``p_t = t``).  Keys outside the window get weight exactly 0; with
    ``window >= max(T_q, T_k)`` this is global attention.

    Args:
        query, key, value: as in the module docstring.
        window: the half-width ``D >= 0`` of the window.
        mask: optional further mask (e.g. padding), combined with the window by AND.

    Returns:
        ``output (..., T_q, d_v)`` and ``weights (..., T_q, T_k)``.

    Explained in chapter 2, *A taxonomy of attention*, section "Global and local".
    """
    T_q, T_k = query.shape[-2], key.shape[-2]
    window_mask = local_window_mask(T_q, T_k, window=window)           # (T_q, T_k)
    mask = combine_masks(window_mask, mask)                            # (..., T_q, T_k)
    return scaled_dot_product_attention(query, key, value, mask=mask)
