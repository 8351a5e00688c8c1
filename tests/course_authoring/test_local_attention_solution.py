"""Assignment 3's reference solution (local-p attention) against an independent formulation.

No Keras layer computes Luong et al.'s local-p attention, so the solution the
hidden tests compare with is checked here: against a per-query loop written from
the paper's equations (Luong, Pham and Manning 2015, eqs. 9-10), against the
course's own ``luong_scores`` for the *general* score, and by the properties the
assignment states (zero weight outside the window, a softmax inside it that sums
to 1, global attention times the Gaussian when the window holds every key).
"""

import math

import numpy as np
import pytest

from grading_support import SOLUTIONS

from attention_course.luong import luong_scores
from course_grader.hidden_tests import reference_solution


@pytest.fixture(scope="module")
def solution():
    return reference_solution(SOLUTIONS / "a3_local_attention" / "a3_local_attention.ipynb")


def local_p_loop(h, keys, values, W_p, v_p, D, W_a=None):
    """One query at a time, in plain Python arithmetic: (context, weights) of query h."""
    S = len(keys)
    hidden = [math.tanh(sum(h[i] * W_p[i, j] for i in range(len(h)))) for j in range(W_p.shape[1])]
    p = S / (1 + math.exp(-sum(v * x for v, x in zip(v_p, hidden))))
    window = [s for s in range(S) if abs(s - p) <= D]
    if W_a is None:
        score = {s: sum(a * b for a, b in zip(h, keys[s])) for s in window}
    else:
        score = {s: sum(h[i] * W_a[i, j] * keys[s][j] for i in range(len(h)) for j in range(len(keys[s])))
                 for s in window}
    top = max(score.values())
    z = sum(math.exp(x - top) for x in score.values())
    sigma = D / 2
    weights = [0.0] * S
    for s in window:
        weights[s] = math.exp(score[s] - top) / z * math.exp(-(s - p) ** 2 / (2 * sigma ** 2))
    context = [sum(weights[s] * values[s][k] for s in range(S)) for k in range(values.shape[1])]
    return np.array(context), np.array(weights)


def draw(rng, B, T, S, d, d_v, d_p, general):
    inputs = dict(query=rng.normal(size=(B, T, d)), key=rng.normal(size=(B, S, d)), value=rng.normal(size=(B, S, d_v)),
                  W_p=rng.normal(size=(d, d_p)), v_p=1.5 * rng.normal(size=d_p))
    if general:
        inputs["W_a"] = 0.5 * rng.normal(size=(d, d))
    return inputs


@pytest.mark.parametrize("D", [1, 2, 3, 7, 20])
@pytest.mark.parametrize("general", [False, True])
def test_the_solution_equals_the_papers_equations_query_by_query(solution, D, general):
    rng = np.random.default_rng(70 + D + 100 * general)
    inputs = draw(rng, 2, 5, 11, 4, 3, 3, general)
    output, weights = solution.local_p_attention(**inputs, D=D)
    assert output.shape == (2, 5, 3) and weights.shape == (2, 5, 11)
    for b in range(2):
        for t in range(5):
            context, row = local_p_loop(inputs["query"][b, t], inputs["key"][b], inputs["value"][b],
                                        inputs["W_p"], inputs["v_p"], D, inputs.get("W_a"))
            np.testing.assert_allclose(weights[b, t], row, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(output[b, t], context, rtol=1e-12, atol=1e-14)


def test_weights_vanish_outside_the_window_and_the_softmax_inside_sums_to_one(solution):
    rng = np.random.default_rng(71)
    inputs = draw(rng, 3, 6, 15, 5, 2, 4, True)
    D = 2
    _, weights = solution.local_p_attention(**inputs, D=D)
    centre = solution.predict_centre(inputs["query"], inputs["W_p"], inputs["v_p"], 15)
    offset = np.arange(15) - centre[..., None]
    outside = np.abs(offset) > D
    assert outside.any() and (weights[outside] == 0).all()          # exactly 0, not just small
    gauss = np.exp(-offset ** 2 / (2 * (D / 2) ** 2))
    np.testing.assert_allclose((weights / gauss).sum(-1), 1.0, rtol=1e-12)
    assert (weights.sum(-1) < 1).all()                               # the Gaussian is not renormalised


def test_a_window_holding_every_key_is_global_attention_times_the_gaussian(solution):
    rng = np.random.default_rng(72)
    S = 9
    inputs = draw(rng, 2, 4, S, 6, 3, 5, True)
    for D in (S, S + 4):
        output, weights = solution.local_p_attention(**inputs, D=D)
        centre = solution.predict_centre(inputs["query"], inputs["W_p"], inputs["v_p"], S)
        scores = luong_scores(inputs["query"], inputs["key"], score="general", W_a=inputs["W_a"])
        e = np.exp(scores - scores.max(-1, keepdims=True))
        expected = e / e.sum(-1, keepdims=True) * np.exp(-(np.arange(S) - centre[..., None]) ** 2 / (2 * (D / 2) ** 2))
        np.testing.assert_allclose(weights, expected, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(output, expected @ inputs["value"], rtol=1e-12, atol=1e-14)


def test_general_with_the_identity_is_dot_and_batches_are_independent(solution):
    rng = np.random.default_rng(73)
    inputs = draw(rng, 3, 4, 10, 5, 2, 3, False)
    dot = solution.local_p_attention(**inputs, D=2)
    general = solution.local_p_attention(**inputs, D=2, W_a=np.eye(5))
    np.testing.assert_allclose(general[1], dot[1], rtol=1e-12, atol=1e-14)
    single = solution.local_p_attention(**{k: v[1] if v.ndim == 3 else v for k, v in inputs.items()}, D=2)
    np.testing.assert_allclose(single[1], dot[1][1], rtol=1e-12, atol=1e-14)


def test_centres_and_windows(solution):
    centre = solution.predict_centre(np.zeros((4, 3)), np.ones((3, 2)), np.ones(2), 10)
    np.testing.assert_allclose(centre, 5.0)                         # sigmoid(0) = 1/2
    far = solution.predict_centre(np.ones((1, 3)), np.ones((3, 2)), np.full(2, 8.0), 10)
    assert 9.99 < far[0] < 10                                        # near S, never past it
    rng = np.random.default_rng(74)
    for D in (1, 2, 5):
        c = rng.uniform(0, 12, size=50)
        mask = solution.window_around(c, 12, D)
        loop = np.array([[abs(s - ct) <= D for s in range(12)] for ct in c])
        np.testing.assert_array_equal(mask, loop)
        assert mask.any(-1).all()                                   # D >= 1: no empty window
