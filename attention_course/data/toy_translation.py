"""A toy translation task with a controllable sentence length.

The source language is a list of English noun phrases joined by "and"; the
target language is a made-up French in which every word has a fixed
translation and the adjectives *follow* the noun, in reverse order::

    the big red dog and a cat   ->   le chien rouge grand et un chat

Every source word has exactly one target word, so the two sentences have the
same length, and an alignment exists that a reader can check by eye: it is
the diagonal, except inside a phrase, where it is reversed.  That makes the task
small enough to train on a CPU in seconds and hard in the way real translation
is hard for an encoder--decoder without attention: the whole source sentence
has to pass through one fixed-size vector.

Everything is generated from a seed; nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .vocabulary import END, PAD, START, Vocabulary  # noqa: F401 (the task's tokens, used by its readers)

DETERMINERS = {"the": "le", "a": "un"}
ADJECTIVES = {
    "big": "grand", "small": "petit", "red": "rouge", "blue": "bleu",
    "green": "vert", "old": "vieux", "new": "neuf", "happy": "content",
    "sad": "triste", "fast": "rapide",
}
NOUNS = {
    "dog": "chien", "cat": "chat", "house": "maison", "car": "voiture",
    "bird": "oiseau", "tree": "arbre", "book": "livre", "boat": "bateau",
    "horse": "cheval", "city": "ville",
}
CONJUNCTION = ("and", "et")
MAX_ADJECTIVES = 3

SOURCE_VOCAB = Vocabulary(
    (PAD, *DETERMINERS, *ADJECTIVES, *NOUNS, CONJUNCTION[0])
)
TARGET_VOCAB = Vocabulary(
    (PAD, START, END, *DETERMINERS.values(), *ADJECTIVES.values(),
     *NOUNS.values(), CONJUNCTION[1])
)


def _phrase_lengths(rng: np.random.Generator, length: int) -> list[int]:
    """Split ``length`` tokens into phrases of 2..5 tokens joined by "and"."""
    if length < 2:
        raise ValueError(f"a sentence has at least 2 words, got length={length}")
    lengths, remaining = [], length
    while remaining > 0:
        if lengths:
            remaining -= 1  # the "and" before this phrase
        # a phrase is det + 0..3 adjectives + noun; what is left after it must
        # be empty or long enough for "and" plus a two-word phrase.
        options = [p for p in range(2, 3 + MAX_ADJECTIVES)
                   if p <= remaining and (remaining - p == 0 or remaining - p >= 3)]
        p = options[rng.integers(len(options))]    # the draw rng.choice(options) makes
        lengths.append(p)
        remaining -= p
    return lengths


# Word lists in a fixed order, drawn from by index: ``rng.integers(len(words))``
# is the draw ``rng.choice(words)`` makes, without converting the list every time.
_DETERMINER_LIST, _ADJECTIVE_LIST, _NOUN_LIST = list(DETERMINERS), list(ADJECTIVES), list(NOUNS)


def sample_pair(rng: np.random.Generator, length: int) -> tuple[list[str], list[str]]:
    """One (source words, target words) pair with exactly ``length`` words each."""
    source, target = [], []
    for k, p in enumerate(_phrase_lengths(rng, length)):
        if k:
            source.append(CONJUNCTION[0])
            target.append(CONJUNCTION[1])
        det = _DETERMINER_LIST[rng.integers(len(_DETERMINER_LIST))]
        adjs = [_ADJECTIVE_LIST[i] for i in rng.integers(len(_ADJECTIVE_LIST), size=p - 2)]
        noun = _NOUN_LIST[rng.integers(len(_NOUN_LIST))]
        source += [det, *adjs, noun]
        target += [DETERMINERS[det], NOUNS[noun], *[ADJECTIVES[a] for a in reversed(adjs)]]
    return source, target


def translate(source: list[str]) -> list[str]:
    """The rule that generated the data, applied to any valid source sentence."""
    target, phrase = [], []
    for word in [*source, CONJUNCTION[0]]:
        if word == CONJUNCTION[0]:
            if phrase:
                det, *adjs, noun = phrase
                target += [DETERMINERS[det], NOUNS[noun], *[ADJECTIVES[a] for a in reversed(adjs)]]
                phrase = []
            if len(target) < len(source):
                target.append(CONJUNCTION[1])
        else:
            phrase.append(word)
    return target


def alignment(source: list[str]) -> np.ndarray:
    """For each target position, the index of the source word it translates.

    The generation rule makes the true alignment known, which lets the course
    *measure* whether a model's attention lands on the right source word.
    """
    links, start = [], 0
    for end in [i for i, w in enumerate(source) if w == CONJUNCTION[0]] + [len(source)]:
        # phrase source[start:end] = det adj_1 .. adj_k noun -> det noun adj_k .. adj_1
        links += [start, end - 1, *range(end - 2, start, -1)]
        if end < len(source):
            links.append(end)  # "and" -> "et"
        start = end + 1
    return np.array(links, dtype=np.int64)


@dataclass(frozen=True)
class TranslationData:
    """Padded integer arrays for one split of the toy task.

    Attributes:
        source: ``(n, max_length)`` source ids, 0-padded on the right.
        decoder_input: ``(n, max_length + 1)`` ``<s>`` followed by the target
            (teacher forcing: the decoder sees the previous true word).
        decoder_target: ``(n, max_length + 1)`` the target followed by ``</s>``.
        lengths: ``(n,)`` number of words in each source sentence.
    """

    source: np.ndarray
    decoder_input: np.ndarray
    decoder_target: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return len(self.lengths)


def make_dataset(n: int, min_length: int = 2, max_length: int = 30,
                 seed: int = 0) -> TranslationData:
    """``n`` pairs with source lengths drawn uniformly from ``[min_length, max_length]``."""
    if not 2 <= min_length <= max_length:
        raise ValueError(f"need 2 <= min_length <= max_length, got {min_length}, {max_length}")
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_length, max_length + 1, size=n)
    source = np.zeros((n, max_length), dtype=np.int32)
    decoder_input = np.zeros((n, max_length + 1), dtype=np.int32)
    decoder_target = np.zeros((n, max_length + 1), dtype=np.int32)
    start, end = TARGET_VOCAB.index[START], TARGET_VOCAB.index[END]
    for i, length in enumerate(lengths):
        src, tgt = sample_pair(rng, int(length))
        tgt_ids = TARGET_VOCAB.encode(tgt)
        source[i, :length] = SOURCE_VOCAB.encode(src)
        decoder_input[i, : length + 1] = [start, *tgt_ids]
        decoder_target[i, : length + 1] = [*tgt_ids, end]
    return TranslationData(source, decoder_input, decoder_target, lengths.astype(np.int32))


def make_splits(n_train: int = 20000, n_test: int = 3000, max_length: int = 30,
                seed: int = 0) -> tuple[TranslationData, TranslationData]:
    """The train and held-out test split every chapter uses (different seeds)."""
    return (make_dataset(n_train, max_length=max_length, seed=seed),
            make_dataset(n_test, max_length=max_length, seed=seed + 1))
