"""Driving the attention explorer by keyboard alone, and reading what it draws.

Shared by the explorer's browser test on a page of its own
(``tests/attention_course/chapter_tools/test_explorer_in_a_browser.py``, no
built book needed) and its test on the built site (``test_site_explorer.py``),
so that both drive it the same way: Tab (or Shift+Tab) to a group of controls,
the arrow keys to move inside it, Enter or Space to use a control.  Each group
is one Tab stop (WAI-ARIA's roving tab index): the examples (a toolbar), the
heads (a grid, a row per layer), the map's query rows (a list box); the toy's
two check boxes are one stop each.
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


def tab_stop(group):
    """The one control of a group (the examples' toolbar, the heads' grid) that Tab reaches."""
    stops = group.locator("button[tabindex='0']")
    assert stops.count() == 1, f"{stops.count()} Tab stops in {group}, not one"
    assert group.locator("button:not([tabindex='-1'])").count() == 1
    return stops.first


def arrow_to(page, target: tuple[int, ...], at: tuple[int, ...], keys: dict) -> None:
    """Press arrow keys from the control ``at`` to ``target`` (one coordinate per key of ``keys``:
    ``{axis: (key back, key on)}``), checking that the focus moves each time."""
    for axis, (back, on) in keys.items():
        while at[axis] != target[axis]:
            step = 1 if target[axis] > at[axis] else -1
            page.keyboard.press(on if step > 0 else back)
            at = at[:axis] + (at[axis] + step,) + at[axis + 1:]
            assert _position(page, len(at)) == at, f"{on if step > 0 else back} did not move to {at}"


def _position(page, dims: int) -> tuple[int, ...]:
    data = focused(page)["data"]
    return (int(data["example"]),) if dims == 1 else (int(data["layer"]), int(data["head"]))


def pick_head(page, explorer, layer: int, head: int, key: str) -> None:
    """Tab to the heads' grid, move to ``layer``, ``head`` with the arrow keys and press ``key``
    (Enter or Space) on it: the grid is one Tab stop, and moving picks nothing until ``key``."""
    grid = explorer.locator("[role='grid'].attention-explorer-heads")
    shown = explorer.locator("button[aria-pressed='true'][data-head]").get_attribute("aria-label")
    tab_to(page, tab_stop(grid))
    now = focused(page)
    assert now["outline"] != "none" and now["outlineWidth"] >= 2, f"no visible focus outline: {now}"
    arrow_to(page, (layer, head), _position(page, 2), {0: ("ArrowUp", "ArrowDown"), 1: ("ArrowLeft", "ArrowRight")})
    assert explorer.locator("button[aria-pressed='true'][data-head]").get_attribute("aria-label") == shown
    page.keyboard.press(key)
    button = explorer.locator(f"button[data-layer='{layer}'][data-head='{head}']")
    assert button.get_attribute("aria-pressed") == "true"
    assert explorer.locator("button[aria-pressed='true'][data-head]").count() == 1
    assert tab_stop(grid).get_attribute("aria-label") == button.get_attribute("aria-label")


def pick_example(page, explorer, example: int, key: str = "Enter") -> None:
    """Tab to the examples' toolbar, move to ``example`` with the arrow keys and press ``key``."""
    bar = explorer.locator("[role='toolbar'].attention-explorer-examples")
    tab_to(page, tab_stop(bar))
    arrow_to(page, (example,), _position(page, 1), {0: ("ArrowLeft", "ArrowRight")})
    page.keyboard.press(key)
    assert explorer.locator(f"button[data-example='{example}']").get_attribute("aria-pressed") == "true"
    assert explorer.locator("button[aria-pressed='true'][data-example]").count() == 1


def tab_stops(page, explorer) -> list[str]:
    """What Tab stops at, from the explorer's first stop to its last: each stop's kind
    ("example", "head", "row", "checkbox")."""
    first = explorer.locator("button[data-example][tabindex='0'], button[data-head][tabindex='0'], "
                             "input[type='checkbox'], g.query-row[tabindex='0']").first
    tab_to(page, first)
    stops = []
    while explorer.element_handle().evaluate("e => e.contains(document.activeElement)"):
        now = focused(page)
        kind = ("example" if "example" in now["data"] else "head" if "head" in now["data"]
                else "row" if "row" in now["data"] else now["tag"] + ":" + now["cls"])
        stops.append(kind)
        assert len(stops) < 20, stops
        page.keyboard.press("Tab")
    return stops


def check_grid_keys(page, explorer) -> None:
    """In the heads' grid the arrow keys stop at the edges, Home and End go to the ends of a layer,
    Ctrl+Home and Ctrl+End to the first and last head of all; none of them picks a head."""
    data = data_of(explorer)
    last_layer, last_head = len(data["layers"]) - 1, len(data["heads"]) - 1
    grid = explorer.locator("[role='grid'].attention-explorer-heads")
    shown = explorer.locator("button[aria-pressed='true'][data-head]").get_attribute("aria-label")
    tab_to(page, tab_stop(grid))
    for key, expected in [("Control+Home", (0, 0)), ("ArrowUp", (0, 0)), ("ArrowLeft", (0, 0)),
                          ("ArrowRight", (0, 1)), ("ArrowDown", (1, 1)), ("End", (1, last_head)),
                          ("ArrowRight", (1, last_head)), ("Home", (1, 0)),
                          ("Control+End", (last_layer, last_head)), ("ArrowDown", (last_layer, last_head))]:
        page.keyboard.press(key)
        assert _position(page, 2) == expected, key
        assert tab_stop(grid).get_attribute("data-head") == str(expected[1]), key   # the stop roves along
    assert explorer.locator("button[aria-pressed='true'][data-head]").get_attribute("aria-label") == shown


def check_heads_by_keyboard(page, explorer, example: int, chosen) -> None:
    """Pick ``example`` (if there are several) and each (layer, head) of ``chosen`` by keyboard,
    alternating Enter and Space; each time the map draws that head's weights, named in the caption."""
    data = data_of(explorer)
    if explorer.locator("button[data-example]").count():
        pick_example(page, explorer, example)
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


#: run in the page: the contrast of each element's text with the background it is drawn on
#: (the first opaque background colour among it and its ancestors), WCAG's formula
CONTRAST = r"""elements => elements.map(e => {
  const rgb = c => (c.match(/[\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => v / 255)
    .map(v => v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  let back = null;
  for (let up = e; up && !back; up = up.parentElement) {
    const c = rgb(getComputedStyle(up).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] === 1)) back = c.slice(0, 3);
  }
  const style = getComputedStyle(e);
  const fore = rgb(e instanceof SVGElement ? style.fill : style.color).slice(0, 3);
  const [a, b] = [lum(fore), lum(back || [255, 255, 255])].sort((x, y) => y - x);
  return {text: e.textContent.trim().slice(0, 30), contrast: (a + 0.05) / (b + 0.05)};
})"""


def check_labels_contrast(explorer) -> None:
    """Every label the explorer writes (layer names, head buttons, tokens, colour bar, readout)
    stands out from what it is drawn on by WCAG's 4.5:1 at least."""
    found = explorer.locator(".attention-explorer-layer-name, .attention-explorer-live button, "
                             ".attention-explorer-live svg text, .attention-explorer-readout, "
                             ".attention-explorer-live .attention-explorer-caption").evaluate_all(CONTRAST)
    assert found, "no labels found"
    low = [f for f in found if f["contrast"] < 4.5]
    assert low == [], f"labels with too little contrast: {low[:5]}"
