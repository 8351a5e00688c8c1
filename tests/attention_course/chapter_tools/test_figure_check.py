"""The strict build's figure check: heat maps with colour bars, readable text, whole-number positions."""

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402

from attention_course.chapter_tools import figure_check  # noqa: E402
from attention_course.chapter_tools.figure_check import (  # noqa: E402
    UnreadableFigure, check_figure, figure_problems)

WEIGHTS = np.random.default_rng(0).dirichlet(np.ones(5), size=5)


@pytest.fixture(autouse=True)
def book_style():
    """The chapters' figure settings (notebook.setup), closed again after each test."""
    with plt.rc_context({"figure.dpi": 110, "savefig.dpi": 110}):
        yield
    plt.close("all")


def heat_map(colorbar=True, fontsize=10, size=(4, 3)):
    fig, ax = plt.subplots(figsize=size)
    image = ax.imshow(WEIGHTS, vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(5))
    ax.set_yticks(range(5))
    ax.set_title("weights", fontsize=fontsize)
    ax.tick_params(labelsize=fontsize)
    if colorbar:
        bar = fig.colorbar(image, ax=ax)
        bar.ax.tick_params(labelsize=fontsize)
    return fig, ax


def test_a_heat_map_with_a_colour_bar_and_readable_text_passes():
    fig, _ = heat_map()
    assert figure_problems(fig) == []
    check_figure(fig)


def test_a_heat_map_without_a_colour_bar_fails_naming_the_figure():
    fig, _ = heat_map(colorbar=False)
    with pytest.raises(UnreadableFigure, match=r"(?s)figure \d+ \(weights\).*no colour bar"):
        check_figure(fig)


def test_a_scatter_coloured_by_a_value_with_its_colour_bar_passes():
    """A colour bar of a scatter (no heat map at all) is not mistaken for a heat map of its own."""
    fig, ax = plt.subplots(figsize=(4, 3))
    points = ax.scatter(*np.random.default_rng(0).normal(size=(2, 50)), c=np.linspace(-2, 2, 50))
    ax.set_title("scatter")
    fig.colorbar(points, label="value")
    assert figure_problems(fig) == []


def test_one_colour_bar_covers_panels_on_one_scale_but_not_panels_on_their_own_scales():
    fig, axes = plt.subplots(1, 3, figsize=(6, 2.5))
    images = [ax.imshow(WEIGHTS * (k + 1) / 3, vmin=0, vmax=1) for k, ax in enumerate(axes)]
    fig.colorbar(images[0], ax=axes)
    for ax in axes:
        figure_check.mark_positional(ax.xaxis)
        figure_check.mark_positional(ax.yaxis)
    assert figure_problems(fig) == []
    plt.close(fig)
    fig, axes = plt.subplots(1, 3, figsize=(6, 2.5))
    images = [ax.imshow(WEIGHTS * (k + 1) / 3) for k, ax in enumerate(axes)]  # each its own maximum
    fig.colorbar(images[0], ax=axes)
    assert any("no colour bar" in p for p in figure_problems(fig))


def two_panels(second_max: float, first_max: float = 0.42062820730328815):
    """Two heat maps, each scaled to its own maximum, and one colour bar (for the first)."""
    fig, axes = plt.subplots(1, 2, figsize=(6, 2.5))
    images = [ax.imshow(WEIGHTS / WEIGHTS.max() * m) for ax, m in zip(axes, (first_max, second_max))]
    fig.colorbar(images[0], ax=axes)
    for ax in axes:
        figure_check.mark_positional(ax.xaxis)
        figure_check.mark_positional(ax.yaxis)
    return fig, images


def test_two_panels_whose_scales_differ_by_round_off_share_one_colour_bar():
    """Chapter 2's case: a softmax's maximum and the same softmax's over shuffled keys,
    an ulp or two apart on an AVX2 CPU (0.42062820730328804 vs ...815): one scale, one bar."""
    avx2_max = 0.42062820730328804
    assert 0 < 0.42062820730328815 - avx2_max <= 2 * np.spacing(avx2_max)   # one or two ulps
    fig, images = two_panels(avx2_max)
    assert images[0].norm.vmax != images[1].norm.vmax    # not equal as floats ...
    assert figure_problems(fig) == []                     # ... yet one colour scale
    plt.close(fig)
    # float32 maxima computed by two code paths: a few ulps of float32 apart
    fig, _ = two_panels(float(np.float32(0.42062820730328815) * np.float32(1 + 4e-7)))
    assert figure_problems(fig) == []


def test_two_panels_whose_scales_really_differ_still_need_two_colour_bars():
    for second in (0.40, 0.42062820730328815 * (1 - 1 / 200), 0.42062820730328815 * 1.01):
        fig, _ = two_panels(second)
        assert any("no colour bar" in p for p in figure_problems(fig)), second
        plt.close(fig)


def test_same_scale_compares_limits_with_a_tolerance_of_half_a_colour():
    scale = ("viridis", "Normalize", 0.0, 1.0)
    assert figure_check.same_scale(scale, ("viridis", "Normalize", 0.0, 1.0 + 1e-12))
    assert figure_check.same_scale(scale, ("viridis", "Normalize", 1e-4, 1.0 - 1e-3))
    assert not figure_check.same_scale(scale, ("viridis", "Normalize", 0.0, 1.0 - 1 / 200))
    assert not figure_check.same_scale(scale, ("viridis", "Normalize", -0.01, 1.0))
    assert not figure_check.same_scale(scale, ("magma", "Normalize", 0.0, 1.0))
    assert not figure_check.same_scale(scale, ("viridis", "LogNorm", 0.0, 1.0))
    # a constant image has a range of zero: its limits compare as numbers, with round-off allowed
    assert figure_check.same_scale(("viridis", "Normalize", 0.5, 0.5),
                                   ("viridis", "Normalize", 0.5 + 1e-16, 0.5 + 1e-16))
    assert not figure_check.same_scale(("viridis", "Normalize", 0.5, 0.5),
                                       ("viridis", "Normalize", 0.6, 0.6))


def test_pictures_need_no_colour_bar():
    fig, (left, right) = plt.subplots(1, 2, figsize=(4, 2))
    left.imshow(np.random.default_rng(1).random((8, 8, 3)))   # RGB: a photo
    figure_check.mark_picture(right.imshow(WEIGHTS, cmap="gray_r"))   # a grey-level digit
    for ax in (left, right):
        ax.axis("off")
    assert figure_problems(fig) == []


def test_text_under_9_px_on_the_site_fails():
    fig, _ = heat_map(fontsize=5)   # 5 pt at 110 dpi: 7.6 px
    assert any("text as small as 7.6 px" in p for p in figure_problems(fig))


def test_a_figure_wider_than_the_column_is_shrunk_with_its_text():
    # 9 pt at 110 dpi is 13.75 px; in a figure 18 inches wide, cropped to its content (over
    # 1300 px), and shown 672 px wide, it is under 7 px
    fig, _ = heat_map(fontsize=9, size=(18, 3))
    fig.draw_without_rendering()
    width = figure_check.shown_width_px(fig, fig.canvas.get_renderer())
    assert 1300 < width < 18 * 110
    problems = figure_problems(fig)
    assert any("text as small as" in p and f"{width:.0f} px wide" in p for p in problems)
    assert figure_check.text_px(9, 110, 672) == pytest.approx(13.75)
    assert figure_check.text_px(9, 110, 1344) == pytest.approx(6.875)


def test_fractional_ticks_on_a_heat_map_of_positions_fail():
    fig, ax = plt.subplots(figsize=(3, 3))
    image = ax.imshow(WEIGHTS[:2, :2], vmin=0, vmax=1)   # two positions: ticks at -0.5, 0, 0.5, ...
    fig.colorbar(image, ax=ax)
    assert any("fractional ticks" in p for p in figure_problems(fig))
    figure_check.mark_positional(ax.xaxis)
    figure_check.mark_positional(ax.yaxis)
    assert figure_problems(fig) == []


def test_fractional_ticks_fail_on_a_marked_axis_only():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1, 2], [0.1, 0.4, 0.2])
    ax.set_xlim(0, 2)
    assert figure_problems(fig) == []    # a line plot's x axis may well be continuous
    setattr(ax.xaxis, figure_check._POSITIONAL, True)   # marked, but its ticks left at 0.25 steps
    assert any("x axis of positions" in p for p in figure_problems(fig))
    figure_check.mark_positional(ax.xaxis)
    assert figure_problems(fig) == []
    assert [t for t in ax.get_xticks() if 0 <= t <= 2] == [0, 1, 2]


def test_hand_set_token_ticks_are_kept_by_mark_positional():
    fig, ax = plt.subplots()
    ax.plot(range(3), [1, 2, 3])
    ax.set_xticks(range(3), ["a", "b", "c"])
    figure_check.mark_positional(ax.xaxis)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]


def test_the_installed_check_fails_the_cell_and_keeps_its_displayed_value():
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    try:
        assert figure_check.install(shell)
        figure_check.install(shell)   # twice: still one check
        assert sum(isinstance(t, figure_check._CheckFiguresAtCellEnd)
                   for t in shell.ast_transformers) == 1
        result = shell.run_cell("import matplotlib.pyplot as plt\n"
                                "fig, ax = plt.subplots()\nax.imshow([[0.0, 1.0], [1.0, 0.0]])\n"
                                "ax.set(xticks=[0, 1], yticks=[0, 1])\n"
                                "fig.colorbar(ax.images[0])\n6 * 7")
        assert result.success and result.result == 42
        plt.close("all")
        result = shell.run_cell("import matplotlib.pyplot as plt\n"
                                "fig, ax = plt.subplots()\nax.imshow([[0.0, 1.0], [1.0, 0.0]])\n"
                                "ax.set_title('no bar')")
        assert not result.success
        assert isinstance(result.error_in_exec, UnreadableFigure)
        assert "(no bar)" in str(result.error_in_exec)
        plt.close("all")
        assert shell.run_cell("x = 1").success   # a cell that ends with a statement
    finally:
        shell.ast_transformers[:] = [t for t in shell.ast_transformers
                                     if not isinstance(t, figure_check._CheckFiguresAtCellEnd)]
        plt.close("all")


def test_enabled_in_the_strict_build_only(monkeypatch):
    monkeypatch.delenv(figure_check.CHECK_VARIABLE, raising=False)
    monkeypatch.delenv("ATTENTION_COURSE_CLAIMS_MODE", raising=False)
    assert not figure_check.enabled()
    monkeypatch.setenv("ATTENTION_COURSE_CLAIMS_MODE", "record")
    assert not figure_check.enabled()
    monkeypatch.setenv("ATTENTION_COURSE_CLAIMS_MODE", "assert")
    assert figure_check.enabled()


def test_the_figures_image_is_shown_at_most_672_px_wide_at_1280_px():
    # the article's 752 px less its padding and the output's margins, as the browser measures
    # it (tests/site/test_site_figures.py): a figure 1000 px wide is shown at 0.672 of its size
    assert figure_check.CONTENT_WIDTH_PX == 672
    assert figure_check.text_px(10, 110, 1000) == pytest.approx(10 * 110 / 72 * 0.672)
    fig, _ = heat_map(fontsize=9, size=(12, 3))    # 13.75 px, in a figure under 1000 px wide: over 9 px
    assert figure_problems(fig) == []
    fig, _ = heat_map(fontsize=9, size=(15, 3))    # about 1170 px wide: under 8 px
    assert any("text as small as 7." in p for p in figure_problems(fig)), figure_problems(fig)


def test_the_smallest_text_is_measured_in_the_pngs_pixels():
    fig, ax = heat_map(fontsize=10)
    ax.text(0, 0, "tiny", fontsize=6)
    assert figure_check.smallest_text_px(fig) == pytest.approx(6 * 110 / 72)
    ax.texts[0].set_visible(False)                # what the PNG does not show does not count
    assert figure_check.smallest_text_px(fig) == pytest.approx(10 * 110 / 72)
    empty, ax = plt.subplots()
    ax.axis("off")
    assert figure_check.smallest_text_px(empty) is None


def png_text(data: str) -> dict:
    import base64
    import io

    from PIL import Image

    return Image.open(io.BytesIO(base64.b64decode(data))).text


def test_ipythons_png_of_a_figure_carries_its_smallest_text():
    from IPython.core.pylabtools import select_figure_formats
    from IPython.testing.globalipapp import get_ipython
    from matplotlib.figure import Figure

    shell = get_ipython()
    formatter = shell.display_formatter.formatters["image/png"]
    before = formatter.type_printers.get(Figure)
    try:
        select_figure_formats(shell, {"png"})          # as the inline backend does
        assert figure_check.record_smallest_text(shell)
        assert figure_check.record_smallest_text(shell)      # twice: wrapped once
        png = formatter.lookup_by_type(Figure)
        assert png.func is figure_check.png_with_smallest_text
        assert png.keywords["png"].func.__name__ == "print_figure"   # IPython's own, not wrapped twice
        fig, ax = heat_map(fontsize=10)
        ax.set_title("small title", fontsize=7.5)
        assert png_text(png(fig))[figure_check.SMALLEST_TEXT_KEY] == f"{7.5 * 110 / 72:.2f}"
        blank, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        ax.axis("off")
        assert png_text(png(blank))[figure_check.SMALLEST_TEXT_KEY] == "none"
    finally:
        formatter.pop(Figure, None)
        if before is not None:
            formatter.for_type(Figure, before)
