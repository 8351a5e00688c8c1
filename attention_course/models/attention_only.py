"""Attention-only models: embeddings, self-attention layers with residual connections, a linear read-out.

No feed-forward layers and no normalisation: the smallest model in which
self-attention does all the work.  Chapters 5 and 6 train them on toy tasks
and then read their attention::

    x_0    = E[tokens] + P                       (B, T, d_model)  token + position embeddings
    x_l    = x_{l-1} + MHA_l(x_{l-1}, x_{l-1})   l = 1 .. L        self-attention, residual
    logits = x_L W + b                           at every position, or at one

With ``mark_embedding=True`` (chapter 6's marker task) the upper half of the
vocabulary are *marked* copies of the lower half: id ``V/2 + t`` is token
``t`` with a mark, embedded as ``E[t] + m`` with one learned mark vector
``m`` (the way BERT adds a segment embedding), instead of a vector of its own.

This is the Keras model (:func:`build_model`), which gets trained; the same
computation in NumPy is :mod:`attention_course.attention_only`.
"""

from __future__ import annotations

import keras

from ..checks import checked


class TokenAndPositionEmbedding(keras.layers.Layer):
    """``tokens (B, T)`` -> ``(B, T, d_model)``: a learned vector per token plus one per position.

    With ``mark_embedding=True``, ids ``vocab_size // 2 ..`` are marked copies of
    ids ``0 .. vocab_size // 2 - 1``: a marked token gets its plain token's
    vector plus one learned ``mark_embedding`` vector, so the table
    ``token_embeddings`` has ``vocab_size // 2`` rows.
    """

    def __init__(self, vocab_size: int, length: int, d_model: int, mark_embedding: bool = False,
                 **kwargs):
        super().__init__(**kwargs)
        if mark_embedding and vocab_size % 2:
            raise ValueError(f"mark_embedding needs an even vocab_size (plain ids, then their "
                             f"marked copies); got {vocab_size}")
        self.vocab_size, self.length, self.d_model = vocab_size, length, d_model
        self.with_mark = mark_embedding

    def build(self, input_shape):
        init = keras.initializers.RandomNormal(stddev=0.05)
        plain = self.vocab_size // 2 if self.with_mark else self.vocab_size
        self.token_embeddings = self.add_weight(shape=(plain, self.d_model),
                                                initializer=init, name="token_embeddings")
        self.position_embeddings = self.add_weight(shape=(self.length, self.d_model),
                                                   initializer=init, name="position_embeddings")
        if self.with_mark:   # created last: without it the weights are as they always were
            self.mark_embedding = self.add_weight(shape=(self.d_model,), initializer=init,
                                                  name="mark_embedding")

    def call(self, tokens):
        if not self.with_mark:
            return keras.ops.take(self.token_embeddings, tokens, axis=0) + self.position_embeddings
        plain = self.vocab_size // 2
        marked = keras.ops.cast(tokens >= plain, self.compute_dtype)[..., None]   # (B, T, 1)
        return (keras.ops.take(self.token_embeddings, tokens % plain, axis=0)
                + marked * self.mark_embedding + self.position_embeddings)

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "length": self.length,
                "d_model": self.d_model, "mark_embedding": self.with_mark}


def build_model(vocab_size: int, length: int, num_classes: int, d_model: int = 32,
                num_heads=(1,), key_dim: int = 8, readout_position: int | None = None,
                mark_embedding: bool = False) -> keras.Model:
    """Attention-only model: ``len(num_heads)`` layers, ``num_heads[l]`` heads in layer ``l``.

    Returns a Keras model from ``tokens (B, length)`` to logits
    ``(B, length, num_classes)``, or ``(B, num_classes)`` read at
    ``readout_position`` only.  ``mark_embedding``: the upper half of the
    vocabulary are marked copies of the lower half (see
    :class:`TokenAndPositionEmbedding`).
    """
    tokens = keras.Input((length,), dtype="int32", name="tokens")
    x = TokenAndPositionEmbedding(vocab_size, length, d_model, mark_embedding,
                                  name="embedding")(tokens)
    for layer, heads in enumerate(num_heads):
        attention = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=key_dim,
                                                    name=f"attention_{layer}")
        x = x + attention(x, x)
    if readout_position is not None:
        x = x[:, readout_position]
    logits = keras.layers.Dense(num_classes, name="readout")(x)
    model = keras.Model(tokens, logits, name="attention_only")
    # for attention_course.weights.from_keras.attention_only
    model.readout_position = readout_position
    return model


def check_make_heads_identical(layer, source):
    """The layer of :func:`make_heads_identical` (chapter 6): a built multi-head layer, a head of it."""
    if not isinstance(layer, keras.layers.MultiHeadAttention) or not layer.built:
        raise ValueError(f"layer must be a built keras.layers.MultiHeadAttention; got {layer!r}")
    if not 0 <= source < layer.num_heads:
        raise ValueError(f"source must be a head in [0, {layer.num_heads}); got {source}")


@checked(check_make_heads_identical)
def make_heads_identical(layer, source: int = 0) -> None:
    """Give every head of a ``keras.layers.MultiHeadAttention`` head ``source``'s weights.

    In place: each head's slice of the query, key and value kernels
    ``(d_model, N, width)`` and biases ``(N, width)``, and of the output kernel
    ``(N, width, d_model)``, becomes a copy of head ``source``'s; the output
    bias belongs to no head.

    Explained in chapter 6, *Why do the heads differ?*, section "Heads that start identical".
    """
    N, head = layer.num_heads, slice(source, source + 1)
    for dense in (layer.query_dense, layer.key_dense, layer.value_dense):
        # kernel (d_model, N, width): heads on axis 1; bias (N, width): on axis 0
        dense.kernel.assign(keras.ops.repeat(dense.kernel[:, head], N, axis=1))
        if dense.bias is not None:
            dense.bias.assign(keras.ops.repeat(dense.bias[head], N, axis=0))
    output = layer.output_dense.kernel                     # (N, width, d_model)
    output.assign(keras.ops.repeat(output[head], N, axis=0))


class CopiesOfOneHead(keras.constraints.Constraint):
    """A weight constraint: every head's slice (along ``axis``) replaced by head ``source``'s.

    Used by :func:`keep_heads_identical` (chapter 6).
    """

    def __init__(self, axis: int, num_heads: int, source: int = 0):
        self.axis, self.num_heads, self.source = axis, num_heads, source

    def __call__(self, weight):
        head = keras.ops.take(weight, [self.source], axis=self.axis)
        return keras.ops.repeat(head, self.num_heads, axis=self.axis)

    def get_config(self):
        return {"axis": self.axis, "num_heads": self.num_heads, "source": self.source}


@checked(check_make_heads_identical)
def keep_heads_identical(layer, source: int = 0) -> None:
    """After every training step, copy head ``source``'s weights into the others again.

    The copy of :func:`make_heads_identical`, as weight constraints, which the
    optimizer applies after each update.  Heads that are identical get identical
    updates in exact arithmetic, so the copy changes nothing there; on a computer
    it removes the last-bit differences that a CPU's kernels can round into one
    head and not another (TensorFlow's AVX2 kernels do, its AVX-512 ones do not,
    on chapter 6's model), before training amplifies them.

    Explained in chapter 6, *Why do the heads differ?*, section "Heads that start identical".
    """
    N = layer.num_heads
    for dense in (layer.query_dense, layer.key_dense, layer.value_dense):
        dense.kernel.constraint = CopiesOfOneHead(1, N, source)    # (d_model, N, width)
        if dense.bias is not None:
            dense.bias.constraint = CopiesOfOneHead(0, N, source)  # (N, width)
    output = layer.output_dense.kernel                             # (N, width, d_model)
    output.constraint = CopiesOfOneHead(0, N, source)
