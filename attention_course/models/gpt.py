"""GPT, a decoder-only Transformer language model, in Keras.

The blocks are chapter 10's :class:`~attention_course.models.transformer.DecoderBlock`
built with ``cross_attention=False`` and pre-LN (as in GPT-2): masked
self-attention and a feed-forward network, nothing to read from an encoder.
Token embeddings plus a learned position table go in; a final layer norm and
a dense layer give, at every position, the logits of the next token.

:class:`attention_course.gpt.GPTWeights` reads this model's weights into the
NumPy forward pass.
"""

from __future__ import annotations

import keras
from keras import ops

from .transformer import DecoderBlock, PositionalEmbedding


class GPT(keras.Model):
    """``tokens (B, T)`` integer ids -> next-token logits ``(B, T, vocab_size)``.

    ``T`` may be anything up to ``max_length``, the size of the learned
    position table (the model's context window).
    """

    def __init__(self, vocab_size: int, max_length: int = 64, d_model: int = 128,
                 num_heads: int = 4, d_ff: int | None = None, num_layers: int = 4,
                 dropout: float = 0.0, epsilon: float = 1e-5, **kwargs):
        super().__init__(**kwargs)
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.vocab_size, self.max_length, self.d_model = vocab_size, max_length, d_model
        self.num_heads, self.d_ff, self.num_layers = num_heads, d_ff, num_layers
        self.dropout_rate, self.epsilon = dropout, epsilon
        # GPT adds learned positions to unscaled token embeddings.
        self.embedding = PositionalEmbedding(vocab_size, d_model, max_length,
                                             positions="learned", scale=False,
                                             name="embedding")
        self.dropout = keras.layers.Dropout(dropout)
        self.blocks = [DecoderBlock(d_model, num_heads, d_ff, pre_ln=True, dropout=dropout,
                                    epsilon=epsilon, cross_attention=False,
                                    name=f"block_{i}")
                       for i in range(num_layers)]
        self.final_norm = keras.layers.LayerNormalization(
            epsilon=epsilon, name="final_norm")
        # GPT's initialisation, N(0, 0.02), for the output layer: the first
        # predictions are then nearly uniform, a loss of about log(vocab_size).
        self.classifier = keras.layers.Dense(
            vocab_size, kernel_initializer=keras.initializers.RandomNormal(stddev=0.02),
            name="classifier")

    def call(self, tokens, training=None):
        x = self.dropout(self.embedding(tokens), training=training)
        for block in self.blocks:
            x = block(x, training=training)
        return self.classifier(self.final_norm(x))

    def attention_maps(self, tokens):
        """Every layer's self-attention weights, ``(L, B, N, T, T)`` as NumPy."""
        import numpy as np

        x = self.embedding(tokens)
        maps = []
        for block in self.blocks:
            x, scores, _ = block(x, return_attention_scores=True)
            maps.append(ops.convert_to_numpy(scores))
        return np.stack(maps)

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "max_length": self.max_length,
                "d_model": self.d_model, "num_heads": self.num_heads, "d_ff": self.d_ff,
                "num_layers": self.num_layers, "dropout": self.dropout_rate, "epsilon": self.epsilon}
