"""The attention-only models of chapters 5 and 6, in NumPy: what the Keras model computes.

The Keras model (:func:`attention_course.models.attention_only.build_model`)
is what gets trained::

    x_0    = E[tokens] + P                       (B, T, d_model)  token + position embeddings
    x_l    = x_{l-1} + MHA_l(x_{l-1}, x_{l-1})   l = 1 .. L        self-attention, residual
    logits = x_L W + b                           at every position, or at one

(with a mark embedding ``m``, a marked token ``V/2 + t`` embeds as ``E[t] + m``:
:func:`embed`).  :func:`numpy_forward`, with the weights read by
:func:`attention_course.weights.from_keras.attention_only.attention_only`,
runs the course's :func:`~attention_course.multi_head.multi_head_attention` with
the trained weights; it returns every layer's attention weights, and it lets a
chapter switch a head off by editing its weights
(:func:`attention_course.head_analysis.ablate_heads`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .checks import checked
from .multi_head import MultiHeadAttentionWeights, multi_head_attention


@dataclass
class AttentionOnlyWeights:
    """Every parameter of an attention-only model, as NumPy arrays.

    Attributes:
        token_embeddings: ``(vocab_size, d_model)``, or ``(vocab_size // 2, d_model)`` with a
            mark embedding.
        position_embeddings: ``(length, d_model)``.
        layers: one :class:`~attention_course.multi_head.MultiHeadAttentionWeights` per layer.
        readout_kernel: ``(d_model, num_classes)``; ``readout_bias``: ``(num_classes,)``.
        readout_position: the position the logits are read at (None: every position).
        mark_embedding: ``(d_model,)`` or None: the vector a mark adds (ids
            ``len(token_embeddings) ..`` are marked copies of the plain ids; chapter 6).

    Used in chapter 5, *Self-attention*, in the section on what "it" refers to, and in chapter 6.
    """

    token_embeddings: np.ndarray
    position_embeddings: np.ndarray
    layers: list[MultiHeadAttentionWeights]
    readout_kernel: np.ndarray
    readout_bias: np.ndarray
    readout_position: int | None = None
    mark_embedding: np.ndarray | None = None

    def with_layer(self, index: int, layer: MultiHeadAttentionWeights) -> "AttentionOnlyWeights":
        """A copy with layer ``index`` replaced (e.g. by one with heads ablated)."""
        layers = list(self.layers)
        layers[index] = layer
        return dataclasses.replace(self, layers=layers)


def check_numpy_forward(weights, tokens):
    """The tokens of :func:`numpy_forward` (chapter 5): integer ids ``(B, length)``."""
    tokens = np.asarray(tokens)
    length = weights.position_embeddings.shape[0]
    if tokens.ndim != 2 or tokens.shape[1] != length or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be integer ids of shape (B, {length}); "
                         f"got {tokens.dtype} {tokens.shape}")
    vocab_size = len(weights.token_embeddings) * (1 if weights.mark_embedding is None else 2)
    if tokens.size and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise ValueError(f"tokens must be ids in [0, {vocab_size}); "
                         f"got ids from {tokens.min()} to {tokens.max()}")
    return dict(tokens=tokens)


def embed(weights: AttentionOnlyWeights, tokens: np.ndarray) -> np.ndarray:
    """``tokens (B, T)`` -> ``(B, T, d_model)``: token (+ mark) + position embeddings.

    Explained in chapter 6, *Do different heads learn different things?*,
    section "A task with two jobs".
    """
    if weights.mark_embedding is None:
        return weights.token_embeddings[tokens] + weights.position_embeddings
    plain = len(weights.token_embeddings)     # ids plain, plain + 1, ...: marked copies
    marked = (tokens >= plain)[..., None]     # (B, T, 1)
    return (weights.token_embeddings[tokens % plain] + marked * weights.mark_embedding
            + weights.position_embeddings)


@checked(check_numpy_forward)
def numpy_forward(weights: AttentionOnlyWeights,
                  tokens) -> tuple[np.ndarray, list[np.ndarray]]:
    """What the Keras model computes, in NumPy.

    Args:
        weights: the model's parameters (possibly edited, e.g. heads ablated).
        tokens: ``(B, T)`` integer ids.

    Returns:
        ``logits`` -- ``(B, T, num_classes)``, or ``(B, num_classes)`` for a
        one-position read-out -- and the attention weights of every layer,
        a list of ``(B, N, T, T)`` arrays.

    Explained in chapter 5, *Self-attention*, in the section on what "it" refers to.
    """
    x = embed(weights, tokens)                          # (B, T, d): token + position
    attention = []
    for layer in weights.layers:
        output, scores = multi_head_attention(x, x, layer)
        x = x + output                                  # the residual connection
        attention.append(scores)                        # (B, N, T, T)
    if weights.readout_position is not None:
        x = x[:, weights.readout_position]              # (B, d)
    return x @ weights.readout_kernel + weights.readout_bias, attention
