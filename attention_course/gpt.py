"""A decoder-only Transformer language model (GPT) in NumPy, and a key/value cache.

GPT {Radford et al. 2018, 2019} is the decoder of chapter 10 without the
encoder: every block is masked self-attention and a feed-forward network,
each wrapped in a residual connection and a layer norm placed *before* the
sub-layer (pre-LN, as in GPT-2), with one more layer norm after the last
block.  The forward pass reuses :func:`~attention_course.transformer.decoder_block`
with no memory (so no cross-attention); :class:`GPTWeights` reads the weights
of :class:`attention_course.models.gpt.GPT`, the same model in Keras.

Generation feeds the model its own output one token at a time.  Re-running
the whole prefix at every step repeats work: with the causal mask, the keys
and values of positions ``0..t-1`` never change once computed.
:class:`KVCache` keeps them, and :func:`gpt_forward_cached` computes only the
new positions' queries, keys and values -- the same logits, at a cost per
token that no longer grows with the prefix's length (apart from the
attention itself, one query against ``t`` keys).

Shapes: ``B`` batch, ``T`` length, ``V`` vocabulary, ``d`` width, ``L`` layers,
``N`` heads.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import checked
from .multi_head import merge_heads, project_heads
from .normalization import LayerNormWeights
from .sampling import sample_next_token
from .softmax import softmax
from .transformer import DecoderBlockWeights, decoder_block, embed, feed_forward, residual


@dataclass
class GPTWeights:
    """Every parameter of :class:`attention_course.models.gpt.GPT`.

    The blocks are :class:`~attention_course.transformer.DecoderBlockWeights`
    without cross-attention; positions are a learned table, added to the
    token embeddings without scaling them (GPT's convention).

    Used in chapter 13, *GPT: a decoder-only Transformer*, section "The decoder block, without the encoder".
    """

    token_embedding: np.ndarray       # (V, d)
    position_embedding: np.ndarray    # (max_length, d)
    blocks: list[DecoderBlockWeights]
    final_norm: LayerNormWeights
    classifier_kernel: np.ndarray     # (d, V)
    classifier_bias: np.ndarray       # (V,)

    def __post_init__(self):
        V, d = self.token_embedding.shape
        if self.position_embedding.shape[1] != d:
            raise ValueError(f"position_embedding must have width {d}; got {self.position_embedding.shape}")
        if self.classifier_kernel.shape != (d, V) or self.classifier_bias.shape != (V,):
            raise ValueError(f"classifier must map {d} features to {V} logits; got kernel "
                             f"{self.classifier_kernel.shape} and bias {self.classifier_bias.shape}")
        if any(block.has_cross_attention for block in self.blocks):
            raise ValueError("a decoder-only model's blocks have no cross-attention")

    @property
    def vocab_size(self) -> int:
        return self.token_embedding.shape[0]

    @property
    def max_length(self) -> int:
        return self.position_embedding.shape[0]

    @property
    def num_layers(self) -> int:
        return len(self.blocks)


def _check_tokens(tokens, weights: GPTWeights, start: int | None = 0) -> np.ndarray:
    """Integer ids in the vocabulary, ``(B, T)``, at positions ``start..`` (None: any length)."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be an integer array of shape (B, T); got {tokens.dtype} {tokens.shape}")
    if tokens.size and (tokens.min() < 0 or tokens.max() >= weights.vocab_size):
        raise ValueError(f"token ids must lie in [0, {weights.vocab_size}); "
                         f"got {tokens.min()}..{tokens.max()}")
    if start is not None and start + tokens.shape[1] > weights.max_length:
        raise ValueError(f"positions {start}..{start + tokens.shape[1] - 1} are beyond the "
                         f"{weights.max_length} positions the model knows")
    return tokens


def check_gpt_forward(tokens, weights):
    """The tokens of :func:`gpt_forward` (chapter 13): ids ``(B, T)`` the model knows."""
    return dict(tokens=_check_tokens(tokens, weights))


@checked(check_gpt_forward)
def gpt_forward(tokens, weights: GPTWeights):
    """The whole model, all positions at once: ``tokens (B, T)`` -> logits ``(B, T, V)``.

    ``logits[:, t]`` scores the token that follows ``tokens[:, :t + 1]``.
    Also returns every layer's self-attention weights, ``(L, B, N, T, T)``.

    Explained in chapter 13, *GPT: a decoder-only Transformer*, section "The decoder block, without the encoder".
    """
    x = embed(tokens, weights.token_embedding, weights.position_embedding, scale=False)
    attention = []
    for block in weights.blocks:
        x, a, _ = decoder_block(x, None, block, pre_ln=True)  # no memory to attend to
        attention.append(a)                                   # (B, N, T, T)
    x = weights.final_norm(x)                                 # (B, T, d)
    return x @ weights.classifier_kernel + weights.classifier_bias, np.stack(attention)


# ----------------------------------------------------------------------------
# Generation with a key/value cache
# ----------------------------------------------------------------------------

@dataclass
class KVCache:
    """The keys and values of every layer for the positions computed so far.

    ``keys (L, B, N, capacity, key_dim)`` and ``values (L, B, N, capacity,
    value_dim)`` are allocated once; positions ``0..length-1`` are filled.

    Used in chapter 13, *Generating text: sampling and a key/value cache*, section "A key/value cache".
    """

    keys: np.ndarray
    values: np.ndarray
    length: int = 0

    @classmethod
    def empty(cls, weights: GPTWeights, batch_size: int, capacity: int | None = None,
              dtype=np.float32) -> "KVCache":
        """A cache for ``batch_size`` sequences of up to ``capacity`` (default: all) positions."""
        capacity = weights.max_length if capacity is None else capacity
        if not 0 < capacity <= weights.max_length:
            raise ValueError(f"capacity must lie in [1, {weights.max_length}]; got {capacity}")
        attention = weights.blocks[0].self_attention
        L, N = weights.num_layers, attention.num_heads
        return cls(np.zeros((L, batch_size, N, capacity, attention.key_dim), dtype),
                   np.zeros((L, batch_size, N, capacity, attention.value_dim), dtype))

    @property
    def capacity(self) -> int:
        return self.keys.shape[3]

    @property
    def nbytes(self) -> int:
        return self.keys.nbytes + self.values.nbytes


def check_cached_self_attention(h, keys, start):
    """The cache of :func:`cached_self_attention` (chapter 13): room for the new positions."""
    end = start + h.shape[1]
    if end > keys.shape[2]:
        raise ValueError(f"the cache holds {keys.shape[2]} positions; {end} needed")


@checked(check_cached_self_attention)
def cached_self_attention(h, weights, keys, values, start: int):
    """Masked self-attention of the new positions ``start..start+t-1`` over all so far.

    Args:
        h: ``(B, t, d)`` the new positions' (normalised) vectors.
        weights: the layer's :class:`~attention_course.multi_head.MultiHeadAttentionWeights`.
        keys, values: this layer's cache, ``(B, N, capacity, depth)``; the new
            positions' keys and values are written into it, in place.
        start: how many positions the cache holds already.

    Returns:
        ``output (B, t, d)`` and the attention weights ``(B, N, t, start + t)``:
        what :func:`~attention_course.multi_head.multi_head_attention` with
        ``use_causal_mask`` gives for these rows of the full sequence.

    Explained in chapter 13, *Generating text: sampling and a key/value cache*, section "A key/value cache".
    """
    end = start + h.shape[1]                                  # h: (B, t, d)
    q = project_heads(h, weights.query_kernel, weights.query_bias)  # (B, N, t, key_dim)
    keys[:, :, start:end] = project_heads(h, weights.key_kernel, weights.key_bias)
    values[:, :, start:end] = project_heads(h, weights.value_kernel, weights.value_bias)
    # New position start+i may see every position up to and including itself.
    mask = np.arange(end)[None, :] <= np.arange(start, end)[:, None]    # (t, end)
    q *= q.dtype.type(1.0 / np.sqrt(weights.key_dim))
    attention = softmax(q @ keys[:, :, :end].swapaxes(-1, -2), axis=-1, mask=mask)
    heads = attention @ values[:, :, :end]                      # (B, N, t, value_dim)
    N, value_dim, d_out = weights.output_kernel.shape
    output = merge_heads(heads) @ weights.output_kernel.reshape(N * value_dim, d_out)
    if weights.output_bias is not None:
        output += weights.output_bias
    return output, attention


def check_gpt_forward_cached(tokens, weights, cache):
    """The tokens of :func:`gpt_forward_cached` (chapter 13): ids that fit the model and the cache."""
    start = cache.length
    tokens = _check_tokens(tokens, weights, start)
    if tokens.shape[0] != cache.keys.shape[1]:
        raise ValueError(f"the cache was made for {cache.keys.shape[1]} sequences; "
                         f"got {tokens.shape[0]}")
    if start + tokens.shape[1] > cache.capacity:
        raise ValueError(f"the cache holds {cache.capacity} positions; "
                         f"{start + tokens.shape[1]} needed")
    return dict(tokens=tokens)


@checked(check_gpt_forward_cached)
def gpt_forward_cached(tokens, weights: GPTWeights, cache: KVCache) -> np.ndarray:
    """Logits ``(B, t, V)`` for the new ``tokens (B, t)``, after the cached positions.

    The new tokens follow the ``cache.length`` positions the cache holds.
    The first call (an empty cache) reads the prompt, all of it at once; each
    later call usually passes one token, the one just generated.  The cache is
    updated in place.  Returns ``(B, t, V)``: equal, to float32 rounding, to the
    last ``t`` rows of :func:`gpt_forward` on the whole sequence.

    Explained in chapter 13, *Generating text: sampling and a key/value cache*, section "A key/value cache".
    """
    start, t = cache.length, tokens.shape[1]
    positions = weights.position_embedding[start:start + t]
    x = weights.token_embedding[tokens] + positions                      # (B, t, d)
    for layer, block in enumerate(weights.blocks):
        def attend(h, block=block, layer=layer):
            return cached_self_attention(h, block.self_attention, cache.keys[layer],
                                         cache.values[layer], start)

        def ffn(h, block=block):
            return feed_forward(h, block.feed_forward), None

        x, _ = residual(x, attend, block.self_attention_norm, pre_ln=True)
        x, _ = residual(x, ffn, block.feed_forward_norm, pre_ln=True)
    cache.length = start + t
    x = weights.final_norm(x)
    return x @ weights.classifier_kernel + weights.classifier_bias


def generate(weights: GPTWeights, prompt, num_tokens: int, *, temperature: float = 1.0,
             top_k: int | None = None, seed=None, use_cache: bool = True) -> np.ndarray:
    """Continue ``prompt (B, T0)`` by ``num_tokens`` sampled tokens: ``(B, T0 + num_tokens)``.

    Every step samples from the model's next-token distribution (with
    ``temperature`` and ``top_k``, see :func:`~attention_course.sampling.sample_next_token`;
    ``temperature=0`` is greedy) and appends the sample.  The model sees at
    most its ``max_length`` positions, so a longer text is read through a
    window:

    * ``use_cache=False``: every step re-reads the last ``max_length`` tokens
      (a sliding window);
    * ``use_cache=True``: the prompt is read once into a :class:`KVCache`, and
      each step runs the model on the newest token only.  When the cache is
      full, it restarts from the last ``max_length // 2`` tokens (their keys
      and values recomputed at their new positions), so every prediction sees
      between half and all of the window.

    While the whole sequence fits in ``max_length``, both see the same context
    and, given the same seed, draw the same tokens (up to float32 ties).

    Used in chapter 13, *Generating text: sampling and a key/value cache*, section "Sampling: temperature and top-k".
    """
    prompt = _check_tokens(prompt, weights, start=None)   # read through the window: any length
    if prompt.shape[1] == 0:
        raise ValueError("the prompt needs at least one token")
    if num_tokens < 0:
        raise ValueError(f"num_tokens must be >= 0; got {num_tokens}")
    rng = np.random.default_rng(seed)
    B, T0 = prompt.shape
    window = weights.max_length
    keep = max(window // 2, 1)
    tokens = np.zeros((B, T0 + num_tokens), dtype=np.int32)
    tokens[:, :T0] = prompt
    cache = KVCache.empty(weights, B) if use_cache else None
    offset = max(0, T0 - window)             # the token held at cache position 0
    for t in range(T0, T0 + num_tokens):
        if use_cache:
            if t - offset > window:          # tokens[offset:t] no longer fit: keep the last half
                offset, cache.length = t - keep, 0
            new = tokens[:, offset + cache.length:t]   # the prompt (or kept half), then one token
            logits = gpt_forward_cached(new, weights, cache)[:, -1]
        else:
            logits = gpt_forward(tokens[:, max(0, t - window):t], weights)[0][:, -1]
        tokens[:, t] = sample_next_token(logits, rng, temperature=temperature, top_k=top_k)
    return tokens
