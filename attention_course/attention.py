"""Attention as a differentiable dictionary lookup, in NumPy.

Every function here takes

* ``query`` of shape ``(..., T_q, d_q)`` -- what each output position looks for,
* ``key``   of shape ``(..., T_k, d_k)`` -- what each input position offers,
* ``value`` of shape ``(..., T_k, d_v)`` -- what each input position returns,
* an optional boolean ``mask`` broadcastable to ``(..., T_q, T_k)``, True where
  a query may attend to a key,

and returns ``(output, weights)``: the outputs ``(..., T_q, d_v)`` -- for every
query, the average of the values weighted by ``weights`` -- and the attention
weights ``(..., T_q, T_k)`` themselves, each row a probability distribution
over the keys (all zeros for a row whose keys are all masked).
(:func:`windowed_attention` is the exception: it computes only a band of
``2 * window + 1`` scores per query, and returns that band of weights.)

The leading ``...`` are batch dimensions (and, later, heads); they broadcast.
The functions differ only in the *score* that compares a query with a key.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .checks import as_float_array, as_mask, checked, require_ndim
from .softmax import softmax


def check_qkv(query, key, value, same_width: bool):
    """``query (..., T_q, d)``, ``key (..., T_k, d_k)`` and ``value (..., T_k, d_v)`` as float arrays.

    Raises a ``ValueError`` naming the argument when a rank or a length does not
    fit (and the widths of query and key, with ``same_width``).  Used by every
    attention function of chapters 2-6.
    """
    query = as_float_array(query, "query")
    key = as_float_array(key, "key")
    value = as_float_array(value, "value")
    require_ndim(query, "query", 2, "(..., T_q, d)")
    require_ndim(key, "key", 2, "(..., T_k, d)")
    require_ndim(value, "value", 2, "(..., T_k, d_v)")
    if same_width and query.shape[-1] != key.shape[-1]:
        raise ValueError(
            "query and key must have the same last dimension d_k to be compared; "
            f"got query {query.shape} and key {key.shape}")
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(
            "key and value must have the same number of positions T_k; "
            f"got key {key.shape} and value {value.shape}")
    try:
        batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    except ValueError:
        raise ValueError(
            "the batch dimensions of query, key and value do not broadcast: "
            f"{query.shape}, {key.shape}, {value.shape}") from None
    return query, key, value, (*batch, query.shape[-2], key.shape[-2])


def scores_shape(query, key, value) -> tuple[int, ...]:
    """``(..., T_q, T_k)``: the scores' shape, batch dimensions broadcast over all three inputs.

    For inputs that :func:`check_qkv` has accepted.  Used by the code of chapter 2.
    """
    batch = np.broadcast_shapes(query.shape[:-2], key.shape[:-2], value.shape[:-2])
    return (*batch, query.shape[-2], key.shape[-2])


def attend(scores: np.ndarray, value: np.ndarray, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """The step all attention shares: normalise scores over the keys, average the values.

    Args:
        scores: ``(..., T_q, T_k)`` unnormalised compatibility of each query with each key.
        value: ``(..., T_k, d_v)``.
        mask: optional, broadcastable to ``scores``; True = may attend.

    Returns:
        ``output (..., T_q, d_v)`` and ``weights (..., T_q, T_k)``.

    Used by the code of chapter 4, *Dot-product and scaled dot-product attention*.
    """
    if mask is not None:
        mask = as_mask(mask, "mask", scores.shape, "the scores' shape (..., T_q, T_k)")
    weights = softmax(scores, axis=-1, mask=mask)
    return weights @ value, weights


def check_dot_product_attention(query, key, value, mask):
    """The arguments of dot-product attention (chapters 2-4), checked and converted.

    ``query``, ``key`` and ``value`` as float arrays whose shapes fit
    (:func:`check_qkv`, query and key of one width), ``mask`` as booleans that
    broadcast to the scores ``(..., T_q, T_k)``.
    """
    query, key, value, scores_shape = check_qkv(query, key, value, same_width=True)
    if mask is not None:
        mask = as_mask(mask, "mask", scores_shape, "the scores' shape (..., T_q, T_k)")
    return dict(query=query, key=key, value=value, mask=mask)


@checked(check_dot_product_attention)
def dot_product_attention(query, key, value, mask=None, scale: float = 1.0):
    """Dot-product attention (Luong et al., 2015): ``score(q, k) = scale * q . k``.

    With ``scale=1`` this is the "dot" score; ``keras.layers.Attention`` with
    ``use_scale=True`` multiplies by a *learned* scalar, which is ``scale`` here.
    Shapes as in the module docstring; ``d_q == d_k``.

    Explained in chapter 4, *Dot-product and scaled dot-product attention*, section "Scaled dot-product attention".
    """
    # Scaling the queries (..., T_q, d) is cheaper than the scores (..., T_q, T_k).
    scores = (query * scale if scale != 1.0 else query) @ np.swapaxes(key, -1, -2)
    scores = scores.astype(np.result_type(query, key), copy=False)  # float32 stays so
    return attend(scores, value, mask)


def check_scaled_dot_product_attention(query):
    """The query of :func:`scaled_dot_product_attention` (chapter 4): floats, at least one feature.

    The other arguments are checked by :func:`dot_product_attention`, which it calls.
    """
    query = as_float_array(query, "query")
    require_ndim(query, "query", 2, "(..., T_q, d_k)")
    if query.shape[-1] == 0:
        raise ValueError(f"query has d_k = 0 features; got shape {query.shape}")
    return dict(query=query)


@checked(check_scaled_dot_product_attention)
def scaled_dot_product_attention(query, key, value, mask=None):
    """Scaled dot-product attention: ``softmax(Q K^T / sqrt(d_k)) V``.

    The Transformer's attention (Vaswani et al., 2017).  Dividing by
    ``sqrt(d_k)`` keeps the scores' variance near 1 whatever the width, so the
    softmax does not saturate as ``d_k`` grows.  Shapes as in the module docstring.

    Explained in chapter 4, *Dot-product and scaled dot-product attention*, section "Scaled dot-product attention".
    """
    scale = float(1.0 / np.sqrt(query.shape[-1]))                      # 1 / sqrt(d_k)
    return dot_product_attention(query, key, value, mask=mask, scale=scale)


def check_additive_attention(query, key, value, mask, v, W_query, W_key):
    """The arguments of :func:`additive_attention` (chapter 3), checked and converted.

    ``v`` comes back filled in (all ones when None) and in the dtype of the
    hidden layer ``tanh(q W_q + k W_k)``, which it multiplies.
    """
    query, key, value, scores_shape = check_qkv(query, key, value, same_width=False)
    if W_query is not None:
        W_query = as_float_array(W_query, "W_query")
        if W_query.ndim != 2 or W_query.shape[0] != query.shape[-1]:
            raise ValueError(
                f"W_query must have shape (d_q={query.shape[-1]}, d_a); got {W_query.shape}")
    if W_key is not None:
        W_key = as_float_array(W_key, "W_key")
        if W_key.ndim != 2 or W_key.shape[0] != key.shape[-1]:
            raise ValueError(f"W_key must have shape (d_k={key.shape[-1]}, d_a); got {W_key.shape}")
    # The widths and dtypes of the projected query and key.
    query_width, query_dtype = (query.shape[-1], query.dtype) if W_query is None else \
        (W_query.shape[1], np.result_type(query, W_query))
    key_width, key_dtype = (key.shape[-1], key.dtype) if W_key is None else \
        (W_key.shape[1], np.result_type(key, W_key))
    if query_width != key_width:
        raise ValueError(
            "after the projections, query and key must have the same width d_a; "
            f"got {query_width} and {key_width} (pass W_query/W_key to project them)")
    d_a = query_width
    v = np.ones(d_a, dtype=query_dtype) if v is None else as_float_array(v, "v")
    if v.shape != (d_a,):
        raise ValueError(f"v must have shape (d_a,) = ({d_a},); got {v.shape}")
    if mask is not None:
        mask = as_mask(mask, "mask", scores_shape, "the scores' shape (..., T_q, T_k)")
    v = v.astype(np.result_type(query_dtype, key_dtype), copy=False)
    return dict(query=query, key=key, value=value, mask=mask, v=v, W_query=W_query, W_key=W_key)


@checked(check_additive_attention)
def additive_attention(query, key, value, mask=None, *,
                       v=None, W_query=None, W_key=None):
    """Bahdanau's additive attention: ``score(q, k) = v . tanh(q W_q + k W_k)``.

    Bahdanau, Cho and Bengio (2015) score every pair of a query and a key
    with a one-hidden-layer network.

    Args:
        query: ``(..., T_q, d_q)``; in a translation model, the decoder state.
        key: ``(..., T_k, d_k)``; the encoder states (the "annotations").
        value: ``(..., T_k, d_v)``; usually the encoder states again.
        mask: optional, broadcastable to ``(..., T_q, T_k)``.
        v: ``(d_a,)``, the vector that turns the hidden layer into a score;
            ``None`` means all ones.
        W_query: ``(d_q, d_a)`` projection of the query; ``None`` = identity.
        W_key: ``(d_k, d_a)`` projection of the key; ``None`` = identity.

    ``keras.layers.AdditiveAttention`` is this function with *no* projections
    (``W_query = W_key = None``, so ``d_q == d_k``) and ``v`` its learned
    ``scale`` vector (``use_scale=True``) or all ones (``use_scale=False``).

    Returns:
        ``output (..., T_q, d_v)`` and ``weights (..., T_q, T_k)``.

    Explained in chapter 3, *Additive (Bahdanau) attention*, section "The score".
    """
    if W_query is not None:
        query = query @ W_query                             # (..., T_q, d_a)
    if W_key is not None:
        key = key @ W_key                                   # (..., T_k, d_a)
    # (..., T_q, 1, d_a) + (..., 1, T_k, d_a): every query meets every key.
    hidden = np.tanh(query[..., :, None, :] + key[..., None, :, :])
    scores = hidden @ v                                     # (..., T_q, T_k)
    return attend(scores, value, mask)


def check_windowed_attention(query, key, value, window):
    """The arguments of :func:`windowed_attention` (chapter 2): a window ``D >= 0``, fitting shapes."""
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 0:
        raise ValueError(f"window must be an integer >= 0 (the half-width D of the window), "
                         f"got {window!r}")
    query, key, value, _ = check_qkv(query, key, value, same_width=True)
    if query.shape[-1] == 0:
        raise ValueError(f"query has d_k = 0 features; got shape {query.shape}")
    return dict(query=query, key=key, value=value, window=int(window))


@checked(check_windowed_attention)
def windowed_attention(query, key, value, window: int):
    """Local attention that computes only the ``2 * window + 1`` scores of each window.

    The same result as :func:`attention_course.lookup.local_attention` (Luong
    et al.'s "local-m": query ``i`` attends to keys ``j = i - D, ..., i + D``,
    ``D = window``, with scaled dot-product scores), but without the full
    ``(T_q, T_k)`` score matrix: each query is compared with its own window
    only, ``T_q * (2D + 1)`` scores instead of ``T_q * T_k``.  The keys and
    values are padded with ``D`` zero rows in front (and enough behind) so
    that every window has the same width; window slots that fall on the
    padding are masked.

    Args:
        query: ``(..., T_q, d_k)``.
        key: ``(..., T_k, d_k)``.
        value: ``(..., T_k, d_v)``.
        window: the half-width ``D``, an integer ``>= 0``.

    Returns:
        ``output (..., T_q, d_v)`` and the band of weights ``(..., T_q, 2D + 1)``:
        ``weights[..., i, w]`` is the weight of key ``j = i - D + w``, and 0
        where that ``j`` is not in ``0 .. T_k - 1``.  A query whose window holds
        no key (``i > T_k - 1 + D``) gets zero weights and a zero output.

    Explained in chapter 2, *A taxonomy of attention*, section "Global and local".
    """
    (T_q, d_k), T_k, D = query.shape[-2:], key.shape[-2], window
    # Padded position p holds key p - D, so query i's window is positions i .. i + 2D;
    # padding the end up to max(T_q, T_k, 1) + 2D positions gives every query one.
    after = D + max(T_q, T_k, 1) - T_k

    def windows(x):  # (..., T_k, f) -> (..., T_q, f, 2D + 1): a strided view, no copy
        padded = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(D, after), (0, 0)])
        return sliding_window_view(padded, 2 * D + 1, axis=-2)[..., :T_q, :, :]

    scale = float(1.0 / np.sqrt(d_k))
    scores = np.einsum("...qd,...qdw->...qw", query * scale, windows(key))
    j = np.arange(T_q)[:, None] - D + np.arange(2 * D + 1)   # (T_q, 2D + 1): slot's key
    weights = softmax(scores, axis=-1, mask=(j >= 0) & (j < T_k))  # (..., T_q, 2D + 1)
    output = np.einsum("...qw,...qvw->...qv", weights, windows(value))  # (.., T_q, d_v)
    return output, weights
