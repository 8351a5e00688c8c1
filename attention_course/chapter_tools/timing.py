"""Timing code on a machine that is doing other things too.

On a busy machine most calls are slowed down by other work; the fastest of
several calls is the least disturbed estimate of what the code itself costs.
Chapters time with :func:`best_time` (one function) or :func:`best_times`
(several, interleaved) and never assert anything about the result: a busy
build machine must not fail the book.
"""

from __future__ import annotations

import time


def best_time(function, budget: float = 0.3, max_repeats: int = 50, min_repeats: int = 3) -> float:
    """The fastest call of ``function()``, in seconds.

    After one warm-up call, ``function`` runs at least ``min_repeats`` times,
    and more while the calls so far took less than ``budget`` seconds in all,
    up to ``max_repeats``.
    """
    if min_repeats < 1 or max_repeats < min_repeats:
        raise ValueError(f"need 1 <= min_repeats <= max_repeats; got min_repeats={min_repeats}, "
                         f"max_repeats={max_repeats}")
    function()  # warm-up: first-call costs (allocation, caches) are not the code's own
    times = []
    while len(times) < min_repeats or (sum(times) < budget and len(times) < max_repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def best_times(functions: dict, budget: float = 1.0, min_rounds: int = 3,
               max_rounds: int = 50) -> dict:
    """The fastest call of each of ``functions`` (``{name: function}``), in seconds.

    The functions take turns, one call each per round, so that a burst of
    other work on the machine slows one round of all of them rather than
    every call of one.  After a warm-up round, rounds go on until ``budget``
    seconds have passed (at least ``min_rounds``, at most ``max_rounds``).
    """
    if not functions:
        raise ValueError("best_times needs at least one function to time")
    if min_rounds < 1 or max_rounds < min_rounds:
        raise ValueError(f"need 1 <= min_rounds <= max_rounds; got min_rounds={min_rounds}, "
                         f"max_rounds={max_rounds}")
    for function in functions.values():
        function()  # warm-up
    best = {name: float("inf") for name in functions}
    started, rounds = time.perf_counter(), 0
    while rounds < min_rounds or (time.perf_counter() - started < budget and rounds < max_rounds):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            best[name] = min(best[name], time.perf_counter() - start)
        rounds += 1
    return best
