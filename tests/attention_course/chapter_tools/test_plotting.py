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
    assert len(fig.axes) == 6
    plt.close(fig)
    fig = plotting.plot_attention_heads(weights - weights[::-1], list("abcd"), cmap="RdBu_r",
                                        vmin=-0.5, vmax=0.5)
    image = fig.axes[-1].images[0]
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
