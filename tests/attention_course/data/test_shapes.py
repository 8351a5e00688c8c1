"""The synthetic shapes-captioning data: images, captions, relations, boxes, coverage maps."""

import numpy as np
import pytest

from attention_course.data.shapes import (CAPTION_VOCAB, COLOURS, RGB, SHAPES, box_coverage,
                                          make_dataset, make_splits)


@pytest.fixture(scope="module", params=[(2, 32, 10), (3, 32, 10), (2, 48, 14)],
                ids=["2 shapes 32px", "3 shapes 32px", "2 shapes 48px"])
def data(request):
    k, size, shape_size = request.param
    return make_dataset(600, num_shapes=k, image_size=size, shape_size=shape_size, seed=5), k, size, shape_size


def test_arrays_shapes_and_ranges(data):
    d, k, S, _ = data
    n = len(d)
    assert d.images.shape == (n, S, S, 3) and d.images.dtype == np.float32
    assert d.images.min() == 0 and d.images.max() == 1
    L = d.decoder_target.shape[1]
    assert d.decoder_input.shape == d.word_objects.shape == (n, L)
    assert d.boxes.shape == (n, k, 4) and d.colours.shape == d.kinds.shape == (n, k)
    assert L == max(len(c.split()) for c in d.captions) + 1


def test_boxes_inside_image_and_apart(data):
    d, k, S, size = data
    top, left, bottom, right = np.moveaxis(d.boxes, -1, 0)
    assert (top >= 0).all() and (left >= 0).all() and (bottom <= S).all() and (right <= S).all()
    assert ((bottom - top) == size).all() and ((right - left) == size).all()
    for a in range(k):
        for b in range(a + 1, k):
            apart = ((bottom[:, a] < top[:, b]) | (bottom[:, b] < top[:, a])
                     | (right[:, a] < left[:, b]) | (right[:, b] < left[:, a]))
            assert apart.all()


def test_pixels_belong_to_their_shape_with_its_colour(data):
    d, k, S, size = data
    for i in range(0, len(d), 37):
        lit = d.images[i].any(-1)
        covered = np.zeros((S, S), dtype=bool)
        for j in range(k):
            t, l, b, r = d.boxes[i, j]
            patch = d.images[i, t:b, l:r]
            on = patch.any(-1)
            np.testing.assert_array_equal(patch[on], np.broadcast_to(RGB[d.colours[i, j]], patch[on].shape))
            area = on.sum()
            kind = SHAPES[d.kinds[i, j]]
            share = area / size ** 2   # of the bounding box: 1, pi/4 ~ 0.79, ~0.5 (+ edge pixels)
            low, high = {"square": (1, 1), "circle": (0.7, 0.88), "triangle": (0.45, 0.65)}[kind]
            assert low <= share <= high, (kind, share)
            covered[t:b, l:r] = True
        assert not (lit & ~covered).any()   # nothing drawn outside the boxes


def test_shapes_in_an_image_are_distinguishable(data):
    d, k, _, _ = data
    pairs = d.colours * len(SHAPES) + d.kinds
    assert all(len(set(row)) == k for row in pairs.tolist())


def expected_caption(colours, kinds, boxes):
    """The caption rule, written out plainly for one image."""
    (t0, l0, _, _), (t1, l1, _, _) = boxes[0], boxes[1]
    dy, dx = t1 - t0, l1 - l0
    if abs(dx) >= abs(dy):
        relation = "left of" if dx > 0 else "right of"
    else:
        relation = "above" if dy > 0 else "below"
    names = [f"a {COLOURS[c]} {SHAPES[s]}" for c, s in zip(colours, kinds)]
    caption = f"{names[0]} {relation} {names[1]}"
    return caption + (f" and {names[2]}" if len(names) == 3 else "")


def test_captions_follow_the_positions(data):
    d, _, _, _ = data
    for i in range(len(d)):
        assert d.captions[i] == expected_caption(d.colours[i], d.kinds[i], d.boxes[i])


def test_all_relations_occur_evenly():
    d = make_dataset(4000, seed=0)
    counts = {rel: sum(f" {rel} " in c for c in d.captions) for rel in ("left of", "right of", "above", "below")}
    assert all(0.15 * len(d) < c < 0.35 * len(d) for c in counts.values()), counts


def test_token_arrays_and_word_objects(data):
    d, k, _, _ = data
    start, end = CAPTION_VOCAB.index["<s>"], CAPTION_VOCAB.index["</s>"]
    for i in range(0, len(d), 13):
        words = d.captions[i].split()
        n = len(words)
        assert CAPTION_VOCAB.decode(d.decoder_target[i]) == words
        assert d.decoder_input[i, 0] == start and d.decoder_target[i, n] == end
        np.testing.assert_array_equal(d.decoder_input[i, 1:n + 1], d.decoder_target[i, :n])
        assert (d.decoder_target[i, n + 1:] == 0).all()
        for position, word in enumerate(words):
            obj = d.word_objects[i, position]
            if word in COLOURS:
                assert obj >= 0 and COLOURS[d.colours[i, obj]] == word
            elif word in SHAPES:
                assert obj >= 0 and SHAPES[d.kinds[i, obj]] == word
            else:
                assert obj == -1
        assert (d.word_objects[i, n:] == -1).all()
        assert sorted(set(d.word_objects[i]) - {-1}) == list(range(k))


def test_word_boxes(data):
    d, _, _, _ = data
    boxes = d.word_boxes()
    assert boxes.shape == d.word_objects.shape + (4,)
    named = d.word_objects >= 0
    assert (boxes[~named] == -1).all()
    rows, cols = np.nonzero(named)
    np.testing.assert_array_equal(boxes[rows, cols], d.boxes[rows, d.word_objects[rows, cols]])


def test_seeded():
    a, b, c = make_dataset(50, seed=3), make_dataset(50, seed=3), make_dataset(50, seed=4)
    np.testing.assert_array_equal(a.images, b.images)
    assert a.captions == b.captions and a.captions != c.captions
    train, test = make_splits(40, 10)
    assert len(train) == 40 and len(test) == 10 and train.captions[:10] != test.captions


def test_noise():
    clean, noisy = make_dataset(20, seed=1), make_dataset(20, seed=1, noise=0.1)
    assert noisy.images.min() >= 0 and noisy.images.max() <= 1
    assert 0.02 < np.abs(noisy.images - clean.images).mean() < 0.08   # ~half clipped at 0
    assert clean.captions == noisy.captions


def test_box_coverage():
    cover = box_coverage([[0, 0, 8, 8], [4, 4, 12, 12], [-1, -1, -1, -1], [0, 0, 32, 32]],
                         image_size=32, grid=4)
    assert cover.shape == (4, 4, 4) and cover.dtype == np.float32
    expected = np.zeros((4, 4))
    expected[0, 0] = 1
    np.testing.assert_allclose(cover[0], expected)
    expected = np.zeros((4, 4))
    expected[:2, :2] = 0.25
    np.testing.assert_allclose(cover[1], expected)
    assert (cover[2] == 0).all() and (cover[3] == 1).all()


@pytest.mark.parametrize("grid", [1, 3, 4, 8, 32])
def test_box_coverage_adds_up_to_the_box_area(data, grid):
    d, _, S, size = data
    cover = box_coverage(d.boxes, image_size=S, grid=grid)
    assert cover.shape == d.boxes.shape[:-1] + (grid, grid)
    np.testing.assert_allclose(cover.sum((-2, -1)) * (S / grid) ** 2, size * size, rtol=1e-5)
    assert cover.min() >= 0 and cover.max() <= 1 + 1e-6


def test_errors():
    with pytest.raises(ValueError, match="num_shapes"):
        make_dataset(5, num_shapes=4)
    with pytest.raises(ValueError, match="shape_size"):
        make_dataset(5, shape_size=40)
    with pytest.raises(ValueError, match="cannot place"):
        make_dataset(5, num_shapes=3, image_size=20, shape_size=12)
    with pytest.raises(ValueError, match="noise"):
        make_dataset(5, noise=-1)
    with pytest.raises(ValueError, match=r"\(\.\.\., 4\)"):
        box_coverage(np.zeros((2, 3)), image_size=32, grid=4)
    with pytest.raises(ValueError, match="grid"):
        box_coverage(np.zeros((2, 4)), image_size=32, grid=0)
