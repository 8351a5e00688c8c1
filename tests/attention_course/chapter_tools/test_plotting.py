"""The chapters' plots: what a reader would misread if it were wrong."""

import numpy as np


def test_attention_grid_colour_scale():
    """plot_attention_heads: 0..1 viridis by default; a diverging scale for differences on request."""
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    from attention_course.chapter_tools import plotting

    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 3, 4))
    fig = plotting.plot_attention_heads(weights, list("abcd"))
    image = fig.axes[0].images[0]
    assert image.get_cmap().name == "viridis" and image.get_clim() == (0.0, 1.0)
    assert len(fig.axes) == 6 + 1   # six panels and one colour bar for all of them
    bars = {id(im.colorbar) for ax in fig.axes[:6] for im in ax.images if im.colorbar is not None}
    assert len(bars) == 1 and fig.axes[-1].get_ylabel() == "attention weight"
    plt.close(fig)
    fig = plotting.plot_attention_heads(weights - weights[::-1], list("abcd"), cmap="RdBu_r",
                                        vmin=-0.5, vmax=0.5)
    image = fig.axes[5].images[0]   # the last panel (the colour bar comes after it)
    assert image.get_cmap().name == "RdBu_r" and image.get_clim() == (-0.5, 0.5)
    plt.close(fig)


def test_step_loss_is_a_running_mean_drawn_at_the_last_step_of_its_window():
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt
    import pytest

    from attention_course.chapter_tools import plotting

    losses = np.array([4.0, 2.0, 6.0, 1.0, 3.0])
    ax = plotting.plot_step_loss({"model": losses}, window=2)
    x, y = ax.lines[0].get_data()
    np.testing.assert_array_equal(x, [2, 3, 4, 5])
    np.testing.assert_allclose(y, [3.0, 4.0, 3.5, 2.0])
    assert ax.get_yscale() == "log"
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="at least window=25"):
        plotting.plot_step_loss({"short run": losses})


def test_grid_panel_titles_and_the_checks_of_the_strict_build():
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    from attention_course.chapter_tools import plotting
    from attention_course.chapter_tools.figure_check import figure_problems

    weights = np.random.default_rng(0).dirichlet(np.ones(4), size=(2, 2, 4))
    titles = ["previous", "next", "[CLS]", "broad"]
    with plt.rc_context({"figure.dpi": 110, "savefig.dpi": 110}):
        fig = plotting.plot_attention_heads(weights, list("abcd"), panel_titles=titles)
        assert [ax.get_title() for ax in fig.axes[:4]] == titles
        assert figure_problems(fig) == []
        fig = plotting.plot_attention_heads(weights, list("abcd"), colorbar_label=None)
        assert len(fig.axes) == 4 and any("no colour bar" in p for p in figure_problems(fig))
        # two panels on one scale (vmax=1), one colour bar: the check passes
        fig, (left, right) = plt.subplots(1, 2, figsize=(7, 3), constrained_layout=True)
        plotting.plot_attention(weights[0, 0] / 2, list("abcd"), list("abcd"), ax=left, colorbar=False,
                                vmax=1.0)
        plotting.plot_attention(weights[0, 1], list("abcd"), list("abcd"), ax=right, vmax=1.0)
        assert figure_problems(fig) == []
        # epochs 1..3 are whole numbers on the x axis
        ax = plotting.plot_history({"model": {"loss": [3.0, 2.0, 1.5]}})
        ax.figure.draw_without_rendering()
        low, high = ax.get_xlim()
        assert all(float(t).is_integer() for t in ax.get_xticks() if low <= t <= high)
        assert figure_problems(ax.figure) == []
        # a digit is a picture: no colour bar needed
        fig, ax = plt.subplots(figsize=(2, 2))
        plotting.show_image(ax, np.random.default_rng(1).random((8, 8)))
        plotting.integer_ticks(ax.xaxis, ax.yaxis)
        assert ax.images[0].get_cmap().name == "gray_r" and figure_problems(fig) == []
    plt.close("all")
