"""Attention-only models: embeddings, self-attention layers with residual connections, a linear read-out.

No feed-forward layers and no normalisation: the smallest model in which
self-attention does all the work.  Chapters 5 and 6 train them on toy tasks
and then read their attention::

    x_0    = E[tokens] + P                       (B, T, d_model)  token + position embeddings
    x_l    = x_{l-1} + MHA_l(x_{l-1}, x_{l-1})   l = 1 .. L        self-attention, residual
    logits = x_L W + b                           at every position, or at one

The Keras model (:func:`build_model`) is what gets trained.  The same
computation in NumPy (:func:`numpy_forward`, from :meth:`AttentionOnlyWeights.from_keras`)
runs the course's :func:`~attention_course.multi_head.multi_head_attention`
with the trained weights; it returns every layer's attention weights, and it
lets a chapter switch a head off by editing its weights
(:func:`attention_course.head_analysis.ablate_heads`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import keras
import numpy as np

from ..weights.keras_weights import to_numpy
from ..multi_head import MultiHeadAttentionWeights, multi_head_attention


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
    model.readout_position = readout_position  # for AttentionOnlyWeights.from_keras
    return model


@dataclass
class AttentionOnlyWeights:
    """Every parameter of an attention-only model, as NumPy arrays.

    Attributes:
        token_embeddings: ``(vocab_size, d_model)``.
        position_embeddings: ``(length, d_model)``.
        layers: one :class:`~attention_course.multi_head.MultiHeadAttentionWeights` per layer.
        readout_kernel: ``(d_model, num_classes)``; ``readout_bias``: ``(num_classes,)``.
        readout_position: the position the logits are read at (None: every position).
    """

    token_embeddings: np.ndarray
    position_embeddings: np.ndarray
    layers: list[MultiHeadAttentionWeights]
    readout_kernel: np.ndarray
    readout_bias: np.ndarray
    readout_position: int | None = None

    @classmethod
    def from_keras(cls, model: keras.Model) -> "AttentionOnlyWeights":
        """Copy the weights out of a model made by :func:`build_model`."""
        embedding = model.get_layer("embedding")
        attention_layers = [layer for layer in model.layers
                            if isinstance(layer, keras.layers.MultiHeadAttention)]
        readout = model.get_layer("readout")
        numpy = to_numpy
        return cls(numpy(embedding.token_embeddings), numpy(embedding.position_embeddings),
                   [MultiHeadAttentionWeights.from_keras(layer) for layer in attention_layers],
                   numpy(readout.kernel), numpy(readout.bias),
                   getattr(model, "readout_position", None))

    def with_layer(self, index: int, layer: MultiHeadAttentionWeights) -> "AttentionOnlyWeights":
        """A copy with layer ``index`` replaced (e.g. by one with heads ablated)."""
        layers = list(self.layers)
        layers[index] = layer
        return dataclasses.replace(self, layers=layers)


def numpy_forward(weights: AttentionOnlyWeights, tokens) -> tuple[np.ndarray, list[np.ndarray]]:
    """What the Keras model computes, in NumPy.

    Args:
        weights: the model's parameters (possibly edited, e.g. heads ablated).
        tokens: ``(B, T)`` integer ids.

    Returns:
        ``logits`` -- ``(B, T, num_classes)``, or ``(B, num_classes)`` for a
        one-position read-out -- and the attention weights of every layer,
        a list of ``(B, N, T, T)`` arrays.
    """
    tokens = np.asarray(tokens)
    length = weights.position_embeddings.shape[0]
    if tokens.ndim != 2 or tokens.shape[1] != length or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be integer ids of shape (B, {length}); "
                         f"got {tokens.dtype} {tokens.shape}")
    x = weights.token_embeddings[tokens] + weights.position_embeddings   # (B, T, d_model)
    attention = []
    for layer in weights.layers:
        output, scores = multi_head_attention(x, x, layer)
        x = x + output                                                   # residual connection
        attention.append(scores)
    if weights.readout_position is not None:
        x = x[:, weights.readout_position]
    return x @ weights.readout_kernel + weights.readout_bias, attention
