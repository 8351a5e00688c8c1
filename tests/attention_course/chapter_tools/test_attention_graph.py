"""Attention drawn as a graph: which arrows are drawn."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_course.chapter_tools.attention_graph import attention_edges, plot_attention_graph  # noqa: E402


def test_edges_are_the_weights_above_the_threshold_without_self_loops():
    weights = np.array([[0.5, 0.3, 0.2],
                        [0.01, 0.9, 0.09],
                        [0.6, 0.0, 0.4]])
    edges = attention_edges(weights, threshold=0.1)
    assert sorted(edges) == [(0, 1, 0.3), (0, 2, 0.2), (2, 0, 0.6)]
    with pytest.raises(ValueError, match="square"):
        attention_edges(np.ones((2, 3)))


def test_plot_draws_one_arrow_per_edge():
    weights = np.full((4, 4), 0.25)
    ax = plot_attention_graph(weights, ["a", "b", "c", "d"], threshold=0.1)
    assert len(ax.patches) == 12
    ax = plot_attention_graph(weights, ["a", "b", "c", "d"], threshold=0.1, queries=[2])
    assert len(ax.patches) == 3
    plt.close("all")
    with pytest.raises(ValueError, match="3 tokens"):
        plot_attention_graph(weights, ["a", "b", "c"])


def test_queries_restrict_the_frames_to_the_rows_drawn():
    """A token's frame shows its weight on itself only where its row is drawn."""
    weights = np.diag([0.9, 0.8, 0.7]) + 0.01
    frames = {text.get_text(): text.get_bbox_patch().get_linewidth()
              for text in plot_attention_graph(weights, ["a", "b", "c"], queries=[1]).texts}
    assert frames["b"] > frames["a"] == frames["c"]
    frames_all = {text.get_text(): text.get_bbox_patch().get_linewidth()
                  for text in plot_attention_graph(weights, ["a", "b", "c"]).texts}
    assert frames_all["a"] > frames["a"] and frames_all["b"] == frames["b"]
    plt.close("all")
