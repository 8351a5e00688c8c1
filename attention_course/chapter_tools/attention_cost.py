"""What a multi-head attention layer costs as the sequence grows: time, arithmetic limit, memory.

Chapter 6, *Multi-head attention*, section "What it costs as the sequence
grows", calls :func:`multi_head_cost` once for its table and
:func:`plot_cost` once for its figure.  The times come from a machine that
may be busy with other work (:func:`~attention_course.chapter_tools.timing.best_time`
keeps the fastest call) and are never asserted; the memory is deterministic.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from .timing import best_time

#: the columns of :func:`multi_head_cost`'s table, in order
COLUMNS = ("NumPy (ms)", "Keras (ms)", "arithmetic limit (ms)", "NumPy peak memory (MB)",
           "score tensor (MB)")


def matmul_flops(n: int = 1024, threads: int | None = None, budget: float = 0.3) -> float:
    """Floating-point operations per second of an ``n x n`` float32 matrix product.

    With ``threads`` BLAS threads (``None``: the library's default, all cores).
    """
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    with threadpool_limits(limits=threads, user_api="blas"):
        return 2 * n**3 / best_time(lambda: a @ a, budget=budget)


def peak_matmul_flops(n: int = 1024, budget: float = 0.3) -> float:
    """The best this machine does: the faster of all cores and one thread (FLOP/s).

    On an idle machine all cores win; on a busy one a single thread can,
    because threads that wait for each other waste their turns.
    """
    return max(matmul_flops(n, None, budget), matmul_flops(n, 1, budget))


def multi_head_flops(length: int, d_model: int, num_heads: int, key_dim: int, batch: int = 1) -> int:
    """Operations of one self-attention forward pass: projections (linear in T) + attention (T^2).

    Four projections (query, key, value, output) of ``2 B T d_model N d_k``
    each, and ``QK^T`` and ``AV`` of ``2 B N T^2 d_k`` each.
    """
    projections = 4 * 2 * batch * length * d_model * (num_heads * key_dim)
    attention = 2 * 2 * batch * num_heads * length * length * key_dim
    return projections + attention


def peak_memory_bytes(function) -> int:
    """The peak of the memory that Python and NumPy allocate during ``function()`` (tracemalloc)."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def multi_head_cost(lengths=(32, 64, 128, 256, 512, 1024), d_model: int = 128, num_heads: int = 4,
                    batch: int = 1, rounds: int = 2, budget: float = 0.1, seed: int = 0,
                    matmul_size: int = 1024) -> pd.DataFrame:
    """Time and memory of multi-head self-attention, NumPy and Keras, one row per length ``T``.

    One ``keras.layers.MultiHeadAttention`` (``key_dim = d_model / num_heads``)
    and the course's NumPy layer with the same weights run on ``(batch, T,
    d_model)`` inputs.  A length's time is its fastest call over ``rounds``
    rounds over all lengths, NumPy and Keras apart (so that neither runs while
    the other's threads are still busy); NumPy with one BLAS thread (its many
    small per-head products waste time waiting for each other on a small busy
    machine), Keras with TensorFlow's thread pool, called eagerly.  The
    *arithmetic limit* is :func:`multi_head_flops` over the fastest matrix
    product (:func:`peak_matmul_flops`, measured again every round, under the
    same load), returned as ``table.attrs["peak_flops"]`` (with the layer's
    ``d_model``, ``num_heads`` and ``batch``).  The peak memory is
    the NumPy call's, measured with ``tracemalloc``; the score tensor is one
    ``(B, N, T, T)`` float32 array.
    """
    import keras

    from ..multi_head import multi_head_attention
    from ..weights import from_keras

    key_dim = d_model // num_heads
    layer = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=key_dim)
    layer(np.zeros((1, 4, d_model), "float32"), np.zeros((1, 4, d_model), "float32"))   # build
    weights = from_keras.multi_head_attention(layer)
    rng = np.random.default_rng(seed)
    inputs = {T: rng.standard_normal((batch, T, d_model)).astype("float32") for T in lengths}

    peak = 0.0
    numpy_seconds = dict.fromkeys(lengths, np.inf)
    keras_seconds = dict.fromkeys(lengths, np.inf)
    for _ in range(rounds):
        peak = max(peak, peak_matmul_flops(matmul_size))
        with threadpool_limits(limits=1, user_api="blas"):
            for T, x in inputs.items():
                seconds = best_time(lambda: multi_head_attention(x, x, weights), budget=budget)
                numpy_seconds[T] = min(numpy_seconds[T], seconds)
        for T, x in inputs.items():
            keras_seconds[T] = min(keras_seconds[T], best_time(lambda: layer(x, x), budget=budget))

    rows = []
    for T, x in inputs.items():
        rows.append({"T": T, "NumPy (ms)": 1e3 * numpy_seconds[T], "Keras (ms)": 1e3 * keras_seconds[T],
                     "arithmetic limit (ms)":
                         1e3 * multi_head_flops(T, d_model, num_heads, key_dim, batch) / peak,
                     "NumPy peak memory (MB)":
                         peak_memory_bytes(lambda: multi_head_attention(x, x, weights)) / 1e6,
                     "score tensor (MB)": batch * num_heads * T * T * 4 / 1e6})
    table = pd.DataFrame(rows, columns=["T", *COLUMNS]).set_index("T")
    table.attrs.update(peak_flops=peak, d_model=d_model, num_heads=num_heads, batch=batch)
    return table


def plot_cost(table: pd.DataFrame):
    """Two log-log panels of :func:`multi_head_cost`'s table: time per pass, and memory."""
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    T = table.index.to_numpy(dtype=float)
    for column, marker in (("NumPy (ms)", "o"), ("Keras (ms)", "s"), ("arithmetic limit (ms)", "^")):
        left.loglog(T, table[column], marker=marker, label=column.replace(" (ms)", ""))
    anchor = table["NumPy (ms)"].iloc[-1]
    left.loglog(T, anchor * (T / T[-1]) ** 2, "k--", linewidth=1, label=r"$\propto T^2$")
    left.set_ylabel("time per forward pass (ms)")
    left.set_title("Time")
    right.loglog(T, table["NumPy peak memory (MB)"], "o-", label="NumPy peak (tracemalloc)")
    right.loglog(T, table["score tensor (MB)"], "k--", linewidth=1,
                 label=r"one $(B, N, T, T)$ float32 tensor")
    right.set_ylabel("memory (MB)")
    right.set_title("Memory")
    for ax in (left, right):
        ax.set_xlabel("sequence length T (tokens)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=9)
    return fig
