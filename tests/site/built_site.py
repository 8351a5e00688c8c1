"""The built site (``_build/html``), the table of contents it is checked against,
and the fixtures of the site tests.

``make test`` builds the book first, then runs the tests in this folder against
it: static checks of the HTML (links, notebooks) and checks in a real browser
(headless Chromium driven by Playwright, from a local HTTP server started here).

The browser is the system's Chromium (Debian's ``chromium`` package; ``make test``
installs it where it may, first); Playwright never downloads one.  Set
``CHROMIUM`` to use another Chromium or Chrome binary.

The fixtures live here rather than in a ``conftest.py``: the tests one folder up
import their own ``conftest`` by name, and a second one would shadow it.  Test
modules import the fixtures they use from this module.
"""

from __future__ import annotations

import concurrent.futures
import functools
import http.server
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"

sys.path.insert(0, str(BOOK / "_ext"))
import course_notebooks  # noqa: E402  (the TOC and notebook logic the build uses)
from book_build.browser import CHROMIUM_ARGS, find_chromium  # noqa: E402,F401  (tests import them here)

TOC = course_notebooks.toc_docnames(BOOK)
NOTEBOOKS = course_notebooks.notebook_docnames(BOOK)


def page_file(docname: str) -> Path:
    return SITE / f"{docname}.html"


@pytest.fixture(scope="session")
def site() -> Path:
    """The built site; fails (never skips) when it is missing or older than a source."""
    if not (SITE / "index.html").exists():
        pytest.fail("no built site in _build/html: run `make book` (or `make test`) first")
    stale = [d for d in TOC
             if not page_file(d).exists()
             or page_file(d).stat().st_mtime < course_notebooks.source_path(d, BOOK).stat().st_mtime]
    if stale:
        pytest.fail(f"the built site is older than {stale}: run `make book` first")
    return SITE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002  (the base class's name)
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # The browser drops requests it no longer needs (a page closed mid-load): not an error.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture(scope="session")
def server(site: Path):
    """Base URL of a local HTTP server for the site (loopback, an ephemeral port)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def chromium_path() -> str:
    found = find_chromium()
    if found:
        return found
    pytest.fail("no Chromium found: install Debian's `chromium` package "
                "(`make test` does it where it may) or set CHROMIUM=/path/to/chrome")


_chromium = {"users": 0}


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the session.

    Each test module that imports this fixture gets a fixture of its own, and
    Playwright's synchronous API allows one running instance per process: so
    they share one browser, closed when the last of them is done with it.
    """
    if not _chromium["users"]:
        from playwright.sync_api import sync_playwright

        _chromium["playwright"] = sync_playwright().start()
        _chromium["browser"] = _chromium["playwright"].chromium.launch(
            executable_path=chromium_path(), headless=True, args=CHROMIUM_ARGS)
    _chromium["users"] += 1
    try:
        yield _chromium["browser"]
    finally:
        _chromium["users"] -= 1
        if not _chromium["users"]:
            _chromium.pop("browser").close()
            _chromium.pop("playwright").stop()


class PageProblems:
    """What went wrong while a page loaded: console errors, script errors, failed requests."""

    def __init__(self, page, base_url: str):
        self.console: list[str] = []
        self.failed: list[str] = []
        self.external: list[str] = []
        page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}")
                if m.type == "error" else None)
        page.on("pageerror", lambda e: self.console.append(f"uncaught: {e}"))
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url} ({r.failure})"))
        host = urlsplit(base_url).netloc

        def only_local(route):
            # The site must work offline: any request off this server is a bug.
            if urlsplit(route.request.url).netloc == host or route.request.url.startswith("data:"):
                route.continue_()
            else:
                self.external.append(route.request.url)
                route.abort()

        page.route("**/*", only_local)

    def all(self) -> list[str]:
        return self.console + self.failed + [f"external request: {u}" for u in self.external]


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.problems = PageProblems(page, server)
    yield page
    context.close()


def in_own_thread(function):
    """``function()``, run in a thread of its own, for Playwright's sync API.

    The sync API refuses a thread where an asyncio event loop is running, and
    an earlier test in the same pytest worker (Jupyter's clients run one) may
    have left one running in the main thread.
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(function).result()
