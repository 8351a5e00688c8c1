"""The architecture figures in the built site and in the published notebooks.

Each ``{figure}`` of a chapter is on its page (the SVG itself, its alt text, its
number) and in the chapter's ``.ipynb``, embedded as the same SVG with the same
number in its caption.  Checked on the files ``make book`` wrote; that they load
in a browser is ``test_site_browser``'s check of every image.
"""

from __future__ import annotations

import base64
import html
import re

import nbformat
import pytest

from built_site import BOOK, NOTEBOOKS, SITE
from built_site import site  # noqa: F401  (fixture)

FIGURE = re.compile(r"^```\{figure\} (?P<path>\S+)\n(?P<body>(?:.*\n)*?)```$", re.M)


def chapter_figures() -> list[tuple[str, str, str, str]]:
    """(docname, figure file, label, alt text) of every ``{figure}`` in the chapters."""
    found = []
    for docname in NOTEBOOKS:
        if not docname.startswith("chapters/"):
            continue
        source = (BOOK / f"{docname}.md").read_text(encoding="utf-8")
        for match in FIGURE.finditer(source):
            options = dict(re.findall(r"^:([a-z-]+):\s*(.*)$", match["body"], re.M))
            found.append((docname, match["path"], options["name"], options["alt"]))
    return found


FIGURES = chapter_figures()


def figure_on_page(docname: str, label: str) -> str:
    page = (SITE / f"{docname}.html").read_text(encoding="utf-8")
    match = re.search(rf'<figure[^>]*\bid="{re.escape(label)}"[^>]*>(.*?)</figure>', page, re.S)
    assert match, f"{docname}.html has no figure with the id {label}"
    return match[1]


def test_there_are_figures_to_check():
    assert len(FIGURES) >= 9


@pytest.mark.parametrize("docname, path, label, alt", FIGURES, ids=[f[2] for f in FIGURES])
def test_the_page_shows_the_figure_with_its_alt_text_and_number(site, docname, path, label, alt):
    figure = figure_on_page(docname, label)
    image = re.search(r"<img\b[^>]*>", figure)[0]
    src = re.search(r'src="([^"]+)"', image)[1]
    assert html.unescape(re.search(r'alt="([^"]*)"', image)[1]) == alt
    built = (SITE / docname).parent / src
    source = (BOOK / docname).parent / path
    assert built.read_bytes() == source.read_bytes(), f"{src} is not {path}"
    chapter = int(docname.split("/")[-1][:2])
    assert re.search(rf'<span class="caption-number">Fig\. {chapter}\.\d+ </span>', figure)


@pytest.mark.parametrize("docname, path, label, alt", FIGURES, ids=[f[2] for f in FIGURES])
def test_the_published_notebook_embeds_the_figure_with_the_sites_number(site, docname, path,
                                                                        label, alt):
    number = re.search(r'<span class="caption-number">(Fig\. [\d.]+) </span>',
                       figure_on_page(docname, label))[1]
    notebook = nbformat.read(SITE / "notebooks" / f"{docname}.ipynb", as_version=4)
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    caption = re.search(rf"^<img src=\"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)\" "
                        rf"alt=\"([^\"]*)\">\n\n\*\*\[{re.escape(number)}\]"
                        rf"\([^)]*#{re.escape(label)}\):\*\* ", markdown, re.M)
    assert caption, f"the notebook of {docname} does not show {label} as {number}"
    assert base64.b64decode(caption[1]) == ((BOOK / docname).parent / path).read_bytes()
    assert html.unescape(caption[2]) == alt


def code_cell_figures() -> list[tuple[str, str, str]]:
    """(docname, label, code) of every figure a chapter's code cell draws (``mystnb: figure:``)."""
    import jupytext

    found = []
    for docname in NOTEBOOKS:
        if not docname.startswith("chapters/"):
            continue
        for cell in jupytext.read(BOOK / f"{docname}.md").cells:
            figure = cell.metadata.get("mystnb", {}).get("figure", {})
            if cell.cell_type == "code" and figure:
                found.append((docname, figure["name"], cell.source))
    return found


CODE_FIGURES = code_cell_figures()


def test_there_are_code_cell_figures_to_check():
    assert len(CODE_FIGURES) >= 35


@pytest.mark.parametrize("docname, label, code", CODE_FIGURES, ids=[f[1] for f in CODE_FIGURES])
def test_the_published_notebook_numbers_and_captions_each_code_cells_figure(site, docname, label,
                                                                           code):
    """Below the code cell that draws it, the notebook says "Fig. 5.1: caption", the site's number."""
    number = re.search(r'<span class="caption-number">(Fig\. [\d.]+) </span>',
                       figure_on_page(docname, label))[1]
    cells = nbformat.read(SITE / "notebooks" / f"{docname}.ipynb", as_version=4).cells
    index = next(i for i, cell in enumerate(cells) if cell.cell_type == "code" and cell.source == code)
    caption = cells[index + 1]
    assert caption.cell_type == "markdown", f"{docname}: no caption below the figure {label}"
    assert re.match(rf"\*\*\[{re.escape(number)}\]\([^)]*#{re.escape(label)}\):\*\* \S",
                    caption.source), caption.source[:200]
