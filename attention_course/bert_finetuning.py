"""Data for fine-tuning BERT (chapter 12): short reviews, with held-out words.

A review is one sentence built from a template, a noun (what is reviewed) and
an adjective (what the reviewer thinks of it)::

    i thought the concert was wonderful.        -> positive
    what a boring film!                          -> negative

The adjective alone decides the label.  The words come in two disjoint sets:
the **fine-tuning** split uses :data:`ADJECTIVES` ``["fine-tuning"]`` and
:data:`NOUNS` ``["fine-tuning"]``, the **test** split uses other adjectives
and other nouns, which the fine-tuning data never shows (the templates are
shared).  A model can only be right on the test split by knowing, from
somewhere else, that "superb" is praise: from pre-training.  A model trained
from scratch has never seen the test words at all, and their embeddings are
still random.

Everything is generated from a seed; nothing is downloaded.  Every word is a
single WordPiece token of all-MiniLM-L6-v2's vocabulary, and every review is
at most 16 tokens long with ``[CLS]`` and ``[SEP]``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import checked

#: Sentence frames; ``{noun}`` and ``{adjective}`` are filled in.
TEMPLATES = (
    "the {noun} was {adjective}.",
    "i thought the {noun} was {adjective}.",
    "what a {adjective} {noun}!",
    "we found the {noun} really {adjective}.",
    "honestly, the {noun} is {adjective}.",
    "my friends said the {noun} was {adjective}.",
    "it was a {adjective} {noun}.",
    "the {noun} seemed {adjective} to me.",
)

#: The adjectives of each split, by label: ``ADJECTIVES[split][label]``, 1 = positive.
ADJECTIVES = {
    "fine-tuning": {
        1: ("good", "great", "excellent", "wonderful", "lovely", "nice", "perfect", "amazing",
            "pleasant", "enjoyable"),
        0: ("bad", "terrible", "awful", "horrible", "poor", "boring", "dull", "disappointing",
            "unpleasant", "ugly"),
    },
    "test": {
        1: ("fantastic", "brilliant", "superb", "delightful", "outstanding", "charming",
            "splendid", "terrific"),
        0: ("dreadful", "miserable", "pathetic", "bland", "nasty", "annoying", "unbearable",
            "pointless"),
    },
}

#: The nouns of each split: what is reviewed.
NOUNS = {
    "fine-tuning": ("film", "meal", "hotel", "concert", "book", "trip", "service", "game", "show",
                    "coffee"),
    "test": ("song", "album", "lecture", "holiday", "pizza", "restaurant", "museum", "party"),
}

SPLITS = tuple(ADJECTIVES)


@dataclass(frozen=True)
class Reviews:
    """``n`` one-sentence reviews: ``texts[i]`` has label ``labels[i]`` (1 = positive).

    Made by :func:`make_reviews`, used in chapter 12.
    """

    texts: list[str]
    labels: np.ndarray       # (n,) int32, 0 or 1
    adjectives: list[str]    # the adjective of each review
    nouns: list[str]         # the noun of each review

    def __len__(self) -> int:
        return len(self.texts)


def check_make_reviews(n, split):
    """The arguments of make_reviews (chapter 12): a count >= 0 and a known split."""
    if split not in ADJECTIVES:
        raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an int >= 0; got {n!r}")


@checked(check_make_reviews)
def make_reviews(n: int, split: str = "fine-tuning", seed=None) -> Reviews:
    """``n`` reviews from the words of ``split``, half positive and half negative.

    Args:
        n: how many reviews (an even ``n`` gives exactly ``n / 2`` of each label).
        split: ``"fine-tuning"`` or ``"test"``: which adjectives and nouns to use.
        seed: an int or a ``np.random.Generator``.

    The labels are shuffled; the template, the noun and the adjective (among
    those of the label) are drawn uniformly.

    Used in chapter 12, *Fine-tuning BERT and next-sentence prediction*, section
    "Fine-tuning: using what pre-training learnt".
    """
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % 2).astype(np.int32)        # half of each
    templates = rng.integers(len(TEMPLATES), size=n)
    nouns = [NOUNS[split][i] for i in rng.integers(len(NOUNS[split]), size=n)]
    adjectives = [ADJECTIVES[split][label][rng.integers(len(ADJECTIVES[split][label]))]
                  for label in labels.tolist()]                   # the label's words
    texts = [TEMPLATES[t].format(noun=noun, adjective=adjective)
             for t, noun, adjective in zip(templates.tolist(), nouns, adjectives)]
    return Reviews(texts=texts, labels=labels, adjectives=adjectives, nouns=nouns)


def split_words(split: str) -> set[str]:
    """Every adjective and noun of ``split`` (chapter 12 checks the two splits share none)."""
    if split not in ADJECTIVES:
        raise ValueError(f"split must be one of {SPLITS}; got {split!r}")
    return {*ADJECTIVES[split][0], *ADJECTIVES[split][1], *NOUNS[split]}
