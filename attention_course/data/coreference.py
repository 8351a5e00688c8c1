"""Sentences in which "it" refers to one of two nouns, and the last word decides which.

::

    the animal didn't cross the street because it was too tired   ->  it = animal
    the animal didn't cross the street because it was too wide    ->  it = street

A Winograd schema (Levesque et al., 2012) in miniature: the two sentences
differ in one word, and that word flips what "it" refers to.  To name the
referent, a model has to *find* the right noun, which is what self-attention
is for.

Every sentence has the same eleven positions::

    0    1       2      3              4    5       6       7   8   9   10
    the  <noun>  didn't cross|catch    the  <noun>  because it  was too <adjective>

and comes from one of two frames:

* **cross**: ``the <animal> didn't cross the <place> because it was too <adj>``;
  a tired, scared, slow ... thing is the animal, a wide, busy, deep ... thing
  the place.
* **catch**: ``the <animal> didn't catch the <animal> because it was too <adj>``;
  a tired, slow ... animal is the one that did not catch, a fast, clever ...
  animal the one that got away.

In *cross* sentences the two nouns are of different kinds, so a model could
name the referent from the adjective's kind alone ("tired" -> some animal) and
the nouns present.  In *catch* sentences both nouns are animals: only the
*position* the adjective points to identifies the referent.  Trained on both,
a model's one general solution is to find the right noun.

The label of a sentence is the referent noun (an index into :data:`NOUNS`).
Everything is enumerated, so there is no sampling; the split into training and
held-out sentences is drawn from a seed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .vocabulary import PAD, Vocabulary

ANIMALS = ("animal", "dog", "cat", "horse", "cow", "goat", "fox", "sheep")
PLACES = ("street", "river", "road", "bridge", "field", "canal")
NOUNS = ANIMALS + PLACES

#: "it was too <adjective>" refers to the first noun (the animal that didn't ...).
SUBJECT_ADJECTIVES = ("tired", "scared", "slow", "old", "lazy", "weak", "sleepy", "nervous")
#: In *cross* sentences these refer to the place.
PLACE_ADJECTIVES = ("wide", "busy", "deep", "long", "crowded", "icy", "muddy", "steep")
#: In *catch* sentences these refer to the animal that got away.
OBJECT_ADJECTIVES = ("fast", "quick", "agile", "clever", "sneaky", "distant")

FRAME_WORDS = ("the", "didn't", "cross", "catch", "because", "it", "was", "too")
VOCAB = Vocabulary((PAD, *FRAME_WORDS, *NOUNS, *SUBJECT_ADJECTIVES, *PLACE_ADJECTIVES,
                    *OBJECT_ADJECTIVES))

LENGTH = 11
SUBJECT_POSITION, OBJECT_POSITION = 1, 5
PRONOUN_POSITION = 7
ADJECTIVE_POSITION = 10

#: The pair the chapter (and chapter 12, in BERT) looks at.
EXAMPLES = ("the animal didn't cross the street because it was too tired",
            "the animal didn't cross the street because it was too wide")


@dataclass
class CoreferenceData:
    """Encoded sentences.

    Attributes:
        tokens: ``(n, LENGTH)`` token ids.
        referent: ``(n,)`` the noun "it" refers to, as an index into :data:`NOUNS`.
        referent_position: ``(n,)`` its position in the sentence (1 or 5).
        frame: ``(n,)`` ``"cross"`` or ``"catch"``.
    """

    tokens: np.ndarray
    referent: np.ndarray
    referent_position: np.ndarray
    frame: np.ndarray

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def other_position(self) -> np.ndarray:
        """``(n,)`` the position of the noun "it" does *not* refer to."""
        return SUBJECT_POSITION + OBJECT_POSITION - self.referent_position

    def sentences(self) -> list[str]:
        return [" ".join(VOCAB.decode(row)) for row in self.tokens]

    def subset(self, keep) -> "CoreferenceData":
        return CoreferenceData(self.tokens[keep], self.referent[keep],
                               self.referent_position[keep], self.frame[keep])


def sentence(first: str, verb: str, second: str, adjective: str) -> list[str]:
    return ["the", first, "didn't", verb, "the", second, "because", "it", "was", "too", adjective]


def all_sentences() -> list[tuple[list[str], int]]:
    """Every sentence of both frames with the position of the noun "it" refers to."""
    rows = []
    for first, second, adjective in itertools.product(ANIMALS, PLACES,
                                                      SUBJECT_ADJECTIVES + PLACE_ADJECTIVES):
        position = SUBJECT_POSITION if adjective in SUBJECT_ADJECTIVES else OBJECT_POSITION
        rows.append((sentence(first, "cross", second, adjective), position))
    for first, second, adjective in itertools.product(ANIMALS, ANIMALS,
                                                      SUBJECT_ADJECTIVES + OBJECT_ADJECTIVES):
        if first != second:
            position = SUBJECT_POSITION if adjective in SUBJECT_ADJECTIVES else OBJECT_POSITION
            rows.append((sentence(first, "catch", second, adjective), position))
    return rows


def encode(rows: list[tuple[list[str], int]]) -> CoreferenceData:
    """``[(words, referent_position), ...]`` -> :class:`CoreferenceData`."""
    for words, position in rows:
        if len(words) != LENGTH or position not in (SUBJECT_POSITION, OBJECT_POSITION):
            raise ValueError(f"expected {LENGTH} words and a referent at position "
                             f"{SUBJECT_POSITION} or {OBJECT_POSITION}; got {words}, {position}")
    tokens = np.array([VOCAB.encode(words) for words, _ in rows], dtype=np.int32).reshape(-1, LENGTH)
    positions = np.array([position for _, position in rows], dtype=np.int32)
    referent = np.array([NOUNS.index(words[position]) for words, position in rows], dtype=np.int32)
    frame = np.array([words[3] for words, _ in rows], dtype=object).astype(str)
    return CoreferenceData(tokens, referent, positions, frame)


def encode_examples(texts=EXAMPLES) -> CoreferenceData:
    """Encode sentences written out in full, e.g. :data:`EXAMPLES`; the referent is inferred."""
    rows = []
    for text in texts:
        words = text.lower().split()
        adjective = words[-1] if words else ""
        if adjective not in SUBJECT_ADJECTIVES + PLACE_ADJECTIVES + OBJECT_ADJECTIVES:
            raise ValueError(f"{text!r} does not end with one of the known adjectives")
        rows.append((words, SUBJECT_POSITION if adjective in SUBJECT_ADJECTIVES else OBJECT_POSITION))
    return encode(rows)


def make_splits(test_fraction: float = 0.25, seed: int = 0) -> tuple[CoreferenceData, CoreferenceData]:
    """All sentences, shuffled and split: ``(train, test)``; no sentence is in both."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must lie in (0, 1); got {test_fraction}")
    data = encode(all_sentences())
    order = np.random.default_rng(seed).permutation(len(data))
    n_test = int(round(test_fraction * len(data)))
    return data.subset(np.sort(order[n_test:])), data.subset(np.sort(order[:n_test]))
