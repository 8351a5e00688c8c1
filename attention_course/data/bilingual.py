"""The toy translation pairs of chapter 1 as BERT inputs: ``[CLS] english [SEP] french [SEP]``.

Chapter 12 pre-trains a tiny BERT with the masked-language-model objective on
these pairs.  With both languages in one input, a masked word can often be
recovered from its translation in the other segment, if the model learns to
look there; with the grammar of each language it can narrow down the rest.

One vocabulary holds BERT's five special tokens and the words of both
languages (the two word lists share no word); the token-type id is 0 on
``[CLS] english [SEP]`` and 1 on ``french [SEP]``, as for BERT's sentence pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import toy_translation as task

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIAL_TOKENS = (PAD, UNK, CLS, SEP, MASK)
ENGLISH = tuple(t for t in task.SOURCE_VOCAB.tokens if t != task.PAD)
FRENCH = tuple(t for t in task.TARGET_VOCAB.tokens if t not in (task.PAD, task.START, task.END))
TOKENS = SPECIAL_TOKENS + ENGLISH + FRENCH
INDEX = {token: i for i, token in enumerate(TOKENS)}
assert len(INDEX) == len(TOKENS), "the two languages must not share a word"
SPECIAL_IDS = np.array([INDEX[t] for t in SPECIAL_TOKENS])
MASK_ID = INDEX[MASK]


@dataclass(frozen=True)
class PairData:
    """Encoded pairs, right-padded with ``[PAD]`` (id 0).

    Attributes:
        ids: ``(n, T)`` int32 token ids of ``[CLS] english [SEP] french [SEP]``.
        type_ids: ``(n, T)`` int32: 0 on ``[CLS] english [SEP]``, 1 on ``french [SEP]``.
        attention_mask: ``(n, T)`` bool, True on real tokens.
        lengths: ``(n,)`` words per sentence (each language has as many).
        partner: ``(n, T)`` int32, for each word the position of its translation
            in the other segment (the alignment of chapter 1); -1 on special
            tokens and padding.
    """

    ids: np.ndarray
    type_ids: np.ndarray
    attention_mask: np.ndarray
    lengths: np.ndarray
    partner: np.ndarray

    def __len__(self) -> int:
        return len(self.lengths)


def encode(english: list[str], french: list[str]) -> tuple[list[int], list[int]]:
    """One pair -> ``(ids, type_ids)``; a word may also be a special token such as ``[MASK]``."""
    unknown = [w for w in (*english, *french) if w not in INDEX]
    if unknown:
        raise ValueError(f"words not in the vocabulary: {unknown}")
    tokens = [CLS, *english, SEP, *french, SEP]
    return [INDEX[t] for t in tokens], [0] * (len(english) + 2) + [1] * (len(french) + 1)


def decode(ids) -> list[str]:
    """Token ids -> token strings, padding dropped."""
    return [TOKENS[i] for i in np.asarray(ids).tolist() if i != INDEX[PAD]]


def make_pairs(n: int, min_length: int = 2, max_length: int = 10, seed: int = 0) -> PairData:
    """``n`` pairs with sentence lengths drawn uniformly from ``[min_length, max_length]`` words."""
    if not 2 <= min_length <= max_length:
        raise ValueError(f"need 2 <= min_length <= max_length, got {min_length}, {max_length}")
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_length, max_length + 1, size=n)
    T = 2 * max_length + 3
    ids = np.zeros((n, T), dtype=np.int32)
    type_ids = np.zeros((n, T), dtype=np.int32)
    partner = np.full((n, T), -1, dtype=np.int32)
    for i, length in enumerate(lengths):
        english, french = task.sample_pair(rng, int(length))
        pair_ids, pair_types = encode(english, french)
        ids[i, : len(pair_ids)] = pair_ids
        type_ids[i, : len(pair_ids)] = pair_types
        # English word k sits at position 1 + k, French word j at length + 2 + j.
        french_positions = length + 2 + np.arange(length)
        english_positions = 1 + task.alignment(english)          # the source word of French word j
        partner[i, french_positions] = english_positions
        partner[i, english_positions] = french_positions
    return PairData(ids, type_ids, ids != INDEX[PAD], lengths.astype(np.int32), partner)
