"""Driving the attention explorer by keyboard alone, and reading what it draws.

Shared by the explorer's browser test on a page of its own
(``tests/attention_course/chapter_tools/test_explorer_in_a_browser.py``, no
built book needed) and its test on the built site (``test_site_explorer.py``),
so that both drive it the same way: Tab (or Shift+Tab) to a control, Enter or
Space to use it, the arrow keys to move from query row to query row.
"""

from __future__ import annotations

import json

import numpy as np
from matplotlib import colormaps

VIRIDIS = colormaps["viridis"]     # the figures' colour map, which the explorer must use


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


def tab_to(page, target, limit: int = 3000) -> None:
    """Press Tab (or Shift+Tab, if ``target`` comes before the focus) until ``target`` has the focus."""
    element = target.element_handle()
    key = page.evaluate("""t => { const a = document.activeElement;
        return a && a !== document.body && (a.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_PRECEDING)
            ? 'Shift+Tab' : 'Tab'; }""", element)
    for _ in range(limit):
        if element.evaluate("t => t === document.activeElement"):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{limit} presses of {key} did not reach {target}")


def focused(page) -> dict:
    """What has the focus: its tag, classes and data attributes, and its outline."""
    return page.evaluate("""() => { const a = document.activeElement, style = getComputedStyle(a);
        return {tag: a.tagName.toLowerCase(), cls: a.getAttribute('class') || '', data: {...a.dataset},
                outline: style.outlineStyle, outlineWidth: parseFloat(style.outlineWidth)}; }""")


def readout(explorer) -> tuple[str | None, str]:
    """The row the readout speaks of (``None``: none) and what it says."""
    out = explorer.locator(".attention-explorer-readout")
    return out.get_attribute("data-row"), out.text_content()


def highlighted_row(explorer) -> str | None:
    return explorer.locator(".attention-explorer-live .row-highlight").get_attribute("data-row")


def expected_readout(example: dict, weights: np.ndarray, row: int) -> str:
    """The readout for query ``row``: its three largest weights, largest first."""
    top = np.argsort(-weights[row], kind="stable")[:3]
    return (f"“{example['queries'][row]}” attends to "
            + " · ".join(f"{example['keys'][j]} {weights[row, j]:.2f}" for j in top))


def pick_head(page, explorer, layer: int, head: int, key: str) -> None:
    """Tab to the button of ``layer``, ``head`` and press ``key`` (Enter or Space) on it."""
    button = explorer.locator(f"button[data-layer='{layer}'][data-head='{head}']")
    tab_to(page, button)
    now = focused(page)
    assert now["outline"] != "none" and now["outlineWidth"] >= 2, f"no visible focus outline: {now}"
    page.keyboard.press(key)
    assert button.get_attribute("aria-pressed") == "true"
    assert explorer.locator("button[aria-pressed='true'][data-head]").count() == 1


def check_heads_by_keyboard(page, explorer, example: int, chosen) -> None:
    """Pick ``example`` (if there are several) and each (layer, head) of ``chosen`` by keyboard,
    alternating Enter and Space; each time the map draws that head's weights, named in the caption."""
    data = data_of(explorer)
    examples = explorer.locator("button[data-example]")
    if examples.count():
        tab_to(page, examples.nth(example))
        page.keyboard.press("Enter")
        assert examples.nth(example).get_attribute("aria-pressed") == "true"
    maps = np.asarray(data["examples"][example]["weights"]) / data["precision"]     # (L, H, T_q, T_k)
    for n, (layer, head) in enumerate(chosen):
        pick_head(page, explorer, layer, head, ("Enter", "Space")[n % 2])
        np.testing.assert_allclose(drawn(explorer), maps[layer, head], atol=1e-12,
                                   err_msg=f"example {example}, layer {layer}, head {head}")
        button = explorer.locator(f"button[data-layer='{layer}'][data-head='{head}']")
        name = f"{data['layers'][layer]}, {data['heads'][head]}"
        assert button.get_attribute("aria-label") == name
        assert button.text_content() == data["heads"][head]          # "head 2" in the row "layer 1"
        assert name in explorer.locator(".attention-explorer-caption").last.text_content()


def check_rows_by_keyboard(page, explorer) -> int:
    """Tab into the map, move with the arrow keys, keep a row with Enter: the highlight and the
    readout follow.  Returns the row kept."""
    example = data_of(explorer)
    example = example["examples"][_example_shown(explorer)] if "examples" in example else \
        {"queries": example["toy"]["tokens"], "keys": example["toy"]["tokens"]}
    rows = len(example["queries"])
    tab_to(page, explorer.locator(".attention-explorer-live g.query-row[tabindex='0']"))
    assert focused(page)["data"]["row"] == "0"
    path = [("ArrowDown", min(1, rows - 1)), ("End", rows - 1), ("ArrowDown", rows - 1),
            ("Home", 0), ("ArrowUp", 0), ("ArrowDown", min(1, rows - 1))]
    for key, row in path:
        page.keyboard.press(key)
        assert focused(page)["data"]["row"] == str(row), key
        assert highlighted_row(explorer) == str(row), key
        assert readout(explorer) == (str(row), expected_readout(example, drawn(explorer), row)), key
        assert explorer.locator(".attention-explorer-live g.query-row.shown").count() == 1
    kept = min(1, rows - 1)
    page.keyboard.press("Enter")
    assert explorer.locator(f"g.query-row[data-row='{kept}']").get_attribute("aria-selected") == "true"
    assert explorer.locator("g.query-row[aria-selected='true']").count() == 1
    return kept


def check_the_kept_row_follows_the_heads(page, explorer, layer: int, head: int) -> None:
    """Keep a row (``check_rows_by_keyboard``), Shift+Tab back to the head ``layer``, ``head`` and
    pick it: the kept row stays highlighted and is read out for that head; Enter on it lets it go."""
    data = data_of(explorer)
    kept = check_rows_by_keyboard(page, explorer)
    pick_head(page, explorer, layer, head, "Space")
    example = data["examples"][_example_shown(explorer)]
    maps = np.asarray(example["weights"]) / data["precision"]
    assert highlighted_row(explorer) == str(kept)
    assert readout(explorer) == (str(kept), expected_readout(example, maps[layer, head], kept))
    tab_to(page, explorer.locator(f".attention-explorer-live g.query-row[data-row='{kept}']"))
    page.keyboard.press("Enter")
    assert explorer.locator(".attention-explorer-live g.query-row[aria-selected='true']").count() == 0


def check_toy_by_keyboard(page, toy, toy_weights) -> None:
    """Tab to the toy's check boxes and switch them with Space, through all four settings: the map
    shows what ``toy_weights`` (NumPy) computes; each check box has its own label, apart from the next."""
    data = data_of(toy)["toy"]
    query, key = np.asarray(data["query"]), np.asarray(data["key"])
    boxes = [toy.locator("input.attention-explorer-scale"), toy.locator("input.attention-explorer-causal")]
    labels = [toy.locator(f"label[for='{box.get_attribute('id')}']") for box in boxes]
    assert [label.text_content() for label in labels] == ["divide the scores by √d_k", "causal mask"]
    first_label, second_box = labels[0].bounding_box(), boxes[1].bounding_box()
    assert second_box["x"] - (first_label["x"] + first_label["width"]) >= 8, "the labels run together"
    seen = set()
    for box in (None, boxes[1], boxes[0], boxes[1]):         # (scaled, no mask), then every other setting
        if box is not None:
            tab_to(page, box)
            assert focused(page)["outline"] != "none"
            page.keyboard.press("Space")
        setting = (boxes[0].is_checked(), boxes[1].is_checked())
        seen.add(setting)
        np.testing.assert_allclose(drawn(toy), toy_weights(query, key, *setting), rtol=1e-9, atol=1e-15,
                                   err_msg=f"scale, causal = {setting}")
    assert len(seen) == 4


def _example_shown(explorer) -> int:
    pressed = explorer.locator("button[data-example][aria-pressed='true']")
    return int(pressed.get_attribute("data-example")) if pressed.count() else 0


def check_colours(explorer) -> None:
    """Every cell has matplotlib's viridis colour of its weight (within one unit a channel), and a
    colour bar from 0 to 1 stands beside the map."""
    cells = explorer.locator(".attention-explorer-live rect.cell").evaluate_all(
        "cells => cells.map(c => [+c.dataset.weight, c.getAttribute('fill')])")
    weights = np.array([w for w, _ in cells])
    shown = np.array([_rgb(fill) for _, fill in cells])
    np.testing.assert_allclose(shown, np.asarray(VIRIDIS(weights))[:, :3] * 255, atol=1.0)
    bar = explorer.locator(".attention-explorer-live svg.attention-explorer-colour-bar")
    assert bar.count() == 1 and bar.is_visible()
    assert bar.locator("text.tick").all_text_contents() == ["0", "0.5", "1"]
    assert "attention weight" in bar.text_content()
    # its bands, top to bottom, are viridis from 1 to 0, and the tick "1" is at the top
    bands = sorted(bar.locator("rect").evaluate_all("rs => rs.map(r => [+r.getAttribute('y'), r.getAttribute('fill')])"))
    centres = 1 - (np.arange(len(bands)) + 0.5) / len(bands)
    np.testing.assert_allclose([_rgb(fill) for _, fill in bands], np.asarray(VIRIDIS(centres))[:, :3] * 255, atol=1.0)
    ticks = bar.locator("text.tick").evaluate_all("ts => ts.map(t => +t.getAttribute('y'))")
    assert ticks[2] < ticks[1] < ticks[0]


def _rgb(fill: str) -> list[int]:
    return [int(fill[k:k + 2], 16) for k in (1, 3, 5)]
