"""Scoring generated sequences: exact match by length, and BLEU (sacrebleu) of id sequences."""

import math

import numpy as np
import pytest
import sacrebleu

from attention_course import evaluation
from attention_course.data import toy_translation as task

END = task.TARGET_VOCAB.index[task.END]


def ids(sentences: list[list[str]], width: int = 12) -> np.ndarray:
    """Words -> ``(n, width)`` ids ending with ``</s>``, 0-padded (as the decoders return them)."""
    out = np.zeros((len(sentences), width), dtype=np.int32)
    for row, words in zip(out, sentences):
        row[:len(words) + 1] = [*task.TARGET_VOCAB.encode(words), END]
    return out


REFERENCES = [["le", "chien", "rouge"], ["un", "chat", "et", "le", "livre", "vieux", "grand"],
              ["le", "bateau", "et", "un", "arbre", "vert"]]


def test_a_perfect_corpus_scores_100_and_a_wrong_word_less():
    target = ids(REFERENCES)
    assert evaluation.bleu(target, target, task.TARGET_VOCAB) == pytest.approx(100.0)
    wrong = [list(s) for s in REFERENCES]
    wrong[1][3] = "un"
    assert 0 < evaluation.bleu(ids(wrong), target, task.TARGET_VOCAB) < 100


def test_it_is_sacrebleus_corpus_bleu_of_the_words():
    rng = np.random.default_rng(3)
    references, hypotheses = [], []
    for _ in range(40):
        _, target = task.sample_pair(rng, int(rng.integers(2, 11)))
        hypothesis = list(target)
        for i in np.flatnonzero(rng.random(len(target)) < 0.2):      # some words wrong
            hypothesis[i] = task.TARGET_VOCAB.tokens[int(rng.integers(3, len(task.TARGET_VOCAB)))]
        if rng.random() < 0.2:
            hypothesis = hypothesis[:-1]                               # some too short
        references.append(target)
        hypotheses.append(hypothesis)
    expected = sacrebleu.corpus_bleu([" ".join(h) for h in hypotheses],
                                     [[" ".join(r) for r in references]]).score
    got = evaluation.bleu(ids(hypotheses, 16), ids(references, 16), task.TARGET_VOCAB)
    assert got == pytest.approx(expected, rel=1e-12)
    assert 10 < got < 90


def test_bleu_by_length_scores_each_bin_on_its_own():
    rng = np.random.default_rng(5)
    lengths = rng.integers(2, 14, size=60)
    pairs = [task.sample_pair(rng, int(n)) for n in lengths]
    target = ids([t for _, t in pairs], 16)
    predicted = target.copy()
    predicted[lengths > 9, 1] = task.TARGET_VOCAB.index["et"]          # long sentences: one word wrong
    mean_length, scores, count = evaluation.bleu_by_length(predicted, target, lengths, task.TARGET_VOCAB,
                                                           bin_width=4)
    assert count.sum() == 60 and len(scores) == len(mean_length) == 3
    assert scores[0] == pytest.approx(100.0) and scores[-1] < 100
    last = lengths >= 10
    assert scores[-1] == pytest.approx(evaluation.bleu(predicted[last], target[last], task.TARGET_VOCAB))
    assert math.isclose(mean_length[-1], lengths[last].mean())


@pytest.mark.parametrize("predicted, target, message", [
    (np.zeros((2, 5), int), np.zeros((3, 5), int), "same n"),
    (np.zeros(5, int), np.zeros((1, 5), int), r"\(n, T\) arrays"),
    (np.zeros((0, 5), int), np.zeros((0, 5), int), "n >= 1"),
])
def test_wrong_shapes_are_refused(predicted, target, message):
    with pytest.raises(ValueError, match=message):
        evaluation.bleu(predicted, target, task.TARGET_VOCAB)


def test_lengths_must_match_the_sentences():
    with pytest.raises(ValueError, match="lengths must be"):
        evaluation.bleu_by_length(np.zeros((3, 4), int), np.zeros((3, 4), int), [2, 3], task.TARGET_VOCAB)
