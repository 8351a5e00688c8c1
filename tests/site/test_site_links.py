"""Internal links and references of the built site, checked offline.

The strict build (``-n``) already fails on a reference Sphinx cannot resolve;
this checks the HTML it wrote: every link, image and script between the
site's own files leads to a file that exists and, for ``page.html#anchor``,
to an element with that id.  External links are not followed (no network).
"""

from __future__ import annotations

import html.parser
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from built_site import NOTEBOOKS, TOC
from built_site import site  # noqa: F401  (fixture)

LINK_ATTRIBUTES = {"a": "href", "link": "href", "img": "src", "script": "src", "iframe": "src",
                   "source": "src"}


class _Collector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []  # (tag, target)
        self.ids: set[str] = set()
        self.classes: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        if attrs.get("class"):
            self.classes.append(attrs["class"])
        if tag in LINK_ATTRIBUTES and attrs.get(LINK_ATTRIBUTES[tag]):
            self.links.append((tag, attrs[LINK_ATTRIBUTES[tag]]))


@cache
def parse(path: Path) -> _Collector:
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector


def html_pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html")
                  if not p.relative_to(site).parts[0].startswith(("_static", "_sources")))


def broken_links(page: Path, site: Path) -> list[str]:
    problems = []
    for tag, target in parse(page).links:
        parts = urlsplit(target)
        if parts.scheme or target.startswith("//"):
            continue  # external (http, https, mailto, data, javascript): not followed offline
        path = unquote(parts.path)
        if not path:
            destination = page
        else:
            destination = (page.parent / path).resolve()
            if destination.is_dir():
                destination = destination / "index.html"
        if not destination.exists():
            problems.append(f"{page.relative_to(site)}: <{tag}> {target} -> missing file")
            continue
        if site.resolve() not in destination.resolve().parents and destination != site:
            problems.append(f"{page.relative_to(site)}: <{tag}> {target} -> outside the site")
            continue
        fragment = unquote(parts.fragment)
        if fragment and destination.suffix == ".html" and fragment not in parse(destination).ids:
            problems.append(f"{page.relative_to(site)}: <{tag}> {target} -> no id {fragment!r}")
    return problems


def test_every_toc_page_was_built(site):
    missing = [d for d in TOC if not (site / f"{d}.html").exists()]
    assert missing == []


def test_internal_links_and_anchors_resolve(site):
    pages = html_pages(site)
    assert len(pages) >= len(TOC)
    problems = [problem for page in pages for problem in broken_links(page, site)]
    assert problems == [], "\n".join(problems)


def test_link_checker_catches_a_broken_link(tmp_path):
    """The checker itself: a missing page and a missing anchor are both reported."""
    (tmp_path / "a.html").write_text('<p id="here"></p><a href="b.html#nowhere">b</a>'
                                     '<a href="c.html">c</a><a href="#here">ok</a>'
                                     '<img src="https://example.org/x.png">')
    (tmp_path / "b.html").write_text('<p id="somewhere"></p>')
    problems = broken_links(tmp_path / "a.html", tmp_path)
    assert len(problems) == 2
    assert "no id 'nowhere'" in problems[0] and "c.html -> missing file" in problems[1]


def test_no_unresolved_references(site):
    """Nothing Sphinx could not resolve slipped into a page (the strict build fails first)."""
    problems = []
    for page in html_pages(site):
        classes = " ".join(parse(page).classes).split()
        for marker in ("problematic", "system-message"):
            if marker in classes:
                problems.append(f"{page.relative_to(site)}: {marker}")
    assert problems == []


@pytest.mark.parametrize("docname", [d for d in NOTEBOOKS if d.startswith("chapters/")])
def test_every_chapter_cites_the_bibliography(site, docname):
    page = site / f"{docname}.html"
    citations = [t for tag, t in parse(page).links
                 if tag == "a" and urlsplit(t).path.endswith("bibliography.html") and urlsplit(t).fragment]
    assert citations, f"{docname} cites nothing: use {{cite}}`key` with keys from references.bib"
