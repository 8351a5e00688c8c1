"""Attention-only models: embeddings, self-attention layers with residual connections, a linear read-out.

No feed-forward layers and no normalisation: the smallest model in which
self-attention does all the work.  Chapters 5 and 6 train them on toy tasks
and then read their attention::

    x_0    = E[tokens] + P                       (B, T, d_model)  token + position embeddings
    x_l    = x_{l-1} + MHA_l(x_{l-1}, x_{l-1})   l = 1 .. L        self-attention, residual
    logits = x_L W + b                           at every position, or at one

This is the Keras model (:func:`build_model`), which gets trained; the same
computation in NumPy is :mod:`attention_course.attention_only`.
"""

from __future__ import annotations

import keras


class TokenAndPositionEmbedding(keras.layers.Layer):
    """``tokens (B, T)`` -> ``(B, T, d_model)``: a learned vector per token plus one per position."""

    def __init__(self, vocab_size: int, length: int, d_model: int, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size, self.length, self.d_model = vocab_size, length, d_model

    def build(self, input_shape):
        init = keras.initializers.RandomNormal(stddev=0.05)
        self.token_embeddings = self.add_weight(shape=(self.vocab_size, self.d_model),
                                                initializer=init, name="token_embeddings")
        self.position_embeddings = self.add_weight(shape=(self.length, self.d_model),
                                                   initializer=init, name="position_embeddings")

    def call(self, tokens):
        return keras.ops.take(self.token_embeddings, tokens, axis=0) + self.position_embeddings

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "length": self.length,
                "d_model": self.d_model}


def build_model(vocab_size: int, length: int, num_classes: int, d_model: int = 32,
                num_heads=(1,), key_dim: int = 8, readout_position: int | None = None) -> keras.Model:
    """An attention-only model with ``len(num_heads)`` layers, layer ``l`` having ``num_heads[l]`` heads.

    Returns a Keras model from ``tokens (B, length)`` to logits
    ``(B, length, num_classes)``, or ``(B, num_classes)`` read at
    ``readout_position`` only.
    """
    tokens = keras.Input((length,), dtype="int32", name="tokens")
    x = TokenAndPositionEmbedding(vocab_size, length, d_model, name="embedding")(tokens)
    for layer, heads in enumerate(num_heads):
        attention = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=key_dim,
                                                    name=f"attention_{layer}")
        x = x + attention(x, x)
    if readout_position is not None:
        x = x[:, readout_position]
    logits = keras.layers.Dense(num_classes, name="readout")(x)
    model = keras.Model(tokens, logits, name="attention_only")
    model.readout_position = readout_position  # for attention_course.attention_only.AttentionOnlyWeights.from_keras
    return model
