"""The Vision Transformer (Dosovitskiy et al., 2021) in Keras, and a small CNN to compare it with.

* :class:`RandomShift` -- training-time augmentation: every image moved by a
  random whole number of pixels, the gap filled with background;
* :class:`VisionTransformer` -- patch embedding (a strided ``Conv2D``), class
  token, learned position embeddings, the pre-LN
  :class:`~attention_course.models.transformer.EncoderBlock` of chapter 9,
  a final layer norm and a classifier on the class token;
* :func:`small_cnn` -- a LeNet-style convolutional network (LeCun et al., 1998).

:mod:`attention_course.vision` is the same Vision Transformer in NumPy; its
:class:`~attention_course.vision.ViTWeights` reads this model's weights.
"""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from .transformer import EncoderBlock


def _image_size(image_size) -> tuple[int, int]:
    height, width = (image_size, image_size) if np.ndim(image_size) == 0 else image_size
    return int(height), int(width)


class RandomShift(keras.layers.Layer):
    """Move every image by ``-max_shift .. max_shift`` pixels in each direction, in training only.

    ``(B, H, W, C) -> (B, H, W, C)``: pixels shifted out are lost, the pixels
    shifted in are 0 (the background of the digits).  Each image gets its own
    shift.  At inference the layer returns its input unchanged.
    """

    def __init__(self, max_shift: int = 1, seed: int | None = None, **kwargs):
        super().__init__(**kwargs)
        if int(max_shift) != max_shift or max_shift < 0:
            raise ValueError(f"max_shift must be a non-negative integer; got {max_shift!r}")
        self.max_shift = int(max_shift)
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, images, training=None):
        if not training or self.max_shift == 0:
            return images
        s = self.max_shift
        batch, height, width = ops.shape(images)[0], images.shape[1], images.shape[2]
        padded = ops.pad(images, [[0, 0], [s, s], [s, s], [0, 0]])
        offsets = keras.random.randint((batch, 2), 0, 2 * s + 1, seed=self.seed_generator)
        # One-hot selection matrices: output row i reads padded row i + offset (likewise columns).
        rows = ops.one_hot(offsets[:, :1] + ops.arange(height)[None], height + 2 * s,
                           dtype=images.dtype)                          # (B, H, H + 2s)
        cols = ops.one_hot(offsets[:, 1:] + ops.arange(width)[None], width + 2 * s,
                           dtype=images.dtype)                          # (B, W, W + 2s)
        return ops.einsum("bip,bpqc,bjq->bijc", rows, padded, cols)


class VisionTransformer(keras.Model):
    """Images ``(B, H, W, C)`` -> class logits ``(B, num_classes)``.

    The image is cut into ``patch_size x patch_size`` patches, each projected
    to ``d_model`` numbers by a ``Conv2D`` whose kernel size and stride are
    the patch size; a learned class token is prepended, learned position
    embeddings added, and ``num_layers`` encoder blocks (pre-LN by default,
    as in the paper) process the ``N + 1`` tokens.  The class token's output,
    layer-normalised, goes to the classifier ``head``.

    ``max_shift > 0`` adds :class:`RandomShift` augmentation in training.
    Unlike the paper, the feed-forward networks use ReLU (chapter 9's block),
    not GELU.
    """

    def __init__(self, image_size=8, channels: int = 1, patch_size: int = 2,
                 num_classes: int = 10, d_model: int = 32, num_heads: int = 4,
                 d_ff: int = 64, num_layers: int = 4, pre_ln: bool = True,
                 dropout: float = 0.0, max_shift: int = 0, epsilon: float = 1e-5, **kwargs):
        super().__init__(**kwargs)
        height, width = _image_size(image_size)
        if height % patch_size or width % patch_size:
            raise ValueError(f"an image of {height} x {width} pixels cannot be cut into "
                             f"patches of {patch_size} x {patch_size}")
        self.image_size, self.channels, self.patch_size = (
            (height, width), channels, patch_size)
        self.grid_shape = (height // patch_size, width // patch_size)
        self.num_patches = self.grid_shape[0] * self.grid_shape[1]
        self.d_model, self.pre_ln = d_model, pre_ln
        self.augment = RandomShift(max_shift, name="augment") if max_shift else None
        self.patch_embedding = keras.layers.Conv2D(d_model, patch_size, strides=patch_size,
                                                   name="patch_embedding")
        self.class_token = self.add_weight(shape=(1, 1, d_model), initializer="zeros",
                                           name="class_token")
        self.position_embedding = self.add_weight(
            shape=(self.num_patches + 1, d_model),
            initializer=keras.initializers.RandomNormal(stddev=0.02),
            name="position_embedding")
        self.dropout = keras.layers.Dropout(dropout)
        self.encoder_blocks = [EncoderBlock(d_model, num_heads, d_ff, pre_ln=pre_ln,
                                            dropout=dropout, epsilon=epsilon,
                                            name=f"encoder_{i}")
                               for i in range(num_layers)]
        self.final_norm = keras.layers.LayerNormalization(
            epsilon=epsilon, name="final_norm")
        self.head = keras.layers.Dense(num_classes, name="head")

    def embed(self, images, training=None):
        """``(B, H, W, C)`` -> ``(B, N + 1, d)``: class token and patch vectors, plus positions."""
        if self.augment is not None:
            images = self.augment(images, training=training)
        patches = self.patch_embedding(images)                       # (B, H/P, W/P, d)
        batch = ops.shape(patches)[0]
        patches = ops.reshape(patches, (batch, self.num_patches, self.d_model))
        cls = ops.broadcast_to(ops.cast(self.class_token, patches.dtype),
                               (batch, 1, self.d_model))
        x = (ops.concatenate([cls, patches], axis=1)
             + ops.cast(self.position_embedding, patches.dtype))
        return self.dropout(x, training=training)

    def call(self, images, training=None, return_attention_scores=False):
        x = self.embed(images, training=training)
        scores = []
        for block in self.encoder_blocks:
            if return_attention_scores:
                x, s = block(x, training=training, return_attention_scores=True)
                scores.append(s)
            else:
                x = block(x, training=training)
        logits = self.head(self.final_norm(x[:, 0]))
        return (logits, scores) if return_attention_scores else logits

    def attention_maps(self, images) -> np.ndarray:
        """Every layer's self-attention weights at inference, NumPy ``(L, B, heads, N + 1, N + 1)``."""
        _, scores = self(images, return_attention_scores=True)
        return np.stack([ops.convert_to_numpy(s) for s in scores])


def small_cnn(image_size=8, channels: int = 1, num_classes: int = 10,
              filters: tuple[int, ...] = (16, 32, 64),
              max_shift: int = 0, dropout: float = 0.0) -> keras.Model:
    """A LeNet-style CNN: ``3 x 3`` convolutions, one max-pooling, global average, dense.

    ``(B, H, W, C)`` -> logits ``(B, num_classes)``.  The first two
    convolutions see the full image, the rest a ``2 x 2``-pooled one.
    ``dropout`` (in training only) drops features of the average before the
    dense classifier; at 0 the model has no dropout layer at all.
    """
    if not 0 <= dropout < 1:
        raise ValueError(f"dropout must lie in [0, 1), got {dropout}")
    height, width = _image_size(image_size)
    images = keras.Input((height, width, channels), name="images")
    x = RandomShift(max_shift, name="augment")(images) if max_shift else images
    for i, f in enumerate(filters):
        x = keras.layers.Conv2D(f, 3, padding="same", activation="relu",
                                name=f"conv_{i}")(x)
        if i == 1:
            x = keras.layers.MaxPooling2D(2, name="pool")(x)
    x = keras.layers.GlobalAveragePooling2D(name="average")(x)
    if dropout:
        x = keras.layers.Dropout(dropout, name="dropout")(x)
    logits = keras.layers.Dense(num_classes, name="head")(x)
    return keras.Model(images, logits, name="small_cnn")
