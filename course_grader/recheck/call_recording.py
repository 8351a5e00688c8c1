"""The calls a test makes of the student's functions, recorded for the catalogue of mistakes.

While a hidden test runs in the re-check, every call of one of the
assignment's functions is kept with its arguments and result, when all of them
are plain data (:func:`plain`), up to :data:`MAX_CALLS` calls and
:data:`MAX_RECORDED_BYTES` of arrays per test.  When the test fails,
:class:`course_grader.mistakes.Diagnoser` calls each catalogued wrong answer on
the same arguments.  This module records; it knows nothing of the catalogue.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

#: Calls recorded per test, and how large their arrays may be in all (bytes).
MAX_CALLS = 32
MAX_RECORDED_BYTES = 64 * 2**20


@dataclass
class Call:
    """One call of a student's function during a test: ``name(*args, **kwargs) -> result``."""

    name: str
    args: tuple
    kwargs: dict
    result: object


def plain(value, budget: list[int]) -> bool:
    """Whether ``value`` is plain data (numbers, strings, arrays, containers of them) within ``budget``.

    ``budget`` holds the bytes still allowed, and is reduced by the arrays found.
    """
    import numpy as np

    kind = type(value)      # not isinstance: a stand-in for a student's object may name its class
    if value is None or issubclass(kind, (bool, int, float, complex, str, bytes, np.generic)):
        return True
    if issubclass(kind, np.ndarray):
        budget[0] -= value.nbytes
        return value.dtype != object and budget[0] >= 0
    if issubclass(kind, (tuple, list)):
        return all(plain(v, budget) for v in value)
    if issubclass(kind, dict):
        return all(type(k) is str and plain(v, budget) for k, v in value.items())
    return False


class CallRecorder:
    """The calls of one test: :meth:`start` when it begins, :meth:`record` each call, :attr:`calls`."""

    def __init__(self):
        self.calls: list[Call] | None = None    # None: not recording (no test running)
        self._budget = MAX_RECORDED_BYTES

    def start(self) -> None:
        self.calls, self._budget = [], MAX_RECORDED_BYTES

    def stop(self) -> None:
        self.calls = None

    def record(self, name: str | None, args, kwargs, value) -> None:
        """Keep ``name(*args, **kwargs) -> value`` if a test is running, ``name`` is one of the
        assignment's functions, and everything is plain data within the budget."""
        if name is None or self.calls is None or len(self.calls) >= MAX_CALLS:
            return
        budget = [self._budget]
        if plain(args, budget) and plain(kwargs, budget) and plain(value, budget):
            self._budget = budget[0]
            self.calls.append(Call(name, copy.deepcopy(tuple(args)), copy.deepcopy(kwargs), value))
