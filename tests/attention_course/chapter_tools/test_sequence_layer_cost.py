"""time_layers: one layer of each kind timed at tiny sizes; its table, its slopes, its figure and summary.

Nothing here depends on how fast the machine is: the tests check the table's
shape and order, that every time is a positive number, the counts, and the
slopes on series whose slope is known.
"""

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from attention_course.chapter_tools.sequence_layer_cost import (  # noqa: E402
    LAYERS, growth_slope, plot_layer_times, random_layers, summarise_layer_times, sweep, time_layers)
from attention_course.sequence_layers import layer_costs  # noqa: E402

LENGTHS, D, WIDTHS, N, K = [4, 8, 16], 4, [2, 4, 8], 8, 3


@pytest.fixture(scope="module")
def times():
    return time_layers(LENGTHS, D, WIDTHS, N, k=K, seed=0, budget=0.0, min_rounds=1)


def test_one_row_per_layer_and_size_in_the_promised_order(times):
    assert list(times.columns) == ["layer", "varies", "n", "d", "multiply-adds", "seconds"]
    sizes = [("n", n, D) for n in LENGTHS] + [("d", N, d) for d in WIDTHS]
    assert list(times[["layer", "varies", "n", "d"]].itertuples(index=False, name=None)) == \
        [(name, *size) for name in LAYERS for size in sizes]


def test_every_time_is_a_positive_number_and_a_shared_size_is_timed_once(times):
    assert np.isfinite(times["seconds"]).all() and (times["seconds"] > 0).all()
    # (n, d) = (8, 4) is in both sweeps: one measurement, reported in both
    shared = times[(times["n"] == N) & (times["d"] == D)]
    assert len(shared) == 2 * len(LAYERS)
    for name in LAYERS:
        assert shared.loc[shared["layer"] == name, "seconds"].nunique() == 1


def test_the_counts_are_layer_costs(times):
    for row in times.itertuples(index=False):
        assert row[4] == layer_costs(row.n, row.d, K)[row.layer].multiply_adds


def test_a_sweep_has_its_sizes_as_index_and_one_column_per_layer(times):
    by_n, by_d = sweep(times, "n"), sweep(times, "d", "multiply-adds")
    assert list(by_n.index) == LENGTHS and list(by_d.index) == WIDTHS
    assert list(by_n.columns) == list(LAYERS) == list(by_d.columns)
    assert by_d.loc[WIDTHS[-1], "recurrence"] == 2 * N * WIDTHS[-1] ** 2


def test_sizes_must_increase():
    with pytest.raises(ValueError, match="lengths"):
        time_layers([8, 4], D, WIDTHS, N, budget=0.0, min_rounds=1)
    with pytest.raises(ValueError, match="widths"):
        time_layers(LENGTHS, D, [], N, budget=0.0, min_rounds=1)


def test_growth_slope_reads_the_power_of_the_largest_sizes():
    sizes = [2, 4, 8, 16, 32]
    assert growth_slope(pd.Series([3.0 * s ** 2 for s in sizes], index=sizes)) == pytest.approx(2.0)
    # the first two sizes are ignored: only the three largest are fitted
    bent = pd.Series([1.0, 1.0, 8.0, 16.0, 32.0], index=sizes)
    assert growth_slope(bent) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        growth_slope(pd.Series([1.0], index=[1]))


def test_random_layers_map_a_sequence_to_one_of_the_same_shape():
    rng = np.random.default_rng(0)
    layers = random_layers(6, K, rng)
    assert list(layers) == list(LAYERS)
    x = rng.standard_normal((5, 6)).astype("float32")
    for layer in layers.values():
        assert layer(x).shape == (5, 6)
    # the recurrent and convolutional layers are causal: a change at the last position stays there
    changed = x.copy()
    changed[-1] += 1.0
    for name in ("recurrence", "convolution"):
        np.testing.assert_array_equal(layers[name](x)[:-1], layers[name](changed)[:-1])
    assert not np.allclose(layers["self-attention"](x)[0], layers["self-attention"](changed)[0])


def test_the_summary_has_a_column_per_layer_and_counts_the_path(times):
    summary = summarise_layer_times(times, k=K)
    assert list(summary.columns) == list(LAYERS)
    n = LENGTHS[-1]
    assert summary.loc[f"path, first to last, n = {n}", "recurrence"] == f"{n - 1} recurrent steps"
    assert summary.loc[f"steps one after another, n = {n}", "recurrence"] == str(n)
    assert summary.loc[f"steps one after another, n = {n}", "self-attention"] == "1"
    assert float(summary.loc["slope with n: multiply-adds", "recurrence"]) == pytest.approx(1.0)


def test_the_figure_has_two_log_log_panels_with_a_curve_per_layer_and_count(times):
    axes = plot_layer_times(times)
    try:
        for ax, sizes in zip(axes, (LENGTHS, WIDTHS)):
            assert ax.get_xscale() == ax.get_yscale() == "log"
            assert len(ax.get_lines()) == 2 * len(LAYERS)
            assert [t.get_text() for t in ax.get_legend().get_texts()][0].startswith("self-attention (slope ")
            assert list(ax.get_xticks()) == sizes
    finally:
        plt.close(axes[0].figure)

