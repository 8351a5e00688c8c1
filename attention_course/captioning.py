"""Scoring generated captions of the shapes images (chapter 15).

A shapes caption names the image's shapes in an order the data generator drew
at random: "a red circle left of a blue square" and "a blue square right of a
red circle" describe the same picture equally well.  Comparing a generated
caption with the one reference would count half of the true captions as
wrong, so a caption is scored against *every* true caption of its image --
the shapes named in each of the ``k!`` orders (:func:`true_captions`).  The
matching caption also says which shape each generated word names, which is
what is needed to measure whether attention lands on it
(:func:`attention_mass`).
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np

from .checks import checked
from .data.shapes import ShapesData, box_coverage, describe


def true_captions(data: ShapesData) -> tuple[np.ndarray, np.ndarray]:
    """Every true caption of every image, one per order of naming its ``k`` shapes.

    Returns:
        ``targets (n, P, L)``: word ids + ``</s>``, 0-padded (``P = k!`` orders,
        the generator's own order first); and ``word_objects (n, P, L)``: the
        shape (index into ``data.boxes``) each word names, -1 for other words.

    Used in chapter 15, *Attention over images for captioning*, section "Pictures of shapes, and their captions".
    """
    k = data.colours.shape[1]
    targets, objects = [], []
    for order in itertools.permutations(range(k)):   # k! <= 6 orders, each vectorized over images
        order = np.array(order)
        _, _, target, named = describe(data.colours[:, order], data.kinds[:, order],
                                       data.boxes[:, order])
        targets.append(target)
        objects.append(np.where(named >= 0, order[np.maximum(named, 0)], -1))
    width = max(t.shape[1] for t in targets)
    targets = [np.pad(t, ((0, 0), (0, width - t.shape[1]))) for t in targets]
    objects = [np.pad(o, ((0, 0), (0, width - o.shape[1])), constant_values=-1) for o in objects]
    return np.stack(targets, axis=1), np.stack(objects, axis=1)


@dataclass(frozen=True)
class CaptionScores:
    """How generated captions ``(n, T)`` compare with their images' true captions.

    Attributes:
        true: ``(n,)`` the caption is one of the image's true captions.
        reference: ``(n,)`` the caption is the data set's own (reference) caption.
        word_objects: ``(n, T)`` the shape each generated word names (-1 for
            other words, and for every word of a caption that is not true).
        word_boxes: ``(n, T, 4)`` that shape's box, -1 where there is none.

    Used in chapter 15, *Attention over images for captioning*.
    """

    true: np.ndarray
    reference: np.ndarray
    word_objects: np.ndarray
    word_boxes: np.ndarray


def score_captions(predicted, data: ShapesData) -> CaptionScores:
    """Compare generated ids ``predicted (n, T)`` (``</s>`` included, then 0) with the true captions.

    Used in chapter 15, *Attention over images for captioning*, section "Captions, decoded greedily".
    """
    predicted = np.asarray(predicted)
    if predicted.ndim != 2 or len(predicted) != len(data):
        raise ValueError(f"predicted must have shape (n={len(data)}, T); got {predicted.shape}")
    targets, objects = true_captions(data)                       # (n, P, L)
    width = max(predicted.shape[1], targets.shape[2])
    padded = np.pad(predicted, ((0, 0), (0, width - predicted.shape[1])))
    targets = np.pad(targets, ((0, 0), (0, 0), (0, width - targets.shape[2])))
    objects = np.pad(objects, ((0, 0), (0, 0), (0, width - objects.shape[2])), constant_values=-1)
    matches = (padded[:, None, :] == targets).all(axis=-1)       # (n, P); at most one is True
    which = matches.argmax(axis=1)
    word_objects = np.take_along_axis(objects, which[:, None, None], axis=1)[:, 0]
    word_objects = np.where(matches.any(axis=1)[:, None], word_objects, -1)[:, : predicted.shape[1]]
    # ShapesData knows how to look up the box of each word's shape
    word_boxes = dataclasses.replace(data, word_objects=word_objects).word_boxes()
    return CaptionScores(true=matches.any(axis=1), reference=matches[:, 0],
                         word_objects=word_objects, word_boxes=word_boxes)


def check_attention_mass(attention, boxes):
    """The inputs of :func:`attention_mass` (chapter 15): ``(..., G * G)`` weights, a box for each row."""
    attention = np.asarray(attention)
    grid = int(round(np.sqrt(attention.shape[-1])))
    if attention.ndim < 1 or grid * grid != attention.shape[-1]:
        raise ValueError(f"attention must have shape (..., N) with N = G * G grid cells; "
                         f"got {attention.shape}")
    if np.shape(boxes)[-1:] == (4,) and np.shape(boxes)[:-1] != attention.shape[:-1]:
        raise ValueError(f"boxes {np.shape(boxes)} do not match attention {attention.shape}: "
                         "need (..., 4) and (..., N) with the same leading dimensions")
    return dict(attention=attention)


@checked(check_attention_mass)
def attention_mass(attention, boxes, image_size: int) -> np.ndarray:
    """The attention mass inside each box.

    Args:
        attention: ``(..., N)`` weights over the cells of a ``G x G`` grid
            (``N = G * G``, row-major), e.g. one row per generated word.
        boxes: ``(..., 4)`` ``(top, left, bottom, right)`` in pixels; -1 rows
            (no box) give 0.
        image_size: the image's side ``S`` in pixels.

    Returns:
        ``(...)``: ``sum_cells attention * (fraction of the cell inside the box)``.
        Attention spread evenly over the image gets the box's share of the
        image's area, the chance level.

    Explained in chapter 15, *Attention over images for captioning*, section "Does the attention land on the named shape?".
    """
    grid = int(round(np.sqrt(attention.shape[-1])))             # G
    coverage = box_coverage(boxes, image_size, grid)             # (..., G, G)
    coverage = coverage.reshape(coverage.shape[:-2] + (-1,))     # (..., N)
    return (attention * coverage).sum(axis=-1)
