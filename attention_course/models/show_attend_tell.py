"""Show, Attend and Tell in miniature: a CNN encoder and an LSTM decoder with additive attention.

Encoder: a small CNN turns an ``S x S`` image into a ``G x G`` grid of feature
vectors (``G = S / 2**pools``), and each cell's (row, column) coordinates are
appended to its vector, so that a feature also says *where* it is (a CNN's
features alone do not).  The ``N = G * G`` vectors are the *annotations*
``a_1 .. a_N`` of Xu et al. (2015), one per image region.

Decoder: an LSTM that looks at the image before every word.  It reads the
previous word and the previous context, ``h_t = LSTM([E y_{t-1}; z_{t-1}], h_{t-1})``;
its state then queries the annotations with Bahdanau's additive score
``v . tanh(W h_t + U a_i)`` (two bias-free ``Dense`` projections and
``keras.layers.AdditiveAttention``, whose learned ``scale`` is ``v``), and the
next word is read from ``[h_t; z_t]``, ``z_t = sum_i alpha_ti a_i``.

Differences from the paper's soft attention (chapter 15 lists them): the
context is computed from ``h_t`` and fed into the *next* step (Luong et al.'s
input feeding) instead of from ``h_{t-1}`` into the current one; the word is
read from ``tanh(W_c [h_t; z_t])`` instead of the deep output layer
``L_o(E y_{t-1} + L_h h_t + L_z z_t)``; the LSTM starts from zeros rather than
from the mean annotation, so everything the decoder learns about the image it
reads through attention; no doubly stochastic penalty and no gating scalar;
and the CNN is small and trained with the decoder, not a pretrained VGG.
"""

from __future__ import annotations

import keras
import numpy as np


class ShowAttendTell(keras.Model):
    """Image captioner.

    Inputs: ``images (B, S, S, 3)`` and ``decoder_input (B, T)`` word ids
    (``<s>`` first).  Output: logits ``(B, T, vocab_size)`` for the next word.
    The conv layers have ``channels`` filters of ``kernel_sizes``, with a 2 x 2
    max-pooling between each pair; the defaults give an 8 x 8 grid for 32 x 32
    images, each cell seeing a 10-pixel square.
    """

    def __init__(self, vocab_size: int, image_size: int = 32, channels=(16, 32, 64),
                 kernel_sizes=(3, 3, 1), units: int = 256, embedding_dim: int = 32,
                 attention_dim: int = 128, **kwargs):
        super().__init__(**kwargs)
        if len(kernel_sizes) != len(channels):
            raise ValueError(f"need one kernel size per conv layer; got channels {channels} "
                             f"and kernel_sizes {kernel_sizes}")
        pools = len(channels) - 1
        if image_size % 2 ** pools:
            raise ValueError(f"image_size must be divisible by 2**{pools} (one pooling between "
                             f"each pair of the {len(channels)} conv layers); got {image_size}")
        self.grid = image_size // 2 ** pools
        self.units = units
        cnn = []
        for i, (width, kernel) in enumerate(zip(channels, kernel_sizes)):
            cnn.append(keras.layers.Conv2D(width, kernel, padding="same", activation="relu",
                                           name=f"conv{i + 1}"))
            if i < pools:
                cnn.append(keras.layers.MaxPooling2D(2, name=f"pool{i + 1}"))
        self.cnn = keras.Sequential(cnn, name="cnn")
        # each cell's (row, column), counted in cells from the image's centre, joins its features
        rows, cols = np.divmod(np.arange(self.grid ** 2), self.grid)
        self.coordinates = (np.stack([rows, cols], axis=-1) - (self.grid - 1) / 2).astype("float32")
        self.word_embedding = keras.layers.Embedding(vocab_size, embedding_dim, name="word_embedding")
        self.query_projection = keras.layers.Dense(attention_dim, use_bias=False, name="W")
        self.key_projection = keras.layers.Dense(attention_dim, use_bias=False, name="U")
        self.attention = keras.layers.AdditiveAttention(use_scale=True, name="attention")
        self.cell = keras.layers.LSTMCell(units, name="decoder")
        self.combine = keras.layers.Dense(units, activation="tanh", name="combine")
        self.classifier = keras.layers.Dense(vocab_size, name="classifier")

    def encode(self, images):
        """``images (B, S, S, 3)`` -> annotations ``(B, N, D)``, keys ``U a``, initial state.

        The keys are ``U a`` ``(B, N, d_a)``, the decoder's initial state
        ``[h, c, z]`` is zeros, and ``D`` = CNN channels + 2 coordinates.
        """
        features = self.cnn(images)                                 # (B, G, G, D - 2)
        batch = keras.ops.shape(features)[0]
        # cell n = row * G + column: the layout of shapes.box_coverage(...).reshape(N)
        annotations = keras.ops.reshape(
            features, (batch, self.grid ** 2, features.shape[-1]))
        coordinates = keras.ops.broadcast_to(self.coordinates, (batch, self.grid ** 2, 2))
        annotations = keras.ops.concatenate(
            [annotations, keras.ops.cast(coordinates, annotations.dtype)], axis=-1)
        zeros = keras.ops.zeros((batch, self.units), dtype=annotations.dtype)
        no_context = keras.ops.zeros_like(annotations[:, 0])
        return annotations, self.key_projection(annotations), [zeros, zeros, no_context]

    def step(self, word, state, annotations, keys):
        """One decoder step: ``word (B,)`` is the previous word, ``state = [h, c, z]``.

        Returns logits ``(B, V)`` for the next word, the new state and the
        attention weights ``(B, N)`` over the grid cells (row-major).
        """
        h, c, context = state
        x = keras.ops.concatenate([self.word_embedding(word), context], axis=-1)
        h, (h, c) = self.cell(x, [h, c])
        query = self.query_projection(h)[:, None, :]                # (B, 1, d_a)
        context, weights = self.attention(
            [query, annotations, keys],                             # [query, value, key]
            return_attention_scores=True)
        context = context[:, 0]                                     # (B, D)
        logits = self.classifier(self.combine(keras.ops.concatenate([h, context], axis=-1)))
        return logits, [h, c, context], weights[:, 0]

    def forward(self, images, decoder_input):
        """Teacher forcing: logits ``(B, T, V)`` and attention weights ``(B, T, N)``."""
        annotations, keys, state = self.encode(images)
        all_logits, all_weights = [], []
        for t in range(decoder_input.shape[1]):   # T is small and static: the loop unrolls
            logits, state, weights = self.step(decoder_input[:, t], state, annotations, keys)
            all_logits.append(logits)
            all_weights.append(weights)
        return keras.ops.stack(all_logits, axis=1), keras.ops.stack(all_weights, axis=1)

    def call(self, inputs):
        images, decoder_input = inputs
        return self.forward(images, decoder_input)[0]

    def greedy_step(self, images):
        """A ``step`` function for :func:`attention_course.decoding.greedy_decode`.

        Encodes the images once; each step feeds the newest word and carries
        the LSTM state, and returns the attention over the ``N`` grid cells.
        """
        annotations, keys, initial = self.encode(images)

        def step(tokens, state):
            return self.step(tokens[:, -1], state, annotations, keys)

        return step, initial
