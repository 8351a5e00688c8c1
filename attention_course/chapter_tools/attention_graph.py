"""Attention as a weighted directed graph: tokens are nodes, weights are arrows.

Row ``i`` of an attention matrix says how much token ``i`` draws on every
token ``j``.  Drawn as a graph, that is an arrow ``i -> j`` whose width is the
weight: self-attention connects every token to every other, and what a
heatmap shows as a bright cell, the graph shows as a thick arrow.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path


def attention_edges(weights, threshold: float = 0.05) -> list[tuple[int, int, float]]:
    """``(T, T)`` weights -> the arrows ``(i, j, weight)`` with ``weight >= threshold``, ``i != j``.

    Self-loops (a token attending to itself) are left out: the graph draws
    them as the size of the node's ring instead.
    """
    weights = np.asarray(weights)
    if weights.ndim != 2 or weights.shape[0] != weights.shape[1]:
        raise ValueError(f"weights must be a square (T, T) self-attention matrix; got {weights.shape}")
    i, j = np.nonzero((weights >= threshold) & ~np.eye(len(weights), dtype=bool))
    return [(int(a), int(b), float(weights[a, b])) for a, b in zip(i, j)]


def plot_attention_graph(weights, tokens: Sequence[str], ax=None, threshold: float = 0.05,
                         queries: Sequence[int] | None = None, max_width: float = 6.0,
                         title: str | None = None):
    """Tokens on a line, one arc ``i -> j`` per weight ``a_ij >= threshold``, width proportional to it.

    Arcs to later tokens bend above the line and arcs to earlier tokens below
    it, so the direction of reading is visible.  ``queries`` restricts the
    drawing to the rows of the given tokens (e.g. only "it", where only its
    output reaches the loss): their arrows, and their weight on themselves,
    which makes the frame of a token's label thicker; the other tokens get a
    thin frame.
    """
    weights = np.asarray(weights, dtype=float)
    edges = attention_edges(weights, threshold)
    if len(tokens) != len(weights):
        raise ValueError(f"{len(tokens)} tokens for a {weights.shape} attention matrix")
    if queries is not None:
        edges = [edge for edge in edges if edge[0] in set(queries)]
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.8 * len(tokens)), 3.6))
    color = plt.get_cmap("viridis")
    for i, j, w in sorted(edges, key=lambda edge: edge[2]):  # heaviest drawn last, on top
        # A quadratic Bezier curve in data coordinates: up for j > i, down for j < i;
        # its height grows with the distance, so arcs do not hide each other.
        height = 0.5 * (j - i)
        arc = Path([(i, 0.0), ((i + j) / 2, height), (j, 0.0)],
                   [Path.MOVETO, Path.CURVE3, Path.CURVE3])
        ax.add_patch(FancyArrowPatch(path=arc, arrowstyle="-|>", mutation_scale=6 + 10 * w,
                                     linewidth=0.5 + max_width * w, color=color(0.9 * w),
                                     alpha=0.4 + 0.6 * w, shrinkA=0, shrinkB=0, zorder=2))
    self_weights = np.diag(weights)
    if queries is not None:  # the other rows are not drawn, their weight on themselves neither
        self_weights = np.where(np.isin(np.arange(len(tokens)), list(queries)), self_weights, 0.0)
    for position, (token, self_weight) in enumerate(zip(tokens, self_weights)):
        ax.text(position, 0.0, token, ha="center", va="center", fontsize=9, zorder=4,
                bbox={"boxstyle": "round,pad=0.3", "facecolor": "white", "edgecolor": "0.3",
                      "linewidth": 0.6 + 4 * self_weight})
    span = 0.25 * (len(tokens) - 1) + 0.3  # the highest arc peaks at a quarter of its length
    ax.set_xlim(-0.7, len(tokens) - 0.3)
    ax.set_ylim(-span, span)
    ax.set_yticks([])
    ax.set_xticks(range(len(tokens)))
    ax.set_xlabel("token position (arrow i -> j: token i attends to token j; width = weight)")
    for side in ("left", "right", "top"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title)
    return ax
