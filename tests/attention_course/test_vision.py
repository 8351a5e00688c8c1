"""Chapter 14: patchify == TensorFlow, the NumPy Vision Transformer == Keras, attention rollout."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from attention_course import vision
from attention_course.models.vision import RandomShift, VisionTransformer, small_cnn
from attention_course.weights.from_keras import vision as vision_from_keras
from conftest import numpy

# A whole model stacks many float32 layers; its logits agree to a few 1e-6 (as in test_transformer).
MODEL_TOL = {"rtol": 1e-5, "atol": 1e-5}
TOL = {"rtol": 1e-5, "atol": 1e-6}


def random_images(rng, shape, dtype):
    if np.issubdtype(np.dtype(dtype), np.integer):
        return rng.integers(0, 100, size=shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def extract_patches(images, patch_size):
    """TensorFlow's patches, ``(B, H/P, W/P, P*P*C)``, flattened to ``(B, N, P*P*C)``."""
    P = patch_size
    patches = tf.image.extract_patches(images, sizes=[1, P, P, 1], strides=[1, P, P, 1],
                                       rates=[1, 1, 1, 1], padding="VALID")
    patches = patches.numpy()
    return patches.reshape(patches.shape[0], -1, patches.shape[-1])


# ----------------------------------------------------------------------------
# patchify
# ----------------------------------------------------------------------------

SHAPES = {  # (B, H, W, C), patch size
    "digits 8x8, P=2": ((3, 8, 8, 1), 2),
    "8x8, P=4": ((2, 8, 8, 1), 4),
    "8x8, P=1 (pixels)": ((2, 8, 8, 1), 1),
    "8x8, P=8 (one patch)": ((2, 8, 8, 3), 8),
    "RGB 12x12, P=3": ((2, 12, 12, 3), 3),
    "non-square 6x10, P=2": ((4, 6, 10, 2), 2),
    "one image 16x8, P=4": ((1, 16, 8, 3), 4),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8", "int32"])
@pytest.mark.parametrize("case", SHAPES)
def test_patchify_matches_extract_patches(rng, case, dtype):
    shape, P = SHAPES[case]
    images = random_images(rng, shape, dtype)
    got = vision.patchify(images, P)
    B, H, W, C = shape
    assert got.shape == (B, (H // P) * (W // P), P * P * C) and got.dtype == images.dtype
    np.testing.assert_array_equal(got, extract_patches(images, P))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", SHAPES)
def test_patchify_matches_strided_convolution(rng, case, dtype):
    """A Conv2D with kernel size = stride = P and an identity kernel copies out each patch."""
    shape, P = SHAPES[case]
    C = shape[-1]
    images = random_images(rng, shape, dtype)
    features = P * P * C
    conv = keras.layers.Conv2D(features, P, strides=P, use_bias=False, dtype=dtype)
    conv.build(shape)
    conv.set_weights([np.eye(features, dtype=dtype).reshape(P, P, C, features)])
    expected = numpy(conv(images)).reshape(shape[0], -1, features)
    np.testing.assert_allclose(vision.patchify(images, P), expected,
                               **(TOL if dtype == "float32" else {"rtol": 1e-12, "atol": 0}))


def test_patchify_by_hand():
    """Pixel values 0..63 of one 8x8 image: the first patch is pixels 0, 1, 8, 9."""
    image = np.arange(64).reshape(1, 8, 8, 1)
    patches = vision.patchify(image, 2)
    assert patches.shape == (1, 16, 4)
    np.testing.assert_array_equal(patches[0, 0], [0, 1, 8, 9])
    np.testing.assert_array_equal(patches[0, 1], [2, 3, 10, 11])     # to the right
    np.testing.assert_array_equal(patches[0, 4], [16, 17, 24, 25])   # the row of patches below
    np.testing.assert_array_equal(patches[0, 15], [54, 55, 62, 63])
    two_channels = np.stack([image[..., 0], 100 + image[..., 0]], axis=-1)
    # inside a patch: (row, column, channel), channels fastest
    np.testing.assert_array_equal(vision.patchify(two_channels, 2)[0, 0], [0, 100, 1, 101, 8, 108, 9, 109])


@pytest.mark.parametrize("case", SHAPES)
def test_unpatchify_inverts_patchify(rng, case):
    shape, P = SHAPES[case]
    images = rng.normal(size=shape).astype("float32")
    patches = vision.patchify(images, P)
    np.testing.assert_array_equal(vision.unpatchify(patches, P, shape[1], shape[2]), images)


def test_patchify_rejects_bad_input():
    with pytest.raises(ValueError, match="divisible by 3"):
        vision.patchify(np.zeros((2, 8, 8, 1)), 3)
    with pytest.raises(ValueError, match="divisible"):
        vision.patchify(np.zeros((2, 8, 6, 1)), 4)
    with pytest.raises(ValueError, match=r"\(B, H, W, C\)"):
        vision.patchify(np.zeros((8, 8, 1)), 2)
    with pytest.raises(ValueError, match="positive integer"):
        vision.patchify(np.zeros((1, 8, 8, 1)), 0)
    with pytest.raises(ValueError, match="do not tile"):
        vision.unpatchify(np.zeros((1, 16, 4)), 2, 8, 6)
    with pytest.raises(ValueError, match="divisible"):
        vision.unpatchify(np.zeros((1, 16, 4)), 3, 8, 8)


# ----------------------------------------------------------------------------
# The Vision Transformer: NumPy == Keras
# ----------------------------------------------------------------------------

VIT_CASES = {  # image size, channels, patch size, d_model, heads, d_ff, layers, batch
    "digits": (8, 1, 2, 16, 4, 32, 2, 5),
    "one image": (8, 1, 2, 16, 4, 32, 2, 1),
    "RGB, big patches": (12, 3, 4, 12, 3, 20, 1, 3),
    "non-square": ((6, 10), 2, 2, 8, 2, 16, 3, 2),
    "one head, pixels as patches": (4, 1, 1, 8, 1, 8, 2, 2),
}


def random_vit(rng, case, pre_ln):
    size, C, P, d, heads, d_ff, layers, B = VIT_CASES[case]
    model = VisionTransformer(image_size=size, channels=C, patch_size=P, d_model=d,
                              num_heads=heads, d_ff=d_ff, num_layers=layers, pre_ln=pre_ln)
    H, W = (size, size) if np.ndim(size) == 0 else size
    images = rng.random((B, H, W, C)).astype("float32")
    model(images)
    # every weight random, none at its initial value (class token and layer norms included)
    model.set_weights([rng.normal(scale=0.3, size=w.shape).astype("float32") + (w.ndim == 1) * 0.1
                       for w in model.get_weights()])
    return model, images


@pytest.mark.parametrize("pre_ln", [True, False], ids=["pre-LN", "post-LN"])
@pytest.mark.parametrize("case", VIT_CASES)
def test_vit_forward_matches_keras(rng, case, pre_ln):
    model, images = random_vit(rng, case, pre_ln)
    expected, expected_scores = model(images, return_attention_scores=True)
    weights = vision_from_keras.vision_transformer(model)
    logits, attention = vision.vit_forward(images, weights)
    B, layers = len(images), len(model.encoder_blocks)
    T = model.num_patches + 1
    heads = VIT_CASES[case][4]
    assert logits.shape == (B, 10) and logits.dtype == np.float32
    assert attention.shape == (layers, B, heads, T, T)
    np.testing.assert_allclose(logits, numpy(expected), **MODEL_TOL)
    np.testing.assert_allclose(attention, np.stack([numpy(s) for s in expected_scores]), **MODEL_TOL)
    np.testing.assert_allclose(attention, model.attention_maps(images), **MODEL_TOL)


def test_embedding_is_patchify_then_projection(rng):
    """The Keras patch convolution == patchify times the flattened kernel; class token first."""
    model, images = random_vit(rng, "digits", True)
    weights = vision_from_keras.vision_transformer(model)
    np.testing.assert_allclose(vision.embed_patches(images, weights), numpy(model.embed(images)), **TOL)
    x = vision.embed_patches(images, weights)
    np.testing.assert_allclose(x[:, 0], np.broadcast_to(weights.class_token + weights.positions[0],
                                                        x[:, 0].shape), **TOL)


def test_without_positions_the_vit_ignores_where_patches_are(rng):
    """Equal position vectors everywhere: shuffling the patches cannot change the logits."""
    model, images = random_vit(rng, "digits", True)
    weights = vision_from_keras.vision_transformer(model)
    logits, _ = vision.vit_forward(images, weights)
    order = rng.permutation(16)
    shuffled = vision.unpatchify(vision.patchify(images, 2)[:, order], 2, 8, 8)
    assert not np.allclose(vision.vit_forward(shuffled, weights)[0], logits, atol=1e-3)
    weights.positions = np.broadcast_to(weights.positions[:1], weights.positions.shape).copy()
    np.testing.assert_allclose(vision.vit_forward(shuffled, weights)[0],
                               vision.vit_forward(images, weights)[0], **MODEL_TOL)


def test_vit_rejects_bad_input(rng):
    model, images = random_vit(rng, "digits", True)
    weights = vision_from_keras.vision_transformer(model)
    with pytest.raises(ValueError, match="positions for 16"):
        vision.vit_forward(np.zeros((1, 12, 12, 1), "float32"), weights)
    with pytest.raises(ValueError, match="channels"):
        vision.vit_forward(np.zeros((1, 8, 8, 3), "float32"), weights)
    with pytest.raises(ValueError, match="cannot be cut"):
        VisionTransformer(image_size=8, patch_size=3)
    with pytest.raises(ValueError, match="no weights"):
        vision_from_keras.vision_transformer(VisionTransformer())


# ----------------------------------------------------------------------------
# Attention rollout and position similarity
# ----------------------------------------------------------------------------

def test_rollout_by_hand():
    # layer 1: head 0 looks at token 0, head 1 at token 1 -> mean 1/2 everywhere
    layer_1 = np.array([[[1, 0], [1, 0]], [[0, 1], [0, 1]]], dtype=float)
    # layer 2: both heads look at token 0
    layer_2 = np.array([[[1, 0], [1, 0]], [[1, 0], [1, 0]]], dtype=float)
    attention = np.stack([layer_1, layer_2])[:, None]                     # (L=2, B=1, heads=2, 2, 2)
    # with residual: layer 1 -> [[.75, .25], [.25, .75]], layer 2 -> [[1, 0], [.5, .5]];
    # rollout = layer 2 @ layer 1
    np.testing.assert_allclose(vision.attention_rollout(attention)[0], [[0.75, 0.25], [0.5, 0.5]])
    np.testing.assert_allclose(vision.attention_rollout(attention, residual=False)[0],
                               [[0.5, 0.5], [0.5, 0.5]])


def rollout_loop(attention, residual=True):
    """The definition, one image at a time."""
    L, B, _, T, _ = attention.shape
    out = np.empty((B, T, T))
    for b in range(B):
        r = np.eye(T)
        for layer in range(L):
            a = attention[layer, b].mean(axis=0)
            if residual:
                a = 0.5 * a + 0.5 * np.eye(T)
            r = a @ r
        out[b] = r
    return out


@pytest.mark.parametrize("residual", [True, False])
@pytest.mark.parametrize("L, B, heads, T", [(1, 2, 1, 3), (3, 4, 2, 5), (4, 1, 4, 17)])
def test_rollout_matches_definition(rng, L, B, heads, T, residual):
    logits = rng.normal(size=(L, B, heads, T, T)) * 2
    attention = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    got = vision.attention_rollout(attention, residual=residual)
    assert got.shape == (B, T, T)
    np.testing.assert_allclose(got, rollout_loop(attention, residual), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-12)


def test_rollout_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"\(L, B, heads, T, T\)"):
        vision.attention_rollout(np.ones((2, 3, 4, 4)))
    with pytest.raises(ValueError, match=r"\(L, B, heads, T, T\)"):
        vision.attention_rollout(np.ones((2, 1, 3, 4, 5)))


def test_position_similarity():
    # a 2 x 2 grid: top-left and bottom-right point the same way, the other two opposite
    positions = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, -1.0], [3.0, 0.0]])
    sim = vision.position_similarity(positions, (2, 2))
    assert sim.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(sim[0, 0], [[1, 0], [0, 1]], atol=1e-12)
    np.testing.assert_allclose(sim[0, 1], [[0, 1], [-1, 0]], atol=1e-12)
    with pytest.raises(ValueError, match="grid"):
        vision.position_similarity(positions, (2, 3))


# ----------------------------------------------------------------------------
# Augmentation and the CNN
# ----------------------------------------------------------------------------

def shifted(images, dy, dx):
    """Every image moved down by dy and right by dx pixels, zeros shifted in."""
    out = np.zeros_like(images)
    H, W = images.shape[1:3]
    out[:, max(dy, 0):H + min(dy, 0), max(dx, 0):W + min(dx, 0)] = \
        images[:, max(-dy, 0):H + min(-dy, 0), max(-dx, 0):W + min(-dx, 0)]
    return out


@pytest.mark.parametrize("max_shift", [1, 2])
def test_random_shift(rng, max_shift):
    images = rng.random((64, 8, 6, 2)).astype("float32") + 0.5     # no zero pixels
    layer = RandomShift(max_shift, seed=3)
    np.testing.assert_array_equal(numpy(layer(images)), images)     # inference: unchanged
    out = numpy(layer(images, training=True))
    shifts = [(dy, dx) for dy in range(-max_shift, max_shift + 1)
              for dx in range(-max_shift, max_shift + 1)]
    found = []
    for i in range(len(images)):
        matches = [s for s in shifts if np.array_equal(out[i], shifted(images[i:i + 1], *s)[0])]
        assert len(matches) == 1, f"image {i} is not a shift of at most {max_shift} pixels"
        found.append(matches[0])
    assert len(set(found)) > len(shifts) // 2    # the shift is drawn per image
    with pytest.raises(ValueError, match="non-negative integer"):
        RandomShift(-1)


def test_small_cnn_parameters():
    model = small_cnn(filters=(8, 16, 32))
    assert model.output_shape == (None, 10)
    # 3x3 convolutions: 1 -> 8 -> 16 -> 32 channels, then a dense layer 32 -> 10
    expected = (9 * 1 * 8 + 8) + (9 * 8 * 16 + 16) + (9 * 16 * 32 + 32) + (32 * 10 + 10)
    assert model.count_params() == expected


def test_small_cnn_dropout_acts_in_training_only_and_adds_no_parameters():
    plain, dropping = small_cnn(filters=(8, 16, 32)), small_cnn(filters=(8, 16, 32), dropout=0.5)
    assert "dropout" not in [layer.name for layer in plain.layers]       # 0: no layer at all
    assert dropping.count_params() == plain.count_params()
    dropping.set_weights(plain.get_weights())
    images = np.random.default_rng(0).uniform(size=(4, 8, 8, 1)).astype("float32")
    np.testing.assert_allclose(dropping(images), plain(images), rtol=1e-6)
    assert not np.allclose(dropping(images, training=True), plain(images), rtol=1e-3)
    with pytest.raises(ValueError, match="dropout must lie in"):
        small_cnn(dropout=1.0)
