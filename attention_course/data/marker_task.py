"""A task with two jobs for attention: look one step back, and look at the marker.

A sequence holds ``length`` digits ``0 .. digits-1``; exactly one of them, at a
random position, is *marked* (a separate token for each digit, written ``*3``
for a marked 3).  At every position ``i >= 1`` the answer is a pair::

    (the digit at position i - 1,  the marked digit)

encoded as one class ``previous * digits + marked``.  Position 0 has no
previous digit and is not scored (its sample weight is 0).

Both halves of the answer must be fetched from somewhere else in the sequence,
and from *different* places: the first always from the position just before,
the second from wherever the marker happens to be.  One attention
distribution per position cannot do both well; several heads can split the
work -- or not, which is what chapter 6 measures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class MarkerTaskData:
    """Sequences and answers.

    Attributes:
        tokens: ``(n, length)`` ids: digit ``d`` is ``d``, a marked ``d`` is ``digits + d``.
        targets: ``(n, length)`` classes ``previous * digits + marked`` (0 at position 0).
        sample_weight: ``(n, length)`` 0 at position 0, 1 elsewhere.
        marker_position: ``(n,)`` where the marked digit is.
        digits: the number of distinct digits.
    """

    tokens: np.ndarray
    targets: np.ndarray
    sample_weight: np.ndarray
    marker_position: np.ndarray
    digits: int

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def vocab_size(self) -> int:
        return 2 * self.digits

    @property
    def num_classes(self) -> int:
        return self.digits * self.digits

    def split_classes(self, classes) -> tuple[np.ndarray, np.ndarray]:
        """Classes -> ``(previous digit, marked digit)``, to score the two halves separately."""
        classes = np.asarray(classes)
        return classes // self.digits, classes % self.digits

    def describe(self, row: int) -> str:
        """One sequence as text, the marked digit starred."""
        return " ".join(f"*{t - self.digits}" if t >= self.digits else str(t)
                        for t in self.tokens[row])


def make_data(n: int, length: int = 16, digits: int = 8, seed: int = 0) -> MarkerTaskData:
    """``n`` random sequences (vectorized; the same seed gives the same data)."""
    if n < 1 or length < 2 or digits < 2:
        raise ValueError(f"need n >= 1, length >= 2 and digits >= 2; got {n}, {length}, {digits}")
    rng = np.random.default_rng(seed)
    values = rng.integers(0, digits, size=(n, length))
    marker = rng.integers(0, length, size=n)
    rows = np.arange(n)
    marked = values[rows, marker]                         # (n,) the marked digit
    tokens = values.copy()
    tokens[rows, marker] += digits                        # mark it
    previous = np.roll(values, 1, axis=1)                 # previous[:, i] = values[:, i - 1]
    targets = previous * digits + marked[:, None]
    targets[:, 0] = 0
    sample_weight = np.ones((n, length), dtype=np.float32)
    sample_weight[:, 0] = 0.0
    return MarkerTaskData(tokens.astype(np.int32), targets.astype(np.int32), sample_weight,
                          marker.astype(np.int32), digits)
