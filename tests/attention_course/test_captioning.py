"""Scoring shapes captions: every true caption of an image, matching, attention mass on boxes."""

import itertools

import numpy as np
import pytest

from attention_course.captioning import attention_mass, score_captions, true_captions
from attention_course.data.shapes import CAPTION_VOCAB, COLOURS, SHAPES, box_coverage, describe, make_dataset
from attention_course.evaluation import exact_match

END = CAPTION_VOCAB.index["</s>"]


@pytest.fixture(scope="module", params=[2, 3], ids=["2 shapes", "3 shapes"])
def data(request):
    return make_dataset(200, num_shapes=request.param, seed=11)


def caption_in_order(data, i, order):
    """The caption rule written out plainly for image i, naming its shapes in ``order``."""
    (t0, l0, _, _), (t1, l1, _, _) = data.boxes[i, order[0]], data.boxes[i, order[1]]
    dy, dx = t1 - t0, l1 - l0
    if abs(dx) >= abs(dy):
        relation = "left of" if dx > 0 else "right of"
    else:
        relation = "above" if dy > 0 else "below"
    names = [f"a {COLOURS[data.colours[i, j]]} {SHAPES[data.kinds[i, j]]}" for j in order]
    return f"{names[0]} {relation} {names[1]}" + (f" and {names[2]}" if len(names) == 3 else "")


def test_describe_in_the_generator_order_gives_the_data(data):
    captions, decoder_input, decoder_target, word_objects = describe(data.colours, data.kinds, data.boxes)
    assert captions == data.captions
    np.testing.assert_array_equal(decoder_input, data.decoder_input)
    np.testing.assert_array_equal(decoder_target, data.decoder_target)
    np.testing.assert_array_equal(word_objects, data.word_objects)


def test_true_captions_are_every_order(data):
    k = data.colours.shape[1]
    targets, objects = true_captions(data)
    orders = list(itertools.permutations(range(k)))
    assert targets.shape[:2] == objects.shape[:2] == (len(data), len(orders))
    width = data.decoder_target.shape[1]
    np.testing.assert_array_equal(targets[:, 0, :width], data.decoder_target)
    for i in range(0, len(data), 7):
        texts = [" ".join(CAPTION_VOCAB.decode(t)) for t in targets[i]]
        assert texts == [caption_in_order(data, i, order) for order in orders]
        assert len(set(texts)) == len(orders)
        for p in range(len(orders)):
            for word, shape in zip(CAPTION_VOCAB.decode(targets[i, p]), objects[i, p]):
                if word in COLOURS:
                    assert COLOURS[data.colours[i, shape]] == word
                elif word in SHAPES:
                    assert SHAPES[data.kinds[i, shape]] == word
                else:
                    assert shape == -1


def with_width(tokens, width):
    return np.pad(tokens, ((0, 0), (0, width - tokens.shape[1])))


def test_reference_and_reordered_captions_are_true(data):
    targets, objects = true_captions(data)
    rng = np.random.default_rng(0)
    which = rng.integers(0, targets.shape[1], size=len(data))
    predicted = with_width(targets[np.arange(len(data)), which], 16)   # generated runs are wider
    scores = score_captions(predicted, data)
    assert scores.true.all()
    np.testing.assert_array_equal(scores.reference, which == 0)
    np.testing.assert_array_equal(scores.reference,
                                  exact_match(predicted, data.decoder_target))
    assert scores.word_objects.shape == predicted.shape
    np.testing.assert_array_equal(scores.word_objects[:, : objects.shape[2]],
                                  objects[np.arange(len(data)), which])
    named = scores.word_objects >= 0
    rows, cols = np.nonzero(named)
    np.testing.assert_array_equal(scores.word_boxes[rows, cols],
                                  data.boxes[rows, scores.word_objects[rows, cols]])
    assert (scores.word_boxes[~named] == -1).all()


def corrupt(data, how):
    """Plausible wrong captions: each must not count as true."""
    tokens = with_width(data.decoder_target, data.decoder_target.shape[1] + 2)
    index = CAPTION_VOCAB.index
    words = np.array(CAPTION_VOCAB.tokens)[tokens]
    if how == "flipped relation":
        flip = {"left": "right", "right": "left", "above": "below", "below": "above"}
        for a, b in flip.items():
            tokens = np.where(words == a, index[b], tokens)
    elif how == "wrong colour of the first shape":
        tokens[:, 1] = (data.colours[:, 0] + 1) % len(COLOURS) + index[COLOURS[0]]
    elif how == "missing </s>":
        tokens = np.where(tokens == END, 0, tokens)
    elif how == "runs on after </s>":
        lengths = (tokens > 0).sum(1)
        tokens[np.arange(len(tokens)), lengths] = index["a"]
    elif how == "shapes swapped, relation kept":
        swapped = describe(data.colours[:, [1, 0, *range(2, data.colours.shape[1])]],
                           data.kinds[:, [1, 0, *range(2, data.colours.shape[1])]],
                           data.boxes)[2]      # the boxes in the original order: a false relation
        tokens = with_width(swapped, tokens.shape[1])
    return tokens


@pytest.mark.parametrize("how", ["flipped relation", "wrong colour of the first shape", "missing </s>",
                                 "runs on after </s>", "shapes swapped, relation kept"])
def test_false_captions_are_not_true(data, how):
    scores = score_captions(corrupt(data, how), data)
    assert not scores.true.any() and not scores.reference.any()
    assert (scores.word_objects == -1).all() and (scores.word_boxes == -1).all()


def test_score_captions_checks_its_input(data):
    with pytest.raises(ValueError, match="predicted must have shape"):
        score_captions(data.decoder_target[:-1], data)
    with pytest.raises(ValueError, match="predicted must have shape"):
        score_captions(data.decoder_target[0], data)


@pytest.mark.parametrize("grid", [4, 8])
def test_attention_mass(data, grid):
    S, N = data.images.shape[1], grid * grid
    boxes = data.boxes[:, 0]                                      # (n, 4)
    uniform = np.full((len(data), N), 1 / N)
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]) / S ** 2
    np.testing.assert_allclose(attention_mass(uniform, boxes, S), area, rtol=1e-5)
    # all the weight on the cell with the largest share of the box: that share
    coverage = box_coverage(boxes, S, grid).reshape(len(data), N)
    one_hot = np.eye(N)[coverage.argmax(1)]
    np.testing.assert_allclose(attention_mass(one_hot, boxes, S), coverage.max(1), rtol=1e-6)
    # a cell the box does not touch gets nothing; no box (-1) gets nothing
    np.testing.assert_allclose(attention_mass(np.eye(N)[coverage.argmin(1)], boxes, S), 0.0)
    np.testing.assert_allclose(attention_mass(uniform, np.full_like(boxes, -1), S), 0.0)
    # per word: (n, T, N) with (n, T, 4)
    T = 3
    masses = attention_mass(np.broadcast_to(one_hot[:, None], (len(data), T, N)),
                            np.broadcast_to(boxes[:, None], (len(data), T, 4)), S)
    assert masses.shape == (len(data), T)


def test_attention_mass_errors():
    with pytest.raises(ValueError, match="N = G \\* G"):
        attention_mass(np.ones((2, 10)) / 10, np.zeros((2, 4)), 32)
    with pytest.raises(ValueError, match="do not match"):
        attention_mass(np.ones((2, 3, 16)) / 16, np.zeros((2, 4)), 32)


def test_describe_checks_its_input(data):
    with pytest.raises(ValueError, match=r"boxes \(n, k, 4\)"):
        describe(data.colours, data.kinds, data.boxes[:, :1])
    with pytest.raises(ValueError, match="k = 2 or 3"):
        describe(data.colours[:, :1], data.kinds[:, :1], data.boxes[:, :1])
