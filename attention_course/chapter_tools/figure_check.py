"""The strict build's check that every figure a chapter shows can be read on the site.

Three things a reader cannot recover from a figure, each checked on every
figure a cell leaves open (the figures Jupyter shows when the cell ends):

* a heat map (an image or mesh of values: attention weights, similarities)
  without a colour bar, in its figure, for its colour scale: the colours
  would mean nothing.  One colour bar covers every panel that uses the same
  colour map and the same limits, so a grid of panels compared on one scale
  needs one bar; panels scaled each to its own maximum need one bar each
  (and are then better drawn on one scale).  Limits count as the same when
  they differ by less than :data:`SCALE_TOLERANCE` of the range (see
  :func:`same_scale`): two panels meant to share a scale may have maxima one
  rounding step apart on another CPU.  A picture (a digit, a photo)
  is not a heat map: an RGB image is recognised as one, a grey-level picture
  is marked with :func:`mark_picture`;
* text smaller than :data:`MIN_TEXT_PX` pixels where the site shows the
  figure: a figure's image is at most :data:`CONTENT_WIDTH_PX` wide at a
  1280 px window, and a wider image is scaled down to fit, its text with it;
* a fractional tick (2.5) on an axis of positions or token indices: the
  axes of a heat map drawn with ``imshow`` (its pixels are indices) and any
  axis marked with :func:`mark_positional`.

:func:`install` (called by :func:`~attention_course.chapter_tools.notebook.setup`
in the strict build only) makes IPython check the open figures at the end of
every cell, inside the cell, so that a failing figure fails the cell and the
build with an :class:`UnreadableFigure` that names the figure and its problem.
It also writes into every figure's PNG the size of its smallest text, in the
PNG's own pixels (:data:`SMALLEST_TEXT_KEY`, a ``tEXt`` entry): the site's
browser test reads it back to check the text wherever and however large the
page shows the image (on a phone, and enlarged).
"""

from __future__ import annotations

import ast
import os

import numpy as np

#: the widest the site shows a figure's image, in CSS pixels, at a 1280 px window: the article
#: is 752 px wide there, less its padding and the output's margins (tests/site/test_site_figures.py
#: measures it in the browser)
CONTENT_WIDTH_PX = 672
#: the smallest text a figure may show, in CSS pixels, at that width
MIN_TEXT_PX = 9
#: the ``gid`` of an image that is a picture, not a heat map (:func:`mark_picture`)
PICTURE_GID = "course-picture"
#: how far apart two colour scales' limits may be, as a share of the range, and still count as one
#: scale with one colour bar: a colour map has 256 colours, so limits half a colour apart colour
#: every value alike (to within that half colour); round-off on another CPU is far smaller
SCALE_TOLERANCE = 1 / 512
#: the ``tEXt`` key of a figure's PNG that says how tall its smallest text is, in the PNG's pixels
#: (``"none"``: the figure has no text)
SMALLEST_TEXT_KEY = "course:smallest-text-px"
#: set to 1, the figures are checked outside the strict build too (a helper's run of one chapter)
CHECK_VARIABLE = "ATTENTION_COURSE_FIGURE_CHECK"
_POSITIONAL = "_course_positional"


class UnreadableFigure(AssertionError):
    """A figure that the site would show with a problem a reader cannot work around."""


def mark_picture(image):
    """Mark an ``imshow`` image as a picture (a digit, a photo): it needs no colour bar."""
    image.set_gid(PICTURE_GID)
    return image


def mark_positional(axis):
    """Mark an axis (``ax.xaxis``) as positions or token indices: ticks at whole numbers only."""
    from matplotlib.ticker import FixedLocator, MaxNLocator

    if not isinstance(axis.get_major_locator(), FixedLocator):   # ticks set by hand stay
        axis.set_major_locator(MaxNLocator(integer=True))
    setattr(axis, _POSITIONAL, True)
    return axis


def shown_width_px(fig, renderer) -> float:
    """The width of the figure's PNG as Jupyter saves it (cropped to its content, padded)."""
    import matplotlib as mpl

    dpi = mpl.rcParams["savefig.dpi"]
    dpi = fig.dpi if dpi == "figure" else dpi
    pad = mpl.rcParams["savefig.pad_inches"]
    return (fig.get_tightbbox(renderer).width + 2 * pad) * dpi


def text_px(size_pt: float, dpi: float, width_px: float) -> float:
    """How tall text of ``size_pt`` points is on the site, in CSS pixels."""
    return size_pt * dpi / 72 * min(1.0, CONTENT_WIDTH_PX / width_px)


def _drawn_ticks(axis):
    """(location, label) of the major ticks inside the axis's view, as matplotlib draws them."""
    low, high = sorted(axis.get_view_interval())
    slack = 1e-9 * max(1.0, abs(high - low))
    ticks = axis.get_major_ticks(len(axis.get_majorticklocs()))
    for location, tick in zip(axis.get_majorticklocs(), ticks):
        if low - slack <= location <= high + slack:
            for label in (tick.label1, tick.label2):
                if label.get_visible() and label.get_text().strip():
                    yield location, label


def _mappables(ax):
    from matplotlib.collections import QuadMesh

    return [*ax.get_images(), *(c for c in ax.collections if isinstance(c, QuadMesh))]


def _is_picture(mappable) -> bool:
    array = mappable.get_array()
    return mappable.get_gid() == PICTURE_GID or (array is not None and np.ndim(array) == 3)


def _scale(mappable):
    norm = mappable.norm
    return (mappable.get_cmap().name, type(norm).__name__, norm.vmin, norm.vmax)


def same_scale(a, b) -> bool:
    """Whether two ``_scale`` tuples are one colour scale: the same colour map and kind
    of norm, and limits that differ by at most :data:`SCALE_TOLERANCE` of the range.

    Never an exact comparison of floats: maxima computed separately (a softmax
    and the same softmax over shuffled keys) can differ in their last bit on
    another CPU, and one colour bar describes both all the same.
    """
    (map_a, norm_a, low_a, high_a), (map_b, norm_b, low_b, high_b) = a, b
    if (map_a, norm_a) != (map_b, norm_b):
        return False
    if None in (low_a, high_a, low_b, high_b):
        return (low_a, high_a) == (low_b, high_b)
    span = max(abs(high_a - low_a), abs(high_b - low_b))
    if span == 0:   # a constant image: its limits are all there is to compare
        return bool(np.isclose(low_a, low_b) and np.isclose(high_a, high_b))
    tolerance = SCALE_TOLERANCE * span
    return abs(low_a - low_b) <= tolerance and abs(high_a - high_b) <= tolerance


def _is_index_image(image) -> bool:
    """An ``imshow`` whose pixels sit at whole-number coordinates (no ``extent`` given)."""
    from matplotlib.image import AxesImage

    if not isinstance(image, AxesImage) or image.get_array() is None:
        return False
    rows, cols = image.get_array().shape[:2]
    left, right, bottom, top = image.get_extent()
    return sorted((left, right)) == [-0.5, cols - 0.5] and sorted((bottom, top)) == [-0.5, rows - 0.5]


def describe(fig) -> str:
    """A figure's name for an error: its title, or its panels' titles."""
    titles = [fig.get_suptitle()] if fig.get_suptitle() else []
    titles += [ax.get_title() for ax in fig.axes if ax.get_title()]
    what = "; ".join(dict.fromkeys(titles)) if titles else "untitled"
    return f"figure {fig.number if hasattr(fig, 'number') else '?'} ({what[:120]})"


def figure_problems(fig) -> list[str]:
    """What a reader of the site could not read in ``fig`` (empty: nothing)."""
    fig.draw_without_rendering()   # lays out ticks, labels and colour bars as the PNG will show them
    renderer = fig.canvas.get_renderer()
    problems = []

    # Colour bars of any mappable (a scatter's too), and the axes they are drawn in:
    # a colour bar's own colours are a mesh, which is not a heat map of its own.
    colored = [m for ax in fig.axes for m in (*ax.images, *ax.collections)
               if getattr(m, "colorbar", None) is not None]
    colorbars = {id(m.colorbar): m.colorbar for m in colored}
    bar_axes = {id(bar.ax) for bar in colorbars.values()}
    bar_axes |= {id(ax) for ax in fig.axes if getattr(ax, "_colorbar", None) is not None}
    bar_scales = [_scale(bar.mappable) for bar in colorbars.values()]
    for ax in fig.axes:
        if id(ax) in bar_axes or not ax.get_visible():
            continue
        for mappable in _mappables(ax):
            if _is_picture(mappable) or mappable.colorbar is not None:
                continue
            if not any(same_scale(_scale(mappable), bar) for bar in bar_scales):
                where = f" in the panel {ax.get_title()!r}" if ax.get_title() else ""
                problems.append(f"a heat map{where} has no colour bar for its scale "
                                f"{_scale(mappable)[0]} {_scale(mappable)[2]:.3g}..{_scale(mappable)[3]:.3g}")
                break

    dpi = fig.dpi
    width_px = shown_width_px(fig, renderer)
    for ax in fig.axes:
        images = [m for m in ax.get_images() if not _is_picture(m)]
        for axis in (ax.xaxis, ax.yaxis):
            if not (ax.get_visible() and ax.axison and axis.get_visible()):
                continue
            drawn = list(_drawn_ticks(axis))
            positional = getattr(axis, _POSITIONAL, False) or (
                id(ax) not in bar_axes and any(_is_index_image(image) for image in images))
            fractional = [label.get_text() for location, label in drawn
                          if abs(location - round(location)) > 1e-9]
            if positional and fractional:
                where = f" in the panel {ax.get_title()!r}" if ax.get_title() else ""
                problems.append(f"the {axis.axis_name} axis of positions{where} has "
                                f"fractional ticks {fractional[:4]} (use whole-number ticks)")
    small = {}
    for text in _drawn_texts(fig):
        px = text_px(text.get_fontsize(), dpi, width_px)
        if px < MIN_TEXT_PX - 1e-6:
            small.setdefault(round(px, 1), text.get_text().strip()[:30])
    if small:
        px, example = min(small.items())
        problems.append(f"text as small as {px} px on the site (under {MIN_TEXT_PX} px), e.g. "
                        f"{example!r}: the figure is {width_px:.0f} px wide, shown at most "
                        f"{CONTENT_WIDTH_PX} px wide; use larger text or a narrower figure")
    return problems


def _shown(texts):
    """The texts of ``texts`` that the figure shows: visible, not empty, in a visible panel."""
    for text in texts:
        if (text.get_text().strip() and text.get_visible()
                and (text.axes is None or text.axes.get_visible())):
            yield text


def _drawn_texts(fig) -> list:
    """Every text the figure draws: the major tick labels inside each axis's view, axis labels,
    offsets, and every other text (titles, legends, annotations, colour bar labels)."""
    from matplotlib.text import Text

    axis_texts, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks(len(axis.get_majorticklocs())) + axis.get_minor_ticks():
                axis_texts.update({id(tick.label1), id(tick.label2)})
            axis_texts.update({id(axis.label), id(axis.offsetText)})
            if ax.get_visible() and ax.axison and axis.get_visible():
                drawn += [label for _, label in _drawn_ticks(axis)] + [axis.label, axis.offsetText]
    drawn += [t for t in fig.findobj(Text) if id(t) not in axis_texts]
    return list(_shown(drawn))


def smallest_text_px(fig) -> float | None:
    """How tall the smallest text of ``fig`` is in its PNG, in the PNG's pixels (the figure's
    dpi); ``None`` for a figure without text.  Where the page shows the PNG ``s`` times its
    size, the text is ``s`` times as tall."""
    fig.draw_without_rendering()
    sizes = [text.get_fontsize() for text in _drawn_texts(fig)]
    return min(sizes) * fig.dpi / 72 if sizes else None


def png_with_smallest_text(fig, png, **kwargs):
    """``png(fig, **kwargs)`` (IPython's PNG formatter for figures), with the figure's
    :func:`smallest_text_px` written into the PNG under :data:`SMALLEST_TEXT_KEY`."""
    smallest = smallest_text_px(fig)
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata[SMALLEST_TEXT_KEY] = "none" if smallest is None else f"{smallest:.2f}"
    return png(fig, metadata=metadata, **kwargs)


def check_figure(fig) -> None:
    """Raise :class:`UnreadableFigure` naming ``fig`` and every problem :func:`figure_problems` finds."""
    problems = figure_problems(fig)
    if problems:
        raise UnreadableFigure(f"{describe(fig)} would be hard to read on the site:\n  - "
                               + "\n  - ".join(problems))


def check_open_figures(value=None):
    """Check every open figure (those a cell shows when it ends); returns ``value`` unchanged."""
    import matplotlib.pyplot as plt

    if plt.get_fignums():
        # the inline backend registers its PNG formatter when the first figure is made, after
        # install(): wrap it now, before the figures are shown as the cell ends
        _record_in_this_shell()
    for number in plt.get_fignums():
        check_figure(plt.figure(number))
    return value


def _record_in_this_shell() -> None:
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        record_smallest_text(shell)


class _CheckFiguresAtCellEnd(ast.NodeTransformer):
    """Rewrites a cell so that it checks its figures as its last step, inside the cell.

    Inside, not in an IPython event: an exception in an event callback is
    printed and the cell still succeeds, so the build would not fail.  A cell
    whose last statement is an expression keeps it last (the cell still shows
    its value): ``expr`` becomes ``check_open_figures(expr)``, which returns it.
    """

    def visit_Module(self, node):
        checker = ast.Attribute(
            ast.Call(ast.Name("__import__", ast.Load()),
                     [ast.Constant(__name__)], [ast.keyword("fromlist", ast.List([ast.Constant("_")], ast.Load()))]),
            "check_open_figures", ast.Load())
        if node.body and isinstance(node.body[-1], ast.Expr):
            last = node.body[-1]
            last.value = ast.Call(checker, [last.value], [])
        else:
            node.body.append(ast.Expr(ast.Call(checker, [], [])))
        return ast.fix_missing_locations(node)


def enabled() -> bool:
    """Whether figures are checked: in the strict build (claims asserted), or when asked to."""
    from .claims import MODE_VARIABLE

    return os.environ.get(MODE_VARIABLE) == "assert" or os.environ.get(CHECK_VARIABLE) == "1"


def install(shell=None) -> bool:
    """Check every cell's figures from now on in this IPython kernel; False outside IPython."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None:
        return False
    if not any(isinstance(t, _CheckFiguresAtCellEnd) for t in shell.ast_transformers):
        shell.ast_transformers.append(_CheckFiguresAtCellEnd())
    record_smallest_text(shell)
    return True


def record_smallest_text(shell) -> bool:
    """Make the shell's PNG of every figure carry its :func:`smallest_text_px`; False where
    the shell draws figures some other way (no PNG formatter for them)."""
    from functools import partial

    from matplotlib.figure import Figure

    formatter = shell.display_formatter.formatters["image/png"]
    png = formatter.lookup_by_type(Figure) if Figure in formatter.type_printers else None
    if png is None:
        return False
    if getattr(png, "func", None) is png_with_smallest_text:   # installed already
        return True
    formatter.for_type(Figure, partial(png_with_smallest_text, png=png))
    return True
