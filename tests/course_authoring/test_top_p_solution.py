"""Assignment 10's reference solution (top-p sampling) against independent formulations.

No Keras op does nucleus sampling, so the solution the hidden tests compare with
is checked here: against a row-by-row sort in plain Python that follows the
assignment's words, against the formulation of Hugging Face's ``TopPLogitsWarper``
(sort ascending, drop the tokens whose cumulative probability is at most 1 - p,
keep the last), and by the properties of the nucleus.  The statistical hidden test
of ``sample_top_p`` is run on three honest samplers (it must pass them) and on
wrong ones (it must fail them).
"""

import numpy as np
import pytest

from grading_support import SOLUTIONS, cell, source_notebook

from course_grader.hidden_tests import reference_solution

NAME = "a10_top_p_sampling"


@pytest.fixture(scope="module")
def solution():
    return reference_solution(SOLUTIONS / NAME / f"{NAME}.ipynb")


def nucleus_loop(logits, p, temperature=1.0):
    """One row at a time, in Python: rank (likeliest first, smaller index on ties), keep while the
    tokens ranked above sum to less than p, renormalise."""
    z = [x / temperature for x in logits]
    top = max(z)
    e = [np.exp(x - top) for x in z]
    q = [x / sum(e) for x in e]
    ranking = sorted(range(len(q)), key=lambda i: (-q[i], i))
    kept, above = set(), 0.0
    for i in ranking:
        if above >= p:
            break
        kept.add(i)
        above += q[i]
    total = sum(q[i] for i in kept)
    return np.array([q[i] / total if i in kept else 0.0 for i in range(len(q))])


def hugging_face_top_p(logits, p, temperature=1.0):
    """transformers' TopPLogitsWarper (after its TemperatureLogitsWarper), in NumPy, then softmax."""
    scores = np.asarray(logits) / temperature
    order = np.argsort(scores, axis=-1)                            # ascending
    sorted_scores = np.take_along_axis(scores, order, axis=-1)
    e = np.exp(sorted_scores - sorted_scores.max(-1, keepdims=True))
    cumulative = np.cumsum(e / e.sum(-1, keepdims=True), axis=-1)
    remove_sorted = cumulative <= 1 - p
    remove_sorted[..., -1] = False                                  # min_tokens_to_keep = 1
    remove = np.zeros_like(remove_sorted)
    np.put_along_axis(remove, order, remove_sorted, axis=-1)
    scores = np.where(remove, -np.inf, scores)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def p_away_from_the_edges(rng, logits, temperature):
    q = np.exp(logits / temperature - (logits / temperature).max(-1, keepdims=True))
    cumulative = np.cumsum(np.sort(q / q.sum(-1, keepdims=True), axis=-1)[..., ::-1], axis=-1)
    while True:
        p = float(rng.uniform(0.05, 0.99))
        if np.abs(cumulative - p).min() > 1e-9:
            return p


@pytest.mark.parametrize("seed", range(6))
def test_the_nucleus_equals_a_row_by_row_loop_and_hugging_face(solution, seed):
    rng = np.random.default_rng(110 + seed)
    temperature = float(rng.choice([0.5, 1.0, 1.7]))
    logits = rng.normal(size=(3, 4, 11)) * rng.uniform(0.5, 5)
    p = p_away_from_the_edges(rng, logits, temperature)
    got = solution.top_p_filter(logits, p, temperature=temperature)
    assert got.shape == logits.shape
    for index in np.ndindex(logits.shape[:-1]):
        np.testing.assert_allclose(got[index], nucleus_loop(logits[index], p, temperature), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got, hugging_face_top_p(logits, p, temperature), rtol=1e-12, atol=1e-15)


def test_ties_follow_the_stated_rule(solution):
    rng = np.random.default_rng(120)
    logits = rng.integers(-2, 3, size=(40, 9)).astype(float)
    for p in (0.3, 0.55, 0.81):
        got = solution.top_p_filter(logits, p)
        for row, expected in zip(got, (nucleus_loop(r, p) for r in logits)):
            np.testing.assert_allclose(row, expected, rtol=1e-12, atol=1e-15)


def test_properties_of_the_nucleus(solution):
    rng = np.random.default_rng(121)
    logits = rng.normal(size=(200, 13)) * 2
    q = np.exp(logits - logits.max(-1, keepdims=True))
    q /= q.sum(-1, keepdims=True)
    for p in (1e-6, 0.3, 0.7, 0.95, 1.0):
        got = solution.top_p_filter(logits, p)
        kept = got > 0
        np.testing.assert_allclose(got.sum(-1), 1.0, rtol=1e-12)
        assert kept[np.arange(200), q.argmax(-1)].all()                      # the likeliest is always kept
        mass = np.where(kept, q, 0).sum(-1)
        smallest = np.where(kept, q, np.inf).min(-1)
        assert (mass >= p - 1e-12).all()                                    # enough probability ...
        assert (mass - smallest < p).all() or p <= q.max()                  # ... and no token more than needed
        assert (np.where(kept, q, 1).min(-1) >= np.where(kept, 0, q).max(-1)).all()   # the likeliest tokens
        np.testing.assert_allclose(got, np.where(kept, q, 0) / mass[:, None], rtol=1e-12)
    np.testing.assert_allclose(solution.top_p_filter(logits, 1.0), q, rtol=1e-12)
    np.testing.assert_array_equal(solution.top_p_filter(logits, 1e-9), np.eye(13)[q.argmax(-1)])


def test_top_k_then_top_p(solution):
    rng = np.random.default_rng(122)
    logits = rng.normal(size=(50, 10)) * 2
    for k, p in [(1, 0.5), (3, 0.6), (6, 0.9), (10, 0.75)]:
        top_k = np.where(np.argsort(np.argsort(-logits, -1), -1) < k, logits, -np.inf)
        expected = np.array([nucleus_loop(row, p) for row in top_k])
        np.testing.assert_allclose(solution.top_k_top_p_filter(logits, k, p), expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(solution.top_k_top_p_filter(logits, 10, 0.75, temperature=0.6),
                               solution.top_p_filter(logits, 0.75, temperature=0.6), rtol=1e-12)


# --- the statistical hidden test ---------------------------------------------------------------

def gumbel_sampler(solution):
    def sample(logits, p, num_samples, seed, temperature=1.0):
        probs = solution.top_p_filter(logits, p, temperature)
        rng = np.random.default_rng(seed)
        with np.errstate(divide="ignore"):
            log_probs = np.log(probs)
        return np.argmax(log_probs + rng.gumbel(size=(num_samples, *probs.shape)), axis=-1)
    return sample


def choice_sampler(solution):
    def sample(logits, p, num_samples, seed, temperature=1.0):
        probs = solution.top_p_filter(logits, p, temperature)
        rng = np.random.default_rng(seed)
        rows = probs.reshape(-1, probs.shape[-1])
        out = np.stack([rng.choice(len(row), size=num_samples, p=row) for row in rows], axis=-1)
        return out.reshape(num_samples, *probs.shape[:-1])
    return sample


def run_sample_hidden_test(solution, sampler, seed):
    source = cell(source_notebook(NAME), "sample_hidden").source
    namespace = dict(vars(solution))
    namespace.update(np=np, sample_top_p=sampler, reference=solution,
                     grading_rng=lambda *labels: np.random.default_rng(seed))
    exec(compile(source, "<sample_hidden>", "exec"), namespace)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("sampler", ["solution", "gumbel", "choice"])
def test_the_statistical_test_passes_honest_samplers(solution, sampler, seed):
    sample = {"solution": solution.sample_top_p, "gumbel": gumbel_sampler(solution),
              "choice": choice_sampler(solution)}[sampler]
    run_sample_hidden_test(solution, sample, seed)


@pytest.mark.parametrize("wrong", ["no_temperature", "full_distribution", "top_k_3", "one_draw_repeated"])
def test_the_statistical_test_fails_wrong_samplers(solution, wrong):
    def sample(logits, p, num_samples, seed, temperature=1.0):
        rng = np.random.default_rng(seed)
        if wrong == "no_temperature":
            probs = solution.top_p_filter(logits, p)
        elif wrong == "full_distribution":
            probs = solution.top_p_filter(logits, 1.0, temperature)
        elif wrong == "top_k_3":
            probs = solution.top_k_top_p_filter(logits, 3, 1.0, temperature)
        else:
            probs = solution.top_p_filter(logits, p, temperature)
        if wrong == "one_draw_repeated":
            u = np.broadcast_to(rng.random((1, *probs.shape[:-1], 1)), (num_samples, *probs.shape[:-1], 1))
        else:
            u = rng.random((num_samples, *probs.shape[:-1], 1))
        cdf = np.cumsum(probs, -1)
        return (u >= cdf / cdf[..., -1:]).sum(-1)
    with pytest.raises(AssertionError):
        run_sample_hidden_test(solution, sample, 5)
