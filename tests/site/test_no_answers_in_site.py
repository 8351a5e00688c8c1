"""No page of the built site gives a graded answer away to a reader who searches it for its name.

For every function an assignment grades (defined in a solution cell under
``solutions/``), no built page's text (tags stripped, as a reader or a search
engine sees it), no entry of the site's search index and no notebook the site
publishes holds a definition of it, ``def <name>(``, except:

* the assignment's own page and notebook, where it is the stub the student fills in;
* a later assignment, which may give an earlier one's function in its locked
  first cell (assignments are released in order, each after the one before).

The chapters show the course's own versions with ``show_solution``, whose code
is decoded only when the reader opens the fold, so it is not found here; a
``show_source`` of a graded function would be.
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from pathlib import Path

import pytest

from built_site import ROOT, SITE
from built_site import site  # noqa: F401  (fixture)


def graded_functions() -> dict[str, str]:
    """``{function name: assignment}`` for every function a solution cell defines."""
    graded = {}
    for source in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        for cell in json.loads(source.read_text())["cells"]:
            if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution"):
                for name in re.findall(r"^def (\w+)", "".join(cell["source"]), re.M):
                    graded[name] = source.stem
    return graded


def page_text(path: Path) -> str:
    if path.suffix == ".html":
        body = re.sub(r"<(script|style)\b.*?</\1>", "", path.read_text(), flags=re.S | re.I)
        return html.unescape(re.sub(r"<[^>]+>", "", body))
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text())["cells"]
        parts = ["".join(c["source"]) for c in cells]
        for c in cells:
            for output in c.get("outputs", []):
                parts += ["".join(v) if isinstance(v, list) else str(v) for v in output.get("data", {}).values()]
                parts.append("".join(output.get("text", "")))
        return "\n".join(parts)
    return path.read_text()          # the search index


@cache
def site_texts() -> dict[str, str]:
    paths = [*SITE.rglob("*.html"), *SITE.rglob("*.ipynb"), SITE / "searchindex.js"]
    return {str(p.relative_to(SITE)): page_text(p) for p in paths if "_static" not in p.parts}


def defines(name: str, text: str) -> bool:
    return re.search(rf"\bdef\s+{re.escape(name)}\s*\(", text) is not None


def may_define(page: str, assignment: str) -> bool:
    """A page may hold ``def name(`` of ``assignment``'s function: its own page, or a later assignment's."""
    shown = re.search(r"exercises/(a(\d+)_\w+?)/", page)
    return shown is not None and int(shown.group(2)) >= int(re.match(r"a(\d+)", assignment).group(1))


def test_the_search_would_find_a_printed_solution():
    assert defines("softmax", "    def softmax (x, axis=-1):")
    assert not defines("softmax", "def stable_softmax(x):\n    return softmax(x)")
    assert may_define("exercises/a2_dot_product/a2_dot_product.html", "a2_dot_product")
    assert may_define("notebooks/exercises/a8_encoder_block/a8_encoder_block.ipynb", "a4_multi_head")
    assert not may_define("exercises/a1_softmax_additive/a1_softmax_additive.html", "a2_dot_product")
    assert not may_define("chapters/04_dot_product_attention.html", "a2_dot_product")


@pytest.mark.parametrize("name, assignment", sorted(graded_functions().items()))
def test_no_page_defines_a_graded_function(site, name, assignment):
    pages = [page for page, text in site_texts().items()
             if defines(name, text) and not may_define(page, assignment)]
    assert pages == [], f"{name} ({assignment}): its definition can be read in {pages}"
    own = f"exercises/{assignment}/{assignment}.html"
    assert defines(name, site_texts()[own]), f"{own} should show the stub of {name}"
