"""The site's search: what it finds and what it shows under each result.

A reader searches for words, and reads the snippet under each result.  The index
(``searchindex.js``) reads a page's maths as text, not as LaTeX ("mathrm", "frac" and
"sqrt" were words of the index), and the glossary as one page, not once more for each term
it defines (each term was an index entry, ranked above every page: "attention" listed the
glossary three times, first).  The snippets read maths as text too (``course.js``), where
they showed ``\\(\\mathrm{softmax}(QK^\\top / \\sqrt{d_k})\\)``.  Both use the same reading
of LaTeX (``plain_maths`` in ``book/_ext/course_sphinx.py``, ``plainMaths`` in
``course.js``), checked here to agree.
"""

from __future__ import annotations

import json
import re
from urllib.parse import quote

import pytest

from built_site import SITE
from built_site import browser, page, server, site  # noqa: F401  (fixtures)
from course_sphinx import plain_maths  # (built_site puts book/_ext on the path)

#: LaTeX commands that are words of neither the prose nor the code (np.sqrt and a plot's
#: r"$\mathrm{...}$" title are code, and searchable): none may be a word of the index
LATEX_WORDS = {"frac", "mathbb", "mathbf", "mathcal", "operatornam", "operatorname", "qquad",
               "varepsilon", "displaystyl", "displaystyle", "tfrac", "dfrac"}
#: a LaTeX command or delimiter left in a snippet
RAW_LATEX = re.compile(r"\\[A-Za-z]+|\\[()\[\]]")


def search_index() -> dict:
    text = (SITE / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])


def test_the_index_has_no_latex_commands_for_words(site):
    index = search_index()
    words = set(index["terms"]) | set(index["titleterms"])
    assert not (LATEX_WORDS & words), f"LaTeX in the search index: {sorted(LATEX_WORDS & words)}"
    # the maths is still there, as a reader types it: softmax is found on the chapter that defines it
    docnames = index["docnames"]
    softmax = index["terms"]["softmax"]
    pages = {docnames[i] for i in (softmax if isinstance(softmax, list) else [softmax])}
    assert "chapters/04_dot_product_attention" in pages


def test_the_glossary_is_indexed_as_one_page_without_an_entry_per_term(site):
    index = search_index()
    glossary = index["docnames"].index("glossary")
    per_term = [term for term, entries in index["indexentries"].items()
                if any(entry[0] == glossary for entry in entries)]
    assert per_term == [], f"glossary terms indexed apart: {per_term[:5]}"
    assert glossary in index["terms"]["forc"] or glossary == index["terms"]["forc"], \
        "the glossary's text (teacher forcing) is not searchable any more"


@pytest.mark.parametrize("tex, text", [
    (r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}(QK^\top / \sqrt{d_k})\, V",
     "Attention(Q, K, V) = softmax(QKᵀ / √d_k) V"),
    (r"\frac{q \cdot k}{\sqrt{d_k}}", "(q · k)/(√d_k)"),
    (r"\(\alpha_{ij}\)", "α_ij"),
    (r"\[ h_t = \mathrm{LSTM}(x_t, h_{t-1}), \qquad t = 1, \dots, S. \]", "h_t = LSTM(x_t, h_t-1), t = 1, …, S."),
    (r"\begin{aligned} p_{t,2i} &= \sin(t / 10000^{2i/d}) \\ x &\in \mathbb{R}^d \end{aligned}",
     "p_t,2i = sin(t / 10000^2i/d) x ∈ R^d"),
    (r"\operatorname{LN}(x + \operatorname{Sublayer}(x))", "LN(x + Sublayer(x))"),
    (r"\text{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)", "softmax((QKᵀ)/(√d_k))"),
])
def test_maths_is_read_as_text_alike_by_the_index_and_the_snippets(site, page, server, tex, text):
    assert plain_maths(tex) == text
    page.goto(f"{server}search.html", wait_until="load")
    assert page.evaluate("tex => window.coursePlainMaths(tex)", tex) == text


def search(page, server, query: str) -> list[dict]:
    """The results of the search page for ``query``: each result's page and snippet."""
    page.goto(f"{server}search.html?q={quote(query)}", wait_until="load")
    page.wait_for_function("""() => {
        const summary = document.querySelector('#search-results .search-summary');
        return summary && /found|did not match/i.test(summary.textContent); }""", timeout=30_000)
    results = page.locator("#search-results ul.search > li")
    # each snippet is made from its page, fetched after the list is shown
    page.wait_for_load_state("networkidle")
    page.wait_for_function("""() => [...document.querySelectorAll('#search-results ul.search > li')]
        .some(li => li.querySelector('p.context'))""")
    return results.evaluate_all("""items => items.map(li => ({
        href: li.querySelector('a').getAttribute('href'),
        snippet: (li.querySelector('p.context') || {textContent: ''}).textContent}))""")


@pytest.mark.parametrize("query", ["attention", "softmax", "scaled dot-product", "positional encoding"])
def test_a_search_lists_the_glossary_once_not_first_and_its_snippets_without_latex(site, page, server,
                                                                                  query):
    results = search(page, server, query)
    assert len(results) >= 3, results
    glossary = [r for r in results if r["href"].split("#")[0].startswith("glossary.html")]
    assert len(glossary) <= 1, f"the glossary is listed {len(glossary)} times for {query!r}"
    assert not results[0]["href"].startswith("glossary.html"), f"the glossary ranks first for {query!r}"
    raw = [(r["href"], RAW_LATEX.findall(r["snippet"])) for r in results if RAW_LATEX.search(r["snippet"])]
    assert raw == [], f"snippets with LaTeX for {query!r}: {raw[:3]}"
    assert page.problems.all() == []
