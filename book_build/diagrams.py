"""The book's architecture diagrams, drawn by code as SVG.

Every figure of the book that is a *picture of the architecture* (not a plot of
numbers) comes from one function here that returns the SVG text: the
encoder–decoder with and without attention, queries, keys and values with
their shapes, multi-head attention, the encoder and decoder blocks, the whole
Transformer, BERT / GPT / ViT side by side and ViT's patches.  The files in
``book/figures/`` are written by::

    python scripts/diagrams.py book/figures

and a test regenerates them and compares the bytes, so an edit here must be
followed by that command.

How the drawings are made:

* plain string building, no dependency: a :class:`Drawing` collects SVG
  elements from a few primitives (a labelled rounded :meth:`~Drawing.box`, an
  :meth:`~Drawing.arrow` with an arrowhead marker, :meth:`~Drawing.text` and
  :meth:`~Drawing.shape` for a tensor shape such as ``(B, T, d_model)``, a
  dashed :meth:`~Drawing.frame` for a block repeated ``N ×``, a residual
  :meth:`~Drawing.add`, a :meth:`~Drawing.grid` of cells for masks and pixels);
* the same bytes on every run: coordinates are rounded and written by one
  function, and nothing depends on time, randomness or the machine;
* text stays text (``<text>`` elements, selectable and searchable), in a
  common font stack; ``x_{k}`` and ``x^{T}`` become sub- and superscripts;
* every figure has a ``viewBox`` (it scales to the page), a ``<title>`` and a
  ``<desc>`` (what a screen reader says), and a white background so that it
  reads the same on the book's light and dark themes;
* one palette by role, Paul Tol's "light" scheme (designed to fill labelled
  cells, distinct for colour-blind readers, dark text readable on every
  colour): the colour says what a box *is*, and its label always says it too.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

WIDTH = 760                      # every figure: about the width of the book's text column
SHOWN_WIDTH = 672                # ... which the site shows at most this wide (CSS px, at 1280 px)
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
LABEL_SIZE = 14                  # box labels
SMALL_SIZE = 12                  # shapes, notes, tokens
TITLE_SIZE = 15                  # column titles
#: a sub- or superscript's size, as a share of its text's: with SMALL_SIZE text it stays
#: 9 px or more where the site shows the figure (12 * 0.85 * 672 / 760 = 9.02)
SCRIPT_SHARE = 0.85
INK = "#222222"                  # text and outlines
MUTED = "#555555"                # shapes and notes
ARROW = "#444444"
FAINT = "#BBBBBB"


@dataclass(frozen=True)
class Colour:
    fill: str
    stroke: str


#: Fill by role (Paul Tol's light scheme), with a darker outline of the same hue.
PALETTE = {
    "embedding": Colour("#77AADD", "#3A6E9E"),     # light blue: token/patch embeddings, positions
    "attention": Colour("#EE8866", "#B0502E"),     # orange: attention sub-layers, their projections
    "feed-forward": Colour("#44BB99", "#237A62"),  # mint: position-wise feed-forward network
    "norm": Colour("#EEDD88", "#A8962E"),          # light yellow: layer norm, residual addition
    "output": Colour("#FFAABB", "#B85C70"),        # pink: classifier, softmax, predictions
    "recurrent": Colour("#99DDFF", "#3E8DB3"),     # light cyan: RNN cells and states
    "tensor": Colour("#FFFFFF", "#666666"),        # white: a tensor, the data itself
    "neutral": Colour("#DDDDDD", "#777777"),       # pale grey: anything else
}


def number(value: float) -> str:
    """A coordinate as SVG text: at most two decimals, no trailing zeros (stable bytes)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_width(text: str, size: float = LABEL_SIZE) -> float:
    """About how wide ``text`` is drawn (DejaVu Sans, the widest font of the stack)."""
    plain = re.sub(r"[_^]\{([^}]*)\}", lambda m: "\0" * len(m[1]), text)
    small = plain.count("\0")
    return 0.6 * size * (len(plain) - small) + 0.45 * size * small


def rich_text(text: str, size: float) -> str:
    """``text`` as SVG character data, with ``a_{sub}`` and ``a^{sup}`` lowered or raised.

    Each run at another height is a ``<tspan>`` with a relative ``dy`` (which
    every renderer supports, unlike ``baseline-shift``); the text after it is
    a ``<tspan>`` moving back to the baseline.
    """
    out, position, offset = [], 0, 0.0

    def run(content: str, target: float, small: bool) -> None:
        nonlocal offset
        if not content:
            return
        attributes = f' dy="{number(target - offset)}"' if target != offset else ""
        attributes += f' font-size="{number(SCRIPT_SHARE * size)}"' if small else ""
        out.append(f"<tspan{attributes}>{escape(content)}</tspan>" if attributes
                   else escape(content))
        offset = target

    for match in re.finditer(r"([_^])\{([^}]*)\}", text):
        run(text[position:match.start()], 0.0, small=False)
        run(match[2], 0.3 * size if match[1] == "_" else -0.4 * size, small=True)
        position = match.end()
    run(text[position:], 0.0, small=False)
    return "".join(out)


@dataclass(frozen=True)
class Box:
    """A drawn rectangle: where its edges are, to attach arrows to."""

    x: float
    y: float
    w: float
    h: float

    @property
    def left(self) -> float:
        return self.x

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def top(self) -> float:
        return self.y

    @property
    def bottom(self) -> float:
        return self.y + self.h

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


class Drawing:
    """An SVG picture built from a few primitives; :meth:`svg` returns its text."""

    def __init__(self, name: str, height: float, title: str, description: str,
                 width: float = WIDTH):
        self.name, self.width, self.height = name, width, height
        self.title, self.description = title, description
        self.elements: list[str] = []
        self.arrow_colours: set[str] = set()   # one arrowhead marker per colour used

    # --- primitives ------------------------------------------------------------

    def text(self, x: float, y: float, text: str, *, size: float = SMALL_SIZE,
             anchor: str = "middle", bold: bool = False, italic: bool = False,
             colour: str = INK, halo: bool = False) -> None:
        """Text centred vertically on ``y`` (``\\n`` starts a new line); ``halo``: a white
        outline that keeps it readable over lines."""
        lines = text.split("\n")
        for index, line in enumerate(lines):
            baseline = y + 0.35 * size + (index - (len(lines) - 1) / 2) * 1.25 * size
            style = "".join([' font-weight="bold"' if bold else "",
                             ' font-style="italic"' if italic else "",
                             f' fill="{colour}"' if colour != INK else "",
                             ' stroke="#FFFFFF" stroke-width="4" paint-order="stroke"'
                             if halo else ""])
            self.elements.append(
                f'<text x="{number(x)}" y="{number(baseline)}" font-size="{number(size)}" '
                f'text-anchor="{anchor}"{style}>{rich_text(line, size)}</text>')

    def shape(self, x: float, y: float, shape: str, anchor: str = "start") -> None:
        """A tensor's shape, e.g. ``(B, T, d_{model})``, in the muted colour of notes."""
        self.text(x, y, shape, size=SMALL_SIZE, anchor=anchor, colour=MUTED)

    def box(self, x: float, y: float, w: float, h: float, label: str = "",
            role: str = "neutral", *, size: float = LABEL_SIZE, bold: bool = False,
            dashed: bool = False, radius: float = 6) -> Box:
        """A rounded rectangle filled by ``role`` (see :data:`PALETTE`), its label centred."""
        colour = PALETTE[role]
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        self.elements.append(
            f'<rect x="{number(x)}" y="{number(y)}" width="{number(w)}" height="{number(h)}" '
            f'rx="{number(radius)}" fill="{colour.fill}" stroke="{colour.stroke}" '
            f'stroke-width="1.5"{dash}/>')
        if label:
            self.text(x + w / 2, y + h / 2, label, size=size, bold=bold)
        return Box(x, y, w, h)

    def centred_box(self, cx: float, cy: float, w: float, h: float, label: str = "",
                    role: str = "neutral", **options) -> Box:
        return self.box(cx - w / 2, cy - h / 2, w, h, label, role, **options)

    def line(self, *points: tuple[float, float], colour: str = ARROW, width: float = 1.5,
             dashed: bool = False, arrow: bool = False) -> None:
        """A polyline through ``points``; with ``arrow``, an arrowhead at the last point."""
        path = " ".join(f"{'M' if i == 0 else 'L'}{number(x)},{number(y)}"
                        for i, (x, y) in enumerate(points))
        extra = ' stroke-dasharray="5 4"' if dashed else ""
        if arrow:
            self.arrow_colours.add(colour)
            extra += f' marker-end="url(#{self._marker(colour)})"'

        self.elements.append(f'<path d="{path}" fill="none" stroke="{colour}" '
                             f'stroke-width="{number(width)}" stroke-linejoin="round"{extra}/>')

    def arrow(self, *points: tuple[float, float], colour: str = ARROW, width: float = 1.5,
              dashed: bool = False) -> None:
        """An arrow along ``points``, its head's tip exactly at the last point."""
        self.line(*points, colour=colour, width=width, dashed=dashed, arrow=True)

    def frame(self, x: float, y: float, w: float, h: float, label: str,
              label_side: str = "left", label_at: float = 0.5) -> Box:
        """A dashed frame around a group repeated ``N ×``, with that label outside it
        (``label_at``: how far down the side, 0 top to 1 bottom)."""
        self.elements.append(
            f'<rect x="{number(x)}" y="{number(y)}" width="{number(w)}" height="{number(h)}" '
            f'rx="10" fill="#F4F4F4" stroke="#888888" stroke-width="1.5" stroke-dasharray="6 4"/>')
        if label:
            label_y = y + label_at * h
            if label_side == "left":
                self.text(x - 8, label_y, label, size=LABEL_SIZE, anchor="end", bold=True)
            else:
                self.text(x + w + 8, label_y, label, size=LABEL_SIZE, anchor="start", bold=True)
        return Box(x, y, w, h)

    def circle(self, cx: float, cy: float, r: float, role: str | None = None) -> Box:
        """A circle filled by ``role``; without one, a small dot in the colour of arrows."""
        paint = (f'fill="{PALETTE[role].fill}" stroke="{PALETTE[role].stroke}" stroke-width="1.5"'
                 if role else f'fill="{ARROW}"')
        self.elements.append(f'<circle cx="{number(cx)}" cy="{number(cy)}" r="{number(r)}" '
                             f'{paint}/>')
        return Box(cx - r, cy - r, 2 * r, 2 * r)

    def add(self, cx: float, cy: float, r: float = 9) -> Box:
        """The residual addition: a circle with a plus."""
        self.circle(cx, cy, r, "norm")
        self.line((cx - r + 3, cy), (cx + r - 3, cy), colour=INK, width=1.5)
        self.line((cx, cy - r + 3), (cx, cy + r - 3), colour=INK, width=1.5)
        return Box(cx - r, cy - r, 2 * r, 2 * r)

    def grid(self, x: float, y: float, cell: float, shades: list[list[float]],
             colour: str = "#333333") -> Box:
        """Cells shaded by ``shades[row][column]`` in 0..1 (0: white), outlined in grey."""
        rgb = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        for row, values in enumerate(shades):
            for column, value in enumerate(values):
                mixed = "#" + "".join(f"{round(255 - value * (255 - c)):02X}" for c in rgb)
                self.elements.append(
                    f'<rect x="{number(x + column * cell)}" y="{number(y + row * cell)}" '
                    f'width="{number(cell)}" height="{number(cell)}" fill="{mixed}" '
                    f'stroke="#999999" stroke-width="0.75"/>')
        rows, columns = len(shades), max(len(v) for v in shades)
        return Box(x, y, columns * cell, rows * cell)

    # --- output ----------------------------------------------------------------

    def _marker(self, colour: str) -> str:
        return f"{self.name}-arrow-{colour.lstrip('#').lower()}"

    def _markers(self) -> list[str]:
        # refX=10: the tip of the head lies on the path's last point (a box's edge)
        return [f'<marker id="{self._marker(colour)}" viewBox="0 0 10 10" refX="10" refY="5" '
                f'markerWidth="6.5" markerHeight="6.5" orient="auto-start-reverse">'
                f'<path d="M0,0.5 L10,5 L0,9.5 z" fill="{colour}"/></marker>'
                for colour in sorted(self.arrow_colours)]

    def svg(self) -> str:
        width, height = number(self.width), number(self.height)
        head = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" '
            f'aria-labelledby="{self.name}-title {self.name}-desc" font-family="{FONT}" '
            f'fill="{INK}">',
            f'<title id="{self.name}-title">{escape(self.title)}</title>',
            f'<desc id="{self.name}-desc">{escape(self.description)}</desc>',
            "<defs>", *self._markers(), "</defs>",
            f'<rect width="{width}" height="{height}" fill="#FFFFFF"/>',
        ]
        return "\n".join([*head, *self.elements, "</svg>"]) + "\n"


# --- helpers shared by several figures ------------------------------------------------

def mask_shades(size: int, causal: bool) -> list[list[float]]:
    """An attention mask as cell shades: 1 where query ``i`` may attend to key ``j``."""
    return [[1.0 if (j <= i or not causal) else 0.0 for j in range(size)] for i in range(size)]


#: An 8 × 8 handwritten-looking "3", as grey levels in 0..1 (chapter 14's digits are 8 × 8).
DIGIT_THREE = [
    [0.0, 0.6, 1.0, 1.0, 1.0, 0.8, 0.1, 0.0],
    [0.0, 0.1, 0.0, 0.0, 0.2, 1.0, 0.6, 0.0],
    [0.0, 0.0, 0.0, 0.0, 0.3, 1.0, 0.4, 0.0],
    [0.0, 0.0, 0.5, 1.0, 1.0, 0.7, 0.0, 0.0],
    [0.0, 0.0, 0.0, 0.1, 0.3, 1.0, 0.5, 0.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.7, 0.9, 0.0],
    [0.0, 0.5, 0.3, 0.2, 0.5, 1.0, 0.5, 0.0],
    [0.0, 0.4, 1.0, 1.0, 0.9, 0.3, 0.0, 0.0],
]


def patch(image: list[list[float]], index: int, size: int = 2) -> list[list[float]]:
    """Patch ``index`` (row-major) of a square ``image``, ``size`` × ``size`` pixels."""
    per_row = len(image[0]) // size
    row, column = divmod(index, per_row)
    return [values[column * size:(column + 1) * size]
            for values in image[row * size:(row + 1) * size]]


def residual_around(d: Drawing, start: tuple[float, float], add: Box, side_x: float) -> None:
    """The residual path: from ``start`` on the trunk, out to ``side_x``, back into the ⊕."""
    x, y = start
    entry = add.right if side_x > add.cx else add.left
    d.line((x, y), (side_x, y), (side_x, add.cy))
    d.arrow((side_x, add.cy), (entry, add.cy))
    d.circle(x, y, 2.5)


@dataclass(frozen=True)
class Sublayer:
    """One sub-layer of a Transformer block, as :func:`draw_sublayer` draws it."""

    label: str
    role: str
    forks: tuple[float, ...] = (0,)   # x offsets of the arrows entering it from below


SELF_ATTENTION_FORKS = (-40, 0, 40)   # queries, keys and values: three arrows, as in the paper


@dataclass(frozen=True)
class Spacing:
    """Heights in a drawn block: sub-layer and norm boxes, gaps between parts."""

    sublayer: float = 36
    norm: float = 26
    gap: float = 20      # between two parts of a sub-layer
    entry: float = 26    # from where the residual branches off to the first part

    def block_height(self, count: int) -> float:
        """How tall :func:`draw_block` draws ``count`` sub-layers."""
        return count * (self.entry + self.sublayer + self.norm + 18 + 2 * self.gap)


BLOCK = Spacing()
COMPACT = Spacing(sublayer=32, norm=24, gap=15, entry=24)   # the whole Transformer


def draw_sublayer(d: Drawing, cx: float, y: float, sublayer: Sublayer, *, pre_ln: bool,
                  width: float = 220, spacing: Spacing = BLOCK) -> tuple[Box, float]:
    """A sub-layer with its residual connection and layer norm, drawn upwards from ``y``.

    post-LN: sub-layer, add, norm (``LN(x + F(x))``); pre-LN: norm, sub-layer,
    add (``x + F(LN(x))``).  Returns the sub-layer's box (to attach more
    arrows) and the ``y`` where the output leaves, at the top.
    """
    branch = y - 8
    top = y - spacing.entry
    order = ("norm", "sublayer", "add") if pre_ln else ("sublayer", "add", "norm")
    below, drawn = (cx, y), {}
    for part in order:
        if part == "sublayer":
            box = d.centred_box(cx, top - spacing.sublayer / 2, width, spacing.sublayer,
                                sublayer.label, sublayer.role)
            d.line(below, (cx, box.bottom + 10))
            for dx in sublayer.forks:
                d.arrow((cx, box.bottom + 10), (cx + dx, box.bottom + 10), (cx + dx, box.bottom))
        elif part == "norm":
            box = d.centred_box(cx, top - spacing.norm / 2, 132, spacing.norm, "Layer norm",
                                "norm")
            d.arrow(below, (cx, box.bottom))
        else:
            box = d.add(cx, top - 9)
            d.arrow(below, (cx, box.bottom))
        drawn[part] = box
        below, top = (cx, box.top), box.top - spacing.gap
    residual_around(d, (cx, branch), drawn["add"], cx + width / 2 + 22)
    return drawn["sublayer"], below[1]


def draw_block(d: Drawing, cx: float, y: float, sublayers: list[Sublayer], *, pre_ln: bool,
               width: float = 220, spacing: Spacing = BLOCK) -> tuple[list[Box], float]:
    """Sub-layers one above the other, from ``y`` upwards; returns their boxes and the top."""
    boxes = []
    for sublayer in sublayers:
        box, y = draw_sublayer(d, cx, y, sublayer, pre_ln=pre_ln, width=width, spacing=spacing)
        boxes.append(box)
    return boxes, y


# --- the figures ---------------------------------------------------------------------

def seq2seq() -> str:
    """Chapter 1: the RNN encoder–decoder, whose decoder sees the source only through c."""
    d = Drawing("seq2seq", 300, "An RNN encoder–decoder without attention",
                "A bidirectional LSTM encoder reads the source words 'the old boat'. Only its "
                "final states, the forward LSTM's after 'boat' and the backward LSTM's after "
                "'the', form the vector c. The decoder LSTM starts from c and writes 'le bateau "
                "vieux </s>', one word per step, each step reading the previous word. c has the "
                "same size for every sentence: the bottleneck.")
    source, inputs, outputs = ["the", "old", "boat"], ["<s>", "le", "bateau", "vieux"], \
        ["le", "bateau", "vieux", "</s>"]
    cell_w, cell_h = 64, 34
    encoder = [d.box(52 + 96 * i, 170, cell_w, cell_h, f"h_{{{i + 1}}}", "recurrent")
               for i in range(3)]
    for cell, word in zip(encoder, source):
        d.text(cell.cx, 262, word, size=LABEL_SIZE)
        d.arrow((cell.cx, 250), (cell.cx, cell.bottom))
    for a, b in zip(encoder, encoder[1:]):
        d.arrow((a.right, a.top + 10), (b.left, b.top + 10))       # forward LSTM
        d.arrow((b.left, b.bottom - 10), (a.right, a.bottom - 10))  # backward LSTM
    d.text(encoder[1].cx, 288, "encoder: bidirectional LSTM (→ forward, ← backward)",
           colour=MUTED)

    c = d.box(338, 132, 62, 72, "c", "recurrent", size=18, bold=True)
    last, first = encoder[-1], encoder[0]
    d.arrow((last.right, last.top + 10), (c.left, last.top + 10))
    d.arrow((first.left, first.bottom - 10), (first.left - 14, first.bottom - 10),
            (first.left - 14, 146), (c.left, 146))

    decoder = [d.box(440 + 80 * i, 66, cell_w, cell_h, f"s_{{{i + 1}}}", "recurrent")
               for i in range(4)]
    d.arrow((c.cx, c.top), (c.cx, decoder[0].cy), (decoder[0].left, decoder[0].cy))
    for a, b in zip(decoder, decoder[1:]):
        d.arrow((a.right, a.cy), (b.left, b.cy))
    for cell, word_in, word_out in zip(decoder, inputs, outputs):
        d.text(cell.cx, 138, word_in, size=LABEL_SIZE)
        d.arrow((cell.cx, 126), (cell.cx, cell.bottom))
        d.arrow((cell.cx, cell.top), (cell.cx, 36))
        d.text(cell.cx, 24, word_out, size=LABEL_SIZE, bold=True)
    d.text(decoder[0].left, 166, "decoder: an LSTM that starts from c", anchor="start",
           colour=MUTED)
    d.text(c.right + 14, 214, "the bottleneck: all the decoder knows\nof the source is c, "
           "one vector of fixed size", anchor="start", italic=True)
    return d.svg()


def seq2seq_attention() -> str:
    """Chapter 3: a context vector per output step, a weighted sum of all encoder states."""
    d = Drawing("seq2seq-attention", 400, "An RNN encoder–decoder with additive attention",
                "The bidirectional LSTM encoder keeps its states h1, h2, h3 for the source words "
                "'the old boat'. Before each output step i, the decoder forms its own context "
                "vector c_i, a weighted sum of all three states, and reads it together with the "
                "previous word. Drawn in detail for step 3, which writes 'vieux': the weights "
                "come from scoring the previous decoder state s2 against every h_j, and most of "
                "the weight goes to h2, the state at 'old'.")
    source, inputs, outputs = ["the", "old", "boat"], ["<s>", "le", "bateau", "vieux"], \
        ["le", "bateau", "vieux", "</s>"]
    weights = [0.08, 0.84, 0.08]           # an alignment of step 3 ("vieux") with the source
    shown = 2                              # the step drawn in detail
    orange = PALETTE["attention"].stroke

    encoder = [d.box(148 + 140 * j, 290, 64, 34, f"h_{{{j + 1}}}", "recurrent")
               for j in range(3)]
    for cell, word in zip(encoder, source):
        d.arrow((cell.cx, 352), (cell.cx, cell.bottom))
        d.text(cell.cx, 364, word, size=LABEL_SIZE)
    for a, b in zip(encoder, encoder[1:]):
        d.arrow((a.right, a.top + 10), (b.left, b.top + 10))
        d.arrow((b.left, b.bottom - 10), (a.right, a.bottom - 10))
    d.text(encoder[1].cx, 388, "encoder: bidirectional LSTM, every state h_{j} kept", colour=MUTED)

    decoder = [d.box(188 + 140 * i, 70, 64, 34, f"s_{{{i + 1}}}", "recurrent") for i in range(4)]
    places = [Box(cell.cx - 38, 169, 44, 30) for cell in decoder]      # the context vectors
    for i, place in enumerate(places):              # every context reads every state ...
        if i != shown:
            for j, state in enumerate(encoder):
                d.line((state.cx, state.top), (place.cx + 12 * (j - 1), place.bottom),
                       colour=FAINT, width=1)
    for j, (state, weight) in enumerate(zip(encoder, weights)):   # ... with these weights
        end = (places[shown].cx + 12 * (j - 1), places[shown].bottom)
        d.line((state.cx, state.top), end, colour=orange, width=1 + 7 * weight)
        middle = ((state.cx + end[0]) / 2, (state.top + end[1]) / 2 + 14)
        d.text(*middle, f"{weight:.2f}", colour=orange, bold=True, halo=True)
    contexts = [d.box(p.x, p.y, p.w, p.h, f"c_{{{i + 1}}}", "attention")
                for i, p in enumerate(places)]

    d.text(20, decoder[0].cy, "s_{0}", size=LABEL_SIZE, anchor="start")
    d.arrow((46, decoder[0].cy), (decoder[0].left, decoder[0].cy))
    for a, b in zip(decoder, decoder[1:]):
        d.arrow((a.right, a.cy), (b.left, b.cy))
    for cell, context, word_in, word_out in zip(decoder, contexts, inputs, outputs):
        d.arrow((context.cx, context.top), (context.cx, cell.bottom))
        d.text(cell.cx + 18, 142, word_in, size=LABEL_SIZE)
        d.arrow((cell.cx + 18, 130), (cell.cx + 18, cell.bottom))
        d.arrow((cell.cx, cell.top), (cell.cx, 38))
        d.text(cell.cx, 26, word_out, size=LABEL_SIZE, bold=True)
    previous, context = decoder[shown - 1], contexts[shown]
    d.arrow((previous.right, previous.bottom - 6), (context.left, context.cy), colour=orange,
            dashed=True)
    d.text(previous.right + 22, 116, "query s_{2}", anchor="start", colour=orange)
    d.text(528, 316, "c_{3} = Σ_{j} α_{3j} h_{j}:\nthe weights α_{3j} (line widths)\n"
           "are a softmax of the scores\nof s_{2} against every h_{j}", anchor="start",
           colour=MUTED)
    return d.svg()


def queries_keys_values() -> str:
    """Chapter 5: self-attention's projections and products, with the shape of every tensor."""
    d = Drawing("qkv", 540, "Self-attention: queries, keys and values, with their shapes",
                "The token vectors X, of shape (T, d_model), are multiplied by three learned "
                "matrices W_Q, W_K and W_V, giving the queries Q of shape (T_q, d_k), the keys K "
                "of shape (T_k, d_k) and the values V of shape (T_k, d_v). Q times K transposed, "
                "divided by the square root of d_k, gives the scores, of shape (T_q, T_k); a "
                "softmax over each row turns them into the attention weights A, each row summing "
                "to 1; A times V gives the output, of shape (T_q, d_v). In self-attention "
                "queries, keys and values all come from X, so T_q = T_k = T.")
    columns = {"Q": 130, "K": 330, "V": 530}
    x = d.centred_box(columns["K"], 34, 120, 36, "X", "embedding", bold=True)
    d.shape(x.right + 10, x.cy, "(T, d_{model}): one row per token")
    d.line((x.cx, x.bottom), (x.cx, 72))
    d.line((columns["Q"], 72), (columns["V"], 72))
    tensors = {}
    for name, cx in columns.items():
        d.arrow((cx, 72), (cx, 96))
        weight = d.centred_box(cx, 114, 84, 36, f"W_{{{name}}}", "attention")
        d.arrow((cx, weight.bottom), (cx, 162))
        tensors[name] = d.centred_box(cx, 180, 44, 36, name, "tensor", bold=True)
    d.shape(tensors["Q"].right + 10, 180, "(T_{q}, d_{k})")
    d.shape(tensors["K"].right + 10, 180, "(T_{k}, d_{k})")
    d.shape(tensors["V"].right + 10, 180, "(T_{k}, d_{v})")
    for name, width in (("Q", "d_{k}"), ("K", "d_{k}"), ("V", "d_{v}")):
        d.shape(columns[name] + 52, 114, f"(d_{{model}}, {width})")

    centre = (columns["Q"] + columns["K"]) / 2
    scores = d.centred_box(centre, 270, 150, 40, "Q K^{T} / √d_{k}", "attention")
    q, k = tensors["Q"], tensors["K"]
    d.arrow((q.cx, q.bottom), (q.cx, scores.cy), (scores.left, scores.cy))
    d.arrow((k.cx, k.bottom), (k.cx, scores.cy), (scores.right, scores.cy))
    d.arrow((centre, scores.bottom), (centre, 326))
    d.shape(centre + 8, 308, "scores (T_{q}, T_{k})")
    softmax = d.centred_box(centre, 344, 150, 36, "softmax", "attention")
    d.shape(softmax.right + 10, 344, "over each row")
    d.arrow((centre, softmax.bottom), (centre, 436))
    d.shape(centre + 8, 392, "weights A (T_{q}, T_{k})")
    d.shape(centre + 8, 410, "each row sums to 1")
    heat = [[0.7, 0.1, 0.1, 0.1], [0.2, 0.5, 0.2, 0.1], [0.1, 0.1, 0.2, 0.6]]
    d.grid(centre - 86, 382, 12, heat, colour=PALETTE["attention"].stroke)
    product = d.centred_box(centre, 454, 150, 36, "A V", "attention")
    v = tensors["V"]
    d.arrow((v.cx, v.bottom), (v.cx, product.cy), (product.right, product.cy))
    d.arrow((centre, product.bottom), (centre, 500))
    out = d.centred_box(centre, 518, 100, 36, "output", "tensor", bold=True)
    d.shape(out.right + 10, 518, "(T_{q}, d_{v}): a new vector per query")
    d.text(columns["V"] + 26, 330, "In self-attention, Q, K\nand V all come from X:\n"
           "T_{q} = T_{k} = T.\nCross-attention (ch. 10)\ntakes K and V from\n"
           "another sequence.", anchor="start", colour=MUTED)
    return d.svg()


def multi_head_attention() -> str:
    """Chapter 6: project, split into heads, attend in every head at once, merge, project back."""
    d = Drawing("multi-head", 610, "Multi-head attention: split, attend, merge",
                "The input X of shape (B, T, d_model) is projected by W_Q, W_K and W_V, each "
                "giving (B, T, N·d_k) with d_k = d_model / N. Splitting reshapes each into "
                "(B, N, T, d_k): N heads. Scaled dot-product attention runs in all heads at once, "
                "with attention weights of shape (B, N, T, T) and outputs (B, N, T, d_k). "
                "Merging concatenates the heads back into (B, T, N·d_k), and W_O projects to the "
                "output, (B, T, d_model).")
    columns = {"Q": 150, "K": 380, "V": 610}
    x = d.centred_box(columns["K"], 30, 120, 36, "X", "embedding", bold=True)
    d.shape(x.right + 10, x.cy, "(B, T, d_{model})")
    d.line((x.cx, x.bottom), (x.cx, 66))
    d.line((columns["Q"], 66), (columns["V"], 66))
    splits = {}
    for name, cx in columns.items():
        d.arrow((cx, 66), (cx, 86))
        weight = d.centred_box(cx, 104, 84, 36, f"W_{{{name}}}", "attention")
        d.arrow((cx, weight.bottom), (cx, 176))
        d.shape(cx + 8, 149, "(B, T, N·d_{k})")
        splits[name] = d.centred_box(cx, 194, 120, 36, "split heads", "neutral")

    stack = Box(225, 280, 310, 56)
    for offset in (16, 8):                   # the heads behind the first one
        d.box(stack.x + offset, stack.y - offset, stack.w, stack.h, "", "attention")
    heads = d.box(stack.x, stack.y, stack.w, stack.h,
                  "scaled dot-product attention\nin each of the N heads", "attention")
    d.shape(heads.right + 12, heads.bottom + 26, "weights (B, N, T, T):")
    d.shape(heads.right + 12, heads.bottom + 44, "one (T, T) map per head")
    q, k, v = splits["Q"], splits["K"], splits["V"]
    d.arrow((q.cx, q.bottom), (q.cx, heads.cy), (heads.left, heads.cy))
    d.arrow((k.cx, k.bottom), (k.cx, heads.top - 16))
    d.arrow((v.cx, v.bottom), (v.cx, heads.cy), (heads.right + 16, heads.cy))
    d.shape(q.cx + 8, 240, "(B, N, T, d_{k})")
    d.shape(k.cx + 8, 240, "(B, N, T, d_{k})")
    d.shape(v.cx + 8, 240, "(B, N, T, d_{k})")

    d.arrow((heads.cx, heads.bottom), (heads.cx, 402))
    d.shape(heads.cx + 8, 376, "(B, N, T, d_{k})")
    merge = d.centred_box(heads.cx, 420, 236, 36, "merge heads (concatenate)", "neutral")
    d.arrow((merge.cx, merge.bottom), (merge.cx, 486))
    d.shape(merge.cx + 8, 462, "(B, T, N·d_{k})")
    output = d.centred_box(merge.cx, 504, 84, 36, "W_{O}", "attention")
    d.arrow((output.cx, output.bottom), (output.cx, 562))
    result = d.centred_box(output.cx, 580, 120, 36, "output", "tensor", bold=True)
    d.shape(result.right + 10, result.cy, "(B, T, d_{model})")

    # What splitting does to one token's features: N·d_k numbers -> N rows of d_k.
    shades = [0.95, 0.7, 0.45, 0.2]
    cell, left, top = 12, 36, 430
    d.text(left, top - 20, "one token, N = 4, d_{k} = 3:", anchor="start", colour=MUTED)
    d.grid(left, top, cell, [[shades[i // 3] for i in range(12)]],
           colour=PALETTE["attention"].stroke)
    d.arrow((left + 6 * cell, top + cell + 4), (left + 6 * cell, top + cell + 26))
    d.text(left + 6 * cell + 8, top + cell + 15, "split", anchor="start", colour=MUTED)
    for head in range(4):
        d.grid(left + 3 * cell, top + cell + 32 + head * (cell + 3), cell, [[shades[head]] * 3],
               colour=PALETTE["attention"].stroke)
        d.text(left + 6 * cell + 6, top + cell + 32 + head * (cell + 3) + cell / 2,
               f"head {head + 1}", anchor="start", colour=MUTED)
    d.text(heads.right + 12, 486, "d_{k} = d_{model} / N:\nN heads cost about as\n"
           "much as one head\nof full width", anchor="start", colour=MUTED)
    return d.svg()


ENCODER_SUBLAYERS = [Sublayer("Multi-head self-attention", "attention", SELF_ATTENTION_FORKS),
                     Sublayer("Feed-forward network", "feed-forward")]


def encoder_block() -> str:
    """Chapter 9 (and 8): the encoder block, post-LN as in the paper and pre-LN, side by side."""
    height = 118 + 8 + BLOCK.block_height(2) + 50
    d = Drawing("encoder-block", height, "The encoder block, post-LN and pre-LN",
                "Two versions of the same encoder block, drawn from the input at the bottom to "
                "the output at the top, both mapping (B, S, d_model) to (B, S, d_model). Left, "
                "post-LN as in the original Transformer: multi-head self-attention, add the "
                "residual, layer norm; then the feed-forward network, add the residual, layer "
                "norm. Right, pre-LN: layer norm, multi-head self-attention, add the residual; "
                "then layer norm, feed-forward network, add the residual; the residual stream "
                "itself is never normalised, and one final layer norm follows the last block. "
                "The block is repeated N times.")
    frame_top = 118
    start = frame_top + 8 + BLOCK.block_height(2)
    for cx, pre_ln, title in ((200, False, "post-LN:  LN(x + F(x))"),
                              (560, True, "pre-LN:  x + F(LN(x))")):
        d.text(cx, 18, title, size=TITLE_SIZE, bold=True)
        d.shape(cx, 44, "(B, S, d_{model})", anchor="middle")
        d.frame(cx - 124, frame_top, 272, start - frame_top + 6, "N ×")
        d.line((cx, height - 38), (cx, start))
        d.shape(cx, height - 24, "x: (B, S, d_{model})", anchor="middle")
        _, out = draw_block(d, cx, start, ENCODER_SUBLAYERS, pre_ln=pre_ln)
        if pre_ln:
            final = d.centred_box(cx, 86, 132, BLOCK.norm, "Layer norm", "norm")
            d.arrow((cx, out), (cx, final.bottom))
            d.arrow((cx, final.top), (cx, 56))
            d.text(final.right + 12, final.cy, "once, after\nthe last block", anchor="start",
                   colour=MUTED)
        else:
            d.arrow((cx, out), (cx, 56))
    return d.svg()


MASKED_SELF_ATTENTION = Sublayer("Masked multi-head self-attention", "attention",
                                 SELF_ATTENTION_FORKS)
CROSS_ATTENTION = Sublayer("Multi-head cross-attention", "attention")
FEED_FORWARD = Sublayer("Feed-forward network", "feed-forward")


def draw_memory(d: Drawing, cross: Box, x_from: float, y_from: float) -> None:
    """The encoder's output entering cross-attention from the left, as its keys and values."""
    d.line((x_from, y_from), (x_from, cross.cy))
    d.arrow((x_from, cross.cy), (cross.left, cross.cy))
    d.text((x_from + cross.left) / 2, cross.cy - 12, "keys, values", colour=MUTED)


def decoder_block() -> str:
    """Chapter 10: masked self-attention, cross-attention to the encoder, feed-forward (post-LN)."""
    start = 70 + BLOCK.block_height(3)
    height = start + 56
    d = Drawing("decoder-block", height, "The decoder block (post-LN)",
                "The decoder block, from its input at the bottom to its output at the top. The "
                "target prefix y, embeddings plus positions of shape (B, T, d_model), goes "
                "through masked multi-head self-attention, where a causal mask lets position t "
                "attend to positions 0 to t only; add the residual, layer norm. Then multi-head "
                "cross-attention: queries from the decoder, keys and values from the encoder's "
                "output m, of shape (B, S, d_model), with the source padding mask; add the "
                "residual, layer norm. Then the feed-forward network; add the residual, layer "
                "norm. The output has shape (B, T, d_model). The block is repeated N times.")
    cx, width = 380, 300
    frame = d.frame(cx - width / 2 - 16, 62, width + 70, start - 56, "N ×", label_at=0.8)
    d.line((cx, height - 34), (cx, start))
    d.shape(cx, height - 20, "y: target prefix, embedding + position, (B, T, d_{model})",
            anchor="middle")
    (masked, cross, _), out = draw_block(
        d, cx, start, [MASKED_SELF_ATTENTION, CROSS_ATTENTION, FEED_FORWARD],
        pre_ln=False, width=width)
    d.arrow((cx, out), (cx, 38))
    d.shape(cx, 24, "(B, T, d_{model})", anchor="middle")

    draw_memory(d, cross, 70, start + 8)
    d.text(70, start + 24, "m: encoder output\n(B, S, d_{model})", anchor="middle")
    d.text(cx - 8, cross.bottom + 12, "queries", colour=MUTED, anchor="end")
    icon = d.grid(frame.right + 10, masked.cy - 22.5, 9, mask_shades(5, causal=True),
                  colour=PALETTE["attention"].stroke)
    d.text(icon.right + 8, icon.cy, "causal mask:\nposition t sees\n0, …, t", anchor="start",
           colour=MUTED)
    d.text(frame.right + 10, cross.cy, "source padding\nmask", anchor="start", colour=MUTED)
    return d.svg()


def draw_positions(d: Drawing, cx: float, cy: float, label: str = "positions") -> Box:
    """The position encoding: a small circle holding a sine wave, its label to the left."""
    circle = d.circle(cx, cy, 11, "embedding")
    d.line(*((cx - 7 + i, cy - 4 * math.sin(math.pi * i / 7)) for i in range(15)), colour=INK)
    d.text(circle.left - 6, cy, label, anchor="end", colour=MUTED)
    return circle


def draw_embedding(d: Drawing, cx: float, top: float, label: str, tokens: str,
                   width: float = 220) -> float:
    """Tokens -> embedding -> + positions, drawn upwards; returns where the sum leaves."""
    embedding = d.box(cx - width / 2, top, width, 32, label, "embedding")
    d.shape(cx, embedding.bottom + 42, tokens, anchor="middle")
    d.arrow((cx, embedding.bottom + 30), (cx, embedding.bottom))
    total = d.add(cx, top - 22)
    d.arrow((cx, embedding.top), (cx, total.bottom))
    position = draw_positions(d, cx - 64, total.cy)
    d.arrow((position.right, total.cy), (total.left, total.cy))
    return total.top


def transformer() -> str:
    """Chapter 11: the whole encoder–decoder, as this book trains it (pre-LN)."""
    spacing, width = COMPACT, 240
    block_top = 188
    start = block_top + spacing.block_height(3)
    height = start + 156
    d = Drawing("transformer", height, "The Transformer, encoder and decoder",
                "The encoder–decoder Transformer as chapter 11 trains it, inputs at the bottom. "
                "Left, the encoder: source words, embedding times the square root of d_model, "
                "plus sinusoidal positions, then N encoder blocks, each layer norm, multi-head "
                "self-attention, add the residual, layer norm, feed-forward network, add the "
                "residual; a final layer norm gives the encoder output. Right, the decoder: the "
                "target words so far, starting with <s>, embedded the same way, then N decoder "
                "blocks, each with masked multi-head self-attention, multi-head cross-attention "
                "whose keys and values are the encoder output, and a feed-forward network, each "
                "after a layer norm and with a residual connection; then a final layer norm, a "
                "linear layer to the target vocabulary and a softmax: the probabilities of the "
                "next word at every position.")
    encoder_x, decoder_x = 190, 552
    for cx, sublayers, name, tokens in (
            (encoder_x, ENCODER_SUBLAYERS, "Encoder", "source words (B, S)"),
            (decoder_x, [MASKED_SELF_ATTENTION, CROSS_ATTENTION, FEED_FORWARD], "Decoder",
             "target words so far, from <s> (B, T)")):
        top = start - spacing.block_height(len(sublayers))
        # the decoder's label low, below the encoder output's way in
        d.frame(cx - width / 2 - 16, top - 8, width + 70, start - top + 12, "N ×",
                label_at=0.5 if cx == encoder_x else 0.82)
        entry = draw_embedding(d, cx, start + 46, "Embedding × √d_{model}", tokens, width)
        d.line((cx, entry), (cx, start))
        boxes, out = draw_block(d, cx, start, sublayers, pre_ln=True, width=width,
                                spacing=spacing)
        final = d.centred_box(cx, top - 36, 132, spacing.norm, "Layer norm", "norm")
        d.arrow((cx, out), (cx, final.bottom))
        d.text(cx, height - 14, name, size=TITLE_SIZE, bold=True)
        if cx == encoder_x:
            memory = final
        else:
            cross = boxes[1]
            linear = d.centred_box(cx, final.top - 40, width, 30, "Linear (to the vocabulary)",
                                   "output")
            d.arrow((cx, final.top), (cx, linear.bottom))
            softmax = d.centred_box(cx, linear.top - 40, 132, 30, "Softmax", "output")
            d.arrow((cx, linear.top), (cx, softmax.bottom))
            d.arrow((cx, softmax.top), (cx, 28))
            d.text(cx, 13, "next-word probabilities (B, T, vocabulary)", size=SMALL_SIZE,
                   bold=True)
    route = (encoder_x + width / 2 + 54 + decoder_x - width / 2 - 16) / 2   # between the frames
    d.line((memory.right, memory.cy), (route, memory.cy), (route, cross.cy))
    d.arrow((route, cross.cy), (cross.left, cross.cy))
    d.text((memory.right + route) / 2, memory.cy - 22, "encoder output:\nkeys and values",
           colour=MUTED)
    return d.svg()


def token_row(d: Drawing, cx: float, y: float, tokens: list[str], role: str = "tensor",
              gap: float = 5, height: float = 26, min_width: float = 26) -> list[Box]:
    """Tokens as small boxes in a row centred on ``cx`` (``y``: the row's top)."""
    widths = [max(min_width, text_width(t, SMALL_SIZE) + 12) for t in tokens]
    x = cx - (sum(widths) + gap * (len(tokens) - 1)) / 2
    boxes = []
    for token, w in zip(tokens, widths):
        boxes.append(d.box(x, y, w, height, token, role, size=SMALL_SIZE, radius=4))
        x += w + gap
    return boxes


def bert_gpt_vit() -> str:
    """Chapters 12-14: three Transformers, what each reads, how it masks, what it predicts."""
    d = Drawing("bert-gpt-vit", 306, "BERT, GPT and ViT side by side",
                "Three models built from the Transformer's blocks. BERT, encoder-only: the "
                "input text has some tokens replaced by [MASK], every token attends to every "
                "other token in both directions, and the model predicts the original tokens at "
                "the chosen positions, here 'cat'. GPT, decoder-only: the input is text, a causal "
                "mask lets each token attend only to itself and the tokens before it, and the "
                "model predicts the next token at every position. ViT, encoder-only: the input "
                "is a class token followed by image patches, every token attends to every "
                "other, and the class token's output predicts the image's class, here 3.")
    columns = (
        ("BERT: encoder only", 128, ["[CLS]", "the", "[MASK]", "sat", "[SEP]"],
         {2: "cat"}, False, "N × encoder block:\nno mask, every token\nsees every token",
         "input: text, 15 % of its tokens chosen,\nmost replaced by [MASK]; predicts\n"
         "the original chosen tokens"),
        ("GPT: decoder only", 380, ["T", "o", "␣", "b", "e"],
         {0: "o", 1: "␣", 2: "b", 3: "e", 4: ","}, True,
         "N × decoder block\n(no cross-attention):\na causal mask",
         "input: text (here characters);\npredicts the next token\nat every position"),
        ("ViT: encoder only", 626, ["[class]", "", "", "", ""],
         {0: "3"}, False, "L × encoder block:\nno mask, every token\nsees every token",
         "input: a class token and the\nimage's patches; predicts the\n"
         "class from the class token"),
    )
    for title, cx, tokens, predicted, causal, stack_text, note in columns:
        d.text(cx, 16, title, size=TITLE_SIZE, bold=True)
        inputs = token_row(d, cx, 196, tokens, min_width=32)
        if tokens[0] == "[class]":                 # the image patches, as pixels
            for index, box in enumerate(inputs[1:]):
                d.grid(box.cx - 9, box.cy - 9, 9, patch(DIGIT_THREE, index))
            d.text(inputs[-1].right + 5, inputs[-1].cy, "…", size=LABEL_SIZE, anchor="start")
        for index, box in enumerate(inputs):
            if tokens[index] == "[MASK]":           # the corrupted token, marked
                d.box(box.x - 3, box.y - 3, box.w + 6, box.h + 6, "", "output", dashed=True)
                d.box(box.x, box.y, box.w, box.h, "[MASK]", "tensor", size=SMALL_SIZE,
                      radius=4)
        stack = d.centred_box(cx, 136, 226, 76, "", "neutral")
        d.text(stack.x + 10, stack.cy, stack_text, anchor="start")
        d.grid(stack.right - 56, stack.cy - 22.5, 9, mask_shades(5, causal),
               colour=PALETTE["attention"].stroke)
        for box in inputs:
            d.arrow((box.cx, box.top), (box.cx, stack.bottom))
        for index, word in predicted.items():
            x = inputs[index].cx
            out = d.centred_box(x, 58, max(26, text_width(word, SMALL_SIZE) + 12), 26, word,
                                "output", size=SMALL_SIZE, radius=4)
            d.arrow((x, stack.top), (x, out.bottom))
        d.text(cx, 272, note, colour=MUTED)
    return d.svg()


def vit_patches() -> str:
    """Chapter 14: an image cut into patches, flattened, projected; class token and positions."""
    d = Drawing("vit-patches", 448, "The Vision Transformer's input: patches to tokens",
                "An 8 by 8 pixel image of a digit is cut into 16 patches of 2 by 2 pixels, read "
                "row by row. Each patch is flattened into 4 numbers and multiplied by the same "
                "learned matrix E, giving one token vector of width d_model per patch. A learned "
                "class token is put in front, and a learned position embedding is added at each "
                "of the 17 positions. The 17 vectors go through the Transformer encoder; only the "
                "class token's output goes through a final layer norm and a linear head, which "
                "gives the scores of the 10 digits.")
    cell = 14
    image = d.grid(20, 44, cell, DIGIT_THREE)
    for k in (2, 4, 6):                           # the patch boundaries
        d.line((image.x + k * cell, image.top), (image.x + k * cell, image.bottom),
               colour=PALETTE["attention"].stroke, width=2)
        d.line((image.x, image.y + k * cell), (image.right, image.y + k * cell),
               colour=PALETTE["attention"].stroke, width=2)
    d.text(image.cx, 24, "image, 8 × 8", bold=True)
    d.text(image.cx, image.bottom + 16, "P = 2: 16 patches", colour=MUTED)

    class_x, columns = 170, [205 + 31 * n for n in range(16)]
    d.arrow((image.right + 4, 59), (columns[0] - 14, 59))
    for n, x in enumerate(columns):
        d.text(x, 36, str(n), colour=MUTED)
        thumbnail = d.grid(x - 9, 50, 9, patch(DIGIT_THREE, n))
        values = [v for row in patch(DIGIT_THREE, n) for v in row]
        strip = d.grid(x - 4.5, 88, 9, [[v] for v in values])
        d.arrow((x, thumbnail.bottom + 2), (x, strip.top - 1))
    d.text(columns[-1] + 16, 106, "flat:\nP²C = 4", anchor="start", colour=MUTED)
    linear = d.box(columns[0] - 14, 140, columns[-1] - columns[0] + 28, 30,
                   "× E: one learned linear map for every patch, 4 → d_{model}", "embedding")
    for x in columns:
        d.arrow((x, 124), (x, linear.top))
        d.arrow((x, linear.bottom), (x, 194))
    tokens = [d.box(x - 8, 194, 16, 40, "", "embedding", radius=3) for x in [class_x, *columns]]
    d.text(class_x - 16, 214, "class token\n(learned)", anchor="end")
    positions = [d.box(x - 11, 250, 22, 22, str(n), "embedding", size=11, radius=3)
                 for n, x in enumerate([class_x, *columns])]
    for token, position in zip(tokens, positions):
        d.line((token.cx, token.bottom), (token.cx, position.top))
    d.text(class_x - 16, 261, "+ position\nembeddings", anchor="end")
    encoder = d.box(class_x - 14, 306, columns[-1] - class_x + 28, 36,
                    "Transformer encoder: L pre-LN encoder blocks (chapter 9)", "neutral")
    for position in positions:
        d.arrow((position.cx, position.bottom), (position.cx, encoder.top))
    d.shape(columns[-1] + 16, 261, "17 × d_{model}", anchor="start")
    head = d.centred_box(class_x + 60, 404, 184, 30, "Layer norm, linear head", "output")
    d.arrow((class_x, encoder.bottom), (class_x, head.top))
    d.arrow((head.right, head.cy), (head.right + 30, head.cy))
    d.text(head.right + 36, head.cy, "scores of the 10 digits", anchor="start", bold=True)
    for x in columns:
        d.line((x, encoder.bottom), (x, encoder.bottom + 12), colour=FAINT)
    d.text((columns[0] + columns[-1]) / 2 + 40, encoder.bottom + 24,
           "the patches' outputs are not used", colour=MUTED)
    return d.svg()


FIGURES = {
    "seq2seq.svg": seq2seq,
    "seq2seq_attention.svg": seq2seq_attention,
    "queries_keys_values.svg": queries_keys_values,
    "multi_head_attention.svg": multi_head_attention,
    "encoder_block.svg": encoder_block,
    "decoder_block.svg": decoder_block,
    "transformer.svg": transformer,
    "bert_gpt_vit.svg": bert_gpt_vit,
    "vit_patches.svg": vit_patches,
}


def write_figures(folder: Path | str) -> list[Path]:
    """Write every figure into ``folder`` (created if needed); return the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, draw in FIGURES.items():
        path = folder / filename
        path.write_text(draw(), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: python scripts/diagrams.py FOLDER  (writes the diagrams' SVG files there)", file=sys.stderr)
        return 2
    for path in write_figures(argv[0]):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
