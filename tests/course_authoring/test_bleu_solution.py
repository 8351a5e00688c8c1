"""Assignment 9's reference solution (BLEU) equals sacrebleu's corpus BLEU.

The hidden tests compare a student's BLEU with the source notebook's solution, so
that solution is checked here against ``sacrebleu`` (pinned in requirements.txt),
on translations of the course's toy task (``attention_course.data.toy_translation``,
chapters 10-11) corrupted at random, with one to three references per sentence.

The options that make sacrebleu compute the assignment's definition:

* ``tokenize="none"``: no tokenisation beyond splitting at white space, as the
  assignment's ``sentence.split()`` does (sacrebleu's default, ``13a``, separates
  punctuation; there is none in the toy task, but the definitions should agree anyway);
* ``smooth_method="none"``: no smoothing, so a precision of 0 gives BLEU 0 (the
  default, ``exp``, replaces a zero count by a small one);
* ``use_effective_order=False`` (the default): always the four orders n = 1..4;
* ``lowercase=False`` (the default) and ``force=True`` (only silences a warning
  about input that looks tokenised).

sacrebleu reports 100 times the score; with several references it clips by the
most frequent occurrence in any one reference and takes the closest reference
length (the shorter on a tie), as the assignment asks.
"""

import numpy as np
import pytest

from grading_support import SOLUTIONS

from attention_course.data import toy_translation
from course_grader.hidden_tests import reference_solution

sacrebleu = pytest.importorskip("sacrebleu")
WORDS = list(toy_translation.TARGET_VOCAB.tokens)[3:]   # the target language's words, no <pad>/<s>/</s>


@pytest.fixture(scope="module")
def solution():
    return reference_solution(SOLUTIONS / "a9_bleu" / "a9_bleu.ipynb")


def corrupted(rng, tokens):
    """A translation with mistakes: a few words replaced, dropped, repeated, swapped, or the end cut."""
    tokens = list(tokens)
    for _ in range(int(rng.integers(0, 4))):
        i, action = int(rng.integers(len(tokens))), int(rng.integers(5))
        if action == 0:
            tokens[i] = str(rng.choice(WORDS))
        elif action == 1 and len(tokens) > 1:
            del tokens[i]
        elif action == 2:
            tokens.insert(i, tokens[i])
        elif action == 3 and i + 1 < len(tokens):
            tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
        elif action == 4 and len(tokens) > 3:
            tokens = tokens[:-2]
    return tokens


def toy_corpus(rng, N, n_refs):
    """N (hypothesis, references) pairs: the toy task's target sentence and n_refs - 1 other
    renderings (the adjectives in source order, or a corrupted copy), the hypothesis a corrupted one."""
    hyps, refs = [], []
    for _ in range(N):
        source, target = toy_translation.sample_pair(rng, int(rng.integers(2, 14)))
        alternatives = [target, [toy_translation.ADJECTIVES.get(w) or toy_translation.NOUNS.get(w)
                                 or toy_translation.DETERMINERS.get(w) or toy_translation.CONJUNCTION[1]
                                 for w in source], corrupted(rng, target)]
        hyps.append(" ".join(corrupted(rng, target)))
        refs.append([" ".join(r) for r in alternatives[:n_refs]])
    return hyps, refs


def sacre(hyps, refs):
    streams = [list(stream) for stream in zip(*refs)]   # sacrebleu wants one list per reference
    return sacrebleu.corpus_bleu(hyps, streams, smooth_method="none", tokenize="none", force=True,
                                 lowercase=False, use_effective_order=False)


@pytest.mark.parametrize("n_refs", [1, 2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_corpus_bleu_equals_sacrebleu_on_corrupted_toy_translations(solution, seed, n_refs):
    rng = np.random.default_rng(1000 + seed)
    hyps, refs = toy_corpus(rng, int(rng.integers(1, 40)), n_refs)
    expected = sacre(hyps, refs)
    assert solution.corpus_bleu(hyps, refs) == pytest.approx(expected.score / 100, rel=1e-12, abs=1e-15)
    # ... and the parts agree with sacrebleu's statistics: summed matches, totals and lengths, the penalty
    matches = [sum(solution.clipped_matches(h, r, n)[0] for h, r in zip(hyps, refs)) for n in range(1, 5)]
    totals = [sum(solution.clipped_matches(h, r, n)[1] for h, r in zip(hyps, refs)) for n in range(1, 5)]
    assert matches == list(expected.counts) and totals == list(expected.totals)
    assert solution.brevity_penalty(expected.sys_len, expected.ref_len) == pytest.approx(expected.bp, rel=1e-12)


def test_the_cases_reach_every_branch(solution):
    """The comparisons above include BLEU 0, BLEU 1, brevity penalties below 1 and clipped counts."""
    scores, penalties, clipped = [], [], 0
    for seed in range(8):
        for n_refs in (1, 2, 3):
            rng = np.random.default_rng(1000 + seed)
            hyps, refs = toy_corpus(rng, int(rng.integers(1, 40)), n_refs)
            result = sacre(hyps, refs)
            scores.append(result.score)
            penalties.append(result.bp)
            for h, r in zip(hyps, refs):       # a repeated word found in a reference fewer times
                in_refs = {w for ref in r for w in ref.split()}
                clipped += solution.clipped_matches(h, r, 1)[0] < sum(w in in_refs for w in h.split())
    assert min(penalties) < 1 and max(penalties) == 1 and clipped > 0
    assert 0 < np.median(scores) < 100


@pytest.mark.parametrize("hyps, refs", [
    (["le chat"], [["le chat"]]),                                   # no 3- or 4-grams at all: 0
    (["le chien rouge et un chat"], [["le chien rouge et un chat"]]),
    (["le le le le le"], [["le chien et le chat"]]),
    (["un chat et le chien rouge", "le chat"], [["le chien rouge et un chat"], ["le chat"]]),
    (["le chien rouge"], [["le chien rouge grand", "le chien"]]),   # a tie in length: the shorter
    (["le chien rouge et un"], [["le chien rouge et un chat", "le chien rouge et un chat vert"]]),
])
def test_small_cases_equal_sacrebleu(solution, hyps, refs):
    assert solution.corpus_bleu(hyps, refs) == pytest.approx(sacre(hyps, refs).score / 100, rel=1e-12, abs=1e-15)
