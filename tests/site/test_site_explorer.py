"""The attention explorer in the built site, in headless Chromium with the network off.

What a reader does with it, by keyboard alone (Tab or Shift+Tab to a control,
Enter or Space to use it, the arrow keys in the map), as the explorer's test on
a page of its own does (``tests/attention_course/chapter_tools/test_explorer_in_a_browser.py``;
both drive it with ``explorer_keyboard``): pick an example, a layer and a head,
and the drawing shows that head's weights (each cell's ``data-weight`` is
compared with the JSON the page embeds, and the JSON with the NumPy maps it
came from in ``tests/attention_course/chapter_tools/test_explorer.py``), each
cell in matplotlib's viridis colour of its weight beside a colour bar; move
from query row to query row and read where it attends, keep a row while
switching heads; switch the toy's scaling and causal mask and get what NumPy
computes.  Hovering a query with the mouse reads it out too.  It works from
``file://`` and from a page saved on its own, and a reader without JavaScript
sees a static picture.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from attention_course.chapter_tools.explorer import toy_weights
from built_site import SITE
from built_site import browser, page, server, site  # noqa: F401  (fixtures)
from explorer_keyboard import (check_colours, check_grid_keys, check_heads_by_keyboard, check_labels_contrast,
                               check_the_kept_row_follows_the_heads, check_toy_by_keyboard, data_of, drawn,
                               pick_example, pick_head, tab_stops)

#: the pages that show an explorer, and how many each shows
PAGES = {"chapters/05_self_attention": 1, "chapters/05_what_it_refers_to": 1,
         "chapters/06_what_heads_learn": 1, "chapters/11_training_transformer": 1,
         "chapters/12_bert": 1, "chapters/14_what_the_vit_learned": 1}


def explorers(page):
    return page.locator(".attention-explorer")


def open_explorers(page, server, docname):
    page.goto(f"{server}{docname}.html", wait_until="load")
    found = explorers(page)
    assert found.count() == PAGES[docname], f"{docname}: {found.count()} explorers"
    for i in range(found.count()):
        assert found.nth(i).get_attribute("data-ready") == "true", found.nth(i).get_attribute("data-error")
    return found


@pytest.mark.parametrize("docname", PAGES)
def test_heads_picked_by_keyboard_draw_their_weights_in_viridis(page, server, docname):
    found = open_explorers(page, server, docname)
    rng = np.random.default_rng(0)
    for e in range(found.count()):
        explorer = found.nth(e)
        data = data_of(explorer)
        if "toy" in data:
            continue
        assert explorer.locator(".attention-explorer-static").is_hidden()
        for example in rng.permutation(len(data["examples"]))[:2]:
            layers, heads = len(data["layers"]), len(data["heads"])
            chosen = [(0, 0), (layers - 1, heads - 1), (int(rng.integers(layers)), int(rng.integers(heads)))]
            check_heads_by_keyboard(page, explorer, int(example), chosen)
            check_colours(explorer)
    assert page.problems.all() == []


def test_the_query_rows_are_walked_by_keyboard(page, server):
    explorer = open_explorers(page, server, "chapters/12_bert").first
    pick_head(page, explorer, 3, 5, "Enter")
    check_the_kept_row_follows_the_heads(page, explorer, 5, 11)
    assert page.problems.all() == []


def test_each_group_of_controls_is_one_tab_stop_with_arrow_keys_inside(page, server):
    """Chapter 12's 72 head buttons were 72 Tab stops (75 Tabs to reach the map): now the
    examples, the heads and the map are one stop each, and the arrow keys move inside."""
    explorer = open_explorers(page, server, "chapters/12_bert").first
    assert explorer.locator("button[data-head]").count() == 72
    assert tab_stops(page, explorer) == ["example", "head", "row"]
    check_grid_keys(page, explorer)
    pick_example(page, explorer, 1)
    pick_head(page, explorer, 5, 11, "Space")
    assert page.problems.all() == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_its_labels_read_in_light_and_dark_mode(browser, server, scheme):
    """In the book's dark mode the layer names were dark grey on near-black."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    try:
        page = context.new_page()
        page.goto(f"{server}chapters/12_bert.html", wait_until="load")
        assert page.evaluate("document.documentElement.dataset.theme") == scheme
        for explorer in page.locator(".attention-explorer").all():
            check_labels_contrast(explorer)
    finally:
        context.close()


def test_hovering_a_query_reads_out_where_it_attends(page, server):
    explorer = open_explorers(page, server, "chapters/12_bert").first
    data = data_of(explorer)
    pick_head(page, explorer, 3, 5, "Enter")
    example = data["examples"][0]
    it = example["queries"].index("it")
    explorer.locator(f".attention-explorer-live text.query[data-row='{it}']").hover()
    row = np.asarray(example["weights"][3][5][it]) / data["precision"]
    readout = explorer.locator(".attention-explorer-readout").text_content()
    top = int(np.argmax(row))
    assert readout.startswith("“it” attends to "), readout
    assert readout.split(" attends to ")[1].startswith(f"{example['keys'][top]} {row[top]:.2f}"), readout
    assert explorer.locator(".attention-explorer-live .row-highlight").get_attribute("data-row") == str(it)
    assert explorer.locator(".attention-explorer-live g.query-row.shown").get_attribute("data-row") == str(it)
    assert explorer.locator(".attention-explorer-readout").get_attribute("data-row") == str(it)
    explorer.locator(".attention-explorer-caption").last.hover()         # off the drawing
    assert explorer.locator(".attention-explorer-readout").get_attribute("data-row") is None
    assert explorer.locator(".attention-explorer-live .row-highlight").get_attribute("data-row") is None
    assert explorer.locator(".attention-explorer-live g.query-row.shown").count() == 0


def test_the_toy_recomputes_the_weights_in_the_page_as_numpy_does(page, server):
    found = open_explorers(page, server, "chapters/05_self_attention")
    toy = next(found.nth(i) for i in range(found.count()) if "toy" in data_of(found.nth(i)))
    check_toy_by_keyboard(page, toy, toy_weights)
    check_colours(toy)
    assert page.problems.all() == []


def test_without_javascript_the_reader_sees_a_static_picture(browser, server):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{server}chapters/12_bert.html", wait_until="load")
        explorer = page.locator(".attention-explorer").first
        static = explorer.locator(".attention-explorer-static")
        assert static.is_visible()
        assert static.locator("svg rect").count() > 100
        assert "needs JavaScript" in static.text_content()
        assert explorer.locator(".attention-explorer-live").is_hidden()
    finally:
        context.close()


def offline_page(browser):
    """A page in a context that may load ``file://`` URLs and nothing else."""
    context = browser.new_context()
    page = context.new_page()
    page.requested = []

    def only_files(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            page.requested.append(route.request.url)
            route.abort()

    page.route("**/*", only_files)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return context, page


@pytest.mark.parametrize("where", ["the built site from file://", "the page saved on its own"])
def test_it_works_without_a_server_and_saved_alone(browser, site, tmp_path, where):
    source = SITE / "chapters" / "14_what_the_vit_learned.html"
    if where == "the page saved on its own":
        shutil.copy(source, tmp_path / source.name)      # no _static, no other page
        source = tmp_path / source.name
    context, page = offline_page(browser)
    try:
        page.goto(source.as_uri(), wait_until="load")
        explorer = page.locator(".attention-explorer").first
        assert explorer.get_attribute("data-ready") == "true"
        data = data_of(explorer)
        pick_example(page, explorer, 1)
        pick_head(page, explorer, 1, 2, "Enter")
        expected = np.asarray(data["examples"][1]["weights"][1][2]) / data["precision"]
        np.testing.assert_allclose(drawn(explorer), expected, atol=1e-12)
        assert page.requested == []
        assert explorer.get_attribute("data-error") is None
        if where == "the built site from file://":
            assert page.errors == []
        # (saved alone, the theme's own scripts fail for want of _static/; the explorer does not)
    finally:
        context.close()
