"""BERT (Devlin et al. 2019) in Keras, from the course's encoder blocks.

* :class:`BertEmbedding` -- word + position + token-type embeddings, summed and
  layer-normalized;
* :class:`BertEncoder` -- the embedding and a stack of post-LN
  :class:`~attention_course.models.transformer.EncoderBlock` s with a GELU
  feed-forward network; :meth:`BertEncoder.from_numpy` builds one with the
  weights of a :class:`~attention_course.bert.BertEncoderWeights` (for example
  the pretrained all-MiniLM-L6-v2);
* :class:`BertForMaskedLM` -- the encoder and BERT's masked-language-model
  head, whose output layer shares its matrix with the word embedding.

:mod:`attention_course.bert` is the same encoder in NumPy.
"""

from __future__ import annotations

import keras
from keras import ops

from .transformer import EncoderBlock, run_encoder_blocks


class BertEmbedding(keras.layers.Layer):
    """``ids``, ``type_ids (B, T)`` -> ``LayerNorm(word + position + token_type)``
    ``(B, T, d)``."""

    def __init__(self, vocab_size: int, d_model: int, max_length: int = 512,
                 type_vocab_size: int = 2, epsilon: float = 1e-12,
                 dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.word_embedding = keras.layers.Embedding(vocab_size, d_model,
                                                     name="word_embedding")
        self.position_embedding = keras.layers.Embedding(max_length, d_model,
                                                         name="position_embedding")
        self.token_type_embedding = keras.layers.Embedding(type_vocab_size, d_model,
                                                           name="token_type_embedding")
        self.norm = keras.layers.LayerNormalization(epsilon=epsilon, name="norm")
        self.dropout = keras.layers.Dropout(dropout)

    def call(self, ids, type_ids=None, training=None):
        if type_ids is None:
            type_ids = ops.zeros_like(ids)
        positions = ops.arange(ops.shape(ids)[1])
        x = (self.word_embedding(ids) + self.position_embedding(positions)[None]
             + self.token_type_embedding(type_ids))
        return self.dropout(self.norm(x), training=training)


class BertEncoder(keras.Model):
    """The BERT encoder: ``ids (B, T)`` (0 = ``[PAD]``) -> hidden states
    ``(B, T, d_model)``.

    ``call(ids, type_ids=None, attention_mask=None)``; ``attention_mask``
    (True = real token) defaults to ``ids != 0``.  With
    ``return_attention_scores=True`` it also returns every block's attention,
    a list of ``L`` arrays ``(B, heads, T, T)``.  The defaults are
    all-MiniLM-L6-v2's sizes.
    """

    def __init__(self, vocab_size: int = 30522, d_model: int = 384, num_heads: int = 12,
                 d_ff: int = 1536, num_layers: int = 6, max_length: int = 512,
                 type_vocab_size: int = 2, epsilon: float = 1e-12,
                 dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.embedding = BertEmbedding(vocab_size, d_model, max_length, type_vocab_size,
                                       epsilon, dropout, name="embedding")
        self.blocks = [EncoderBlock(d_model, num_heads, d_ff, pre_ln=False,
                                    dropout=dropout, epsilon=epsilon,
                                    activation="gelu", name=f"layer_{i}")
                       for i in range(num_layers)]

    def call(self, ids, type_ids=None, attention_mask=None, training=None,
             return_attention_scores=False):
        if attention_mask is None:
            attention_mask = ops.not_equal(ids, 0)
        x = self.embedding(ids, type_ids, training=training)
        return run_encoder_blocks(self.blocks, x, attention_mask, training,
                                  return_attention_scores)

    @classmethod
    def from_numpy(cls, weights) -> "BertEncoder":
        """A model with the sizes and the values of a
        :class:`~attention_course.bert.BertEncoderWeights`."""
        e, block = weights.embeddings, weights.blocks[0]
        model = cls(vocab_size=len(e.word), d_model=weights.d_model,
                    num_heads=weights.num_heads,
                    d_ff=block.feed_forward.kernel_1.shape[1],
                    num_layers=len(weights.blocks), max_length=len(e.position),
                    type_vocab_size=len(e.token_type), epsilon=e.norm.epsilon)
        model(ops.zeros((1, 2), dtype="int32") + 1)  # build every weight
        model.set_numpy_weights(weights)
        return model

    def set_numpy_weights(self, weights) -> None:
        """Copy a :class:`~attention_course.bert.BertEncoderWeights` into this
        (built) model."""
        if len(weights.blocks) != len(self.blocks):
            raise ValueError(f"the weights have {len(weights.blocks)} blocks, "
                             f"the model {len(self.blocks)}")
        e = weights.embeddings
        pairs = [(self.embedding.word_embedding.embeddings, e.word),
                 (self.embedding.position_embedding.embeddings, e.position),
                 (self.embedding.token_type_embedding.embeddings, e.token_type),
                 (self.embedding.norm.gamma, e.norm.gamma),
                 (self.embedding.norm.beta, e.norm.beta)]
        for layer, w in zip(self.blocks, weights.blocks):
            attention, a = layer.self_attention, w.self_attention
            for dense, kernel, bias in (
                    (attention.query_dense, a.query_kernel, a.query_bias),
                    (attention.key_dense, a.key_kernel, a.key_bias),
                    (attention.value_dense, a.value_kernel, a.value_bias),
                    (attention.output_dense, a.output_kernel, a.output_bias)):
                pairs += [(dense.kernel, kernel), (dense.bias, bias)]
            ff, f = layer.feed_forward, w.feed_forward
            if f.activation != ff.activation:
                raise ValueError(f"the weights' feed-forward uses {f.activation}, "
                                 f"the model {ff.activation}")
            pairs += [(ff.hidden.kernel, f.kernel_1), (ff.hidden.bias, f.bias_1),
                      (ff.output_dense.kernel, f.kernel_2),
                      (ff.output_dense.bias, f.bias_2)]
            for norm, n in ((layer.attention_norm, w.attention_norm),
                            (layer.feed_forward_norm, w.feed_forward_norm)):
                pairs += [(norm.gamma, n.gamma), (norm.beta, n.beta)]
        for variable, value in pairs:
            if tuple(variable.shape) != value.shape:
                raise ValueError(
                    f"{variable.path}: the model has shape {tuple(variable.shape)}, "
                    f"the weights {value.shape}")
            variable.assign(value)


class BertForMaskedLM(keras.Model):
    """BERT with the masked-language-model head: ``(ids, type_ids)`` ->
    logits ``(B, T, V)``.

    The head, as in BERT: ``Dense(d, gelu)``, a layer norm, then a product with
    the *word embedding matrix* (transposed) plus a bias: the output layer
    shares its weights with the input embedding.
    """

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 4,
                 d_ff: int = 256, num_layers: int = 2, max_length: int = 64,
                 type_vocab_size: int = 2, epsilon: float = 1e-12,
                 dropout: float = 0.0, **kwargs):
        super().__init__(**kwargs)
        self.encoder = BertEncoder(vocab_size, d_model, num_heads, d_ff, num_layers,
                                   max_length, type_vocab_size, epsilon, dropout,
                                   name="encoder")
        self.transform = keras.layers.Dense(d_model, activation="gelu",
                                            name="transform")
        self.transform_norm = keras.layers.LayerNormalization(epsilon=epsilon,
                                                              name="transform_norm")
        self.output_bias = self.add_weight(shape=(vocab_size,), initializer="zeros",
                                           name="output_bias")

    def call(self, inputs, training=None):
        ids, type_ids = inputs
        h = self.transform_norm(
            self.transform(self.encoder(ids, type_ids, training=training)))
        table = self.encoder.embedding.word_embedding.embeddings  # (V, d)
        return ops.matmul(h, ops.transpose(table)) + self.output_bias


class MaskedLMBatches(keras.utils.PyDataset):
    """Batches for masked-language-model training, corrupted afresh in every epoch.

    Each epoch re-draws which tokens are selected and how they are corrupted
    (:func:`~attention_course.bert_pretraining.mask_tokens`, 15 %; 80/10/10),
    so the model never sees the same corruption twice ("dynamic masking",
    Liu et al. 2019; BERT itself fixed ten corruptions per sentence).

    Yields ``((inputs, type_ids), labels)`` with ``labels`` = -100 where nothing
    is predicted: the loss must ignore that class
    (``SparseCategoricalCrossentropy(ignore_class=-100)``).
    """

    def __init__(self, ids, type_ids, *, mask_id: int, vocab_size: int, special_ids,
                 batch_size: int = 64, seed: int = 0, attention_mask=None, **kwargs):
        super().__init__(**kwargs)
        import numpy as np

        from ..bert_pretraining import mask_tokens

        self.ids, self.type_ids = np.asarray(ids), np.asarray(type_ids)
        if self.ids.ndim != 2 or self.type_ids.shape != self.ids.shape:
            raise ValueError(
                f"ids and type_ids must both be (n, T); got {self.ids.shape} "
                f"and {self.type_ids.shape}")
        self.batch_size = batch_size
        self._corrupt = lambda epoch: mask_tokens(
            self.ids, mask_id=mask_id, vocab_size=vocab_size, special_ids=special_ids,
            seed=[seed, epoch], attention_mask=attention_mask)
        self.epoch = 0
        self.corrupted = self._corrupt(0)

    def __len__(self) -> int:
        return -(-len(self.ids) // self.batch_size)

    def __getitem__(self, index):
        rows = slice(index * self.batch_size, (index + 1) * self.batch_size)
        return ((self.corrupted.inputs[rows], self.type_ids[rows]),
                self.corrupted.labels[rows])

    def on_epoch_end(self):
        self.epoch += 1
        self.corrupted = self._corrupt(self.epoch)


class BertClassifier(keras.Model):
    """BERT with a classification head: ``(ids, type_ids)`` -> logits ``(B, classes)``.

    The head reads one vector per sequence: the mean of the last hidden states
    over the real tokens (``pooling="mean"``, all-MiniLM-L6-v2's sentence
    embedding before it is normalized) or the output at ``[CLS]``
    (``pooling="cls"``, BERT's own choice), and maps it to one score per class
    with a single dense layer.  Fine-tuning trains the head and the encoder.
    """

    def __init__(self, encoder: BertEncoder, num_classes: int = 2,
                 pooling: str = "mean", dropout: float = 0.1, **kwargs):
        super().__init__(**kwargs)
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls'; got {pooling!r}")
        self.encoder, self.pooling = encoder, pooling
        self.dropout = keras.layers.Dropout(dropout)
        self.head = keras.layers.Dense(num_classes, name="head")

    def call(self, inputs, training=None):
        ids, type_ids = inputs
        real = ops.cast(ops.not_equal(ids, 0), "float32")[..., None]        # (B, T, 1)
        hidden = self.encoder(ids, type_ids, training=training)             # (B, T, d)
        if self.pooling == "mean":
            pooled = ops.sum(hidden * real, axis=1) / ops.sum(real, axis=1)  # (B, d)
        else:
            pooled = hidden[:, 0]                                           # [CLS]
        return self.head(self.dropout(pooled, training=training))      # (B, classes)
