"""The GPT of chapter 13: its Keras weights as NumPy arrays (see :mod:`attention_course.weights.from_keras`)."""

from __future__ import annotations

from ...gpt import GPTWeights
from ..keras_weights import to_numpy
from . import decoder_block, layer_norm


def gpt(model) -> GPTWeights:
    """A built :class:`attention_course.models.gpt.GPT`."""
    if not model.built:
        raise ValueError("the Keras model has no weights yet: call it once first")
    return GPTWeights(
        token_embedding=to_numpy(model.embedding.token_embedding.embeddings),
        position_embedding=to_numpy(model.embedding.position_embedding.embeddings),
        blocks=[decoder_block(block) for block in model.blocks],
        final_norm=layer_norm(model.final_norm),
        classifier_kernel=to_numpy(model.classifier.kernel),
        classifier_bias=to_numpy(model.classifier.bias))
