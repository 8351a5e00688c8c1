"""scikit-learn's handwritten digits as small images, for the Vision Transformer (chapter 14).

``sklearn.datasets.load_digits`` ships 1,797 greyscale ``8 x 8`` images of the
digits 0-9 inside the scikit-learn package (the test set of the UCI "Optical
Recognition of Handwritten Digits" data), so nothing is downloaded.  Pixel
values are counts 0..16; here they are scaled to [0, 1] as float32, with a
channel axis, the layout Keras' ``Conv2D`` and ``tf.image.extract_patches``
expect.  The train/test split is fixed and stratified: every digit has the
same share in both parts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

IMAGE_SIZE = 8
NUM_CLASSES = 10


@dataclass(frozen=True)
class DigitsSplit:
    """One part of the data.

    Attributes:
        images: ``(n, 8, 8, 1)`` float32 in [0, 1] (0 = background).
        labels: ``(n,)`` int32 digits 0..9.
        indices: ``(n,)`` the images' positions in ``load_digits()``.
    """

    images: np.ndarray
    labels: np.ndarray
    indices: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)

    def shifted(self, down: int, right: int) -> "DigitsSplit":
        """The same digits moved by ``down`` rows and ``right`` columns (:func:`shift`)."""
        return DigitsSplit(shift(self.images, down, right), self.labels, self.indices)


def shift(images, down: int, right: int) -> np.ndarray:
    """Move ``(n, H, W, C)`` images by ``down`` pixels down and ``right`` pixels right.

    Negative values move up or left.  Pixels moved past the border are lost,
    and the pixels that come in are 0, the background of the digits (as in
    :class:`attention_course.models.vision.RandomShift`, which does this at
    random while a model trains).
    """
    images = np.asarray(images)
    if images.ndim != 4:
        raise ValueError(f"images must have shape (n, H, W, C); got {images.shape}")
    if any(int(d) != d for d in (down, right)):
        raise ValueError(f"a shift is a whole number of pixels; got down={down!r}, right={right!r}")
    down, right = int(down), int(right)
    height, width = images.shape[1:3]
    moved = np.zeros_like(images)
    if abs(down) < height and abs(right) < width:
        moved[:, max(down, 0):height + min(down, 0), max(right, 0):width + min(right, 0)] = \
            images[:, max(-down, 0):height + min(-down, 0), max(-right, 0):width + min(-right, 0)]
    return moved


def load_all() -> tuple[np.ndarray, np.ndarray]:
    """All 1,797 images ``(n, 8, 8, 1)`` float32 in [0, 1] and labels ``(n,)`` int32."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    return images, digits.target.astype(np.int32)


def load_splits(test_fraction: float = 0.2, seed: int = 0) -> tuple[DigitsSplit, DigitsSplit]:
    """A fixed, stratified ``(train, test)`` split (default 1,437 / 360 images)."""
    from sklearn.model_selection import train_test_split

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie in (0, 1), got {test_fraction}")
    images, labels = load_all()
    train, test = train_test_split(np.arange(len(labels)), test_size=test_fraction,
                                   stratify=labels, random_state=seed)
    train, test = np.sort(train), np.sort(test)
    return (DigitsSplit(images[train], labels[train], train),
            DigitsSplit(images[test], labels[test], test))


def validation_split(train: DigitsSplit, fraction: float = 0.2,
                     seed: int = 0) -> tuple[DigitsSplit, DigitsSplit]:
    """``train`` cut again, stratified and fixed, into ``(fit, validation)``: data to choose a
    setting on without looking at the test images (default 1,149 / 288 of the 1,437)."""
    from sklearn.model_selection import train_test_split

    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction}")
    fit, validation = train_test_split(np.arange(len(train)), test_size=fraction,
                                       stratify=train.labels, random_state=seed)
    fit, validation = np.sort(fit), np.sort(validation)
    return tuple(DigitsSplit(train.images[part], train.labels[part], train.indices[part])
                 for part in (fit, validation))
