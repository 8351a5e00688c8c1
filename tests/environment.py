"""Each test starts from the process environment the test session started with.

pytest-xdist decides which tests share a worker process, and in what order. A test that changes
``os.environ`` without ``monkeypatch``, or calls code that sets a variable for the programs it
starts (``book_build.build.main`` points ``$ATTENTION_COURSE_CACHE`` at its build folder), would
otherwise change every later test of its worker: a test of the built site then read a tiny test
book's model cache instead of the book's, and failed or passed by the luck of the draw.
"""

import contextlib
import os


@contextlib.contextmanager
def environment_restored():
    """Run the body, then put ``os.environ`` back as it was: changed variables, new ones, removed ones.

    Yields the names the body changed (filled in when it ends), for a test of this helper."""
    saved = dict(os.environ)
    changed: list[str] = []
    try:
        yield changed
    finally:
        now = dict(os.environ)
        changed.extend(sorted(name for name in saved.keys() | now.keys()
                              if saved.get(name) != now.get(name)))
        if changed:
            os.environ.clear()
            os.environ.update(saved)
