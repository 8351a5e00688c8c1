"""The Vision Transformer (Dosovitskiy et al., 2021) in NumPy, and attention rollout.

An image becomes a sequence: it is cut into ``P x P`` patches, each patch is
flattened and projected to ``d_model`` numbers (a "word"), a learned class
token is put in front, learned position embeddings are added, and the
sequence goes through the encoder blocks of chapter 9
(:func:`~attention_course.transformer.encoder_block`).  The class token's
final vector, layer-normalised, is the image's representation; a dense layer
turns it into class logits.

:func:`patchify` lays out every patch in the order ``(row, column, channel)``,
which is the order of ``tf.image.extract_patches`` and of a ``Conv2D``
kernel ``(P, P, C, d_model)`` reshaped to ``(P * P * C, d_model)``: a strided
convolution with kernel size and stride ``P`` *is* patchify followed by a
dense projection.  :class:`ViTWeights` reads the weights of
:class:`attention_course.models.vision.VisionTransformer`, so that
:func:`vit_forward` can be compared with the Keras model number for number.

:func:`attention_rollout` (Abnar & Zuidema, 2020) follows the attention
through all the layers, counting the residual connections, to estimate how
much each input token contributes to each output token.

Shapes: ``B`` images, ``H x W`` pixels, ``C`` channels, ``P`` patch size,
``N = (H / P) (W / P)`` patches, ``T = N + 1`` tokens with the class token,
``L`` layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import as_float_array, checked
from .lookup import cosine_similarity
from .normalization import LayerNormWeights
from .transformer import EncoderBlockWeights, encoder_block


def check_patchify(images, patch_size):
    """The arguments of :func:`patchify` (chapter 14): ``(B, H, W, C)`` images that ``P`` divides."""
    return dict(images=_check_images(images, patch_size))


def _check_images(images, patch_size: int) -> np.ndarray:
    images = np.asarray(images)
    if images.ndim != 4:
        raise ValueError(f"images must have shape (B, H, W, C); got {images.shape}")
    if int(patch_size) != patch_size or patch_size < 1:
        raise ValueError(f"patch_size must be a positive integer; got {patch_size!r}")
    _, H, W, _ = images.shape
    if H % patch_size or W % patch_size:
        raise ValueError(f"an image of {H} x {W} pixels cannot be cut into patches of "
                         f"{patch_size} x {patch_size}: both sides must be divisible by "
                         f"{patch_size}")
    return images


@checked(check_patchify)
def patchify(images, patch_size: int) -> np.ndarray:
    """Cut images into non-overlapping square patches and flatten each one.

    Args:
        images: ``(B, H, W, C)``, any dtype; ``H`` and ``W`` divisible by
            ``patch_size``.
        patch_size: ``P``, the side of a patch in pixels.

    Returns:
        ``(B, N, P * P * C)`` with ``N = (H / P) * (W / P)``: the patches in
        reading order (left to right, then top to bottom), each flattened in
        the order (row, column, channel) -- the layout of
        ``tf.image.extract_patches`` and of a flattened ``Conv2D`` kernel.
        Same dtype as ``images``.

    Explained in chapter 14, *The Vision Transformer*, section "Images as sequences of patches".
    """
    B, H, W, C = images.shape
    P = patch_size
    # (B, H, W, C) -> (B, H/P, P, W/P, P, C): each side as (patch index, pixel in patch)
    grid = images.reshape(B, H // P, P, W // P, P, C)
    # -> (B, H/P, W/P, P, P, C): the patch indices first, the pixels of a patch last
    grid = grid.transpose(0, 1, 3, 2, 4, 5)
    return grid.reshape(B, (H // P) * (W // P), P * P * C)


def unpatchify(patches, patch_size: int, height: int, width: int) -> np.ndarray:
    """The inverse of :func:`patchify`: ``(B, N, P * P * C)`` -> ``(B, H, W, C)``.

    ``height`` and ``width`` are the image's size in pixels (the patch grid
    alone does not say whether 16 patches were 4 x 4 or 2 x 8).

    Used in chapter 14, *What the Vision Transformer learned*,
    section "What the class token looks at".
    """
    patches = np.asarray(patches)
    P = patch_size
    if patches.ndim != 3:
        raise ValueError(f"patches must have shape (B, N, P * P * C); got {patches.shape}")
    if int(P) != P or P < 1 or height % P or width % P:
        raise ValueError(f"height={height} and width={width} must be divisible by "
                         f"patch_size={patch_size}")
    B, N, features = patches.shape
    rows, cols = height // P, width // P
    if N != rows * cols or features % (P * P):
        raise ValueError(f"patches of shape {patches.shape} do not tile a {height} x {width} "
                         f"image with {P} x {P} patches ({rows * cols} patches of P * P * C "
                         "features expected)")
    C = features // (P * P)
    grid = patches.reshape(B, rows, cols, P, P, C).transpose(0, 1, 3, 2, 4, 5)
    return grid.reshape(B, height, width, C)


# ----------------------------------------------------------------------------
# The whole Vision Transformer
# ----------------------------------------------------------------------------

@dataclass
class ViTWeights:
    """Every parameter of :class:`attention_course.models.vision.VisionTransformer`.

    ``patch_kernel`` is the patch-embedding convolution's kernel
    ``(P, P, C, d)`` flattened to ``(P * P * C, d)``, so that it multiplies
    the rows of :func:`patchify`.

    Used in chapter 14, *What the Vision Transformer learned*,
    section "The trained model, in NumPy".
    """

    patch_size: int
    patch_kernel: np.ndarray        # (P * P * C, d)
    patch_bias: np.ndarray          # (d,)
    class_token: np.ndarray         # (d,)
    positions: np.ndarray           # (N + 1, d): the class token's position first
    encoder: list[EncoderBlockWeights]
    final_norm: LayerNormWeights
    head_kernel: np.ndarray         # (d, classes)
    head_bias: np.ndarray           # (classes,)
    pre_ln: bool = True

    def __post_init__(self):
        for name in ("patch_kernel", "patch_bias", "class_token", "positions", "head_kernel",
                     "head_bias"):
            setattr(self, name, as_float_array(getattr(self, name), name))
        d = self.patch_kernel.shape[1]
        expected = {"patch_bias": (d,), "class_token": (d,), "head_bias": (self.head_kernel.shape[1],)}
        for name, shape in expected.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} must have shape {shape}; got {getattr(self, name).shape}")
        if self.positions.ndim != 2 or self.positions.shape[1] != d:
            raise ValueError(f"positions must have shape (N + 1, {d}); got {self.positions.shape}")
        if self.head_kernel.shape[0] != d:
            raise ValueError(f"head_kernel must have shape ({d}, classes); got {self.head_kernel.shape}")


def check_embed_patches(images, weights):
    """The images of :func:`embed_patches` (chapter 14): as many patches, channels as the model."""
    images = as_float_array(images, "images")
    _check_images(images, weights.patch_size)
    B, H, W, C = images.shape
    P = weights.patch_size
    n_patches, n_features = (H // P) * (W // P), P * P * C
    if n_features != weights.patch_kernel.shape[0]:
        raise ValueError(f"images with {images.shape[-1]} channels give patches of "
                         f"{n_features} numbers, but the model expects "
                         f"{weights.patch_kernel.shape[0]}")
    if n_patches + 1 != len(weights.positions):
        raise ValueError(f"images of {images.shape[1]} x {images.shape[2]} pixels give "
                         f"{n_patches} patches, but the model has positions for "
                         f"{len(weights.positions) - 1}")
    return dict(images=images)


@checked(check_embed_patches)
def embed_patches(images, weights: ViTWeights) -> np.ndarray:
    """``(B, H, W, C)`` images -> the encoder's input ``(B, N + 1, d)``.

    Patchify, project every patch, put the class token in front and add the
    position embeddings.

    Explained in chapter 14, *The Vision Transformer*, section "Class token, positions, encoder".
    """
    patches = patchify(images, weights.patch_size)                      # (B, N, P*P*C)
    tokens = patches @ weights.patch_kernel + weights.patch_bias        # (B, N, d)
    cls = np.broadcast_to(weights.class_token, (len(tokens), 1, tokens.shape[-1]))
    tokens = np.concatenate([cls.astype(tokens.dtype), tokens], axis=1)  # (B, N + 1, d)
    return tokens + weights.positions


def vit_forward(images, weights: ViTWeights):
    """The Vision Transformer's forward pass (inference).

    Args:
        images: ``(B, H, W, C)``.
        weights: the model's parameters.

    Returns:
        ``logits (B, classes)`` and the self-attention weights of every layer,
        ``(L, B, heads, N + 1, N + 1)`` (token 0 is the class token).

    Explained in chapter 14, *The Vision Transformer*, section "Class token, positions, encoder".
    """
    x = embed_patches(images, weights)
    attention = []
    for block in weights.encoder:
        x, a = encoder_block(x, block, pre_ln=weights.pre_ln)
        attention.append(a)
    representation = weights.final_norm(x[:, 0])             # the class token's, (B, d)
    logits = representation @ weights.head_kernel + weights.head_bias
    return logits, np.stack(attention)


# ----------------------------------------------------------------------------
# What the model looks at
# ----------------------------------------------------------------------------

def check_attention_rollout(attention):
    """The weights of :func:`attention_rollout` (chapter 14): floats ``(L, B, heads, T, T)``."""
    attention = as_float_array(attention, "attention")
    if attention.ndim != 5 or attention.shape[-1] != attention.shape[-2]:
        raise ValueError(f"attention must have shape (L, B, heads, T, T); got {attention.shape}")
    return dict(attention=attention)


@checked(check_attention_rollout)
def attention_rollout(attention, residual: bool = True) -> np.ndarray:
    """Attention rollout: the attention followed through every layer.

    Abnar and Zuidema (2020).  Each layer's attention is averaged over the heads.  With ``residual``, the
    residual connection is counted as a second path that keeps a token where
    it is: the layer's matrix becomes ``0.5 * A + 0.5 * I`` (rows still sum to
    one).  The layers are then chained, ``R = A_L ... A_2 A_1``: ``R[i, j]``
    is how much of input token ``j`` reaches output token ``i`` if information
    flowed along the attention weights only.

    Args:
        attention: ``(L, B, heads, T, T)``, layer 0 the first (closest to the
            input); each row a distribution over the keys.
        residual: add the identity for the residual connections.

    Returns:
        ``(B, T, T)``, rows summing to one (when the input rows do).

    Explained in chapter 14, *What the Vision Transformer learned*,
    section "What the class token looks at".
    """
    layers = attention.mean(axis=2)                                     # (L, B, T, T)
    if residual:
        layers = 0.5 * layers + 0.5 * np.eye(layers.shape[-1], dtype=layers.dtype)
    rollout = layers[0]
    for layer in layers[1:]:  # a loop over layers, not positions: each needs the last
        rollout = layer @ rollout
    return rollout


def position_similarity(positions, grid_shape: tuple[int, int]) -> np.ndarray:
    """Cosine similarity of every patch's position embedding with every other's.

    Args:
        positions: ``(N, d)`` the patches' position embeddings (without the
            class token's), in reading order.
        grid_shape: ``(rows, cols)`` of the patch grid, ``rows * cols = N``.

    Returns:
        ``(rows, cols, rows, cols)``: entry ``[r, c]`` is the ``rows x cols``
        map of patch ``(r, c)``'s similarity to every patch (as in
        Dosovitskiy et al., Fig. 7).

    Used in chapter 14, *What the Vision Transformer learned*,
    section "What the position embeddings learned".
    """
    positions = as_float_array(positions, "positions")
    rows, cols = grid_shape
    if positions.ndim != 2 or len(positions) != rows * cols:
        raise ValueError(f"positions must have shape (N={rows * cols}, d) for a {rows} x {cols} "
                         f"grid; got {positions.shape}")
    return cosine_similarity(positions, positions).reshape(rows, cols, rows, cols)
