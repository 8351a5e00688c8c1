"""One idea a page: no page of the site over 7,000 rendered words.

A page's words are what the site shows in its article: prose, code and
outputs, folded content included (a reader unfolds it).  Words are counted as
the HTML's text split on white space, with a space between elements, so that
highlighted code counts each token it shows; that is how the page lengths in
issue 35 were measured.  Scripts and styles are not text.
"""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from built_site import TOC, page_file
from built_site import site  # noqa: F401  (fixture)

MAX_WORDS = 7_000


def rendered_words(html: str) -> int:
    """The words of a page's article as the site shows them (see the module's docstring)."""
    soup = BeautifulSoup(html, "html.parser")
    article = soup.find("article") or soup.body
    for element in article.find_all(["script", "style"]):
        element.decompose()
    return len(article.get_text(" ").split())


def test_rendered_words_counts_what_the_page_shows():
    html = ("<html><body><article><p>Two words</p><script>var not_text = 1;</script>"
            "<pre><span>x</span><span>=</span><span>1</span></pre>"
            "<details><p>folded but counted</p></details></article>"
            "<footer>not the article</footer></body></html>")
    assert rendered_words(html) == 2 + 3 + 3


@pytest.mark.parametrize("docname", TOC)
def test_page_is_at_most_7000_words(site, docname):
    words = rendered_words(page_file(docname).read_text(encoding="utf-8"))
    assert words <= MAX_WORDS, (
        f"{docname} shows {words:,} words (at most {MAX_WORDS:,}): split it into pages "
        "(sections in book/_toc.yml) or move what a reader need not read into the package")
