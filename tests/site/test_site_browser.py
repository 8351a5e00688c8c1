"""The built site in a real browser: every page of the table of contents.

Headless Chromium (the system's, driven by Playwright) loads each page from a
local HTTP server and checks what a reader would notice: errors in the
console, maths left as raw LaTeX, broken images, a failed cell, a dead
previous/next button, a launch or download button that leads nowhere, an
answer that is not folded away.  Requests that leave the local server are
blocked and reported: the site must work offline.
"""

from __future__ import annotations

import fnmatch
import posixpath
from pathlib import Path
from urllib.parse import parse_qs, unquote, urljoin, urlsplit

import pytest
import yaml
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from built_site import BOOK, NOTEBOOKS, ROOT, SCREENSHOTS, SITE, TOC, course_notebooks
from built_site import browser, page, server, site  # noqa: F401  (fixtures)

CONFIG = yaml.safe_load((ROOT / "book" / "_config.yml").read_text())
REPOSITORY = CONFIG["repository"]["url"].rstrip("/")
NOTEBOOKS_BRANCH = CONFIG["sphinx"]["config"]["course_notebooks_branch"]


def url(server: str, docname: str) -> str:
    return urljoin(server, f"{docname}.html")


def site_file(page_url: str, server: str) -> Path:
    """The file under _build/html that a URL on the local server serves."""
    path = unquote(urlsplit(page_url).path).lstrip("/")
    return SITE / (path or "index.html")


def open_page(page, address: str) -> None:
    """Load a page and wait until MathJax (where the page has maths) has typeset it."""
    page.goto(address, wait_until="load")
    if page.locator(".math").count():
        try:
            page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
        except PlaywrightTimeout:
            pytest.fail(f"MathJax never started on {address}: {page.problems.all()}")
        page.evaluate("() => MathJax.startup.promise")
    # The page as a reader sees it: laid out, and the fonts it uses (MathJax's, which it asks for once
    # the maths is typeset) loaded. Leaving earlier aborts those requests, which is not the site's fault.
    page.evaluate("""async () => {
        await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
        await document.fonts.ready;
    }""")


def check_maths(page) -> None:
    raw = page.evaluate("""() => [...document.querySelectorAll('.math')]
        .filter(m => !m.querySelector('mjx-container') || m.querySelector('mjx-merror'))
        .map(m => m.textContent.trim().slice(0, 80))""")
    assert raw == [], f"maths not typeset (or a TeX error): {raw}"


def check_images(page) -> None:
    broken = page.evaluate("""() => [...document.images]
        .filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.currentSrc || i.src)""")
    assert broken == [], f"images that did not load: {broken}"


def check_outputs(page) -> None:
    failed = page.evaluate(r"""() => [...document.querySelectorAll('.cell_output .output')]
        .filter(o => o.matches('.traceback, .error, .stderr')
                     || o.textContent.includes('Traceback (most recent call last)'))
        .map(o => o.className + ': ' + o.textContent.trim().slice(0, 300))""")
    assert failed == [], f"cell outputs with an error or a traceback: {failed}"


def check_notebook_buttons(page, server: str, docname: str) -> None:
    """Download, Colab and Binder all lead to this chapter's .ipynb, which the build wrote."""
    hrefs = page.eval_on_selector_all(".article-header-buttons a[href]",
                                      "links => links.map(a => a.getAttribute('href'))")
    expected = f"{docname}.ipynb"
    published = SITE / CONFIG["sphinx"]["config"].get("course_notebooks_dir", "notebooks")

    downloads = [h for h in hrefs if h.endswith(".ipynb") and "://" not in h]
    assert len(downloads) == 1, f"one .ipynb download button expected, found {downloads}"
    target = site_file(urljoin(page.url, downloads[0]), server)
    assert target == published / expected and target.is_file(), target

    # on the notebooks branch, the .ipynb lies next to its source, in the book's folder
    in_repository = posixpath.join(CONFIG["repository"].get("path_to_book", ""), expected)
    colab = [h for h in hrefs if h.startswith("https://colab.research.google.com/")]
    assert colab == [f"https://colab.research.google.com/github/{REPOSITORY.split('github.com/')[1]}"
                     f"/blob/{NOTEBOOKS_BRANCH}/{in_repository}"], colab
    binder = [h for h in hrefs if h.startswith("https://mybinder.org/")]
    assert len(binder) == 1, binder
    binder_path = parse_qs(urlsplit(binder[0]).query)["urlpath"][0]
    assert urlsplit(binder[0]).path.endswith(f"/{NOTEBOOKS_BRANCH}"), binder
    assert binder_path in (f"tree/{in_repository}", f"lab/tree/{in_repository}"), binder_path
    # What the deploy workflow publishes on that branch is this folder, laid over the repository.
    assert (published / expected).is_file()


def check_answers_fold(page) -> int:
    """Every "Check your understanding" box holds an answer that is hidden until clicked."""
    questions = page.locator("xpath=//div[contains(@class, 'admonition')]"
                             "[p[contains(@class, 'admonition-title')]"
                             "[normalize-space(text()) = 'Check your understanding']]")
    for i in range(questions.count()):
        question = questions.nth(i)
        answer = question.locator("div.dropdown.admonition")  # inside the box (chapter 1) ...
        if answer.count() == 0:  # ... or the box right after it
            answer = question.locator("xpath=following-sibling::*[1]"
                                      "[contains(@class, 'dropdown') and contains(@class, 'admonition')]")
        assert answer.count() == 1, \
            "a 'Check your understanding' box needs one dropdown answer, inside it or right after it"
        body = answer.locator("xpath=./*[not(contains(@class, 'admonition-title'))]").first
        assert body.is_hidden(), "the answer is visible before the reader asks for it"
        answer.locator("p.admonition-title").click()
        body.wait_for(state="visible")
    return questions.count()


@pytest.mark.parametrize("docname", TOC)
def test_page(page, server, docname):
    index = TOC.index(docname)
    open_page(page, url(server, docname))

    check_maths(page)
    check_images(page)
    check_outputs(page)
    if docname in NOTEBOOKS:
        check_notebook_buttons(page, server, docname)
    check_answers_fold(page)

    # previous / next follow the table of contents
    for selector, neighbour in (("a.left-prev", index - 1), ("a.right-next", index + 1)):
        link = page.locator(f".prev-next-area {selector}")
        if 0 <= neighbour < len(TOC):
            assert link.count() == 1, f"{selector} missing"
            assert urljoin(page.url, link.get_attribute("href")) == url(server, TOC[neighbour])
        else:
            assert link.count() == 0, f"{selector} on the {'first' if neighbour < 0 else 'last'} page"
    if index + 1 < len(TOC):
        page.locator(".prev-next-area a.right-next").click()
        page.wait_for_url(url(server, TOC[index + 1]))

    assert page.problems.all() == []


def test_root_url_opens_the_landing_page(page, server):
    page.goto(server, wait_until="load")
    page.wait_for_url(url(server, TOC[0]))
    assert page.problems.all() == []


def test_search_finds_attention(page, server):
    page.goto(urljoin(server, "search.html?q=attention"), wait_until="load")
    # Sphinx lists the results one at a time (a timer per item): wait until it says it
    # has finished, or a busy machine reads the list after its first entry.
    page.locator("#search-results p.search-summary", has_text="Search finished").wait_for()
    results = page.locator("#search-results ul.search li a")
    hrefs = [urljoin(page.url, h) for h in results.evaluate_all("as => as.map(a => a.getAttribute('href'))")]
    assert all(site_file(h, server).is_file() for h in hrefs), hrefs
    found = {urlsplit(h).path.lstrip("/").removesuffix(".html") for h in hrefs}
    assert found & set(NOTEBOOKS), f"no chapter among the results: {found}"
    assert page.problems.all() == []

    # and a word that is nowhere in the book finds nothing
    page.goto(urljoin(server, "search.html?q=zyxwvutsrqp"), wait_until="load")
    page.locator("#search-results .search-summary").wait_for()
    page.wait_for_function("() => document.querySelector('#search-results .search-summary')"
                           ".textContent.includes('did not match')")
    assert page.locator("#search-results ul.search li").count() == 0


def test_dark_mode_switch(page, server):
    open_page(page, url(server, TOC[0]))
    for _ in range(3):  # the button cycles light / dark / auto
        if page.evaluate("document.documentElement.dataset.theme") == "dark":
            break
        page.locator(".theme-switch-button").first.click()
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    red, green, blue = (int(c) for c in background[background.index("(") + 1:-1].split(",")[:3])
    assert (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255 < 0.25, background
    # the choice survives a page change
    page.goto(url(server, TOC[1]), wait_until="load")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"


def test_copy_button_copies_the_code(page, server):
    docname = NOTEBOOKS[0]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.rstrip("/"))
    open_page(page, url(server, docname))
    cell = page.locator(".cell_input div.highlight").nth(0)
    cell.hover()
    cell.locator("button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.strip() == cell.locator("pre").inner_text().strip()
    assert copied.strip(), "nothing was copied"


def test_repository_and_issue_buttons(page, server):
    open_page(page, url(server, TOC[0]))
    hrefs = page.eval_on_selector_all(".article-header-buttons a[href]",
                                      "links => links.map(a => a.href)")
    assert REPOSITORY in hrefs
    assert any(h.startswith(f"{REPOSITORY}/issues/new") for h in hrefs), hrefs


def test_landing_page_lists_every_chapter_with_times(page, server):
    open_page(page, url(server, TOC[0]))
    rows = page.locator("table.course-chapter-times tbody tr:not(.course-part)")
    listed = [site_file(urljoin(page.url, h), server)
              for h in rows.locator("td:first-child a").evaluate_all(
                  "as => as.map(a => a.getAttribute('href'))")]
    assert listed == [SITE / f"{d}.html" for d in NOTEBOOKS]
    not_executed = CONFIG.get("execute", {}).get("exclude_patterns") or []
    for i, docname in enumerate(NOTEBOOKS):
        reading, running = (rows.nth(i).locator("td").nth(k).inner_text() for k in (1, 2))
        assert reading.endswith("min") and int(reading.split()[0]) >= 1, reading
        source = course_notebooks.source_path(docname).relative_to(BOOK).as_posix()
        if any(fnmatch.fnmatch(source, pattern) for pattern in not_executed):
            assert running == "—", f"{docname} is not executed, yet has a time: {running!r}"
        else:
            assert running.endswith((" s", " min")), f"{docname}: no measured time: {running!r}"


def test_numbered_figures_and_equations_are_referenced(page, server):
    """The exemplar of chapter 1: a numbered figure and equations, cited by number."""
    open_page(page, url(server, NOTEBOOKS[0]))
    figure_refs = page.locator("a.reference.internal span.std-numref")
    assert figure_refs.count() >= 1
    assert figure_refs.first.inner_text().startswith("Fig.")
    equation_refs = page.locator("a.reference.internal[href^='#equation-']")
    assert equation_refs.count() >= 1
    for i in range(equation_refs.count()):
        target = equation_refs.nth(i).get_attribute("href")[1:]
        number = page.locator(f"[id='{target}'] .eqno").inner_text().replace("#", "").strip()
        assert equation_refs.nth(i).inner_text().strip() == number


def test_screenshots(page, server):
    """Three pages as a reader sees them, in _build/screenshots/, for a person to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    open_page(page, url(server, TOC[0]))
    page.screenshot(path=SCREENSHOTS / "1-landing.png")

    with_figure = next((d for d in NOTEBOOKS if 'id="fig-' in (SITE / f"{d}.html").read_text()),
                       NOTEBOOKS[0])
    open_page(page, url(server, with_figure))
    figure = page.locator("figure[id^='fig-']").first
    if figure.count():
        figure.scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / "2-chapter-figure.png")

    page.evaluate("localStorage.setItem('mode', 'dark')")
    page.goto(urljoin(server, "search.html?q=attention"), wait_until="load")
    page.locator("#search-results ul.search li").first.wait_for()
    page.screenshot(path=SCREENSHOTS / "3-search-dark.png")

    for name in ("1-landing.png", "2-chapter-figure.png", "3-search-dark.png"):
        assert (SCREENSHOTS / name).stat().st_size > 10_000, name
    assert page.problems.all() == []


@pytest.mark.parametrize("docname, numbered", [
    ("chapters/11_training_transformer", r"Fig\. 11\.\d+"),       # its figures
    ("chapters/11_transformer_experiments", r"\(11\.[\d.]+\)"),   # its equation
])
def test_a_published_chapter_reads_cleanly_once_rendered_by_jupyter(page, site, docname, numbered):
    """Chapter 11's published notebooks (two pages), rendered by nbconvert as Jupyter would
    show them: the answers folded, terms and citations linked to the site, the site's numbers,
    figure and equation numbers as on the site, no MyST."""
    import re

    import nbformat
    from nbconvert import HTMLExporter

    notebook = nbformat.read(SITE / "notebooks" / f"{docname}.ipynb", as_version=4)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    page.set_content(body, wait_until="domcontentloaded")
    text = page.inner_text("body")
    for myst in ("{glue", "{term}", "{cite}", "{numref}", "{eq}", ":::", "(eq-ch11"):
        assert myst not in text, f"{myst!r} shows in the rendered notebook"
    answers = page.locator("details")
    assert answers.count() >= 2
    assert all(not answers.nth(i).evaluate("d => d.open") for i in range(answers.count()))
    assert answers.first.locator("summary").inner_text().strip() == "Answer"
    base = CONFIG["html"]["baseurl"]
    assert page.locator(f"a[href^='{base}glossary.html#term-']").count() >= 1
    assert page.locator(f"a[href^='{base}bibliography.html#']").count() >= 1
    site_page = (SITE / f"{docname}.html").read_text()
    first_number = site_page.split('<span class="pasted-text">', 1)[1].split("</span>", 1)[0]
    assert page.locator("span[title*=\"book's own run\"]").first.inner_text() == first_number
    assert re.search(numbered, text), f"no number like {numbered!r} in the rendered notebook"


def test_a_folded_solution_is_decoded_only_when_opened(page, server):
    """The course's solution of a graded function: closed, not in the page's text, highlighted once opened."""
    open_page(page, url(server, "chapters/04_dot_product_attention"))
    fold = page.locator("details.course-solution")
    assert fold.count() == 1
    assert fold.get_attribute("open") is None
    assert "def scaled_dot_product_attention" not in page.locator("body").text_content()
    fold.locator("summary").click()
    code = fold.locator(".course-solution-code .highlight pre")
    code.wait_for(state="visible")
    assert "def scaled_dot_product_attention(" in code.text_content()
    assert "def dot_product_attention(" in code.text_content()
    assert page.problems.all() == []
