"""An LSTM encoder--decoder, with or without additive attention.

Encoder: embedding -> bidirectional LSTM.  Its final states initialise the
decoder, and *without* attention they are the only thing the decoder learns
about the source sentence: one vector of ``units`` numbers, whatever the
sentence's length.  *With* attention, every decoder step also reads a weighted
average of all the encoder states, the weights coming from
``keras.layers.AdditiveAttention`` (Bahdanau's score without the projections).

As in Luong et al. (2015), the context vector is combined with the decoder's
output (``tanh(W [s_t; c_t])``) rather than fed back into the LSTM as in
Bahdanau et al. (2015): simpler to write in Keras and just as effective here.
"""

from __future__ import annotations

import keras


class RNNSeq2Seq(keras.Model):
    """Encoder--decoder translator.

    Inputs: ``source (B, S)`` and ``decoder_input (B, T)`` integer ids (0 = padding).
    Output: logits ``(B, T, target_vocab_size)`` for the next target word.
    """

    def __init__(self, source_vocab_size: int, target_vocab_size: int, units: int = 128,
                 embedding_dim: int = 64, attention: bool = False, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.uses_attention = attention
        self.source_embedding = keras.layers.Embedding(source_vocab_size, embedding_dim,
                                                       mask_zero=True, name="source_embedding")
        self.encoder = keras.layers.Bidirectional(
            keras.layers.LSTM(units // 2, return_sequences=True, return_state=True), name="encoder")
        self.target_embedding = keras.layers.Embedding(target_vocab_size, embedding_dim,
                                                       name="target_embedding")
        self.decoder = keras.layers.LSTM(units, return_sequences=True, return_state=True,
                                         name="decoder")
        if attention:
            self.attention = keras.layers.AdditiveAttention(use_scale=True, name="attention")
            self.combine = keras.layers.Dense(units, activation="tanh", name="combine")
        self.classifier = keras.layers.Dense(target_vocab_size, name="classifier")

    def encode(self, source):
        """``source (B, S)`` -> encoder states ``(B, S, units)``, final ``[h, c]``, mask ``(B, S)``."""
        mask = keras.ops.not_equal(source, 0)
        states, h_fwd, c_fwd, h_bwd, c_bwd = self.encoder(self.source_embedding(source), mask=mask)
        h = keras.ops.concatenate([h_fwd, h_bwd], axis=-1)
        c = keras.ops.concatenate([c_fwd, c_bwd], axis=-1)
        return states, [h, c], mask

    def decode(self, decoder_input, encoder_states, state, source_mask):
        """Run the decoder over ``decoder_input (B, T)`` from ``state``.

        Returns logits ``(B, T, V)``, the new ``[h, c]`` and the attention
        weights ``(B, T, S)`` (None without attention).
        """
        outputs, h, c = self.decoder(self.target_embedding(decoder_input), initial_state=state)
        weights = None
        if self.uses_attention:
            context, weights = self.attention([outputs, encoder_states], mask=[None, source_mask],
                                              return_attention_scores=True)
            outputs = self.combine(keras.ops.concatenate([outputs, context], axis=-1))
        return self.classifier(outputs), [h, c], weights

    def call(self, inputs):
        source, decoder_input = inputs
        encoder_states, state, mask = self.encode(source)
        logits, _, _ = self.decode(decoder_input, encoder_states, state, mask)
        return logits

    def greedy_step(self, source):
        """A ``step`` function for :func:`attention_course.decoding.greedy_decode`.

        Encodes ``source`` once; each step feeds the newest token and carries
        the LSTM state, so decoding costs one LSTM step per word.
        """
        encoder_states, initial, mask = self.encode(source)

        def step(tokens, state):
            logits, state, weights = self.decode(tokens[:, -1:], encoder_states, state, mask)
            attention = None if weights is None else weights[:, 0]
            return logits[:, -1], state, attention

        return step, initial
