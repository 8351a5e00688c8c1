"""A fixed token list with its special tokens, shared by the toy data sets."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

PAD, START, END = "<pad>", "<s>", "</s>"


@dataclass(frozen=True)
class Vocabulary:
    """A fixed token list; index 0 is padding, so a 0 is always "no token"."""

    tokens: tuple[str, ...]

    @cached_property   # computed once: encode() is called for every sentence of a data set
    def index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, words: list[str]) -> list[int]:
        index = self.index
        unknown = [w for w in words if w not in index]
        if unknown:
            raise ValueError(f"words not in the vocabulary: {unknown}")
        return [index[w] for w in words]

    def decode(self, ids, stop_at_end: bool = True) -> list[str]:
        """Token ids -> words, dropping padding and the start token."""
        words = []
        for i in np.asarray(ids).tolist():
            token = self.tokens[i]
            if stop_at_end and token == END:
                break
            if token not in (PAD, START, END):
                words.append(token)
        return words
