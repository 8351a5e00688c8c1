"""Pictures the chapters share: attention heatmaps and accuracy curves (matplotlib, one figure per call)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

from .figure_check import mark_picture, mark_positional

#: the smallest text the helpers draw, in points: 8 pt at the book's 110 dpi is 12 px, still
#: 9 px or more on the site in a figure shown up to a quarter narrower than it is drawn
SMALL_TEXT_PT = 8
#: the tick labels and titles of a grid of panels, which is often wider than the page and shown
#: smaller: 10 pt is 9 px or more in a grid up to 1140 px wide, shown 672 px wide
GRID_TEXT_PT = 10


def plot_attention(weights, query_tokens: Sequence[str] | None = None,
                   key_tokens: Sequence[str] | None = None, ax=None, title: str | None = None,
                   xlabel: str = "key (attended to)", ylabel: str = "query (attending)",
                   colorbar: bool = True, annotate: bool = False,
                   colorbar_label: str = "attention weight", vmax: float | None = None):
    """Heatmap of one attention matrix ``(T_q, T_k)``: row ``i`` is query ``i``'s distribution.

    Token labels go on the axes (keys along the top, as in Bahdanau et al.'s
    alignment figures); ``annotate`` writes each weight in its cell.  The
    colours run from 0 to ``vmax``, by default the matrix's largest weight;
    panels that are compared side by side pass one ``vmax`` (1.0 for weights)
    and can then share one colour bar.
    """
    weights = np.asarray(weights)
    if weights.ndim != 2:
        raise ValueError(f"weights must have shape (T_q, T_k); got {weights.shape}")
    for name, tokens, n in (("query_tokens", query_tokens, weights.shape[0]),
                            ("key_tokens", key_tokens, weights.shape[1])):
        if tokens is not None and len(tokens) != n:
            raise ValueError(f"{name} has {len(tokens)} labels for {n} rows/columns of weights")
    if ax is None:
        height = max(2.5, 0.32 * weights.shape[0] + 1.2)
        width = max(3.0, 0.32 * weights.shape[1] + 1.8)
        _, ax = plt.subplots(figsize=(width, height))
    if vmax is None:
        vmax = max(float(weights.max()), 1e-9)
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto")
    ax.xaxis.tick_top()
    ax.xaxis.set_label_position("top")
    if key_tokens is not None:
        ax.set_xticks(range(len(key_tokens)), key_tokens, rotation=90)
    if query_tokens is not None:
        ax.set_yticks(range(len(query_tokens)), query_tokens)
    mark_positional(ax.xaxis)   # without tokens, the ticks are positions: whole numbers
    mark_positional(ax.yaxis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if annotate:
        for (i, j), w in np.ndenumerate(weights):
            ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=SMALL_TEXT_PT,
                    color="white" if w < 0.6 * vmax else "black")
    if title:
        ax.set_title(title, pad=8)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=colorbar_label)
    return ax


def plot_attention_heads(weights, tokens: Sequence[str], query_tokens: Sequence[str] | None = None,
                         row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
                         cell_size: float = 2.2, suptitle: str | None = None,
                         cmap: str = "viridis", vmin: float = 0.0, vmax: float = 1.0,
                         colorbar_label: str | None = "attention weight",
                         panel_titles: Sequence[str] | None = None):
    """A grid of heatmaps, ``weights`` of shape ``(rows, cols, T_q, T_k)`` or ``(heads, T_q, T_k)``.

    Rows are typically layers and columns heads.  Ticks and their labels are
    drawn on the outer panels only, to keep the grid readable.  Every panel shares one
    colour scale, ``vmin``..``vmax`` (0..1 for attention weights; for example
    ``cmap="RdBu_r", vmin=-m, vmax=m`` for a difference of two attention maps),
    and one colour bar shows it, labelled ``colorbar_label`` (``None``: no bar,
    for a caller that draws its own).  ``panel_titles`` (one per panel, row by
    row) title every panel instead of ``col_labels`` the top row.
    """
    weights = np.asarray(weights)
    if weights.ndim == 3:
        weights = weights[None]
    if weights.ndim != 4:
        raise ValueError(f"weights must have shape (rows, cols, T_q, T_k); got {weights.shape}")
    rows, cols = weights.shape[:2]
    query_tokens = tokens if query_tokens is None else query_tokens
    fig, axes = plt.subplots(rows, cols, figsize=(cell_size * cols + 1, cell_size * rows + 1),
                             squeeze=False, constrained_layout=True)
    for r in range(rows):
        for c in range(cols):
            ax = axes[r, c]
            image = ax.imshow(weights[r, c], cmap=cmap, vmin=vmin, vmax=vmax)
            # Inner panels get no ticks at all: 72 panels of tick marks took seconds to lay out.
            if r == rows - 1:
                ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=GRID_TEXT_PT)
            else:
                ax.set_xticks([])
            if c == 0:
                ax.set_yticks(range(len(query_tokens)), query_tokens, fontsize=GRID_TEXT_PT)
            else:
                ax.set_yticks([])
            if panel_titles is not None:
                ax.set_title(panel_titles[r * cols + c], fontsize=GRID_TEXT_PT)
            elif r == 0 and col_labels is not None:
                ax.set_title(col_labels[c], fontsize=GRID_TEXT_PT)
            if c == 0 and row_labels is not None:
                ax.set_ylabel(row_labels[r], fontsize=GRID_TEXT_PT)
    if colorbar_label is not None:   # one bar: every panel is on its scale
        fig.colorbar(image, ax=axes, shrink=min(1.0, 0.5 + 0.25 * rows), label=colorbar_label)
    if suptitle:
        fig.suptitle(suptitle)
    return fig


def show_image(ax, pixels, **imshow_options):
    """A picture (a digit: grey levels 0..1, black ink on white; or an RGB photo) on ``ax``.

    A picture, not a heat map: its grey levels are ink, so it needs no colour
    bar (:func:`~attention_course.chapter_tools.figure_check.mark_picture`).
    """
    pixels = np.asarray(pixels)
    if pixels.ndim == 2:
        imshow_options = {"cmap": "gray_r", "vmin": 0.0, "vmax": 1.0} | imshow_options
    return mark_picture(ax.imshow(pixels, **imshow_options))


def integer_ticks(*axes) -> None:
    """Whole-number ticks on each axis given (``ax.xaxis``): positions, token indices, epochs."""
    for axis in axes:
        mark_positional(axis)


def plot_accuracy_by_length(curves: Mapping[str, tuple[Sequence[float], Sequence[float]]], ax=None,
                            ylabel: str = "exact-match accuracy", title: str | None = None,
                            top: float = 1.0):
    """One line per model: ``curves[name] = (lengths, scores)``, scores from 0 to ``top``."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    for (name, (lengths, accuracy)), marker in zip(curves.items(), "osD^v<>"):
        ax.plot(lengths, accuracy, marker=marker, label=name)
    ax.set_xlabel("source sentence length (words)")
    mark_positional(ax.xaxis)   # lengths are whole numbers of words
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02 * top, 1.02 * top)
    ax.grid(alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title)
    return ax


def plot_history(histories: Mapping[str, Mapping[str, Sequence[float]]], key: str = "loss", ax=None,
                 ylabel: str = "training loss (cross-entropy, nats)", xlabel: str = "epoch"):
    """Loss curves, one per model: ``histories[name][key]`` is a list of per-epoch values."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.4))
    for name, history in histories.items():
        values = history[key]
        ax.plot(np.arange(1, len(values) + 1), values, marker="o", label=name)
    mark_positional(ax.xaxis)   # epochs are whole numbers
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax


def plot_step_loss(curves: Mapping[str, Sequence[float]], window: int = 25, ax=None,
                   xlabel: str = "training step", ylabel: str = "training loss (nats per word)"):
    """Training loss at every step, one curve per model, as a running mean over ``window`` steps.

    ``curves[name]`` is the loss of each step ``(steps,)``; the mean of steps
    ``t - window + 1 .. t`` is drawn at step ``t`` (log scale: the late steps
    matter as much as the early ones).
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.4))
    for name, losses in curves.items():
        losses = np.asarray(losses, dtype=float)
        if losses.ndim != 1 or len(losses) < window:
            raise ValueError(f"{name}: need at least window={window} step losses, got shape {losses.shape}")
        smooth = np.convolve(losses, np.ones(window) / window, mode="valid")
        ax.plot(np.arange(window, len(losses) + 1), smooth, label=name)
    ax.set(yscale="log", xlabel=xlabel, ylabel=ylabel)
    ax.grid(alpha=0.3)
    ax.legend()
    return ax
