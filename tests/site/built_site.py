"""Where the built site is, and the table of contents it is checked against."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"

sys.path.insert(0, str(ROOT / "scripts"))
import course_notebooks  # noqa: E402  (the TOC and notebook logic the build uses)

TOC = course_notebooks.toc_docnames(ROOT)
NOTEBOOKS = course_notebooks.notebook_docnames(ROOT)

# Flags that keep headless Chromium off the network (this machine has none;
# without them it retries Google's services at every start).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-default-apps", "--mute-audio"]


def page_file(docname: str) -> Path:
    return SITE / f"{docname}.html"
