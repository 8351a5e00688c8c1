"""scikit-learn's digits as float32 images with a fixed stratified split."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

from attention_course.data.digits import load_all, load_splits, shift


def test_all_images():
    images, labels = load_all()
    assert images.shape == (1797, 8, 8, 1) and images.dtype == np.float32
    assert images.min() == 0 and images.max() == 1
    assert labels.dtype == np.int32 and set(labels.tolist()) == set(range(10))
    np.testing.assert_array_equal(images[..., 0] * 16, load_digits().images)


@pytest.mark.parametrize("test_fraction, seed", [(0.2, 0), (0.25, 3)])
def test_split_is_a_stratified_partition(test_fraction, seed):
    train, test = load_splits(test_fraction, seed)
    images, labels = load_all()
    assert len(train) + len(test) == 1797
    assert abs(len(test) - test_fraction * 1797) <= 1
    assert not set(train.indices) & set(test.indices)
    np.testing.assert_array_equal(np.sort(np.concatenate([train.indices, test.indices])), np.arange(1797))
    np.testing.assert_array_equal(train.images, images[train.indices])
    np.testing.assert_array_equal(test.labels, labels[test.indices])
    # every digit has (to within one image) the same share of the test set as of the whole
    expected = np.bincount(labels) * len(test) / len(labels)
    assert (np.abs(np.bincount(test.labels, minlength=10) - expected) <= 1).all()


def test_split_is_fixed():
    (a_train, a_test), (b_train, b_test) = load_splits(), load_splits()
    np.testing.assert_array_equal(a_test.indices, b_test.indices)
    np.testing.assert_array_equal(a_train.images, b_train.images)
    assert len(a_train) == 1437 and len(a_test) == 360
    assert not np.array_equal(load_splits(seed=1)[1].indices, a_test.indices)
    with pytest.raises(ValueError, match="test_fraction"):
        load_splits(test_fraction=1.0)


def test_shift_moves_pixels_and_fills_with_background():
    images = np.arange(1, 2 * 4 * 3 + 1, dtype=np.float32).reshape(2, 4, 3, 1)
    down = shift(images, 1, 0)
    np.testing.assert_array_equal(down[:, 1:], images[:, :-1])
    assert (down[:, 0] == 0).all()
    left = shift(images, 0, -2)
    np.testing.assert_array_equal(left[:, :, :1], images[:, :, 2:])
    assert (left[:, :, 1:] == 0).all()
    diagonal = shift(images, -1, 1)
    np.testing.assert_array_equal(diagonal[:, :-1, 1:], images[:, 1:, :-1])
    np.testing.assert_array_equal(shift(images, 0, 0), images)
    assert (shift(images, 4, 0) == 0).all() and (shift(images, 0, -3) == 0).all()
    # moving back restores everything but the lost border
    np.testing.assert_array_equal(shift(shift(images, 1, 1), -1, -1)[:, :-1, :-1], images[:, :-1, :-1])


def test_shift_of_a_split_keeps_its_labels():
    _, test = load_splits()
    moved = test.shifted(0, 1)
    np.testing.assert_array_equal(moved.images, shift(test.images, 0, 1))
    np.testing.assert_array_equal(moved.labels, test.labels)
    np.testing.assert_array_equal(moved.indices, test.indices)
    assert not np.array_equal(moved.images, test.images)


@pytest.mark.parametrize("images, down, right, message", [
    (np.zeros((8, 8)), 1, 0, "shape"),
    (np.zeros((1, 8, 8, 1)), 0.5, 0, "whole number"),
])
def test_shift_names_bad_arguments(images, down, right, message):
    with pytest.raises(ValueError, match=message):
        shift(images, down, right)
