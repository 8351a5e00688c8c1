"""The BERT encoder of chapter 12: its Keras weights as NumPy arrays (see :mod:`attention_course.weights.from_keras`)."""

from __future__ import annotations

from ...bert import BertEmbeddingWeights, BertEncoderWeights
from ..keras_weights import to_numpy
from . import encoder_block, layer_norm


def bert_encoder(model) -> BertEncoderWeights:
    """A built :class:`attention_course.models.bert.BertEncoder`."""
    if not model.built:
        raise ValueError("the Keras model has no weights yet: call it once first")
    e = model.embedding
    embeddings = BertEmbeddingWeights(
        to_numpy(e.word_embedding.embeddings), to_numpy(e.position_embedding.embeddings),
        to_numpy(e.token_type_embedding.embeddings), layer_norm(e.norm))
    return BertEncoderWeights(embeddings, [encoder_block(b) for b in model.blocks])
