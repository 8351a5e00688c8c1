"""Scoring generated sequences."""

from __future__ import annotations

import numpy as np


def exact_match(predicted, target) -> np.ndarray:
    """``(n,)`` True where a generated sequence equals the target word for word.

    Both are ``(n, T)`` id arrays that end with ``</s>`` and are 0 afterwards;
    the shorter is zero-padded, so a prediction that stops early or runs on
    does not match.

    Used in chapter 10, *The decoder block*, section "What leaks without the mask".
    """
    predicted, target = np.asarray(predicted), np.asarray(target)
    if predicted.ndim != 2 or target.ndim != 2 or len(predicted) != len(target):
        raise ValueError(f"predicted and target must be (n, T) arrays with the same n; got "
                         f"{predicted.shape} and {target.shape}")
    width = max(predicted.shape[1], target.shape[1])
    pad = lambda a: np.pad(a, ((0, 0), (0, width - a.shape[1])))  # noqa: E731
    return (pad(predicted) == pad(target)).all(axis=1)


def accuracy_by_length(correct, lengths, bin_width: int = 1):
    """Mean of ``correct`` for every sentence length (or bins of ``bin_width`` lengths).

    Returns ``(lengths, accuracy, count)`` arrays; a bin's length is its mean
    sentence length.

    Used in chapter 10, *The decoder block*.
    """
    correct, lengths = np.asarray(correct, dtype=float), np.asarray(lengths)
    if correct.shape != lengths.shape:
        raise ValueError(f"correct and lengths must have the same shape; got {correct.shape} "
                         f"and {lengths.shape}")
    _, bin_of = np.unique((lengths - lengths.min()) // bin_width, return_inverse=True)
    count = np.bincount(bin_of)
    mean_length = np.bincount(bin_of, weights=lengths) / count
    accuracy = np.bincount(bin_of, weights=correct) / count
    return mean_length, accuracy, count


def bleu(predicted, target, vocabulary) -> float:
    """Corpus BLEU, from 0 to 100, of generated id sequences against their references.

    ``predicted`` and ``target`` are ``(n, T)`` id arrays as for
    :func:`exact_match`; ``vocabulary`` (a
    :class:`~attention_course.data.vocabulary.Vocabulary`) turns them into
    words.  The score is sacrebleu's (Post, 2018): the geometric mean of the
    clipped 1- to 4-gram precisions over the whole corpus, times a brevity
    penalty, with sacrebleu's default smoothing; the words are the tokens (no
    further tokenization).  Assignment 9 asks you to write it yourself.

    Used in chapter 11, *Training a Transformer*, section "Compared with the RNN models".
    """
    from sacrebleu.metrics import BLEU

    predicted, target = np.asarray(predicted), np.asarray(target)
    if predicted.ndim != 2 or target.ndim != 2 or len(predicted) != len(target) or not len(target):
        raise ValueError(f"predicted and target must be (n, T) arrays with the same n >= 1; got "
                         f"{predicted.shape} and {target.shape}")
    sentences = [[" ".join(vocabulary.decode(row)) for row in rows] for rows in (predicted, target)]
    return float(BLEU(tokenize="none").corpus_score(sentences[0], [sentences[1]]).score)


def bleu_by_length(predicted, target, lengths, vocabulary, bin_width: int = 4):
    """:func:`bleu` of each bin of ``bin_width`` source lengths, as :func:`accuracy_by_length` bins them.

    Returns ``(lengths, bleu, count)`` arrays; a bin's length is its mean
    sentence length.

    Used in chapter 11, *Training a Transformer*, section "Compared with the RNN models".
    """
    lengths = np.asarray(lengths)
    if lengths.shape != (len(np.asarray(predicted)),):
        raise ValueError(f"lengths must be (n,) for n = {len(np.asarray(predicted))} sentences; "
                         f"got {lengths.shape}")
    bins = (lengths - lengths.min()) // bin_width
    rows = [np.flatnonzero(bins == b) for b in np.unique(bins)]
    return (np.array([lengths[r].mean() for r in rows]),
            np.array([bleu(np.asarray(predicted)[r], np.asarray(target)[r], vocabulary) for r in rows]),
            np.array([len(r) for r in rows]))
