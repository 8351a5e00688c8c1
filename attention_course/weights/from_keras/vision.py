"""The vision transformer of chapter 14: its Keras weights as NumPy arrays (see :mod:`attention_course.weights.from_keras`)."""

from __future__ import annotations

from ...vision import ViTWeights
from ..keras_weights import to_numpy
from . import encoder_block, layer_norm


def vision_transformer(model) -> ViTWeights:
    """A built :class:`attention_course.models.vision.VisionTransformer`."""
    if not model.built:
        raise ValueError("the Keras model has no weights yet: call it once first")
    kernel = to_numpy(model.patch_embedding.kernel)            # (P, P, C, d)
    return ViTWeights(
        patch_size=model.patch_size,
        patch_kernel=kernel.reshape(-1, kernel.shape[-1]),
        patch_bias=to_numpy(model.patch_embedding.bias),
        class_token=to_numpy(model.class_token).reshape(-1),
        positions=to_numpy(model.position_embedding),
        encoder=[encoder_block(block) for block in model.encoder_blocks],
        final_norm=layer_norm(model.final_norm),
        head_kernel=to_numpy(model.head.kernel), head_bias=to_numpy(model.head.bias),
        pre_ln=model.pre_ln)
