"""Benchmark: the NumPy multi-head attention forward pass against ``keras.layers.MultiHeadAttention``.

The course's bar: the NumPy reference (``attention_course.multi_head``) is
within 1.5x of the Keras layer at batch 32, length 128, d_model 256, 8 heads,
float32, self-attention -- with both computing the same thing from the same
weights (checked before timing).

Each implementation is timed in a fresh process of its own, so that neither
TensorFlow's thread pool nor OpenBLAS's threads compete with the other's:

* ``numpy``:  ``multi_head_attention(x, x, weights)``, with NumPy's BLAS
  (OpenBLAS) using its default number of threads, and with one thread: on a
  machine busy with other work, the threads of many small matrix products wait
  for each other, and one thread can be the faster;
* ``keras``:  the layer called eagerly, ``layer(x, x)``, and the same call
  traced once with ``tf.function`` (no Python overhead per call), with
  ``TF_ENABLE_ONEDNN_OPTS=0`` (as the tests run) and ``=1`` (TensorFlow's
  default on x86; the variable is read when TensorFlow is imported, hence the
  separate process).

The rounds alternate between the processes, so that a change in the machine's
load hits every implementation alike; each time reported is the median of all
repeats. Run it from the repository root:

    .venv/bin/python benchmarks/mha_forward.py            # about a minute
    .venv/bin/python benchmarks/mha_forward.py --rounds 1 --repeats 10   # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

SHAPE = {"batch": 32, "length": 128, "d_model": 256, "heads": 8}


def make_inputs(batch, length, d_model, heads, seed=0):
    """The input ``(batch, length, d_model)`` and the layer's weights, float32, from one seed."""
    from attention_course.multi_head import MultiHeadAttentionWeights

    x = np.random.default_rng(seed).standard_normal((batch, length, d_model)).astype(np.float32)
    weights = MultiHeadAttentionWeights.random(d_model, heads, d_model // heads, seed=seed)
    return x, weights


def median_ms(function, repeats: int, warmup: int = 3) -> list[float]:
    """Wall-clock milliseconds of ``repeats`` calls of ``function()``, after ``warmup`` calls."""
    for _ in range(warmup):
        function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(1e3 * (time.perf_counter() - start))
    return times


def time_numpy(args) -> dict:
    from attention_course.multi_head import multi_head_attention

    x, weights = make_inputs(args.batch, args.length, args.d_model, args.heads)
    return {"numpy": median_ms(lambda: multi_head_attention(x, x, weights), args.repeats)}


def time_keras(args) -> dict:
    import attention_course  # noqa: F401  (quiet TensorFlow before it loads)
    import keras
    import tensorflow as tf

    from attention_course.multi_head import multi_head_attention

    x, weights = make_inputs(args.batch, args.length, args.d_model, args.heads)
    layer = keras.layers.MultiHeadAttention(num_heads=args.heads, key_dim=args.d_model // args.heads)
    layer(x[:1], x[:1])  # build
    # Keras' weight order: query, key, value, output; each kernel then its bias.
    layer.set_weights([weights.query_kernel, weights.query_bias, weights.key_kernel,
                       weights.key_bias, weights.value_kernel, weights.value_bias,
                       weights.output_kernel, weights.output_bias])
    x_tf = tf.constant(x)
    compiled = tf.function(lambda inputs: layer(inputs, inputs))

    # Same weights, same numbers: otherwise the comparison means nothing.
    expected, _ = multi_head_attention(x, x, weights)
    for call in (lambda: layer(x_tf, x_tf), lambda: compiled(x_tf)):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(call()), expected, rtol=1e-4, atol=1e-5)

    return {"keras eager": median_ms(lambda: layer(x_tf, x_tf), args.repeats),
            "keras tf.function": median_ms(lambda: compiled(x_tf).numpy(), args.repeats)}


def run_worker(kind: str, env_update: dict, args) -> dict:
    """Time one implementation in a fresh Python process; returns ``{name: [ms, ...]}``."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **env_update)
    command = [sys.executable, __file__, "--worker", kind, "--repeats", str(args.repeats),
               *(f"--{k.replace('_', '-')}={getattr(args, k)}" for k in SHAPE)]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default in SHAPE.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=default)
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of all processes")
    parser.add_argument("--worker", choices=["numpy", "keras"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        timer = time_numpy if args.worker == "numpy" else time_keras
        print(json.dumps(timer(args)))
        return 0

    print(f"multi-head self-attention forward, float32: batch {args.batch}, length {args.length}, "
          f"d_model {args.d_model}, {args.heads} heads; {args.rounds} rounds x {args.repeats} "
          f"calls, median\n")
    times: dict[str, list[float]] = {}
    workers = [("numpy", {}, ""),
               ("numpy", {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}, " (1 BLAS thread)"),
               ("keras", {"TF_ENABLE_ONEDNN_OPTS": "0"}, " (oneDNN off)"),
               ("keras", {"TF_ENABLE_ONEDNN_OPTS": "1"}, " (oneDNN on)")]
    for _ in range(args.rounds):
        for kind, env_update, label in workers:
            for name, values in run_worker(kind, env_update, args).items():
                times.setdefault(name + label, []).extend(values)
    medians = {name: float(np.median(values)) for name, values in times.items()}
    numpy_runs = {name: ms for name, ms in medians.items() if name.startswith("numpy")}
    keras_runs = {name: ms for name, ms in medians.items() if name.startswith("keras")}
    for name, ms in {**numpy_runs, **keras_runs}.items():
        print(f"{name:34s} {ms:8.2f} ms")
    print("\nratio NumPy / Keras (rows: Keras; columns: NumPy)")
    print(f"{'':34s} " + " ".join(f"{name:>24s}" for name in numpy_runs))
    for name, ms in keras_runs.items():
        print(f"{name:34s} " + " ".join(f"{numpy_ms / ms:24.2f}" for numpy_ms in numpy_runs.values()))
    course = numpy_runs["numpy"] / keras_runs["keras eager (oneDNN off)"]
    print(f"\nNumPy / Keras as the tests run (default BLAS threads; eager Keras call, "
          f"oneDNN off): {course:.2f} (bar: <= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
