"""Every Keras-to-NumPy name mapping of the course: which Keras weight is which NumPy array.

Each function reads a built Keras layer or model of :mod:`attention_course.models`
(or a ``keras.layers`` layer) into the weights dataclass of its NumPy twin.
This module holds the layers, the Transformer blocks and the encoder--decoder;
a model that one chapter uses has its reader in a submodule of its own
(``from_keras.attention_only``, ``.bert``, ``.gpt``, ``.vision``), so that a page
depends only on the NumPy modules it reads weights into.  The chapters and
tests call these directly (``from_keras.encoder_block(block)``, and
``gpt_from_keras.gpt(model)`` after ``from attention_course.weights.from_keras
import gpt as gpt_from_keras``).  The NumPy
modules import nothing from here, so the dependency runs one way: an edit to
``vision.py`` changes what depends on the vision transformer, not every page
that reads weights out of Keras.  Only this package
knows the Keras models' attribute paths; every array goes through
:func:`~attention_course.weights.keras_weights.to_numpy`.
"""

from __future__ import annotations

import numpy as np

from ...multi_head import MultiHeadAttentionWeights
from ...normalization import LayerNormWeights
from ...positional_encoding import sinusoidal_encoding
from ...self_attention import SelfAttentionWeights
from ...transformer import DecoderBlockWeights, EncoderBlockWeights, FeedForwardWeights, TransformerWeights
from ..keras_weights import to_numpy

NOT_BUILT = "the Keras layer has no weights yet: call it once (or build it) first"


def _require_built(layer) -> None:
    if not layer.built:
        raise ValueError(NOT_BUILT)


# ---------------------------------------------------------------------------
# Layers
# ---------------------------------------------------------------------------

def self_attention(layer) -> SelfAttentionWeights:
    """A one-head ``keras.layers.MultiHeadAttention(use_bias=False)``.

    Keras stores the head as its own axis: kernels ``(d_model, 1, d_k)`` for
    the query and key, ``(d_model, 1, d_v)`` for the value and
    ``(1, d_v, d_out)`` for the output projection.  With one head, dropping
    that axis leaves the matrices of the formula, plus ``W_output``.
    """
    _require_built(layer)
    if layer.num_heads != 1:
        raise ValueError(f"self-attention has one head; this layer has {layer.num_heads} "
                         "(use attention_course.multi_head for several)")
    if layer.query_dense.bias is not None:
        raise ValueError("the formula has no biases: build the layer with use_bias=False "
                         "(attention_course.multi_head handles biases)")
    return SelfAttentionWeights(W_query=to_numpy(layer.query_dense.kernel)[:, 0],
                                W_key=to_numpy(layer.key_dense.kernel)[:, 0],
                                W_value=to_numpy(layer.value_dense.kernel)[:, 0],
                                W_output=to_numpy(layer.output_dense.kernel)[0])


def multi_head_attention(layer) -> MultiHeadAttentionWeights:
    """A built ``keras.layers.MultiHeadAttention``: kernels ``(d, heads, width)``, output ``(heads, width, d)``."""
    _require_built(layer)
    return MultiHeadAttentionWeights(
        query_kernel=to_numpy(layer.query_dense.kernel), query_bias=to_numpy(layer.query_dense.bias),
        key_kernel=to_numpy(layer.key_dense.kernel), key_bias=to_numpy(layer.key_dense.bias),
        value_kernel=to_numpy(layer.value_dense.kernel), value_bias=to_numpy(layer.value_dense.bias),
        output_kernel=to_numpy(layer.output_dense.kernel), output_bias=to_numpy(layer.output_dense.bias))


def layer_norm(layer) -> LayerNormWeights:
    """``gamma``, ``beta``, ``axis`` and ``epsilon`` of a built ``keras.layers.LayerNormalization``."""
    _require_built(layer)
    if getattr(layer, "rms_scaling", False):
        raise ValueError("rms_scaling=True is not supported (Keras deprecates it)")
    axis = layer.axis if isinstance(layer.axis, int) else tuple(layer.axis)
    return LayerNormWeights(to_numpy(layer.gamma), to_numpy(layer.beta), axis, float(layer.epsilon))


# ---------------------------------------------------------------------------
# attention_course.models.transformer: blocks and the encoder--decoder
# ---------------------------------------------------------------------------

def feed_forward(layer) -> FeedForwardWeights:
    """A built :class:`attention_course.models.transformer.FeedForward`."""
    return FeedForwardWeights(to_numpy(layer.hidden.kernel), to_numpy(layer.hidden.bias),
                              to_numpy(layer.output_dense.kernel), to_numpy(layer.output_dense.bias),
                              activation=getattr(layer, "activation", "relu"))


def encoder_block(block) -> EncoderBlockWeights:
    """A built :class:`attention_course.models.transformer.EncoderBlock`."""
    return EncoderBlockWeights(multi_head_attention(block.self_attention), layer_norm(block.attention_norm),
                               feed_forward(block.feed_forward), layer_norm(block.feed_forward_norm))


def decoder_block(block) -> DecoderBlockWeights:
    """A built :class:`attention_course.models.transformer.DecoderBlock` (with or without cross-attention)."""
    cross = block.cross_attention is not None
    return DecoderBlockWeights(multi_head_attention(block.self_attention), layer_norm(block.self_attention_norm),
                               multi_head_attention(block.cross_attention) if cross else None,
                               layer_norm(block.cross_attention_norm) if cross else None,
                               feed_forward(block.feed_forward), layer_norm(block.feed_forward_norm))


def transformer(model) -> TransformerWeights:
    """A built :class:`attention_course.models.transformer.Transformer`."""
    if not model.built:
        raise ValueError("the Keras model has no weights yet: call it once first")
    if not model.scale_attention:
        raise ValueError("the NumPy forward pass implements scaled attention only "
                         "(the model was built with scale_attention=False)")

    def positions(embedding):
        if embedding.positions == "learned":
            return to_numpy(embedding.position_embedding.embeddings)
        if embedding.positions == "sinusoidal":
            return sinusoidal_encoding(embedding.max_length, embedding.d_model)
        return np.zeros((embedding.max_length, embedding.d_model), np.float32)

    def norm(layer):
        return None if layer is None else layer_norm(layer)

    return TransformerWeights(
        source_embedding=to_numpy(model.source_embedding.token_embedding.embeddings),
        target_embedding=to_numpy(model.target_embedding.token_embedding.embeddings),
        source_positions=positions(model.source_embedding),
        target_positions=positions(model.target_embedding),
        encoder=[encoder_block(b) for b in model.encoder_blocks],
        decoder=[decoder_block(b) for b in model.decoder_blocks],
        classifier_kernel=to_numpy(model.classifier.kernel),
        classifier_bias=to_numpy(model.classifier.bias),
        final_encoder_norm=norm(model.final_encoder_norm),
        final_decoder_norm=norm(model.final_decoder_norm),
        pre_ln=model.pre_ln, scale_embeddings=model.scale_embeddings, causal=model.causal)
