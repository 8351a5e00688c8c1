"""Running a coroutine from a test, whatever the tests before it left behind.

Playwright's synchronous API (the site's tests and the feedback page's) keeps an event loop running
in the thread that started it for as long as its browser is open, and pytest-xdist runs those tests
in the same process as any other. ``asyncio.run`` there fails with "cannot be called from a running
event loop"; which test meets it depends on how the workers shared out the tests. So a test runs its
coroutine here: in a loop of its own, in a thread of its own.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run_coroutine(coroutine):
    """Run ``coroutine`` to the end in a new event loop on a new thread; return what it returns and
    raise what it raises."""
    with ThreadPoolExecutor(1, thread_name_prefix="test-event-loop") as pool:
        return pool.submit(asyncio.run, coroutine).result()
