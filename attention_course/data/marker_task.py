"""A task with two jobs for attention: look one step back, and look at the marks.

A sequence holds ``length`` digits ``0 .. digits-1``.  One digit, the *marked
digit*, is written at a random number of random positions (1 to
``max_marks``) with a mark (a separate token for each digit, written ``*3``
for a marked 3); the other positions hold random digits, which may happen to
equal the marked digit too.  At every position ``i >= 1`` the answer is a pair::

    (the digit at position i - 1,  the marked digit)

encoded as one class ``previous * digits + marked``.  Position 0 has no
previous digit and is not scored (its sample weight is 0).

Both halves of the answer must be fetched from elsewhere in the sequence, and
from *different* places: the first always from the position just before, the
second from wherever the marks happen to be.  One head can fetch both only by
averaging the previous token and the marked ones into one vector; when a
marked token is embedded as its digit plus a "mark" vector
(``build_model(..., mark_embedding=True)``), both halves of that average are
digits, told apart only by the weights they get, whose shares change with the
number of marks (in chapter 6, one head learns the task too, but later than
four heads of the same total width).  Several heads keep them in separate
blocks -- chapter 6 measures what that buys.
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
        marked: ``(n, length)`` boolean: which positions carry a mark.
        marked_digit: ``(n,)`` the digit every mark of the sequence carries.
        digits: the number of distinct digits.
    """

    tokens: np.ndarray
    targets: np.ndarray
    sample_weight: np.ndarray
    marked: np.ndarray
    marked_digit: np.ndarray
    digits: int

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def vocab_size(self) -> int:
        return 2 * self.digits

    @property
    def num_classes(self) -> int:
        return self.digits * self.digits

    @property
    def mark_count(self) -> np.ndarray:
        """``(n,)`` how many positions of each sequence are marked."""
        return self.marked.sum(axis=1)

    def split_classes(self, classes) -> tuple[np.ndarray, np.ndarray]:
        """Classes -> ``(previous digit, marked digit)``, to score the two halves separately."""
        classes = np.asarray(classes)
        return classes // self.digits, classes % self.digits

    def describe(self, row: int) -> str:
        """One sequence as text, the marked digits starred."""
        return " ".join(f"*{t - self.digits}" if t >= self.digits else str(t)
                        for t in self.tokens[row])


def make_data(n: int, length: int = 16, digits: int = 8, max_marks: int = 3,
              seed: int = 0) -> MarkerTaskData:
    """``n`` random sequences with 1 to ``max_marks`` marks each (vectorized; the same seed
    gives the same data)."""
    if n < 1 or length < 2 or digits < 2 or not 1 <= max_marks <= length:
        raise ValueError(f"need n >= 1, length >= 2, digits >= 2 and 1 <= max_marks <= length; "
                         f"got n={n}, length={length}, digits={digits}, max_marks={max_marks}")
    rng = np.random.default_rng(seed)
    values = rng.integers(0, digits, size=(n, length))
    marked_digit = rng.integers(0, digits, size=n)
    count = rng.integers(1, max_marks + 1, size=n)
    # Each row a random permutation of 0 .. length-1: the `count` smallest entries
    # sit at `count` distinct positions, uniformly chosen.
    order = rng.permuted(np.broadcast_to(np.arange(length), (n, length)), axis=1)
    marked = order < count[:, None]                       # (n, length)
    values = np.where(marked, marked_digit[:, None], values)
    tokens = values + digits * marked                     # a marked d is digits + d
    previous = np.roll(values, 1, axis=1)                 # previous[:, i] = values[:, i - 1]
    targets = previous * digits + marked_digit[:, None]
    targets[:, 0] = 0
    sample_weight = np.ones((n, length), dtype=np.float32)
    sample_weight[:, 0] = 0.0
    return MarkerTaskData(tokens.astype(np.int32), targets.astype(np.int32), sample_weight,
                          marked, marked_digit.astype(np.int32), digits)
