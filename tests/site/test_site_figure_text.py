"""Every figure's text can be read: at 1280 px where the page shows it, and on a phone (390 px)
as it is shown or once opened full size.

How tall a figure's smallest text is comes from the figure itself: the strict build writes
it into every PNG a cell shows (``figure_check.SMALLEST_TEXT_KEY``, in the PNG's own
pixels), and an SVG diagram says it in its ``font-size`` attributes.  The browser says how
large the page shows the image (its width on the page over its natural width); the two
multiplied are the text's height on the screen, in CSS pixels.

* At 1280 px every figure a cell draws has text of 9 px or more as the page shows it, and
  a figure wider than the column is shown exactly :data:`figure_check.CONTENT_WIDTH_PX`
  wide, the width the build's check assumes.
* At 390 px every figure is a button that opens it full size (``course.js``): by keyboard
  (Enter, then Escape, the focus back on the figure) and by a tap; opened, its text is
  9 px or more.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from attention_course.chapter_tools import figure_check
from built_site import SITE, TOC
from built_site import browser, server, site  # noqa: F401  (fixtures)
from built_site import PageProblems
from test_site_browser import open_page

MIN_TEXT_PX = figure_check.MIN_TEXT_PX

#: run in the page: every image of the article, how wide it is shown, and whether it opens full size
IMAGES = r"""() => [...document.querySelectorAll('article.bd-article img')].map(img => {
  const figure = img.closest('figure');
  const number = figure && figure.querySelector('.caption-number');
  return {src: img.currentSrc || img.src, natural: img.naturalWidth,
          shown: img.getBoundingClientRect().width,
          name: number ? number.textContent.trim() : (figure ? figure.id : img.getAttribute('src')),
          zoomable: !!img.closest('.course-zoom')};
})"""


def _font_px(value: str | None, inherited: float) -> float:
    if not value:
        return inherited
    number = float(re.match(r"[\d.]+", value.strip())[0])
    return number * inherited if value.strip().endswith("em") else number


def svg_smallest_text_px(path: Path) -> float | None:
    """The smallest text of an SVG drawn at its ``width``, in pixels (``None``: no text)."""
    root = ET.parse(path).getroot()
    width = float(root.get("width"))
    view_width = float(root.get("viewBox").split()[2]) if root.get("viewBox") else width
    sizes = []

    def walk(element, inherited: float) -> None:
        styled = re.search(r"font-size\s*:\s*([^;]+)", element.get("style", ""))
        size = _font_px(styled[1] if styled else element.get("font-size"), inherited)
        tag = element.tag.rsplit("}", 1)[-1]
        if tag in ("text", "tspan") and (element.text or "").strip():
            sizes.append(size)
        for child in element:
            walk(child, size)

    walk(root, 16.0)   # the browser's default font size
    return min(sizes) * width / view_width if sizes else None


def smallest_text_px(url: str) -> float | None:
    """The smallest text of the image at ``url`` (on the local server), in its natural pixels."""
    path = SITE / unquote(urlsplit(url).path).lstrip("/")
    if path.suffix == ".svg":
        return svg_smallest_text_px(path)
    from PIL import Image

    with Image.open(path) as image:
        recorded = image.text.get(figure_check.SMALLEST_TEXT_KEY)
    assert recorded is not None, (f"{path.name} does not say how small its text is: the strict build "
                                  f"writes {figure_check.SMALLEST_TEXT_KEY} into every figure's PNG")
    return None if recorded == "none" else float(recorded)


def images_of(page, server, docname) -> list[dict]:
    open_page(page, urljoin(server, f"{docname}.html"))
    page.wait_for_function("() => [...document.images].every(i => i.complete)")
    return page.evaluate(IMAGES)


@pytest.fixture(scope="module")
def laptop(browser, server):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.problems = PageProblems(page, server)
    yield page
    context.close()


@pytest.fixture(scope="module")
def phone(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=3,
                                  is_mobile=True, has_touch=True, base_url=server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.problems = PageProblems(page, server)
    yield page
    context.close()


def test_at_1280_px_every_figure_has_text_of_9_px_or_more(site, laptop, server):
    """The strict build checks each figure a cell draws at the column's width (and
    tests/book/test_diagrams.py each architecture diagram); here is the column as the browser
    lays it out, and the text as it is shown."""
    small, wider, widths = [], [], []
    for docname in TOC:
        for image in images_of(laptop, server, docname):
            text = smallest_text_px(image["src"])
            scale = image["shown"] / image["natural"]
            widths.append(image["shown"])
            if image["natural"] > figure_check.CONTENT_WIDTH_PX:
                wider.append((image["name"], image["shown"]))
            if text is not None and text * scale < MIN_TEXT_PX - 1e-6:
                small.append(f"{docname}: {image['name']} text {text * scale:.1f} px "
                             f"({text:.1f} px drawn, shown at {scale:.2f})")
    assert len(widths) >= 40, f"only {len(widths)} figures found"
    assert wider, "no figure wider than the column: the column's width is not tested"
    assert all(abs(shown - figure_check.CONTENT_WIDTH_PX) <= 0.5 for _, shown in wider), (
        f"figures wider than the column are shown at {sorted({round(s) for _, s in wider})} px, "
        f"not figure_check.CONTENT_WIDTH_PX = {figure_check.CONTENT_WIDTH_PX}")
    assert max(widths) <= figure_check.CONTENT_WIDTH_PX + 0.5
    assert small == [], "text under 9 px at 1280 px:\n" + "\n".join(small)
    assert laptop.problems.all() == []


def test_on_a_phone_every_figure_opens_full_size_with_text_of_9_px_or_more(site, phone, server):
    """Every figure of every page, opened by keyboard (Enter on the figure, Escape to close) at
    390 px: the dialog shows it at its own size, scrolling where it is wider than the window."""
    opened, small, native_small = 0, [], 0
    for docname in TOC:
        images = images_of(phone, server, docname)
        for n, image in enumerate(images):
            assert image["zoomable"], f"{docname}: {image['name']} does not open full size"
            text = smallest_text_px(image["src"])
            if text is not None and text * image["shown"] / image["natural"] < MIN_TEXT_PX:
                native_small += 1
            button = phone.locator("article.bd-article .course-zoom").nth(n)
            button.focus()
            phone.keyboard.press("Enter")
            dialog = phone.locator("dialog.course-lightbox[open]")
            assert dialog.count() == 1, f"{docname}: Enter on {image['name']} opened nothing"
            shown = dialog.locator(".course-lightbox-view img").evaluate(
                """img => ({width: img.getBoundingClientRect().width, natural: img.naturalWidth,
                           src: img.currentSrc, view: img.parentElement.scrollWidth,
                           viewVisible: img.parentElement.clientWidth,
                           title: document.querySelector('.course-lightbox-title').textContent})""")
            assert shown["src"] == image["src"]
            if image["name"].startswith("Fig."):
                assert image["name"] in shown["title"], shown["title"]   # the dialog is named by its caption
            scale = shown["width"] / shown["natural"]
            if text is not None and text * scale < MIN_TEXT_PX - 1e-6:
                small.append(f"{docname}: {image['name']} opened: text {text * scale:.1f} px")
            if shown["width"] > shown["viewVisible"]:   # wider than the phone: it scrolls, all of it
                assert shown["view"] >= shown["width"], f"{docname}: {image['name']} is cut off"
            phone.keyboard.press("Escape")
            assert phone.locator("dialog.course-lightbox[open]").count() == 0, "Escape did not close it"
            assert button.evaluate("b => b === document.activeElement"), "the focus did not come back"
            opened += 1
    assert opened >= 60, f"only {opened} figures opened"
    assert native_small > 10, "no figure is too small on a phone as shown: nothing to test the dialog with"
    assert small == [], "text under 9 px in the full-size figure:\n" + "\n".join(small)
    assert phone.problems.all() == []


def test_a_tap_opens_a_figure_and_the_close_button_or_a_tap_beside_it_closes_it(site, phone, server):
    images_of(phone, server, "chapters/05_self_attention")
    figure = phone.locator("article.bd-article .course-zoom").nth(1)
    figure.scroll_into_view_if_needed()
    figure.tap()
    dialog = phone.locator("dialog.course-lightbox")
    assert dialog.evaluate("d => d.open")
    view = dialog.locator(".course-lightbox-view")
    assert view.evaluate("v => v === document.activeElement")     # arrow keys scroll it at once
    assert view.evaluate("v => v.scrollWidth > v.clientWidth")     # Fig. 5.1 is wider than a phone
    view.evaluate("v => v.scrollBy(400, 0)")
    assert view.evaluate("v => v.scrollLeft") > 0
    dialog.locator("button.course-lightbox-close").tap()
    assert not dialog.evaluate("d => d.open")
    figure.tap()
    assert dialog.evaluate("d => d.open")
    dialog.evaluate("d => d.dispatchEvent(new MouseEvent('click', {bubbles: true}))")   # the backdrop
    assert not dialog.evaluate("d => d.open")
    assert phone.problems.all() == []


#: run in the page: open the first figure, close it by each of the dialog's ways, move the focus to
#: the second figure's button in the same task, and report where the focus is once the queued
#: "close" event has run
FOCUS_AFTER_CLOSING = r"""async () => {
  const buttons = document.querySelectorAll('article.bd-article .course-zoom');
  const dialog = () => document.querySelector('dialog.course-lightbox');
  const ways = {
    escape: d => d.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true})),
    button: d => d.querySelector('.course-lightbox-close').click(),
    backdrop: d => d.dispatchEvent(new MouseEvent('click', {bubbles: true})),
    browser: d => d.close(),
  };
  const stays = {};
  for (const [way, close] of Object.entries(ways)) {
    buttons[0].click();
    close(dialog());
    buttons[1].focus();
    await new Promise(resolve => setTimeout(resolve, 100));
    stays[way] = !dialog().open && document.activeElement === buttons[1];
  }
  return stays;
}"""


def test_closing_a_figure_never_takes_the_focus_back_from_where_the_reader_moved_it(site, laptop,
                                                                                     server):
    """The focus goes back to the figure when its dialog closes, at once: the dialog's "close"
    event, which comes later, must not pull it back from a button the reader (or a test) has
    focused meanwhile (a race that opened the wrong figure under a loaded CPU)."""
    images_of(laptop, server, "chapters/03_additive_attention")
    stays = laptop.evaluate(FOCUS_AFTER_CLOSING)
    assert stays == {"escape": True, "button": True, "backdrop": True, "browser": True}, stays
    assert laptop.problems.all() == []
