"""The attention explorer in headless Chromium, on a page of its own (no built book needed),
driven by keyboard alone: what a reader who does not use a mouse can do with it.

The page holds what a chapter's output cell holds (``Explorer._repr_html_()``: the
data, the style and the script, inlined) for a small trained-style example and for
the toy.  The same checks run on the built site in ``tests/site/test_site_explorer.py``
(both use ``tests/site/explorer_keyboard.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from attention_course.chapter_tools import explorer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "site"))
import explorer_keyboard as keys  # noqa: E402
from built_site import browser  # noqa: E402, F401  (the fixture: the system's Chromium, network off)


def softmax_rows(rng, *shape):
    x = np.exp(rng.normal(size=shape) * 2)
    return x / x.sum(-1, keepdims=True)


@pytest.fixture
def page(browser, tmp_path):
    rng = np.random.default_rng(0)
    queries, keys_ = ["the", "cat", "sat", "down"], ["the", "cat", "sat", "down", "."]
    trained = explorer.attention_explorer("two layers, three heads", [
        explorer.Example(f"example {e}", queries, keys_, softmax_rows(rng, 2, 3, 4, 5)) for e in range(2)])
    toy = explorer.toy_explorer("toy", ["a", "b", "c"], rng.normal(size=(3, 2)), rng.normal(size=(3, 2)))
    path = tmp_path / "explorer.html"
    path.write_text('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>explorer</title></head>'
                    f"<body><p>Before.</p>{trained._repr_html_()}{toy._repr_html_()}</body></html>",
                    encoding="utf-8")
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                  else route.abort())
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(path.as_uri(), wait_until="load")
    yield page
    assert page.errors == []
    context.close()


def test_every_explorer_is_set_up(page):
    found = page.locator(".attention-explorer")
    assert found.count() == 2
    for i in range(2):
        assert found.nth(i).get_attribute("data-ready") == "true", found.nth(i).get_attribute("data-error")
        assert found.nth(i).locator(".attention-explorer-static").is_hidden()


def test_heads_are_picked_with_tab_and_enter_or_space(page):
    trained = page.locator(".attention-explorer").first
    assert trained.locator("button[data-head]").all_text_contents() == ["head 1", "head 2", "head 3"] * 2
    assert trained.locator(".attention-explorer-layer-name").all_text_contents() == ["layer 1", "layer 2"]
    keys.check_heads_by_keyboard(page, trained, 0, [(1, 2), (0, 1), (1, 0)])
    keys.check_heads_by_keyboard(page, trained, 1, [(0, 2), (1, 1)])      # Shift+Tab back, then on


def test_arrow_keys_move_the_highlighted_query_row_and_enter_keeps_it(page):
    trained, toy = page.locator(".attention-explorer").all()
    keys.pick_head(page, trained, 0, 1, "Enter")
    keys.check_the_kept_row_follows_the_heads(page, trained, 1, 2)
    keys.check_rows_by_keyboard(page, toy)


def test_cells_have_viridis_colours_and_a_colour_bar(page):
    trained, toy = page.locator(".attention-explorer").all()
    keys.check_colours(trained)
    keys.pick_head(page, trained, 1, 1, "Enter")
    keys.check_colours(trained)
    keys.check_colours(toy)


def test_the_toy_is_used_by_keyboard_and_its_labels_stand_apart(page):
    toy = page.locator(".attention-explorer").nth(1)
    keys.check_toy_by_keyboard(page, toy, explorer.toy_weights)
    keys.check_colours(toy)


def test_each_group_of_controls_is_one_tab_stop(page):
    trained, toy = page.locator(".attention-explorer").all()
    # 2 examples and 6 heads were 8 Tab stops; now the examples, the heads and the map: 3
    assert keys.tab_stops(page, trained) == ["example", "head", "row"]
    assert keys.tab_stops(page, toy) == ["input:attention-explorer-scale", "input:attention-explorer-causal",
                                         "row"]
    assert trained.locator("[role='grid'] [role='row']").count() == 2
    assert trained.locator("[role='row'] > [role='rowheader']").all_text_contents() == ["layer 1", "layer 2"]
    assert trained.locator("[role='row'] > [role='gridcell'] > button").count() == 6


def test_the_arrow_keys_move_inside_the_heads_grid_and_the_examples(page):
    trained = page.locator(".attention-explorer").first
    keys.check_grid_keys(page, trained)
    keys.pick_example(page, trained, 1)
    page.keyboard.press("ArrowRight")           # round the end, back to the first; nothing picked
    assert keys.focused(page)["data"]["example"] == "0"
    assert trained.locator("button[data-example='1']").get_attribute("aria-pressed") == "true"
    page.keyboard.press("Space")
    assert trained.locator("button[data-example='0']").get_attribute("aria-pressed") == "true"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_its_labels_read_on_a_light_or_dark_page(page, scheme):
    # The book's dark mode: a near-black page (the theme's --pst-color-background), and a cell's
    # HTML output on a light grey box with dark text (pydata-sphinx-theme's rule for outputs).
    if scheme == "dark":
        page.evaluate("""() => {
            document.documentElement.style.setProperty('--pst-color-background', '#121212');
            document.body.style.background = '#121212';
            const box = document.createElement('div');
            box.style.cssText = 'background: #ced6dd; color: #222832; padding: .5rem';
            document.body.appendChild(box);
            document.querySelectorAll('.attention-explorer').forEach(e => box.appendChild(e));
        }""")
    for found in page.locator(".attention-explorer").all():
        keys.check_labels_contrast(found)
