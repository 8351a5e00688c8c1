"""The encoder--decoder Transformer (Vaswani et al., 2017) in Keras.

Layers, from the bottom up:

* :func:`sinusoids` and :class:`PositionalEmbedding` -- token embedding plus
  sinusoidal or learned positions (chapter 7);
* :class:`FeedForward` -- the position-wise network ``d -> d_ff -> d``;
* :class:`EncoderBlock` and :class:`DecoderBlock` -- attention and
  feed-forward sub-layers, each wrapped in a residual connection and a layer
  normalization, placed after the sum (post-LN, the paper) or before the
  sub-layer (pre-LN), a switch (chapters 8--10);
* :class:`Transformer` -- the whole encoder--decoder translator (chapter 11),
  with the switches the ablations of chapter 11 need: number of heads, kind of
  positions, scaled or unscaled attention, post- or pre-LN.

:mod:`attention_course.transformer` is the same model in NumPy;
:mod:`attention_course.weights.from_keras` reads the weights of these layers into it.
"""

from __future__ import annotations

import math

import keras
import numpy as np
from keras import ops

POSITION_KINDS = ("sinusoidal", "learned", "none")


def sinusoids(length, d_model: int, base: float = 10000.0, dtype="float32"):
    """``(length, d_model)`` sinusoidal positions in ``keras.ops`` (TensorFlow here).

    The same numbers as :func:`attention_course.positional_encoding.sinusoidal_encoding`,
    computed another way: frequencies as ``exp(-log(base) * 2i / d)`` and the
    sines and cosines interleaved by stacking and reshaping.  The angles are
    formed in float64: in float32, ``pos * omega`` loses about ``pos * 6e-8``
    radians, visible after a few hundred positions.
    """
    if d_model % 2:
        raise ValueError(f"d_model must be even (pairs of sin and cos), got {d_model}")
    positions = ops.cast(ops.arange(length), "float64")[:, None]      # (T, 1)
    omega = ops.exp(ops.cast(ops.arange(0, d_model, 2), "float64")
                    * (-math.log(base) / d_model))[None, :]          # (1, d/2)
    angles = positions * omega                                       # (T, d/2)
    pairs = ops.stack([ops.sin(angles), ops.cos(angles)], axis=-1)   # (T, d/2, 2)
    return ops.cast(ops.reshape(pairs, (length, d_model)), dtype)


class UnscaledMultiHeadAttention(keras.layers.MultiHeadAttention):
    """``keras.layers.MultiHeadAttention`` without the ``1 / sqrt(key_dim)`` (an ablation only).

    Keras keeps the factor in a private attribute; a test checks that setting
    it to 1 gives ``softmax(Q K^T) V``, so a change in Keras cannot go unnoticed.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._inverse_sqrt_key_dim = 1.0


class PositionalEmbedding(keras.layers.Layer):
    """Token ids ``(B, T)`` -> ``embedding * sqrt(d) + position`` vectors ``(B, T, d)``.

    ``positions``: ``"sinusoidal"`` (fixed), ``"learned"`` (a trainable table of
    ``max_length`` vectors) or ``"none"`` (the ablation: no order information).
    """

    def __init__(self, vocab_size: int, d_model: int, max_length: int,
                 positions: str = "sinusoidal", scale: bool = True, **kwargs):
        super().__init__(**kwargs)
        if positions not in POSITION_KINDS:
            raise ValueError(f"positions must be one of {POSITION_KINDS}, got {positions!r}")
        self.d_model, self.max_length = d_model, max_length
        self.positions, self.scale = positions, scale
        self.token_embedding = keras.layers.Embedding(vocab_size, d_model, name="token_embedding")
        self.position_embedding = (
            keras.layers.Embedding(max_length, d_model, name="position_embedding")
            if positions == "learned" else None)

    def call(self, tokens):
        x = self.token_embedding(tokens)
        if self.scale:  # as in the paper (its section 3.4 states no reason)
            x = x * ops.cast(math.sqrt(self.d_model), x.dtype)
        length = ops.shape(tokens)[1]
        if self.positions == "sinusoidal":
            x = x + sinusoids(length, self.d_model, dtype=x.dtype)[None]
        elif self.positions == "learned":
            x = x + self.position_embedding(ops.arange(length))[None]
        return x


class FeedForward(keras.layers.Layer):
    """Position-wise feed-forward: ``Dense(d_ff, activation)`` then ``Dense(d_model)``.

    ``activation``: ``"relu"`` (the Transformer paper) or ``"gelu"`` (BERT: the
    exact, erf-based GELU, Keras' default ``approximate=False``).
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu", **kwargs):
        super().__init__(**kwargs)
        if activation not in ("relu", "gelu"):
            raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
        self.activation = activation
        self.hidden = keras.layers.Dense(d_ff, activation=activation, name="hidden")
        self.output_dense = keras.layers.Dense(d_model, name="output_dense")

    def call(self, x):
        return self.output_dense(self.hidden(x))


def _attention(d_model: int, num_heads: int, scale: bool, name: str):
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    cls = keras.layers.MultiHeadAttention if scale else UnscaledMultiHeadAttention
    return cls(num_heads=num_heads, key_dim=d_model // num_heads, name=name)


class _Block(keras.layers.Layer):
    """What both blocks share: the residual + layer-norm wrapper, post- or pre-LN."""

    def __init__(self, pre_ln: bool, dropout: float, epsilon: float, **kwargs):
        super().__init__(**kwargs)
        self.pre_ln = pre_ln
        self.epsilon = epsilon
        self.dropout = keras.layers.Dropout(dropout)

    def _norm(self, name):
        return keras.layers.LayerNormalization(epsilon=self.epsilon, name=name)

    @staticmethod
    def _attend(layer, query, value, return_scores: bool, **kwargs):
        """``(output, scores)``; asking Keras for no scores lets it use its fused kernel."""
        if return_scores:
            return layer(query, value, return_attention_scores=True, **kwargs)
        return layer(query, value, **kwargs), None

    def sublayer(self, x, norm, function, training=None):
        """``x + f(norm(x))`` (pre-LN) or ``norm(x + f(x))`` (post-LN); ``f`` returns ``(y, extra)``."""
        if self.pre_ln:
            y, extra = function(norm(x))
            return x + self.dropout(y, training=training), extra
        y, extra = function(x)
        return norm(x + self.dropout(y, training=training)), extra


class EncoderBlock(_Block):
    """Self-attention and feed-forward, each wrapped in residual + layer norm.

    ``call(x (B, S, d), padding_mask (B, S) or None)`` -> ``(B, S, d)``, and
    the attention weights ``(B, heads, S, S)`` with ``return_attention_scores``.
    ``activation`` is the feed-forward network's (``"relu"``, or ``"gelu"`` for BERT).
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, pre_ln: bool = False,
                 dropout: float = 0.0, scale_attention: bool = True, epsilon: float = 1e-5,
                 activation: str = "relu", **kwargs):
        super().__init__(pre_ln, dropout, epsilon, **kwargs)
        self.self_attention = _attention(
            d_model, num_heads, scale_attention, "self_attention")
        self.attention_norm = self._norm("attention_norm")
        self.feed_forward = FeedForward(d_model, d_ff, activation=activation,
                                        name="feed_forward")
        self.feed_forward_norm = self._norm("feed_forward_norm")

    def call(self, x, padding_mask=None, training=None, return_attention_scores=False):
        mask = None if padding_mask is None else ops.cast(padding_mask, "bool")[:, None, :]

        def attend(h):
            return self._attend(self.self_attention, h, h, return_attention_scores,
                                attention_mask=mask, training=training)

        x, scores = self.sublayer(x, self.attention_norm, attend, training)
        x, _ = self.sublayer(x, self.feed_forward_norm,
                             lambda h: (self.feed_forward(h), None), training)
        return (x, scores) if return_attention_scores else x


def run_encoder_blocks(blocks, x, padding_mask, training=None, return_attention_scores: bool = False):
    """``x (B, S, d)`` through the :class:`EncoderBlock` s ``blocks`` in turn -> ``(B, S, d)``.

    With ``return_attention_scores``, also the list of each block's attention
    weights ``(B, heads, S, S)``.  The encoder of :class:`Transformer` and of
    :class:`attention_course.models.bert.BertEncoder`.
    """
    scores = []
    for block in blocks:
        if return_attention_scores:
            x, s = block(x, padding_mask, training=training, return_attention_scores=True)
            scores.append(s)
        else:
            x = block(x, padding_mask, training=training)
    return (x, scores) if return_attention_scores else x


class DecoderBlock(_Block):
    """Masked self-attention, cross-attention to the encoder, feed-forward.

    ``call(y (B, T, d), memory (B, S, d), source_mask (B, S) or None)`` ->
    ``(B, T, d)``; with ``return_attention_scores`` also the self- and
    cross-attention weights.  ``causal=False`` removes the causal mask (for
    the leakage demonstration of chapter 10 only).

    ``cross_attention=False`` builds the block of a decoder-only model (GPT,
    chapter 13): no cross-attention sub-layer, ``call(y)`` with no memory,
    and None in place of the cross-attention weights.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, pre_ln: bool = False,
                 dropout: float = 0.0, scale_attention: bool = True, epsilon: float = 1e-5,
                 causal: bool = True, cross_attention: bool = True, **kwargs):
        super().__init__(pre_ln, dropout, epsilon, **kwargs)
        self.causal = causal
        self.self_attention = _attention(d_model, num_heads, scale_attention, "self_attention")
        self.self_attention_norm = self._norm("self_attention_norm")
        self.cross_attention = (_attention(d_model, num_heads, scale_attention, "cross_attention")
                                if cross_attention else None)
        self.cross_attention_norm = self._norm("cross_attention_norm") if cross_attention else None
        self.feed_forward = FeedForward(d_model, d_ff, name="feed_forward")
        self.feed_forward_norm = self._norm("feed_forward_norm")

    def call(self, y, memory=None, source_mask=None, training=None,
             return_attention_scores=False):
        if (memory is None) != (self.cross_attention is None):
            raise ValueError("a block with cross-attention needs the encoder's memory; "
                             "a block built with cross_attention=False takes none")
        cross_mask = (None if source_mask is None
                      else ops.cast(source_mask, "bool")[:, None, :])

        def self_attend(h):
            return self._attend(self.self_attention, h, h, return_attention_scores,
                                use_causal_mask=self.causal, training=training)

        def cross_attend(h):
            return self._attend(self.cross_attention, h, memory, return_attention_scores,
                                attention_mask=cross_mask, training=training)

        y, self_scores = self.sublayer(y, self.self_attention_norm, self_attend, training)
        cross_scores = None
        if memory is not None:
            y, cross_scores = self.sublayer(y, self.cross_attention_norm, cross_attend,
                                            training)
        y, _ = self.sublayer(y, self.feed_forward_norm,
                             lambda h: (self.feed_forward(h), None), training)
        return (y, self_scores, cross_scores) if return_attention_scores else y


class Transformer(keras.Model):
    """Encoder--decoder Transformer translator.

    Inputs: ``source (B, S)`` and ``decoder_input (B, T)`` integer ids
    (0 = padding); output: logits ``(B, T, target_vocab_size)`` for the next
    target word -- the same interface as :class:`~attention_course.models.rnn_seq2seq.RNNSeq2Seq`.
    """

    def __init__(self, source_vocab_size: int, target_vocab_size: int, max_length: int = 32,
                 d_model: int = 64, num_heads: int = 4, d_ff: int = 128, num_layers: int = 2,
                 pre_ln: bool = True, positions: str = "sinusoidal", scale_attention: bool = True,
                 scale_embeddings: bool = True, causal: bool = True, dropout: float = 0.0,
                 epsilon: float = 1e-5, **kwargs):
        super().__init__(**kwargs)
        self.max_length, self.d_model = max_length, d_model
        self.pre_ln, self.scale_attention = pre_ln, scale_attention
        self.scale_embeddings, self.causal = scale_embeddings, causal
        block = {"d_model": d_model, "num_heads": num_heads, "d_ff": d_ff, "pre_ln": pre_ln,
                 "dropout": dropout, "scale_attention": scale_attention, "epsilon": epsilon}
        self.source_embedding = PositionalEmbedding(source_vocab_size, d_model, max_length, positions,
                                                    scale_embeddings, name="source_embedding")
        self.target_embedding = PositionalEmbedding(target_vocab_size, d_model, max_length, positions,
                                                    scale_embeddings, name="target_embedding")
        self.encoder_blocks = [EncoderBlock(**block, name=f"encoder_{i}") for i in range(num_layers)]
        self.decoder_blocks = [DecoderBlock(**block, causal=causal, name=f"decoder_{i}")
                               for i in range(num_layers)]
        # Pre-LN leaves the residual stream un-normalised after the last block.
        final_norm = (lambda name: keras.layers.LayerNormalization(epsilon=epsilon, name=name))
        self.final_encoder_norm = final_norm("final_encoder_norm") if pre_ln else None
        self.final_decoder_norm = final_norm("final_decoder_norm") if pre_ln else None
        self.dropout = keras.layers.Dropout(dropout)
        self.classifier = keras.layers.Dense(target_vocab_size, name="classifier")

    def encode(self, source, training=None, return_attention_scores=False):
        """``source (B, S)`` -> memory ``(B, S, d)``, the padding mask ``(B, S)`` (and attention)."""
        source_mask = ops.not_equal(source, 0)
        x = self.dropout(self.source_embedding(source), training=training)
        encoded = run_encoder_blocks(self.encoder_blocks, x, source_mask, training,
                                     return_attention_scores)
        x, scores = encoded if return_attention_scores else (encoded, None)
        if self.final_encoder_norm is not None:
            x = self.final_encoder_norm(x)
        return (x, source_mask, scores) if return_attention_scores else (x, source_mask)

    def decode(self, decoder_input, memory, source_mask, training=None,
               return_attention_scores=False):
        """``decoder_input (B, T)`` -> logits ``(B, T, V)`` (and per-layer self/cross attention)."""
        y = self.dropout(self.target_embedding(decoder_input), training=training)
        self_scores, cross_scores = [], []
        for block in self.decoder_blocks:
            if return_attention_scores:
                y, s, c = block(y, memory, source_mask, training=training,
                                return_attention_scores=True)
                self_scores.append(s)
                cross_scores.append(c)
            else:
                y = block(y, memory, source_mask, training=training)
        if self.final_decoder_norm is not None:
            y = self.final_decoder_norm(y)
        logits = self.classifier(y)
        return (logits, self_scores, cross_scores) if return_attention_scores else logits

    def call(self, inputs, training=None):
        source, decoder_input = inputs
        memory, source_mask = self.encode(source, training=training)
        return self.decode(decoder_input, memory, source_mask, training=training)

    def attention_maps(self, source, decoder_input) -> dict[str, np.ndarray]:
        """Teacher-forced attention weights, NumPy, each ``(layers, B, heads, T_q, T_k)``.

        Keys: ``"encoder"`` (source self-attention), ``"decoder_self"`` and ``"cross"``.
        """
        memory, source_mask, encoder = self.encode(source, return_attention_scores=True)
        _, decoder_self, cross = self.decode(decoder_input, memory, source_mask,
                                             return_attention_scores=True)
        stack = lambda scores: np.stack([ops.convert_to_numpy(s) for s in scores])  # noqa: E731
        return {"encoder": stack(encoder), "decoder_self": stack(decoder_self), "cross": stack(cross)}

    def _last_position_function(self):
        """A compiled ``(padded prefix, memory, source mask, t) -> (logits, attention)`` at position ``t``."""
        if getattr(self, "_last_position", None) is None:
            import tensorflow as tf  # the course runs Keras on TensorFlow

            def last_position(padded, memory, source_mask, t):
                logits, _, cross = self.decode(padded, memory, source_mask,
                                               return_attention_scores=True)
                attention = ops.mean(cross[-1], axis=1)                 # (B, T, S) over heads
                return ops.take(logits, t, axis=1), ops.take(attention, t, axis=1)

            self._last_position = tf.function(last_position, reduce_retracing=True)
        return self._last_position

    def greedy_step(self, source):
        """A ``step`` function for :mod:`attention_course.decoding` (greedy or beam search).

        Encodes ``source`` once; every step re-reads the whole prefix (no
        key/value cache: chapter 13 adds one) and returns the next-word logits
        ``(B, V)`` and the last layer's cross-attention of the newest position,
        averaged over the heads, ``(B, S)``.  There is no state to carry.

        The prefix is padded with zeros to the next multiple of 8 tokens, so
        that the steps share a few compiled graphs instead of tracing one per
        length.  The padding cannot change the logits at the prefix's last
        position: the causal mask hides every later position from it
        (chapter 10 tests exactly this).
        """
        memory, source_mask = self.encode(source)
        last_position = self._last_position_function()

        def step(tokens, state):
            tokens = np.asarray(tokens)
            if tokens.shape[1] > self.max_length:
                raise ValueError(f"a prefix of {tokens.shape[1]} tokens is longer than "
                                 f"max_length={self.max_length}")
            width = min(-(-tokens.shape[1] // 8) * 8, self.max_length)
            padded = np.zeros((tokens.shape[0], width), dtype="int32")
            padded[:, : tokens.shape[1]] = tokens
            logits, attention = last_position(padded, memory, source_mask,
                                              np.int32(tokens.shape[1] - 1))
            return ops.convert_to_numpy(logits), state, ops.convert_to_numpy(attention)

        return step, None

    def cached_step(self, source):
        """A ``step`` function like :meth:`greedy_step` that computes only the newest position.

        Each decoder layer keeps the keys and values of the positions decoded
        so far (a *KV cache*, chapter 13) and, computed once, those of the
        encoder's output for cross-attention; a step embeds the newest token,
        attends from it alone and appends its keys and values.  The logits and
        attention are those of :meth:`greedy_step` (a test checks it at every
        step), at a fraction of the cost: re-reading a prefix of ``t`` words
        makes a whole sentence cost ``O(T^2)`` positions, the cache ``O(T)``.
        ``state`` is the cache, ``(keys, values)``: per layer ``(B, t, heads,
        key_dim)`` arrays, which beam search reorders with the beams.  Only for
        a causal decoder: without the mask, earlier positions would change.
        """
        if not self.causal:
            raise ValueError("a cache of earlier positions needs the causal mask: without it, "
                             "every position changes when a word is added (use greedy_step)")
        memory, source_mask = self.encode(source)
        cross = [(b.cross_attention.key_dense(memory), b.cross_attention.value_dense(memory))
                 for b in self.decoder_blocks]
        step_function = self._cached_step_function()
        batch = ops.shape(memory)[0]
        attention = self.decoder_blocks[0].self_attention
        empty_keys = [np.zeros((batch, 0, attention.num_heads, attention.key_dim), "float32")] \
            * len(self.decoder_blocks)
        empty_values = [np.zeros((batch, 0, attention.num_heads, attention.value_dim), "float32")] \
            * len(self.decoder_blocks)

        def step(tokens, state):
            tokens = np.asarray(tokens)
            if tokens.shape[1] > self.max_length:
                raise ValueError(f"a prefix of {tokens.shape[1]} tokens is longer than "
                                 f"max_length={self.max_length}")
            keys, values = state if state is not None else (empty_keys, empty_values)
            logits, attention, keys, values = step_function(
                tokens[:, -1:].astype("int32"), np.int32(tokens.shape[1] - 1),
                list(keys), list(values), cross, source_mask)
            state = ([ops.convert_to_numpy(k) for k in keys], [ops.convert_to_numpy(v) for v in values])
            return ops.convert_to_numpy(logits), state, ops.convert_to_numpy(attention)

        return step, None

    def _cached_step_function(self):
        """A compiled ``(newest token, t, cache, cross keys/values, source mask) -> (logits, attention, cache)``."""
        if getattr(self, "_cached_step", None) is None:
            import tensorflow as tf  # the course runs Keras on TensorFlow

            def attend(layer, query, keys, values, mask=None):
                """The newest position ``(B, 1, d)`` attends over ``keys``/``values`` ``(B, t, h, k)``."""
                q = layer.query_dense(query)                                    # (B, 1, h, k)
                if self.scale_attention:
                    q = q * ops.cast(1.0 / math.sqrt(q.shape[-1]), q.dtype)
                scores = ops.einsum("bqhk,bthk->bhqt", q, keys)                 # (B, h, 1, t)
                if mask is not None:
                    scores = ops.where(mask[:, None, None, :], scores, -1e9)  # Keras' masked softmax
                # softmax written out: Keras' warns when the first step has one key to attend to
                weights = ops.exp(scores - ops.max(scores, axis=-1, keepdims=True))
                weights = weights / ops.sum(weights, axis=-1, keepdims=True)
                output = layer.output_dense(ops.einsum("bhqt,bthk->bqhk", weights, values))
                return output, weights

            def new_position(token, t, keys, values, cross, source_mask):
                y = self.target_embedding.token_embedding(token)               # (B, 1, d)
                if self.target_embedding.scale:
                    y = y * ops.cast(math.sqrt(self.d_model), y.dtype)
                if self.target_embedding.positions == "sinusoidal":
                    y = y + sinusoids(self.max_length, self.d_model, dtype=y.dtype)[t][None, None]
                elif self.target_embedding.positions == "learned":
                    y = y + self.target_embedding.position_embedding(t)[None, None]
                new_keys, new_values = [], []
                for block, k, v, (cross_k, cross_v) in zip(self.decoder_blocks, keys, values, cross):
                    def self_attend(h, block=block, k=k, v=v):
                        k = ops.concatenate([k, block.self_attention.key_dense(h)], axis=1)
                        v = ops.concatenate([v, block.self_attention.value_dense(h)], axis=1)
                        new_keys.append(k)
                        new_values.append(v)
                        return attend(block.self_attention, h, k, v)[0], None

                    def cross_attend(h, block=block, cross_k=cross_k, cross_v=cross_v):
                        return attend(block.cross_attention, h, cross_k, cross_v, source_mask)

                    y, _ = block.sublayer(y, block.self_attention_norm, self_attend)
                    y, weights = block.sublayer(y, block.cross_attention_norm, cross_attend)
                    y, _ = block.sublayer(y, block.feed_forward_norm,
                                          lambda h, block=block: (block.feed_forward(h), None))
                if self.final_decoder_norm is not None:
                    y = self.final_decoder_norm(y)
                logits = self.classifier(y)[:, 0]                               # (B, V)
                return logits, ops.mean(weights[:, :, 0], axis=1), new_keys, new_values

            self._cached_step = tf.function(new_position, reduce_retracing=True)
        return self._cached_step


def encoder_tagger(vocab_size: int, num_classes: int, num_layers: int = 6,
                   d_model: int = 32, num_heads: int = 4, d_ff: int = 64,
                   pre_ln: bool = False, max_length: int = 32) -> keras.Model:
    """An encoder-only token tagger: ``(B, S)`` ids -> ``(B, S, num_classes)`` logits.

    Chapter 8 trains it, deep and briefly, to compare post-LN and pre-LN: the
    toy translation task is a tagging task for it (each source word is given
    the target word at its position), so no decoder is needed.
    """
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    padding_mask = ops.not_equal(tokens, 0)
    x = PositionalEmbedding(vocab_size, d_model, max_length, name="embedding")(tokens)
    for i in range(num_layers):
        x = EncoderBlock(d_model, num_heads, d_ff, pre_ln=pre_ln,
                         name=f"encoder_{i}")(x, padding_mask)
    if pre_ln:
        x = keras.layers.LayerNormalization(epsilon=1e-5, name="final_norm")(x)
    logits = keras.layers.Dense(num_classes, name="classifier")(x)
    return keras.Model(tokens, logits, name=f"{'pre' if pre_ln else 'post'}_ln_encoder")
