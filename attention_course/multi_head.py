"""Multi-head attention with the weight layout of ``keras.layers.MultiHeadAttention``.

``N`` heads each attend in their own ``key_dim``-wide subspace; their outputs
are concatenated and projected back to ``d_model``.  The weights are stored
exactly as Keras stores them, so a trained Keras layer can be loaded with
:func:`attention_course.weights.from_keras.multi_head_attention` and the two
compared number for number:

========================  =================================
``query_kernel``          ``(d_query, N, key_dim)``
``query_bias``            ``(N, key_dim)``
``key_kernel``            ``(d_key, N, key_dim)``
``key_bias``              ``(N, key_dim)``
``value_kernel``          ``(d_value, N, value_dim)``
``value_bias``            ``(N, value_dim)``
``output_kernel``         ``(N, value_dim, d_out)``
``output_bias``           ``(d_out,)``
========================  =================================

Shapes below: ``B`` batch, ``T`` query length, ``S`` key/value length.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from .checks import as_float_array, as_mask, checked, require_ndim
from .masks import causal_mask, combine_masks
from .softmax import softmax


@dataclass
class MultiHeadAttentionWeights:
    """All parameters of one multi-head attention layer (biases may be None).

    Used in chapter 6, *Multi-head attention*, section "NumPy == Keras".
    """

    query_kernel: np.ndarray
    key_kernel: np.ndarray
    value_kernel: np.ndarray
    output_kernel: np.ndarray
    query_bias: np.ndarray | None = None
    key_bias: np.ndarray | None = None
    value_bias: np.ndarray | None = None
    output_bias: np.ndarray | None = None

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                setattr(self, f.name, as_float_array(value, f.name))
        for name in ("query_kernel", "key_kernel", "value_kernel", "output_kernel"):
            if getattr(self, name).ndim != 3:
                raise ValueError(f"{name} must be 3-D (see the table in this module); "
                                 f"got shape {getattr(self, name).shape}")
        N, key_dim = self.query_kernel.shape[1:]
        value_dim = self.value_kernel.shape[2]
        expected = {
            "key_kernel": (self.key_kernel.shape[0], N, key_dim),
            "value_kernel": (self.value_kernel.shape[0], N, value_dim),
            "output_kernel": (N, value_dim, self.output_kernel.shape[2]),
            "query_bias": (N, key_dim), "key_bias": (N, key_dim),
            "value_bias": (N, value_dim), "output_bias": (self.output_kernel.shape[2],),
        }
        for name, shape in expected.items():
            value = getattr(self, name)
            if value is not None and value.shape != shape:
                raise ValueError(f"{name} must have shape {shape} to match query_kernel "
                                 f"{self.query_kernel.shape}; got {value.shape}")

    @property
    def num_heads(self) -> int:
        return self.query_kernel.shape[1]

    @property
    def key_dim(self) -> int:
        return self.query_kernel.shape[2]

    @property
    def value_dim(self) -> int:
        return self.value_kernel.shape[2]

    @classmethod
    def random(cls, d_model: int, num_heads: int, key_dim: int, value_dim: int | None = None,
               seed: int = 0, dtype=np.float32) -> "MultiHeadAttentionWeights":
        """Random weights of the right shapes (small normal kernels, small biases)."""
        rng = np.random.default_rng(seed)
        value_dim = key_dim if value_dim is None else value_dim

        def normal(*shape, scale):
            return (scale * rng.standard_normal(shape)).astype(dtype)

        return cls(
            query_kernel=normal(d_model, num_heads, key_dim, scale=d_model ** -0.5),
            key_kernel=normal(d_model, num_heads, key_dim, scale=d_model ** -0.5),
            value_kernel=normal(d_model, num_heads, value_dim, scale=d_model ** -0.5),
            output_kernel=normal(num_heads, value_dim, d_model, scale=(num_heads * value_dim) ** -0.5),
            query_bias=normal(num_heads, key_dim, scale=0.1),
            key_bias=normal(num_heads, key_dim, scale=0.1),
            value_bias=normal(num_heads, value_dim, scale=0.1),
            output_bias=normal(d_model, scale=0.1),
        )


def check_split_heads(x, num_heads):
    """The input of :func:`split_heads` (chapter 6): features that split into equal heads."""
    if x.shape[-1] % num_heads:
        raise ValueError(f"cannot split {x.shape[-1]} features into {num_heads} equal heads")


@checked(check_split_heads)
def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """``(..., T, num_heads * depth)`` -> ``(..., num_heads, T, depth)``.

    The feature axis is cut into ``num_heads`` consecutive blocks, head ``h``
    taking features ``h * depth .. (h + 1) * depth - 1`` -- the order in which
    a ``(d_model, N, depth)`` kernel, flattened, lays its columns out.

    Explained in chapter 6, *Multi-head attention*, section "Splitting and merging heads".
    """
    *lead, T, width = x.shape
    return x.reshape(*lead, T, num_heads, width // num_heads).swapaxes(-3, -2)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """``(..., num_heads, T, depth)`` -> ``(..., T, num_heads * depth)``: undoes ``split_heads``.

    Explained in chapter 6, *Multi-head attention*, section "Splitting and merging heads".
    """
    *lead, num_heads, T, depth = x.shape
    return x.swapaxes(-3, -2).reshape(*lead, T, num_heads * depth)


def project_heads(x: np.ndarray, kernel: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """``(B, T, d) @ (d, N, depth)`` -> ``(B, N, T, depth)``: one matmul for all heads.

    Used by the code of chapter 6, *Multi-head attention*.
    """
    (B, T, d), (_, N, depth) = x.shape, kernel.shape
    # One (B*T, d) x (d, N*depth) product: a single large matmul is faster
    # than the B small ones NumPy would run for a (B, T, d) @ (d, N*depth).
    y = x.reshape(B * T, d) @ kernel.reshape(d, N * depth)
    if bias is not None:
        y += bias.reshape(N * depth)
    return split_heads(y.reshape(B, T, N * depth), N)


def _project_self(x: np.ndarray, weights: MultiHeadAttentionWeights):
    """Self-attention: the query, key and value projections of one ``x`` as a single matmul.

    Same result as three calls of :func:`project_heads`; the three kernels are
    laid side by side, ``(d, 3 * N * depth)``, so that ``x`` is read once.
    """
    (B, T, d), N = x.shape, weights.num_heads
    kernels = [weights.query_kernel, weights.key_kernel, weights.value_kernel]
    biases = [weights.query_bias, weights.key_bias, weights.value_bias]
    widths = [k.shape[1] * k.shape[2] for k in kernels]
    y = x.reshape(B * T, d) @ np.concatenate([k.reshape(d, w) for k, w in zip(kernels, widths)], axis=1)
    if any(b is not None for b in biases):
        y += np.concatenate([np.zeros(w, y.dtype) if b is None else b.reshape(w)
                             for b, w in zip(biases, widths)])
    q, k, v = np.split(y, np.cumsum(widths)[:-1], axis=1)  # views into y, no copies
    return [split_heads(part.reshape(B, T, -1), N) for part in (q, k, v)]


def project_qkv(query, key, value, weights: MultiHeadAttentionWeights):
    """Every head's queries, keys and values: ``(B, N, T or S, key_dim or value_dim)``.

    Queries ``(B, N, T, key_dim)``, keys ``(B, N, S, key_dim)``, values
    ``(B, N, S, value_dim)``: :func:`project_heads` of each input with its
    kernel and bias; for self-attention (``query``, ``key`` and ``value`` the
    same array), one matrix product for all three (:func:`_project_self`).

    Used by the code of chapter 6, *Multi-head attention*.
    """
    if query is value and key is value:
        return _project_self(query, weights)
    return (project_heads(query, weights.query_kernel, weights.query_bias),
            project_heads(key, weights.key_kernel, weights.key_bias),
            project_heads(value, weights.value_kernel, weights.value_bias))


def keras_mask(query, value, attention_mask=None, query_mask=None, value_mask=None,
               use_causal_mask: bool = False):
    """Keras' masks as one boolean ``(B, 1, T, S)`` mask for every head (None: no mask).

    ``attention_mask (B, T, S)``: True where query ``i`` may attend to key ``j``;
    ``query_mask (B, T)``: a False query attends to nothing; ``value_mask (B, S)``:
    a False key is hidden from every query; ``use_causal_mask``: key ``j > i`` is
    hidden from query ``i``.  They combine by AND.

    Used by the code of chapter 6, *Multi-head attention*.
    """
    B, T, S = query.shape[0], query.shape[1], value.shape[1]
    mask = combine_masks(attention_mask,
                         None if query_mask is None else query_mask[:, :, None],
                         None if value_mask is None else value_mask[:, None, :],
                         causal_mask(T, S) if use_causal_mask else None)
    if mask is None:
        return None
    return np.broadcast_to(mask, (B, T, S))[:, None]


def check_multi_head_attention(query, value, weights, key, attention_mask, query_mask,
                               value_mask):
    """The arguments of :func:`multi_head_attention` (chapter 6), checked and converted.

    ``query``, ``value`` and ``key`` as float arrays whose shapes fit the
    weights (``key`` filled in with ``value``; for self-attention, when the
    caller passes one array for all three, the same array), the masks as booleans.
    """
    is_self_attention = query is value and (key is None or key is value)
    query = as_float_array(query, "query")
    value = query if is_self_attention else as_float_array(value, "value")
    key = value if key is None or key is value else as_float_array(key, "key")
    for name, array, layout in (("query", query, "(B, T, d_query)"),
                                ("value", value, "(B, S, d_value)"),
                                ("key", key, "(B, S, d_key)")):
        require_ndim(array, name, 3, layout)
        if array.ndim != 3:
            raise ValueError(f"{name} must have shape {layout}; got {array.shape}")
    for name, array, kernel in (("query", query, weights.query_kernel),
                                ("key", key, weights.key_kernel),
                                ("value", value, weights.value_kernel)):
        if array.shape[-1] != kernel.shape[0]:
            raise ValueError(f"{name} has {array.shape[-1]} features but the layer's "
                             f"{name}_kernel expects {kernel.shape[0]}")
    if key.shape[:2] != value.shape[:2]:
        raise ValueError(f"key and value must share (B, S); got {key.shape} and {value.shape}")
    if query.shape[0] != value.shape[0]:
        raise ValueError(f"query and value must have the same batch size; got "
                         f"{query.shape} and {value.shape}")
    B, T, S = query.shape[0], query.shape[1], value.shape[1]
    if query_mask is not None:
        query_mask = as_mask(query_mask, "query_mask", (B, T), "(B, T)")
    if value_mask is not None:
        value_mask = as_mask(value_mask, "value_mask", (B, S), "(B, S)")
    if attention_mask is not None:
        attention_mask = as_mask(attention_mask, "attention_mask", (B, T, S), "(B, T, S)")
    return dict(query=query, value=value, key=key, attention_mask=attention_mask,
                query_mask=query_mask, value_mask=value_mask)


@checked(check_multi_head_attention)
def multi_head_attention(query, value, weights: MultiHeadAttentionWeights, key=None, *,
                         attention_mask=None, query_mask=None, value_mask=None,
                         use_causal_mask: bool = False):
    """What ``keras.layers.MultiHeadAttention`` computes, in NumPy.

    Args:
        query: ``(B, T, d_query)``.
        value: ``(B, S, d_value)``.
        weights: the layer's parameters (see the module docstring).
        key: ``(B, S, d_key)``; defaults to ``value``, as in Keras.
        attention_mask: boolean ``(B, T, S)`` (or broadcastable); True = may attend.
        query_mask: boolean ``(B, T)``; False rows attend to nothing (Keras'
            ``query_mask``, e.g. padding in the query).
        value_mask: boolean ``(B, S)``; False keys are hidden from every query.
        use_causal_mask: hide keys ``j > i`` from query ``i``.

    Returns:
        ``output (B, T, d_out)`` and the attention weights ``(B, N, T, S)``.
        A query whose keys are all masked gets all-zero weights, so its output
        is just ``output_bias`` -- exactly as in Keras.

    Explained in chapter 6, *Multi-head attention*, section "The layer in NumPy".
    """
    q, k, v = project_qkv(query, key, value, weights)  # (B, N, T or S, depth)
    q *= q.dtype.type(1.0 / np.sqrt(weights.key_dim))  # scaled, as Keras does
    scores = q @ k.swapaxes(-1, -2)                    # (B, N, T, S)
    mask = keras_mask(query, value, attention_mask, query_mask, value_mask,
                      use_causal_mask)                 # (B, 1, T, S): for every head
    attention = softmax(scores, axis=-1, mask=mask)
    heads = attention @ v                              # (B, N, T, value_dim)
    N, value_dim, d_out = weights.output_kernel.shape
    output = merge_heads(heads) @ weights.output_kernel.reshape(N * value_dim, d_out)
    if weights.output_bias is not None:
        output += weights.output_bias
    return output, attention
