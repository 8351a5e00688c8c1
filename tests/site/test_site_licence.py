"""Every page of the built site names the licences in its footer: the book's text under
CC BY 4.0 (``LICENSE-TEXT.md``), its code under the MIT License (``LICENSE``)."""

from __future__ import annotations

import html.parser

import pytest

from built_site import TOC, page_file
from built_site import site  # noqa: F401  (fixture)

CC_BY = "https://creativecommons.org/licenses/by/4.0/"


class _Footer(html.parser.HTMLParser):
    """The text and links inside the page's ``<footer>`` elements."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.text, self.links = 0, [], []

    def handle_starttag(self, tag, attrs):
        if tag == "footer" or self.depth:
            self.depth += tag not in ("br", "img", "meta", "link", "hr", "input")
            if tag == "a":
                self.links.append(dict(attrs).get("href", ""))

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.text.append(data)


@pytest.mark.parametrize("docname", TOC)
def test_every_page_shows_the_licences_in_its_footer(site, docname):
    footer = _Footer()
    footer.feed(page_file(docname).read_text(encoding="utf-8"))
    text = " ".join(" ".join(footer.text).split())
    assert "licensed under CC BY 4.0" in text and "MIT License" in text, f"{docname}: {text!r}"
    assert CC_BY in footer.links
    assert any(link.endswith("/blob/main/LICENSE") for link in footer.links)
