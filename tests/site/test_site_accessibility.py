"""No accessibility violations on any page: axe-core's WCAG 2.0 and 2.1 rules, levels A and AA.

axe-core (Deque's engine, the one browsers' own audits use) runs in headless Chromium
on every page of the table of contents and the search page, in the light and the dark
theme, once MathJax has typeset the page and the course's script has set it up.  It is
vendored (``vendor/axe-core/``, the npm package's ``axe.min.js``, unchanged and pinned
by its hash below), so the test needs no network and no Node.js.

What the theme and docutils wrote that failed it is fixed where the pages are written
(``book/_ext/course_sphinx.py``: the sidebar's expanders have a name, the bibliography's
entries are list items) or in ``course.js`` (the search button's name); no rule is
switched off here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import urljoin

import pytest

from built_site import TOC, PageProblems
from built_site import browser, server, site  # noqa: F401  (fixtures)
from test_site_browser import open_page

AXE = Path(__file__).with_name("vendor") / "axe-core" / "axe.min.js"
AXE_VERSION = "4.14.1"
AXE_SHA256 = "29348999450cdf2849a8e70b7912fc2da85a849da39c0d0d5394f51d4a9ed95c"
#: WCAG 2.0 and 2.1, levels A and AA, as axe-core tags its rules
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
PAGES = [*TOC, "search"]

RUN = """tags => axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']})
  .then(result => result.violations.map(v => ({
    rule: v.id, impact: v.impact, help: v.help, count: v.nodes.length,
    where: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ': ' + n.failureSummary.split('\\n')[1]),
  })))"""


def test_axe_is_the_pinned_version():
    source = AXE.read_bytes()
    assert hashlib.sha256(source).hexdigest() == AXE_SHA256, f"{AXE} is not axe-core {AXE_VERSION} as vendored"
    assert source.startswith(f"/*! axe v{AXE_VERSION}".encode())


@pytest.fixture(scope="module", params=["light", "dark"])
def themed(request, browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=request.param,
                                  base_url=server)
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.problems = PageProblems(page, server)
    page.scheme = request.param
    yield page
    context.close()


def violations(page) -> list[dict]:
    page.add_script_tag(content=AXE.read_text(encoding="utf-8"))
    return page.evaluate(RUN, WCAG_TAGS)


def describe(found: list[dict]) -> str:
    return "\n".join(f"  {v['rule']} ({v['impact']}, {v['count']}x): {v['help']}\n"
                     + "\n".join(f"      {w}" for w in v["where"]) for v in found)


@pytest.mark.parametrize("docname", PAGES)
def test_no_wcag_violations(site, themed, server, docname):
    open_page(themed, urljoin(server, f"{docname}.html"))
    assert themed.evaluate("document.documentElement.dataset.theme") == themed.scheme
    found = violations(themed)
    assert found == [], f"{docname} ({themed.scheme}):\n{describe(found)}"
    assert themed.problems.all() == []


def test_no_wcag_violations_with_a_figure_open_full_size(site, themed, server):
    open_page(themed, urljoin(server, "chapters/05_self_attention.html"))
    themed.locator("article .course-zoom").first.click()
    assert themed.locator("dialog.course-lightbox[open]").count() == 1
    found = violations(themed)
    assert found == [], f"the figure dialog ({themed.scheme}):\n{describe(found)}"
