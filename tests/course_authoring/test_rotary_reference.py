"""Assignment 7's reference solution (rotary position embeddings) checked by the properties that
define RoPE; no Keras layer computes it, so these and the complex-number form in
``course_authoring.references`` are its independent checks."""

import numpy as np
import pytest

from grading_support import SOLUTIONS

from course_grader.hidden_tests import reference_solution


@pytest.fixture(scope="module")
def rope():
    return reference_solution(SOLUTIONS / "a7_rotary_positions" / "a7_rotary_positions.ipynb")


def test_scores_depend_only_on_the_offset(rope, rng):
    """(R_m q) . (R_n k) is the same for every (m, n) with the same n - m."""
    q, k = rng.normal(size=16), rng.normal(size=16)
    for offset in (-7, 0, 3, 40):
        scores = [rope.apply_rotary(q[None], [m])[0] @ rope.apply_rotary(k[None], [m + offset])[0]
                  for m in (0, 5, 123, 4000)]
        np.testing.assert_allclose(scores, scores[0], rtol=1e-9, atol=1e-9)
    # ... and the offset does matter
    near = rope.apply_rotary(q[None], [0])[0] @ rope.apply_rotary(k[None], [1])[0]
    far = rope.apply_rotary(q[None], [0])[0] @ rope.apply_rotary(k[None], [9])[0]
    assert abs(near - far) > 1e-3


def test_a_rotation_keeps_lengths_and_position_zero_is_the_identity(rope, rng):
    x = rng.normal(size=(3, 7, 10))
    rotated = rope.apply_rotary(x, rng.integers(0, 1000, size=7))
    np.testing.assert_allclose(np.linalg.norm(rotated, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)
    np.testing.assert_array_equal(rope.apply_rotary(x, np.zeros(7, dtype=int)), x)


def test_rotations_compose(rope, rng):
    """Turning by m and then by n is turning by m + n."""
    x = rng.normal(size=(4, 12))
    m, n = rng.integers(0, 300, size=4), rng.integers(0, 300, size=4)
    np.testing.assert_allclose(rope.apply_rotary(rope.apply_rotary(x, m), n), rope.apply_rotary(x, m + n),
                               atol=1e-10)


def test_the_rotate_half_convention_is_a_permutation_of_the_features(rope, rng):
    """GPT-NeoX's convention pairs feature i with i + d/2; with the features reordered
    (0, 2, 4, ..., 1, 3, 5, ...) it is the course's neighbouring-pairs rotation."""
    d, positions = 8, rng.integers(0, 50, size=5)
    x = rng.normal(size=(2, 5, d))
    half = np.r_[0:d:2, 1:d:2]
    angles = np.outer(positions, 10000.0 ** (-np.arange(0, d, 2) / d))
    cos, sin = np.concatenate([np.cos(angles)] * 2, -1), np.concatenate([np.sin(angles)] * 2, -1)
    xh = x[..., half]
    rotate_half = np.concatenate([-xh[..., d // 2:], xh[..., :d // 2]], axis=-1)
    neox = xh * cos + rotate_half * sin
    np.testing.assert_allclose(neox, rope.apply_rotary(x, positions)[..., half], atol=1e-12)
    assert not np.allclose(neox, rope.apply_rotary(xh, positions))   # the conventions differ
