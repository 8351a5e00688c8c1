"""Luong et al. (2015)'s three content-based scores: dot, general and concat.

For a decoder state ``h_t`` (the query) and an encoder state ``h_s`` (the key),
Luong, Pham and Manning compare

* ``dot``:     ``h_t . h_s``
* ``general``: ``h_t^T W_a h_s``                     with ``W_a`` ``(d_q, d_k)``
* ``concat``:  ``v_a^T tanh(W_a [h_t; h_s])``        with ``W_a`` ``((d_q + d_k), d_a)``, ``v_a`` ``(d_a,)``

(the weight matrices are written here as NumPy multiplies them, inputs on the
left).  ``concat`` is Bahdanau et al.'s additive score: splitting ``W_a`` into
its query rows and key rows gives ``v_a . tanh(h_t W_q + h_s W_k)``.

Shapes: ``query`` ``(..., T_q, d_q)``, ``key`` ``(..., T_k, d_k)``,
``value`` ``(..., T_k, d_v)``; scores ``(..., T_q, T_k)``.
"""

from __future__ import annotations

import numpy as np

from .checks import as_float_array, as_mask, checked
from .attention import check_qkv, attend

SCORES = ("dot", "general", "concat")


def check_luong_scores(query, key, score, W_a, v_a):
    """The arguments of :func:`luong_scores` (chapter 4): a known score and the weights it needs."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}; got {score!r}")
    query, key, _, _ = check_qkv(query, key, key, same_width=score == "dot")
    d_q, d_k = query.shape[-1], key.shape[-1]
    if score == "dot":
        if W_a is not None or v_a is not None:
            raise ValueError("the 'dot' score has no weights; pass neither W_a nor v_a")
        return dict(query=query, key=key)
    W_a = None if W_a is None else as_float_array(W_a, "W_a")
    if score == "general":
        if W_a is None or W_a.shape != (d_q, d_k):
            raise ValueError(f"the 'general' score needs W_a of shape (d_q, d_k) = ({d_q}, {d_k}); "
                             f"got {None if W_a is None else W_a.shape}")
        if v_a is not None:
            raise ValueError("the 'general' score has no v_a")
        return dict(query=query, key=key, W_a=W_a)
    if W_a is None or W_a.ndim != 2 or W_a.shape[0] != d_q + d_k:
        raise ValueError(f"the 'concat' score needs W_a of shape (d_q + d_k, d_a) = ({d_q + d_k}, d_a); "
                         f"got {None if W_a is None else W_a.shape}")
    d_a = W_a.shape[1]
    v_a = None if v_a is None else as_float_array(v_a, "v_a")
    if v_a is None or v_a.shape != (d_a,):
        raise ValueError(f"the 'concat' score needs v_a of shape (d_a,) = ({d_a},); "
                         f"got {None if v_a is None else v_a.shape}")
    return dict(query=query, key=key, W_a=W_a, v_a=v_a)


@checked(check_luong_scores)
def luong_scores(query, key, score: str = "dot", W_a=None, v_a=None) -> np.ndarray:
    """The unnormalised scores ``(..., T_q, T_k)`` of every query against every key.

    Args:
        query: ``(..., T_q, d_q)``.
        key: ``(..., T_k, d_k)``.
        score: ``"dot"`` (needs ``d_q == d_k``; no weights), ``"general"``
            (``W_a`` of shape ``(d_q, d_k)``) or ``"concat"`` (``W_a`` of shape
            ``(d_q + d_k, d_a)`` and ``v_a`` of shape ``(d_a,)``).
        W_a, v_a: the score's weights, as above.

    Explained in chapter 4, *Dot-product and scaled dot-product attention*, section "Luong's three scores".
    """
    if score == "dot":
        return query @ np.swapaxes(key, -1, -2)
    if score == "general":  # project the keys once, (..., T_k, d_q), then dot products
        return query @ np.swapaxes(key @ W_a.T, -1, -2)
    # concat: W_a [h_t; h_s] = h_t W_query + h_s W_key, each side projected once, then
    # broadcast (..., T_q, 1, d_a) + (..., 1, T_k, d_a) so every query meets every key.
    d_q = query.shape[-1]
    projected_query = query @ W_a[:d_q]
    projected_key = key @ W_a[d_q:]
    hidden = np.tanh(projected_query[..., :, None, :] + projected_key[..., None, :, :])
    return hidden @ v_a                                        # (..., T_q, T_k)


def luong_attention(query, key, value, score: str = "dot", mask=None, W_a=None, v_a=None):
    """Global attention with one of Luong's scores: ``softmax(score(h_t, h_s)) V``.

    Args:
        query, key, score, W_a, v_a: as in :func:`luong_scores`.
        value: ``(..., T_k, d_v)``.
        mask: optional, broadcastable to ``(..., T_q, T_k)``; True = may attend.

    Returns:
        ``output (..., T_q, d_v)`` and ``weights (..., T_q, T_k)``.

    Used in chapter 4, *Dot-product and scaled dot-product attention*, section "Luong's three scores".
    """
    query, key, value, scores_shape = check_qkv(query, key, value, same_width=score == "dot")
    if mask is not None:
        as_mask(mask, "mask", scores_shape, "the scores' shape (..., T_q, T_k)")
    scores = luong_scores(query, key, score=score, W_a=W_a, v_a=v_a)
    return attend(scores.astype(np.result_type(query, key), copy=False), value, mask)
