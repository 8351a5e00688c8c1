"""Coroutines in tests run in a loop of their own (tests/event_loops.py), wherever they run."""

import asyncio
import re
from pathlib import Path

import pytest
from event_loops import run_coroutine

TESTS = Path(__file__).resolve().parent


async def _answer(value):
    await asyncio.sleep(0)
    return value


async def _fail():
    await asyncio.sleep(0)
    raise ValueError("the coroutine's own error")


def test_a_coroutine_runs_while_this_thread_has_a_loop_running():
    """What Playwright's synchronous API leaves behind: a loop running in the test's thread.
    ``asyncio.run`` fails there; ``run_coroutine`` does not."""
    async def inside_a_running_loop():
        refused = _answer(1)
        with pytest.raises(RuntimeError, match="running event loop"):
            asyncio.run(refused)
        refused.close()                     # never started: closing it spares a warning
        return run_coroutine(_answer(2))

    # the outer loop too runs through run_coroutine: this test may share its worker with a browser
    assert run_coroutine(inside_a_running_loop()) == 2


def test_a_coroutines_error_reaches_the_test():
    with pytest.raises(ValueError, match="the coroutine's own error"):
        run_coroutine(_fail())


def test_no_test_runs_a_coroutine_in_its_own_thread_loop():
    """Which test shares a process with the browser's tests depends on how pytest-xdist shares them
    out, so every test file goes through run_coroutine, never asyncio.run or a loop of this thread."""
    direct = re.compile(r"\basyncio\.run\(|\.run_until_complete\(|\bget_event_loop\(\)")
    found = [f"{path.relative_to(TESTS)}:{n}"
             for path in sorted(TESTS.rglob("*.py")) if path.name not in {"event_loops.py", Path(__file__).name}
             for n, line in enumerate(path.read_text().splitlines(), 1) if direct.search(line)]
    assert found == [], "use event_loops.run_coroutine instead:\n" + "\n".join(found)
