"""best_time and best_times keep the fastest call, on a clock that the test controls (no real timing).

Durations are binary fractions, so that the fake clock adds them up exactly.
"""

import pytest

from attention_course.chapter_tools import timing


class FakeClock:
    """``perf_counter`` that moves only when a timed function runs, by the durations it is given."""

    def __init__(self, monkeypatch):
        self.now = 0.0
        self.calls = []
        monkeypatch.setattr(timing.time, "perf_counter", lambda: self.now)

    def function(self, name, durations):
        durations = iter(durations)

        def call():
            self.calls.append(name)
            self.now += next(durations)
        return call


def test_best_time_keeps_the_fastest_call_after_the_warm_up(monkeypatch):
    clock = FakeClock(monkeypatch)
    # warm-up 0.5 (not counted), then 3 calls: budget 0 stops at min_repeats
    assert timing.best_time(clock.function("f", [0.5, 0.375, 0.125, 0.25]), budget=0.0) == 0.125
    assert len(clock.calls) == 4


def test_best_time_repeats_while_within_budget_and_below_max_repeats(monkeypatch):
    clock = FakeClock(monkeypatch)
    assert timing.best_time(clock.function("f", [1.0, 0.25, 0.25, 0.25, 0.125, 8.0]), budget=1.0) == 0.125
    assert len(clock.calls) == 6     # 0.25 * 3 + 0.125 < 1.0: one more call, then over budget
    clock = FakeClock(monkeypatch)
    timing.best_time(clock.function("g", [0.0] * 100), budget=1.0, max_repeats=7)
    assert len(clock.calls) == 1 + 7


def test_best_times_interleaves_the_functions(monkeypatch):
    clock = FakeClock(monkeypatch)
    functions = {"a": clock.function("a", [8.0, 0.5, 0.25, 0.375]),
                 "b": clock.function("b", [8.0, 0.125, 0.5, 0.75])}
    best = timing.best_times(functions, budget=0.0, min_rounds=3)
    assert best == {"a": 0.25, "b": 0.125}
    assert clock.calls == ["a", "b"] + ["a", "b"] * 3     # warm-up round, then three rounds


def test_best_times_stops_at_the_budget_or_max_rounds(monkeypatch):
    clock = FakeClock(monkeypatch)
    timing.best_times({"a": clock.function("a", [0.125] * 100)}, budget=0.5, min_rounds=1)
    assert len(clock.calls) == 1 + 4       # rounds end at 0.125, 0.25, 0.375 (< 0.5), 0.5
    clock = FakeClock(monkeypatch)
    timing.best_times({"a": clock.function("a", [0.0] * 100)}, budget=10.0, max_rounds=4)
    assert len(clock.calls) == 1 + 4


@pytest.mark.parametrize("call, message", [
    (lambda: timing.best_time(lambda: None, min_repeats=0), "min_repeats"),
    (lambda: timing.best_time(lambda: None, min_repeats=5, max_repeats=2), "min_repeats <= max_repeats"),
    (lambda: timing.best_times({}), "at least one function"),
    (lambda: timing.best_times({"a": lambda: None}, min_rounds=3, max_rounds=2), "min_rounds <= max_rounds"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
