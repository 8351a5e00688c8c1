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
