"""The attention explorer in the built site, in headless Chromium with the network off.

What a reader does with it: pick an example, a layer and a head, and the
drawing shows that head's weights (each cell's ``data-weight`` is compared
with the JSON the page embeds, and the JSON with the NumPy maps it came from
in ``tests/attention_course/chapter_tools/test_explorer.py``); hover a query and read
where it attends; switch the toy's scaling and causal mask and get what NumPy
computes.  It works from ``file://`` and from a page saved on its own, and a
reader without JavaScript sees a static picture.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from attention_course.chapter_tools.explorer import toy_weights
from built_site import SITE
from built_site import browser, page, server, site  # noqa: F401  (fixtures)

#: the pages that show an explorer, and how many each shows
PAGES = {"chapters/05_self_attention": 1, "chapters/05_what_it_refers_to": 1,
         "chapters/06_what_heads_learn": 1, "chapters/11_training_transformer": 1,
         "chapters/12_bert": 1, "chapters/14_what_the_vit_learned": 1}


def explorers(page):
    return page.locator(".attention-explorer")


def data_of(explorer) -> dict:
    return json.loads(explorer.locator("script.attention-explorer-data").text_content())


def drawn(explorer) -> np.ndarray:
    """The weights the drawing shows now, from its cells' ``data-weight``: ``(T_q, T_k)``."""
    cells = explorer.locator(".attention-explorer-live rect.cell").evaluate_all(
        "cells => cells.map(c => [+c.dataset.row, +c.dataset.col, +c.dataset.weight])")
    rows, cols = max(c[0] for c in cells) + 1, max(c[1] for c in cells) + 1
    weights = np.full((rows, cols), np.nan)
    for i, j, w in cells:
        weights[int(i), int(j)] = w
    return weights


def open_explorers(page, server, docname):
    page.goto(f"{server}{docname}.html", wait_until="load")
    found = explorers(page)
    assert found.count() == PAGES[docname], f"{docname}: {found.count()} explorers"
    for i in range(found.count()):
        assert found.nth(i).get_attribute("data-ready") == "true", found.nth(i).get_attribute("data-error")
    return found


@pytest.mark.parametrize("docname", PAGES)
def test_every_head_button_draws_that_heads_weights(page, server, docname):
    found = open_explorers(page, server, docname)
    rng = np.random.default_rng(0)
    for e in range(found.count()):
        explorer = found.nth(e)
        data = data_of(explorer)
        if "toy" in data:
            continue
        assert explorer.locator(".attention-explorer-static").is_hidden()
        buttons = explorer.locator("button[data-example]")
        for example in rng.permutation(len(data["examples"]))[:2]:
            if buttons.count():
                buttons.nth(int(example)).click()
            maps = np.asarray(data["examples"][example]["weights"]) / data["precision"]   # (L, H, T_q, T_k)
            chosen = [(0, 0), (maps.shape[0] - 1, maps.shape[1] - 1),
                      (int(rng.integers(maps.shape[0])), int(rng.integers(maps.shape[1])))]
            for layer, head in chosen:
                button = explorer.locator(f"button[data-layer='{layer}'][data-head='{head}']")
                button.click()
                assert button.get_attribute("aria-pressed") == "true"
                assert explorer.locator("button[aria-pressed='true'][data-head]").count() == 1
                np.testing.assert_allclose(drawn(explorer), maps[layer, head], atol=1e-12,
                                           err_msg=f"{docname}: example {example}, layer {layer}, head {head}")
                caption = explorer.locator(".attention-explorer-caption").last.text_content()
                assert f"{data['layers'][layer]}, {data['heads'][head]}" in caption
    assert page.problems.all() == []


def test_hovering_a_query_reads_out_where_it_attends(page, server):
    explorer = open_explorers(page, server, "chapters/12_bert").first
    data = data_of(explorer)
    explorer.locator("button[data-layer='3'][data-head='5']").click()
    example = data["examples"][0]
    it = example["queries"].index("it")
    explorer.locator(f".attention-explorer-live text.query[data-row='{it}']").hover()
    row = np.asarray(example["weights"][3][5][it]) / data["precision"]
    readout = explorer.locator(".attention-explorer-readout").text_content()
    top = int(np.argmax(row))
    assert readout.startswith("“it” attends to "), readout
    assert readout.split(" attends to ")[1].startswith(f"{example['keys'][top]} {row[top]:.2f}"), readout
    dimmed = explorer.locator(".attention-explorer-live rect.cell[opacity='0.3']").count()
    assert dimmed == len(row) * (len(example["queries"]) - 1)
    assert explorer.locator(".attention-explorer-readout").get_attribute("data-row") == str(it)
    explorer.locator(".attention-explorer-caption").last.hover()         # off the drawing
    assert explorer.locator(".attention-explorer-readout").get_attribute("data-row") is None
    assert explorer.locator(".attention-explorer-live rect.cell[opacity='0.3']").count() == 0


def test_the_toy_recomputes_the_weights_in_the_page_as_numpy_does(page, server):
    found = open_explorers(page, server, "chapters/05_self_attention")
    toy = next(found.nth(i) for i in range(found.count()) if "toy" in data_of(found.nth(i)))
    data = data_of(toy)["toy"]
    query, key = np.asarray(data["query"]), np.asarray(data["key"])
    scale, causal = toy.locator("input.attention-explorer-scale"), toy.locator("input.attention-explorer-causal")
    seen = set()
    for flip in (None, causal, scale, causal):         # (scaled, no mask), then every other setting
        if flip is not None:
            flip.click()
        setting = (scale.is_checked(), causal.is_checked())
        seen.add(setting)
        np.testing.assert_allclose(drawn(toy), toy_weights(query, key, *setting), rtol=1e-9, atol=1e-15,
                                   err_msg=f"scale, causal = {setting}")
    assert len(seen) == 4
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
        explorer.locator("button[data-example='1']").click()
        explorer.locator("button[data-layer='1'][data-head='2']").click()
        expected = np.asarray(data["examples"][1]["weights"][1][2]) / data["precision"]
        np.testing.assert_allclose(drawn(explorer), expected, atol=1e-12)
        assert page.requested == []
        assert explorer.get_attribute("data-error") is None
        if where == "the built site from file://":
            assert page.errors == []
        # (saved alone, the theme's own scripts fail for want of _static/; the explorer does not)
    finally:
        context.close()
