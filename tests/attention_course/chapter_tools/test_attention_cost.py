"""attention_cost: the table and figure of chapter 6's cost section, on tiny sizes.

No timing thresholds (a busy machine must not fail a test): only the table's
shape, positive times, the operation count's formula, and memory, which is
deterministic.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attention_course.chapter_tools import attention_cost


def test_multi_head_flops_counts_projections_and_attention():
    # B=2, T=3, d_model=8, N=2, d_k=4: 4 * 2*2*3*8*8 + 2 * 2*2*2*3*3*4
    assert attention_cost.multi_head_flops(3, 8, 2, 4, batch=2) == 3072 + 576
    # the attention term is quadratic in T, the projections linear
    doubled = attention_cost.multi_head_flops(6, 8, 2, 4, batch=2)
    assert doubled == 2 * 3072 + 4 * 576


def test_peak_matmul_flops_is_the_faster_of_the_two_thread_settings(monkeypatch):
    speeds = {None: 3.0, 1: 5.0}
    monkeypatch.setattr(attention_cost, "matmul_flops", lambda n, threads, budget: speeds[threads])
    assert attention_cost.peak_matmul_flops(8) == 5.0


def test_matmul_flops_is_positive():
    assert attention_cost.matmul_flops(16, threads=1, budget=0.0) > 0


def test_peak_memory_counts_numpy_arrays():
    assert attention_cost.peak_memory_bytes(lambda: np.ones(250_000)) >= 2_000_000


@pytest.fixture(scope="module")
def cost():
    return attention_cost.multi_head_cost(lengths=(8, 16, 32), d_model=16, num_heads=2, rounds=1,
                                          budget=0.0, matmul_size=32)


def test_the_table_has_a_row_per_length_and_every_column(cost):
    assert list(cost.index) == [8, 16, 32]
    assert cost.index.name == "T"
    assert tuple(cost.columns) == attention_cost.COLUMNS
    assert (cost.to_numpy() > 0).all()
    assert cost.attrs["peak_flops"] > 0


def test_the_arithmetic_limit_is_the_operation_count_at_peak_speed(cost):
    expected = [1e3 * attention_cost.multi_head_flops(T, 16, 2, 8) / cost.attrs["peak_flops"]
                for T in cost.index]
    np.testing.assert_allclose(cost["arithmetic limit (ms)"], expected)


def test_memory_holds_the_score_tensor(cost):
    np.testing.assert_allclose(cost["score tensor (MB)"], [2 * T * T * 4 / 1e6 for T in (8, 16, 32)])
    assert (cost["NumPy peak memory (MB)"] >= cost["score tensor (MB)"]).all()


def test_plot_cost_draws_time_and_memory(cost):
    fig = attention_cost.plot_cost(cost)
    time_panel, memory_panel = fig.axes
    assert time_panel.get_title() == "Time" and memory_panel.get_title() == "Memory"
    assert len(time_panel.get_lines()) == 4          # NumPy, Keras, limit, T^2 guide
    assert len(memory_panel.get_lines()) == 2
    np.testing.assert_array_equal(time_panel.get_lines()[0].get_xdata(), [8, 16, 32])
    plt.close(fig)
