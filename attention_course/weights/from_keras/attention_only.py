"""The attention-only models of chapters 5 and 6: its Keras weights as NumPy arrays (see :mod:`attention_course.weights.from_keras`)."""

from __future__ import annotations

from ...attention_only import AttentionOnlyWeights
from ..keras_weights import to_numpy
from . import multi_head_attention


def attention_only(model) -> AttentionOnlyWeights:
    """A model made by :func:`attention_course.models.attention_only.build_model`
    (with its mark embedding, if it has one)."""
    import keras

    embedding = model.get_layer("embedding")
    attention_layers = [layer for layer in model.layers if isinstance(layer, keras.layers.MultiHeadAttention)]
    readout = model.get_layer("readout")
    mark = to_numpy(embedding.mark_embedding) if embedding.with_mark else None
    return AttentionOnlyWeights(to_numpy(embedding.token_embeddings), to_numpy(embedding.position_embeddings),
                                [multi_head_attention(layer) for layer in attention_layers],
                                to_numpy(readout.kernel), to_numpy(readout.bias),
                                getattr(model, "readout_position", None), mark)
