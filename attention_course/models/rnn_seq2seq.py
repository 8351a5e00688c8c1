"""LSTM encoder--decoders: without attention (chapter 1) and with Bahdanau's (chapter 3).

Encoder: embedding -> bidirectional LSTM.  Its final states initialise the
decoder, and *without* attention (:class:`RNNSeq2Seq`) they are the only
thing the decoder learns about the source sentence: ``units`` numbers of
hidden state and ``units`` of cell state, whatever the sentence's length.

*With* attention (:class:`BahdanauSeq2Seq`) the decoder is the model of
Bahdanau et al. (2015): before each step it scores every annotation ``h_j``
against its previous state, ``e_ij = v^T tanh(W s_{i-1} + U h_j)``
(:class:`BahdanauAttention`), feeds the context vector ``c_i`` into its
recurrent step together with the previous word, and predicts the next word
from ``[s_i; c_i; y_{i-1}]``.
"""

from __future__ import annotations

import keras


class RNNSeq2Seq(keras.Model):
    """Encoder--decoder translator without attention.

    Inputs: ``source (B, S)`` and ``decoder_input (B, T)`` integer ids (0 = padding).
    Output: logits ``(B, T, target_vocab_size)`` for the next target word.
    """

    def __init__(self, source_vocab_size: int, target_vocab_size: int, units: int = 128,
                 embedding_dim: int = 64, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.source_embedding = keras.layers.Embedding(
            source_vocab_size, embedding_dim, mask_zero=True, name="source_embedding")
        self.encoder = keras.layers.Bidirectional(
            keras.layers.LSTM(units // 2, return_sequences=True, return_state=True),
            name="encoder")
        self.target_embedding = keras.layers.Embedding(
            target_vocab_size, embedding_dim, name="target_embedding")
        self.build_decoder()
        self.classifier = keras.layers.Dense(target_vocab_size, name="classifier")

    def build_decoder(self):
        self.decoder = keras.layers.LSTM(self.units, return_sequences=True,
                                         return_state=True, name="decoder")

    def encode(self, source):
        """``source (B, S)`` -> annotations ``(B, S, units)``, final ``[h, c]``, mask ``(B, S)``."""
        mask = keras.ops.not_equal(source, 0)
        states, h_fwd, c_fwd, h_bwd, c_bwd = self.encoder(
            self.source_embedding(source), mask=mask)
        h = keras.ops.concatenate([h_fwd, h_bwd], axis=-1)
        c = keras.ops.concatenate([c_fwd, c_bwd], axis=-1)
        return states, [h, c], mask

    def decode(self, decoder_input, annotations, state, source_mask):
        """Run the decoder over ``decoder_input (B, T)`` from ``state = [h, c]``.

        Returns logits ``(B, T, V)``, the new ``[h, c]`` and the attention
        weights ``(B, T, S)`` (None: this decoder does not attend).
        """
        outputs, h, c = self.decoder(self.target_embedding(decoder_input),
                                     initial_state=state)
        return self.classifier(outputs), [h, c], None

    def call(self, inputs):
        source, decoder_input = inputs
        annotations, state, mask = self.encode(source)
        logits, _, _ = self.decode(decoder_input, annotations, state, mask)
        return logits

    def greedy_step(self, source):
        """A ``step`` function for :func:`attention_course.decoding.greedy_decode`.

        Encodes ``source`` once; each step feeds the newest token and carries
        the LSTM state, so decoding costs one decoder step per word.
        """
        annotations, initial, mask = self.encode(source)

        def step(tokens, state):
            logits, state, weights = self.decode(tokens[:, -1:], annotations, state, mask)
            attention = None if weights is None else weights[:, 0]
            return logits[:, -1], state, attention

        return step, initial


class BahdanauAttention(keras.layers.Layer):
    """Additive attention with learned projections: ``e_j = v^T tanh(W s + U h_j)``.

    ``project_keys(annotations (B, S, D))`` computes ``U h_j`` once per
    sentence; ``call(state (B, units), keys (B, S, A), annotations, mask (B, S))``
    returns the context ``(B, D)`` and the weights ``(B, S)``.
    """

    def __init__(self, attention_units: int, **kwargs):
        super().__init__(**kwargs)
        self.W = keras.layers.Dense(attention_units, use_bias=False, name="W")
        self.U = keras.layers.Dense(attention_units, use_bias=False, name="U")
        self.v = keras.layers.Dense(1, use_bias=False, name="v")

    def project_keys(self, annotations):
        return self.U(annotations)

    def call(self, state, keys, annotations, mask):
        scores = self.v(keras.ops.tanh(self.W(state)[:, None, :] + keys))[..., 0]   # (B, S)
        scores = keras.ops.where(mask, scores, -1e9)   # padding gets no weight
        weights = keras.ops.softmax(scores, axis=-1)
        context = keras.ops.einsum("bs,bsd->bd", weights, annotations)
        return context, weights


class BahdanauSeq2Seq(RNNSeq2Seq):
    """Chapter 1's encoder with the attentive decoder of Bahdanau et al. (2015).

    Each step ``i``: ``c_i`` from the previous state ``s_{i-1}`` (additive
    attention over the annotations), ``s_i = LSTM([y_{i-1}; c_i], s_{i-1})``,
    and the next word from ``tanh(W_o [s_i; c_i; y_{i-1}])`` (the paper uses
    a maxout layer there; ``tanh`` is the simpler choice).
    """

    def build_decoder(self):
        self.attention = BahdanauAttention(self.units, name="attention")
        self.decoder_cell = keras.layers.LSTMCell(self.units, name="decoder")
        self.readout = keras.layers.Dense(self.units, activation="tanh", name="readout")

    def decode_step(self, previous_word, state, keys, annotations, source_mask):
        """One step from ``previous_word (B, E)`` (embedded) and ``state = [h, c]``.

        Returns the readout ``(B, units)``, the new ``[h, c]`` and the weights ``(B, S)``.
        """
        context, weights = self.attention(state[0], keys, annotations, source_mask)
        h, state = self.decoder_cell(
            keras.ops.concatenate([previous_word, context], axis=-1), state)
        readout = self.readout(keras.ops.concatenate([h, context, previous_word], axis=-1))
        return readout, state, weights

    def decode(self, decoder_input, annotations, state, source_mask):
        keys = self.attention.project_keys(annotations)
        words = keras.ops.transpose(self.target_embedding(decoder_input), (1, 0, 2))  # (T, B, E)

        # keras.ops.scan stacks the carry of every step, so the carry holds the
        # step's outputs too: [h, c, readout (B, units), weights (B, S)].
        def step(carry, previous_word):
            readout, (h, c), weights = self.decode_step(previous_word, carry[:2], keys,
                                                        annotations, source_mask)
            carry = [h, c, readout, weights]
            return carry, carry

        batch = keras.ops.shape(decoder_input)[0]
        init = [*state, keras.ops.zeros((batch, self.units)),
                keras.ops.zeros(keras.ops.shape(source_mask), dtype=annotations.dtype)]
        last, (_, _, readouts, weights) = keras.ops.scan(step, init, words)
        state = last[:2]
        readouts = keras.ops.transpose(readouts, (1, 0, 2))   # (B, T, units)
        weights = keras.ops.transpose(weights, (1, 0, 2))     # (B, T, S)
        return self.classifier(readouts), state, weights
