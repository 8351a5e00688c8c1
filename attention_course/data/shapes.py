"""Coloured shapes and their captions: "Show, Attend and Tell" in miniature (chapter 15).

Each image is a small RGB picture (``32 x 32`` by default) on a black
background with two (or three) shapes -- a circle, a square or a triangle, in
red, green or blue -- at random, non-overlapping positions; no two shapes in an
image share both colour and kind, so every caption is unambiguous::

    a red circle left of a blue square
    a green triangle above a red triangle and a blue circle

The relation compares the centres of the first two shapes: ``left of`` /
``right of`` when they are further apart horizontally than vertically, else
``above`` / ``below``.  A captioning model therefore has to find the shapes it
names *and* compare their positions.

For every caption word the data also says which shape it names (its colour
and kind words) and that shape's bounding box, so one can measure whether a
model's attention lands on the shape it is talking about: the attention mass
inside the box (:func:`box_coverage` turns a box into the fraction of each
feature-map cell it covers).

Everything is generated from a seed with vectorized NumPy; nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .vocabulary import END, PAD, START, Vocabulary

COLOURS = ("red", "green", "blue")
SHAPES = ("circle", "square", "triangle")
RGB = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
RELATIONS = (("left", "of"), ("right", "of"), ("above",), ("below",))

CAPTION_VOCAB = Vocabulary((PAD, START, END, "a", *COLOURS, *SHAPES,
                            "left", "right", "of", "above", "below", "and"))


@dataclass(frozen=True)
class ShapesData:
    """``n`` images with ``k`` shapes each and their captions (``L`` = longest caption + 1).

    Attributes:
        images: ``(n, S, S, 3)`` float32 RGB in [0, 1], ``S`` = image size.
        captions: the ``n`` captions as text.
        decoder_input: ``(n, L)`` int32 ``<s>`` + caption word ids, 0-padded.
        decoder_target: ``(n, L)`` int32 caption word ids + ``</s>``, 0-padded.
        word_objects: ``(n, L)`` int32, aligned with ``decoder_target``: the
            index (0..k-1) of the shape a word names -- its colour and its kind
            word -- and -1 for every other word, ``</s>`` and padding.
        boxes: ``(n, k, 4)`` int32 bounding boxes ``(top, left, bottom, right)``
            in pixels, bottom/right exclusive.
        colours, kinds: ``(n, k)`` int32 indices into ``COLOURS`` and ``SHAPES``.
    """

    images: np.ndarray
    captions: list[str]
    decoder_input: np.ndarray
    decoder_target: np.ndarray
    word_objects: np.ndarray
    boxes: np.ndarray
    colours: np.ndarray
    kinds: np.ndarray

    def __len__(self) -> int:
        return len(self.captions)

    def word_boxes(self) -> np.ndarray:
        """``(n, L, 4)``: the box of the shape each target word names; -1 where it names none."""
        index = np.maximum(self.word_objects, 0)
        boxes = np.take_along_axis(self.boxes, index[..., None], axis=1)
        return np.where(self.word_objects[..., None] >= 0, boxes, -1).astype(np.int32)


def _shape_masks(kinds, tops, lefts, size: int, image_size: int) -> np.ndarray:
    """``(n, k, S, S)`` bool: the pixels each shape covers (pixel centres inside the shape)."""
    centres = np.arange(image_size) + 0.5
    y = centres[None, None, :, None] - tops[..., None, None]   # (n, k, S, 1), from the box's top
    x = centres[None, None, None, :] - lefts[..., None, None]  # (n, k, 1, S), from the box's left
    inside_y = (y >= 0) & (y < size)
    inside_x = (x >= 0) & (x < size)
    r = size / 2
    circle = (y - r) ** 2 + (x - r) ** 2 <= r ** 2
    square = inside_y & inside_x
    # apex at the top centre, base along the bottom edge
    triangle = inside_y & inside_x & (np.abs(x - r) <= (y + 0.5) / 2)
    kinds = kinds[..., None, None]
    return np.where(kinds == 0, circle, np.where(kinds == 1, square, triangle))


def _place(rng, n: int, k: int, size: int, image_size: int, gap: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-left corners ``(n, k)`` of non-overlapping ``size x size`` boxes (``gap`` pixels apart).

    Rejection sampling, vectorized over images: redraw every image whose boxes
    overlap until none does.
    """
    tops = np.zeros((n, k), dtype=np.int64)
    lefts = np.zeros((n, k), dtype=np.int64)
    todo = np.arange(n)
    for _ in range(1000):
        tops[todo] = rng.integers(0, image_size - size + 1, size=(len(todo), k))
        lefts[todo] = rng.integers(0, image_size - size + 1, size=(len(todo), k))
        t, l = tops[todo], lefts[todo]
        apart_y = np.abs(t[:, :, None] - t[:, None, :]) >= size + gap
        apart_x = np.abs(l[:, :, None] - l[:, None, :]) >= size + gap
        clash = ~(apart_y | apart_x) & ~np.eye(k, dtype=bool)
        todo = todo[clash.any(axis=(1, 2))]
        if todo.size == 0:
            return tops, lefts
    raise ValueError(f"cannot place {k} shapes of size {size} in a {image_size}-pixel image")


def make_dataset(n: int, num_shapes: int = 2, image_size: int = 32, shape_size: int = 10,
                 noise: float = 0.0, seed: int = 0) -> ShapesData:
    """``n`` images with ``num_shapes`` (2 or 3) shapes each, and their captions.

    Args:
        n: number of images.
        num_shapes: shapes per image, 2 or 3 (the third is named after "and").
        image_size: ``S``, the width and height in pixels.
        shape_size: the side of each shape's bounding box in pixels.
        noise: standard deviation of Gaussian pixel noise (clipped to [0, 1]).
        seed: the same seed gives the same data.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if num_shapes not in (2, 3):
        raise ValueError(f"num_shapes must be 2 or 3, got {num_shapes}")
    if not 3 <= shape_size <= image_size:
        raise ValueError(f"need 3 <= shape_size <= image_size, got {shape_size} and {image_size}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    rng = np.random.default_rng(seed)
    k = num_shapes
    # k distinct (colour, kind) pairs per image: the first k of a random permutation of 9
    pairs = np.argsort(rng.random((n, len(COLOURS) * len(SHAPES))), axis=1)[:, :k]
    colours, kinds = pairs // len(SHAPES), pairs % len(SHAPES)
    tops, lefts = _place(rng, n, k, shape_size, image_size, gap=1)

    masks = _shape_masks(kinds, tops, lefts, shape_size, image_size)          # (n, k, S, S)
    images = np.einsum("nkyx,nkc->nyxc", masks.astype(np.float32), RGB[colours])
    if noise:
        images = np.clip(images + rng.normal(scale=noise, size=images.shape), 0, 1)
    images = images.astype(np.float32)

    boxes = np.stack([tops, lefts, tops + shape_size, lefts + shape_size], axis=-1).astype(np.int32)
    captions, decoder_input, decoder_target, word_objects = describe(colours, kinds, boxes)
    return ShapesData(images=images, captions=captions, decoder_input=decoder_input,
                      decoder_target=decoder_target, word_objects=word_objects, boxes=boxes,
                      colours=colours.astype(np.int32), kinds=kinds.astype(np.int32))


def describe(colours, kinds, boxes) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The captions of images whose shapes are named in the given order.

    Args:
        colours, kinds: ``(n, k)`` indices into ``COLOURS`` and ``SHAPES``.
        boxes: ``(n, k, 4)`` ``(top, left, bottom, right)``; the relation word
            compares the first two shapes' positions.

    Returns:
        ``captions`` (text), ``decoder_input``, ``decoder_target`` and
        ``word_objects``, ``(n, L)`` int32 as in :class:`ShapesData`.  Naming the
        same shapes in another order (``colours[:, order]`` ...) gives another
        caption that is just as true of the image.
    """
    colours, kinds, boxes = np.asarray(colours), np.asarray(kinds), np.asarray(boxes)
    n, k = colours.shape
    if kinds.shape != (n, k) or boxes.shape != (n, k, 4) or k not in (2, 3):
        raise ValueError("need colours and kinds of shape (n, k) and boxes (n, k, 4), k = 2 or 3; "
                         f"got {colours.shape}, {kinds.shape} and {boxes.shape}")
    # relation of shape 0 to shape 1, from their centres
    dy = boxes[:, 1, 0] - boxes[:, 0, 0]
    dx = boxes[:, 1, 1] - boxes[:, 0, 1]
    horizontal = np.abs(dx) >= np.abs(dy)
    relation = np.where(horizontal, np.where(dx > 0, 0, 1), np.where(dy > 0, 2, 3))

    captions, target_words, objects = [], [], []
    for i in range(n):  # assembling word lists; the arrays above did the work
        words, named = [], []
        for j in range(k):
            if j == 1:
                rel = RELATIONS[relation[i]]
                words += rel
                named += [-1] * len(rel)
            if j == 2:
                words.append("and")
                named.append(-1)
            words += ["a", COLOURS[colours[i, j]], SHAPES[kinds[i, j]]]
            named += [-1, j, j]
        captions.append(" ".join(words))
        target_words.append(words)
        objects.append(named)
    L = max(len(w) for w in target_words) + 1
    decoder_input = np.zeros((n, L), dtype=np.int32)
    decoder_target = np.zeros((n, L), dtype=np.int32)
    word_objects = np.full((n, L), -1, dtype=np.int32)
    start, end = CAPTION_VOCAB.index[START], CAPTION_VOCAB.index[END]
    for i, (words, named) in enumerate(zip(target_words, objects)):
        ids = CAPTION_VOCAB.encode(words)
        decoder_input[i, : len(ids) + 1] = [start, *ids]
        decoder_target[i, : len(ids) + 1] = [*ids, end]
        word_objects[i, : len(ids)] = named
    return captions, decoder_input, decoder_target, word_objects


def make_splits(n_train: int = 4000, n_test: int = 500, seed: int = 0,
                **kwargs) -> tuple[ShapesData, ShapesData]:
    """Train and test sets from different seeds (same settings otherwise)."""
    return (make_dataset(n_train, seed=seed, **kwargs),
            make_dataset(n_test, seed=seed + 1, **kwargs))


def box_coverage(boxes, image_size: int, grid: int) -> np.ndarray:
    """The fraction of each cell of a ``grid x grid`` feature map that lies inside a box.

    Args:
        boxes: ``(..., 4)`` ``(top, left, bottom, right)`` in pixels (bottom/right
            exclusive), e.g. :meth:`ShapesData.word_boxes`.  Rows of -1 (no box)
            give all-zero maps.
        image_size: the image's side in pixels.
        grid: the feature map's side; cell ``(i, j)`` covers pixels
            ``[i * S / grid, (i + 1) * S / grid)`` down and likewise across.

    Returns:
        ``(..., grid, grid)`` float32 in [0, 1].  The attention mass on a box is
        ``(attention * coverage).sum((-2, -1))`` for an attention map over the cells.
    """
    boxes = np.asarray(boxes, dtype=np.float64)
    if boxes.shape[-1:] != (4,):
        raise ValueError(f"boxes must have shape (..., 4) as (top, left, bottom, right); got {boxes.shape}")
    if grid < 1 or image_size < grid:
        raise ValueError(f"need 1 <= grid <= image_size, got grid={grid}, image_size={image_size}")
    cell = image_size / grid
    edges = np.arange(grid) * cell                                         # (grid,)

    def overlap(low, high):  # (...,) -> (..., grid): the covered share of each cell
        return np.clip(np.minimum(high[..., None], edges + cell)
                       - np.maximum(low[..., None], edges), 0, None) / cell

    top, left, bottom, right = np.moveaxis(boxes, -1, 0)
    coverage = overlap(top, bottom)[..., :, None] * overlap(left, right)[..., None, :]
    return coverage.astype(np.float32)
