"""The system's Chromium, for the site's tests and benchmarks: found on this machine, kept offline.

Playwright drives it and never downloads a browser of its own; ``make test``
installs Debian's ``chromium`` where it may (``scripts/ensure_chromium.sh``).
``$CHROMIUM`` names another Chromium or Chrome binary.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: flags that keep headless Chromium off the network (the machines that build the course have
#: none; without them it retries Google's services at every start)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-default-apps", "--mute-audio"]


def find_chromium() -> str | None:
    """``$CHROMIUM``, or the first of chromium, chromium-browser, google-chrome on the ``PATH``."""
    candidates = [os.environ.get("CHROMIUM"), shutil.which("chromium"),
                  shutil.which("chromium-browser"), shutil.which("google-chrome")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    return None
