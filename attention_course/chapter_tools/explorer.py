"""An attention explorer in the page: pick a layer and a head, hover a query.

A chapter computes attention maps with the course's NumPy code and shows them
with :func:`attention_explorer` (trained or pretrained models: a map per layer,
head and example) or :func:`toy_explorer` (queries and keys whose weights the
page itself computes, with the 1/√d_k scaling and the causal mask switched on
and off).  The output is one piece of HTML that holds everything it needs:

* the maps, as JSON in a ``<script type="application/json">`` element
  (weights rounded to ``1/PRECISION``);
* a static SVG picture of the first layer and head and its colour bar, drawn
  here, which is what a reader sees where scripts do not run;
* the script (``explorer.js``, next to this file), which replaces the picture
  with the interactive one.

The colours are the figures' (matplotlib's viridis on one scale from 0 to 1,
the same for every head): the page carries matplotlib's colour table, so a cell
has the colour that ``plotting.attention_heatmap(..., vmax=1.0)`` gives its
weight.  Every control works from the keyboard, one Tab stop per group of
controls (WAI-ARIA's roving tab index): the examples (a toolbar) and the heads
(a grid, a row per layer) are each one stop, in which the arrow keys move and
Enter or Space picks; the toy's two check boxes are reached with Tab; in the
map the arrow keys move from query row to query row (Enter or Space keeps a
row highlighted while the reader switches heads).  The explorer has its own
light surface, like the figures, so that its labels read in a dark theme too.

Nothing is fetched, so the explorer works offline, from ``file://``, in a page
saved on its own, and in Jupyter.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib.colors import to_hex

PRECISION = 100           # weights are stored as integers in [0, PRECISION]: two decimals, as shown
SCRIPT = Path(__file__).with_name("explorer.js")
CELL, CHAR, PAD = 24, 7, 6    # the layout of explorer.js, for the static picture
BAR_WIDTH, BAR_MIN_LENGTH, BAR_BANDS = 12, 110, 64    # the colour bar's, likewise
BAR_LABEL = "attention weight"   # from 0 to 1 whatever the head: heads are compared on one scale
COLOURMAP = "viridis"     # the figures' (plotting.attention_heatmap)
#: matplotlib's table of the colour map: a weight w in [0, 1] has colour COLOURS[floor(w · N)] (the last for 1)
COLOURS = [to_hex(rgba) for rgba in colormaps[COLOURMAP](np.arange(colormaps[COLOURMAP].N))]
HINT = ("Hover a query (a row), or Tab to the map and move with the arrow keys, to see where it attends; "
        "click or press Enter to keep the row highlighted.")

_STYLE = """<style>
/* Its own light surface, as the figures have (a PNG is white), whatever the page's colours: in a
   dark theme the labels would otherwise be dark on near-black. */
.attention-explorer { margin: 0.5em 0 1em; font-size: 0.9em; color: #222; background: #fff;
  padding: 4px 6px; border-radius: 4px; }
.attention-explorer svg text { font: 12px sans-serif; fill: currentColor; }
.attention-explorer-heads-box { margin: 0.3em 0; padding: 4px; overflow-x: auto; }
.attention-explorer-heads { display: table; }
.attention-explorer-layer { display: table-row; }
.attention-explorer-layer-name, .attention-explorer-head { display: table-cell; vertical-align: middle; }
.attention-explorer-layer-name { padding-right: 0.4em; white-space: nowrap; color: #222; background: #fff; }
.attention-explorer button { min-width: 2em; min-height: 24px; border: 1px solid #767676; background: #fff;
  color: #222; border-radius: 3px; cursor: pointer; padding: 0 2px; margin: 1px; font-size: 0.8em;
  white-space: nowrap; }
.attention-explorer button[aria-pressed="true"] { background: #08306b; color: #fff; }
.attention-explorer-option { display: inline-block; margin-right: 1.5em; }
.attention-explorer-option label { margin-left: 0.35em; }
.attention-explorer :focus-visible { outline: 3px solid #e8590c; outline-offset: 1px; }
.attention-explorer-picture { max-width: 100%; height: auto; }
.attention-explorer-map .query-row { cursor: pointer; }
.attention-explorer-map .query-row.shown text { font-weight: bold; }
.attention-explorer-readout { min-height: 1.5em; font-family: monospace; }
/* On a phone, a layer's head buttons wrap onto more lines rather than scroll. */
@media (max-width: 760px) {
  .attention-explorer-heads-box { overflow-x: visible; }
  .attention-explorer-heads { display: block; }
  .attention-explorer-layer { display: flex; flex-wrap: wrap; align-items: center; margin-bottom: 2px; }
  .attention-explorer-layer-name, .attention-explorer-head { display: block; }
}
</style>"""


@dataclass(frozen=True)
class Example:
    """One input: its query and key tokens, and the weights of every layer and head.

    Attributes:
        name: how the example's button is labelled.
        queries: ``T_q`` tokens (rows); keys: ``T_k`` tokens (columns).
        weights: ``(layers, heads, T_q, T_k)``, each row a distribution over the keys.
    """

    name: str
    queries: Sequence[str]
    keys: Sequence[str]
    weights: np.ndarray


def colour(w: float) -> str:
    """The colour of weight ``w`` (clipped to [0, 1]), as matplotlib's colour map draws it: ``#rrggbb``."""
    return COLOURS[min(len(COLOURS) - 1, max(0, int(np.floor(float(w) * len(COLOURS)))))]


def _colour_bar(x: int, top: int, length: int) -> tuple[str, int, int]:
    """The colour bar, ``x`` px right, beside a map whose cells start ``top`` px down and are ``length``
    px tall; and its width and height."""
    length = max(length, BAR_MIN_LENGTH)
    band = length / BAR_BANDS
    width, height = BAR_WIDTH + 3 * CHAR + 2 * PAD + 14, top + length + PAD
    parts = [f'<svg class="attention-explorer-colour-bar" x="{x}" width="{width}" height="{height}" role="img" '
             f'aria-label="colour bar: {COLOURMAP}, {BAR_LABEL} from 0 to 1">']
    for k in range(BAR_BANDS):          # bottom (weight 0) to top (weight 1)
        y = top + length - (k + 1) * band
        parts.append(f'<rect x="{PAD}" y="{y:.2f}" width="{BAR_WIDTH}" height="{band + 0.5:.2f}" '
                     f'fill="{COLOURS[int((k + 0.5) / BAR_BANDS * len(COLOURS))]}"/>')
    for tick in (0, 0.5, 1):
        y = top + length * (1 - tick)
        parts.append(f'<line x1="{PAD + BAR_WIDTH}" x2="{PAD + BAR_WIDTH + 3}" y1="{y}" y2="{y}" '
                     f'stroke="currentColor"/><text x="{PAD + BAR_WIDTH + 5}" y="{y}" '
                     f'dominant-baseline="middle">{tick:g}</text>')
    x, y = width - 4, top + length / 2
    parts.append(f'<text x="{x}" y="{y}" transform="rotate(-90 {x} {y})" text-anchor="middle">'
                 f'{html.escape(BAR_LABEL)}</text></svg>')
    return "".join(parts), width, height


def _svg(queries: Sequence[str], keys: Sequence[str], weights: np.ndarray, label: str) -> str:
    """The heat map ``explorer.js`` draws and its colour bar, as static SVG (rows: queries, columns: keys);
    one picture, so that both shrink together on a narrow screen."""
    left = PAD + CHAR * max(map(len, queries))
    top = PAD + CHAR * max(map(len, keys))
    width, height = left + CELL * len(keys) + PAD, top + CELL * len(queries) + PAD
    parts = [f'<svg class="attention-explorer-map" width="{width}" height="{height}" role="img" '
             f'aria-label="{html.escape(label)}">']
    for j, token in enumerate(keys):
        x = left + CELL * (j + 0.5)
        parts.append(f'<text x="{x}" y="{top - 4}" transform="rotate(-90 {x} {top - 4})" '
                     f'dominant-baseline="middle">{html.escape(token)}</text>')
    for i, token in enumerate(queries):
        parts.append(f'<text x="{left - 4}" y="{top + CELL * (i + 0.5)}" text-anchor="end" '
                     f'dominant-baseline="middle">{html.escape(token)}</text>')
        for j, value in enumerate(weights[i]):
            parts.append(f'<rect x="{left + CELL * j}" y="{top + CELL * i}" width="{CELL}" height="{CELL}" '
                         f'fill="{colour(value)}"><title>{html.escape(token)} → {html.escape(keys[j])}: '
                         f'{value:.2f}</title></rect>')
    bar, bar_width, bar_height = _colour_bar(width, top, CELL * len(queries))
    parts.append("</svg>" + bar + "</svg>")
    width, height = width + bar_width, max(height, bar_height)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="attention-explorer-picture" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">' + "".join(parts))


class Explorer:
    """The explorer's HTML (shown by Jupyter through ``_repr_html_``) and its data."""

    def __init__(self, data: dict, static_label: str, static_svg: str):
        self.data = data
        self._static = (f'<p class="attention-explorer-caption">{html.escape(static_label)} '
                        f'(a static picture: the interactive explorer needs JavaScript)</p>{static_svg}')

    def json(self) -> str:
        # "</" cannot end the <script> element that holds the JSON.
        return json.dumps(self.data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")

    def _repr_html_(self) -> str:
        return (f'<div class="attention-explorer">{_STYLE}'
                f'<script type="application/json" class="attention-explorer-data">{self.json()}</script>'
                f'<div class="attention-explorer-static">{self._static}</div>'
                f'<div class="attention-explorer-live" hidden></div>'
                f'<script>{SCRIPT.read_text()}</script></div>')


def attention_explorer(title: str, examples: Sequence[Example], layer_names: Sequence[str] | None = None,
                       head_names: Sequence[str] | None = None) -> Explorer:
    """An explorer of trained attention maps: one button per example, per layer and head.

    Every example must have the same number of layers and heads; ``layer_names`` and
    ``head_names`` default to "layer 1", "head 1", ...
    """
    if not examples:
        raise ValueError("attention_explorer needs at least one example")
    stored, shape = [], None
    for example in examples:
        if not len(example.queries) or not len(example.keys):
            raise ValueError(f"example {example.name!r} needs at least one query and one key token")
        weights = np.asarray(example.weights, dtype=float)
        if weights.ndim != 4 or weights.shape[2:] != (len(example.queries), len(example.keys)):
            raise ValueError(f"example {example.name!r}: weights must be (layers, heads, T_q, T_k) = "
                             f"(…, …, {len(example.queries)}, {len(example.keys)}) for its tokens, "
                             f"got {weights.shape}")
        if shape is not None and weights.shape[:2] != shape:
            raise ValueError(f"example {example.name!r} has {weights.shape[:2]} layers and heads, "
                             f"the first example {shape}")
        if not np.all(np.isfinite(weights)) or weights.min() < 0 or weights.max() > 1:
            raise ValueError(f"example {example.name!r}: attention weights must lie in [0, 1]")
        shape = weights.shape[:2]
        stored.append({"name": example.name, "queries": list(example.queries), "keys": list(example.keys),
                       "weights": np.rint(weights * PRECISION).astype(int).tolist()})
    layers = list(layer_names or [f"layer {l + 1}" for l in range(shape[0])])
    heads = list(head_names or [f"head {h + 1}" for h in range(shape[1])])
    if (len(layers), len(heads)) != shape:
        raise ValueError(f"{len(layers)} layer names and {len(heads)} head names for {shape} layers and heads")
    data = {"title": title, "precision": PRECISION, "hint": HINT, "colours": COLOURS, "bar_label": BAR_LABEL,
            "layers": layers, "heads": heads, "examples": stored}
    first = np.asarray(stored[0]["weights"][0][0]) / PRECISION
    label = f"{title}: " + (f"{examples[0].name}, " if len(examples) > 1 else "") + f"{layers[0]}, {heads[0]}"
    return Explorer(data, label, _svg(examples[0].queries, examples[0].keys, first, label))


def toy_weights(query: np.ndarray, key: np.ndarray, scale: bool = True, causal: bool = False) -> np.ndarray:
    """softmax(Q Kᵀ [/ √d_k]) with future keys hidden when ``causal``: what the toy explorer draws, ``(T, T)``."""
    scores = np.asarray(query, dtype=float) @ np.asarray(key, dtype=float).T
    if scale:
        scores = scores / np.sqrt(np.shape(query)[-1])
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape, dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def toy_explorer(title: str, tokens: Sequence[str], query: np.ndarray, key: np.ndarray) -> Explorer:
    """An explorer of one self-attention map that the page computes from ``query`` and ``key``.

    Args:
        tokens: the ``T`` tokens; query, key: ``(T, d_k)`` (stored rounded to 4 decimals, and
            the page's weights are computed from the stored values).
    """
    query, key = np.round(np.asarray(query, dtype=float), 4), np.round(np.asarray(key, dtype=float), 4)
    if not len(tokens) or query.ndim != 2 or query.shape != key.shape or query.shape[0] != len(tokens):
        raise ValueError(f"query and key must both be (T, d_k) with T = {len(tokens)} tokens, "
                         f"got {query.shape} and {key.shape}")
    data = {"title": title, "hint": HINT, "colours": COLOURS, "bar_label": BAR_LABEL,
            "toy": {"tokens": list(tokens), "query": query.tolist(), "key": key.tolist()}}
    label = f"{title}: scaled by 1/√d_k, no mask"
    return Explorer(data, label, _svg(tokens, tokens, toy_weights(query, key), label))
