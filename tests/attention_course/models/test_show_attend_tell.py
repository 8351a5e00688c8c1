"""The Show-Attend-Tell captioner: shapes, attention over the grid, step == teacher forcing, NumPy parity."""

import functools

import keras
import numpy as np
import pytest

from attention_course.attention import additive_attention
from attention_course.data import shapes
from attention_course.models.show_attend_tell import ShowAttendTell
from conftest import numpy

V = len(shapes.CAPTION_VOCAB)

# (image size, channels, kernel sizes) -> grid
CONFIGS = {
    "32px 8x8 grid": ((32, (8, 12, 16), (3, 3, 1)), 8),
    "32px 16x16 grid": ((32, (8, 16), (3, 3)), 16),
    "24px 6x6 grid": ((24, (8, 12, 16), (3, 3, 3)), 6),
}


@functools.lru_cache(maxsize=None)
def build(config, seed=0):
    """A small model for ``config`` with random non-default weights, and images of the right size.

    Cached: the tests only read the models.
    """
    (image_size, channels, kernels), _ = CONFIGS[config]
    data = shapes.make_dataset(6, image_size=image_size, shape_size=8, seed=3)
    keras.utils.set_random_seed(seed)
    model = ShowAttendTell(V, image_size=image_size, channels=channels, kernel_sizes=kernels,
                           units=16, embedding_dim=8, attention_dim=12)
    model([data.images[:1], data.decoder_input[:1]])
    # non-default weights everywhere, the attention's scale vector v included
    rng = np.random.default_rng(seed)
    for w in model.weights:
        w.assign(rng.normal(scale=0.5, size=w.shape).astype("float32"))
    return model, data


@pytest.mark.parametrize("config", CONFIGS)
def test_shapes_and_grid(config):
    model, data = build(config)
    images = data.images
    grid = CONFIGS[config][1]
    B, T = data.decoder_input.shape
    assert model.grid == grid
    logits, weights = model.forward(images, data.decoder_input)
    assert numpy(logits).shape == (B, T, V)
    assert numpy(weights).shape == (B, T, grid * grid)
    annotations, keys, (h, c, z) = model.encode(images)
    channels = CONFIGS[config][0][1][-1]
    assert numpy(annotations).shape == (B, grid * grid, channels + 2)
    assert numpy(keys).shape == (B, grid * grid, 12)
    assert numpy(h).shape == numpy(c).shape == (B, 16) and numpy(z).shape == (B, channels + 2)
    np.testing.assert_array_equal(numpy(model((images, data.decoder_input))), numpy(logits))


@pytest.mark.parametrize("config", CONFIGS)
def test_attention_is_a_distribution_over_grid_cells(config):
    model, data = build(config)
    images = data.images
    weights = numpy(model.forward(images, data.decoder_input)[1])
    assert (weights >= 0).all()
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
    # it depends on the image: a different image gives different weights
    other = numpy(model.forward(images[::-1], data.decoder_input)[1])
    assert np.abs(other - weights).max() > 1e-4


@pytest.mark.parametrize("config", CONFIGS)
def test_cells_are_row_major_with_their_coordinates(config):
    """Cell n = i * G + j is row i, column j: the layout ``box_coverage(...).reshape(N)`` assumes."""
    model, data = build(config)
    images = data.images
    grid = CONFIGS[config][1]
    annotations = numpy(model.encode(images)[0])
    rows, cols = np.divmod(np.arange(grid * grid), grid)
    expected = np.stack([rows, cols], axis=-1) - (grid - 1) / 2   # in cells from the centre
    np.testing.assert_array_equal(annotations[:, :, -2:], np.broadcast_to(expected, (len(images), grid * grid, 2)))
    # and the CNN features of a cell come from its own part of the image: blank out the
    # top-left quarter of the image and only top-left cells may change
    blanked = images.copy()
    half = images.shape[1] // 2
    blanked[:, :half, :half] = 0.0
    changed = np.abs(numpy(model.encode(blanked)[0]) - annotations).max(axis=(0, 2)).reshape(grid, grid)
    reach = grid // 2 + 2        # the receptive field reaches a little beyond the quarter
    assert (changed[reach:, :] == 0).all() and (changed[:, reach:] == 0).all()
    assert changed[: grid // 2, : grid // 2].max() > 0


@pytest.mark.parametrize("config", CONFIGS)
def test_stepwise_decoding_matches_teacher_forcing(config):
    model, data = build(config)
    images = data.images
    # the compiled (graph) forward pass, as in training, against eager steps
    full_logits = model.predict([images, data.decoder_input], verbose=0)
    _, full_weights = model.forward(images, data.decoder_input)
    full_weights = numpy(full_weights)
    step, state = model.greedy_step(images)
    for t in range(data.decoder_input.shape[1]):
        logits, state, weights = step(data.decoder_input[:, : t + 1], state)
        np.testing.assert_allclose(numpy(logits), full_logits[:, t], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(numpy(weights), full_weights[:, t], rtol=1e-5, atol=1e-6)


def test_the_decoder_remembers_what_it_saw():
    """The context is fed back: the next step's output depends on the previous context."""
    model, data = build("32px 8x8 grid")
    images = data.images
    annotations, keys, state = model.encode(images)
    word = data.decoder_input[:, 0]
    _, state, _ = model.step(word, state, annotations, keys)
    h, c, context = state
    a, _, _ = model.step(word, [h, c, context], annotations, keys)
    b, _, _ = model.step(word, [h, c, keras.ops.zeros_like(context)], annotations, keys)
    assert np.abs(numpy(a) - numpy(b)).max() > 1e-4


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("seed", [0, 1])
def test_attention_step_equals_numpy_additive_attention(config, seed):
    """The model's attention is Bahdanau's score: v . tanh(W h + U a), with the layers' own weights."""
    model, data = build(config, seed=seed)
    images = data.images
    annotations, keys, state = model.encode(images)
    for t in range(3):
        _, state, weights = model.step(data.decoder_input[:, t], state, annotations, keys)
    h, _, context = (numpy(s) for s in state)
    W = numpy(model.query_projection.kernel)
    U = numpy(model.key_projection.kernel)
    v = numpy(model.attention.scale)
    a = numpy(annotations)
    out, alpha = additive_attention(h[:, None, :], a, a, W_query=W, W_key=U, v=v)
    np.testing.assert_allclose(alpha[:, 0], numpy(weights), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[:, 0], context, rtol=1e-5, atol=1e-6)


def test_wrong_image_size_raises():
    with pytest.raises(ValueError, match="divisible by 2\\*\\*2"):
        ShowAttendTell(V, image_size=30)
    with pytest.raises(ValueError, match="one kernel size per conv layer"):
        ShowAttendTell(V, channels=(8, 8, 8), kernel_sizes=(3, 3))
