"""Self-attention, recurrence and convolution on this machine's clock (chapter 5).

Vaswani et al. (2017), Table 1, compare the three kinds of layer by the work of
one layer; :func:`~attention_course.sequence_layers.layer_costs` counts that work
from the shapes.  :func:`time_layers` sets the clock beside the count: one layer
of each kind, with random weights, timed on one sequence at several lengths and
widths; :func:`growth_slope` reads how fast a time or a count grows, and
:func:`plot_layer_times` draws both.  The times are the machine's, at the time
of the call: nothing is asserted about them.

Explained in chapter 5, *Self-attention, recurrence and convolution*,
section "What a layer costs, measured".
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ..self_attention import SelfAttentionWeights, self_attention
from ..sequence_layers import convolution_layer, layer_costs, recurrent_layer
from .timing import best_times

#: the three kinds of layer, in the order of Vaswani et al.'s Table 1
LAYERS = ("self-attention", "recurrence", "convolution")


def random_layers(d: int, k: int, rng: np.random.Generator) -> dict:
    """One layer of each kind, ``d`` features in and out, random float32 weights.

    Returns ``{kind: function of an (n, d) sequence}``: self-attention with an
    output projection, the recurrent layer and the causal convolution of width ``k``.
    """
    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[-2])).astype("float32")
    attention = SelfAttentionWeights(w(d, d), w(d, d), w(d, d), W_output=w(d, d))
    W_input, W_hidden, kernel = w(d, d), w(d, d), w(k, d, d)
    return {"self-attention": lambda x: self_attention(x, attention)[0],
            "recurrence": lambda x: recurrent_layer(x, W_input, W_hidden),
            "convolution": lambda x: convolution_layer(x, kernel)}


def time_layers(lengths: Sequence[int], d: int, widths: Sequence[int], n: int, k: int = 3,
                seed: int = 0, budget: float = 1.0, min_rounds: int = 3, threads: int = 1) -> pd.DataFrame:
    """Time one layer of each kind at each of ``lengths`` (width ``d``) and of ``widths`` (length ``n``).

    Each layer runs on one float32 sequence of shape ``(n, d)``, with ``threads``
    BLAS threads.  A time is the fastest of several calls
    (:func:`~attention_course.chapter_tools.timing.best_times`): the layers and sizes
    take turns, one call each per round, for ``budget`` seconds and at least
    ``min_rounds`` rounds, so that a burst of other work slows a round rather
    than one size.

    Returns:
        one row per layer and size, in the order of :data:`LAYERS`, then of
        ``lengths``, then of ``widths``: columns ``layer``, ``varies`` (``"n"``
        for the sweep over ``lengths``, ``"d"`` for the one over ``widths``),
        ``n``, ``d``, ``multiply-adds`` (counted by
        :func:`~attention_course.sequence_layers.layer_costs`) and ``seconds``.
    """
    for name, sizes in (("lengths", lengths), ("widths", widths)):
        if len(sizes) == 0 or list(sizes) != sorted(set(sizes)):
            raise ValueError(f"{name} must be increasing sizes, at least one; got {list(sizes)}")
    rng = np.random.default_rng(seed)
    sizes = [("n", length, d) for length in lengths] + [("d", n, width) for width in widths]
    calls = {}
    for _, length, width in sizes:
        if (LAYERS[0], length, width) in calls:       # a size both sweeps share is timed once
            continue
        x = rng.standard_normal((length, width)).astype("float32")
        for name, layer in random_layers(width, k, rng).items():
            calls[name, length, width] = partial(layer, x)
    with threadpool_limits(limits=threads, user_api="blas"):
        seconds = best_times(calls, budget=budget, min_rounds=min_rounds)
    return pd.DataFrame(
        [{"layer": name, "varies": varies, "n": length, "d": width,
          "multiply-adds": layer_costs(length, width, k)[name].multiply_adds,
          "seconds": seconds[name, length, width]}
         for name in LAYERS for varies, length, width in sizes])


def sweep(times: pd.DataFrame, varies: str, column: str = "seconds") -> pd.DataFrame:
    """One sweep of :func:`time_layers`' table: its sizes as the index, one column per layer."""
    rows = times[times["varies"] == varies]
    return rows.pivot(index=varies, columns="layer", values=column)[list(LAYERS)]


def growth_slope(series: pd.Series, last: int = 3) -> float:
    """The slope of log(series) against log(its index), fitted to the ``last`` largest sizes.

    A quantity that grows as ``size ** p`` has the slope ``p``.
    """
    if len(series) < 2 or last < 2:
        raise ValueError(f"a slope needs two sizes or more; got {len(series)} sizes, last={last}")
    sizes = np.log(series.index.to_numpy(float)[-last:])
    return float(np.polyfit(sizes, np.log(series.to_numpy(float)[-last:]), 1)[0])


def plot_layer_times(times: pd.DataFrame, axes=None):
    """Time against length and against width, log-log, solid; the multiply-adds, dashed.

    The counts are scaled to meet the measured time at the largest size, so that
    their slopes can be compared; the legend gives each measured slope
    (:func:`growth_slope`).
    """
    import matplotlib.pyplot as plt

    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    for ax, varies in zip(axes, ("n", "d")):
        seconds, macs = sweep(times, varies), sweep(times, varies, "multiply-adds")
        fixed = "d" if varies == "n" else "n"
        label = {"n": "sequence length n", "d": "width d"}[varies]
        for name, color in zip(LAYERS, ("C0", "C1", "C2")):
            ax.loglog(seconds.index, 1e3 * seconds[name], "o-", color=color,
                      label=f"{name} (slope {growth_slope(seconds[name]):.2f})")
            ax.loglog(macs.index, 1e3 * seconds[name].iloc[-1] * macs[name] / macs[name].iloc[-1], "--",
                      color=color, linewidth=1)
        ax.xaxis.set_minor_locator(plt.NullLocator())
        ax.set_xticks(seconds.index, [str(size) for size in seconds.index])
        ax.set_xlabel(f"{label} ({fixed} = {times[times['varies'] == varies][fixed].iloc[0]})")
        ax.set_ylabel("time of one layer (ms)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=9)
    return axes


def summarise_layer_times(times: pd.DataFrame, k: int = 3) -> pd.DataFrame:
    """Table 1 of Vaswani et al., counted and measured: one column per layer, at the largest length.

    Rows: the multiply-adds and the measured time of one layer at the largest
    length of :func:`time_layers`' ``n`` sweep, the multiply-adds done per
    second, the slopes (:func:`growth_slope`) of the count and of the time in
    both sweeps, the steps that run one after another and the path from the
    first position to the last (:func:`~attention_course.sequence_layers.layer_costs`).
    """
    by_n, macs_n = sweep(times, "n"), sweep(times, "n", "multiply-adds")
    by_d, macs_d = sweep(times, "d"), sweep(times, "d", "multiply-adds")
    n = int(by_n.index[-1])
    d = int(times.loc[times["varies"] == "n", "d"].iloc[0])
    costs = layer_costs(n, d, k)
    units = {"self-attention": "layer", "recurrence": "recurrent steps", "convolution": "layers"}
    return pd.DataFrame({name: {
        f"multiply-adds (millions), n = {n}": f"{macs_n[name].iloc[-1] / 1e6:.1f}",
        f"measured time (ms), n = {n}": f"{1e3 * by_n[name].iloc[-1]:.3g}",
        "billions of multiply-adds a second": f"{macs_n[name].iloc[-1] / by_n[name].iloc[-1] / 1e9:.2g}",
        "slope with n: multiply-adds": f"{growth_slope(macs_n[name]):.2f}",
        "slope with n: time": f"{growth_slope(by_n[name]):.2f}",
        "slope with d: multiply-adds": f"{growth_slope(macs_d[name]):.2f}",
        "slope with d: time": f"{growth_slope(by_d[name]):.2f}",
        f"steps one after another, n = {n}": f"{costs[name].sequential_steps}",
        f"path, first to last, n = {n}": f"{costs[name].path_length} {units[name]}",
    } for name in LAYERS})
