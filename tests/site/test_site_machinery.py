"""The built pages keep the book's machinery out of what a reader sees (issue 35).

In every chapter page of the built site: no code block a reader sees calls
``claim``, ``measure``, ``glue`` or ``notebook.setup``, imports the build's
helpers or calls the training cache; no prose outside a folded note (a dropdown
admonition) talks of make targets, caches, oneDNN, graph rewrites or claim
thresholds.  The rules are ``tests/book/machinery_rules.py``'s, which
``tests/book/test_machinery_out_of_sight.py`` applies to the sources.
"""

from __future__ import annotations

import html.parser
import sys

import pytest

from built_site import ROOT, TOC, page_file
from built_site import site  # noqa: F401  (fixture)

sys.path.insert(0, str(ROOT / "tests" / "book"))
import machinery_rules  # noqa: E402

CHAPTERS = [d for d in TOC if d.startswith("chapters/")]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BLOCKS = {"p", "li", "dt", "dd", "div", "section", "figcaption", "caption", "td", "th", "tr", "table",
          "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"}


class ReaderView(html.parser.HTMLParser):
    """What a reader sees of a page's article: its code blocks, and its prose outside folded notes."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.code_blocks: list[str] = []
        self.prose: list[str] = []
        self._stack: list[tuple[str, bool, bool, bool, bool]] = []   # tag, article, folded, pre, skipped

    def _state(self):
        return self._stack[-1][1:] if self._stack else (False, False, False, False)

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        article, folded, pre, skipped = self._state()
        classes = (dict(attrs).get("class") or "").split()
        article = article or (tag == "article" and "bd-article" in classes)
        folded = folded or "dropdown" in classes or tag == "details"
        skipped = skipped or tag in ("script", "style", "template")
        if tag == "pre" and article and not folded and not skipped and not pre:
            self.code_blocks.append("")
        pre = pre or tag == "pre"
        if tag in BLOCKS:
            self.prose.append("\n\n")
        self._stack.append((tag, article, folded, pre, skipped))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        # pop to the matching tag (HTML in the wild closes some elements implicitly)
        for i in range(len(self._stack) - 1, -1, -1):
            if self._stack[i][0] == tag:
                del self._stack[i:]
                break
        if tag in BLOCKS:
            self.prose.append("\n\n")

    def handle_data(self, data):
        article, folded, pre, skipped = self._state()
        if not article or folded or skipped:
            return
        if pre:
            self.code_blocks[-1] += data
        else:
            self.prose.append(data)


def reader_view(text: str) -> ReaderView:
    view = ReaderView()
    view.feed(text)
    view.close()
    return view


@pytest.mark.parametrize("docname", CHAPTERS)
def test_no_code_block_a_reader_sees_shows_the_machinery(site, docname):
    view = reader_view(page_file(docname).read_text(encoding="utf-8"))
    assert view.code_blocks, f"{docname}: no code blocks found (has the theme's markup changed?)"
    problems = [(block.strip().splitlines()[0][:60], found) for block in view.code_blocks
                if (found := machinery_rules.code_problems(block))]
    assert not problems, f"{docname}: code blocks a reader sees show the book's machinery: {problems}"


@pytest.mark.parametrize("docname", CHAPTERS)
def test_no_prose_outside_a_folded_note_talks_of_the_machinery(site, docname):
    prose = "".join(reader_view(page_file(docname).read_text(encoding="utf-8")).prose)
    found = machinery_rules.prose_problems(prose, machinery_rules.teaches_a_cache(prose))
    assert not found, f"{docname}: prose about the book's machinery outside a folded note: {found}"


def test_the_reader_view_leaves_out_folded_notes_and_finds_code():
    """Without a build: the parser sees what a reader sees, and the rules flag what they must."""
    page = """<html><body><nav><p>make claims in the sidebar</p></nav>
    <article class="bd-article"><p>Training runs <code>make claims</code>.</p>
    <div class="cell docutils container"><div class="cell_input docutils container">
    <div class="highlight-ipython3 notranslate"><div class="highlight"><pre><span>notebook</span>.glue(<span>"ch1_x"</span>, 1)<br>
    x = 1</pre></div></div></div></div>
    <div class="dropdown admonition"><p class="admonition-title">How much do these numbers vary?</p>
    <p>oneDNN, the cache keyed on its code, a threshold.</p></div>
    <p>A KV cache keeps the keys.<img src="x.png"></p></article></body></html>"""
    view = reader_view(page)
    assert len(view.code_blocks) == 1 and machinery_rules.code_problems(view.code_blocks[0]) == ["glue("]
    prose = "".join(view.prose)
    assert "sidebar" not in prose and "oneDNN" not in prose and "KV cache keeps" in prose
    assert machinery_rules.teaches_a_cache(prose)
    assert machinery_rules.prose_problems(prose, True) == ["make claims"]
