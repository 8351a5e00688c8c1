"""Reference data for the exercises' tests, produced ahead of time by the real Keras layers.

Grading must be fast: importing TensorFlow in every grading kernel costs
seconds (and writes to stderr).  So the expected values the tests compare
against are computed *here*, once, with ``keras.layers.AdditiveAttention``,
``Attention``, ``MultiHeadAttention``, ``LayerNormalization``, ``Dense``,
``Conv2D`` and ``keras.ops.image.extract_patches`` (with randomised, non-default
weights).  Two uses:

* **visible** tests' examples are written into the source notebooks in
  ``solutions/`` as generated blocks: readable NumPy literals, or a compressed,
  base64-encoded array bundle for examples too big to read (names ending ``_data``);
* the ``*_hidden`` generators' cases check each assignment's **reference
  solution** against Keras (``tests/course_authoring/test_reference_solutions.py``):
  hidden tests store no data, they compare with that solution on inputs drawn
  at grading time from the course's secret (``course_grader.hidden_tests``).

Run ``python -m course_authoring.references`` after changing a generator to rewrite
the blocks (it also writes the cells every assignment shares, from
``assignment_header.py``); ``tests/course_authoring/test_exercise_references.py`` regenerates every block with
Keras and fails if a notebook disagrees.  Where no Keras layer exists (softmax
with the course's masking convention, sinusoidal positions, causal masks) the
expected values come from an independent implementation, named in the
generator.
"""

from __future__ import annotations

import base64
import json
import re
import sys
import zlib
from pathlib import Path

import numpy as np

from attention_course.weights.randomise import randomise_weights

from . import assignment_header

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
BEGIN = "# BEGIN GENERATED "
END = "# END GENERATED"
NOTICE = "-- written by `python -m course_authoring.references`; do not edit"
F32 = np.float32


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def _keras():
    import attention_course  # noqa: F401  (quiets TensorFlow before it loads)
    import keras

    return keras


def _np(tensor):
    return np.asarray(_keras().ops.convert_to_numpy(tensor))


def _normal(rng, *shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(F32)


def _randomise(layer, rng, scale=0.4):
    """Every weight random (Keras initialises biases to zero, which would hide a missing bias)."""
    randomise_weights(layer, rng, scale=scale, vector_shift=0.0)


def _with_masks(case: dict, q_mask, v_mask) -> dict:
    """``case`` plus the masks that were used (a test passes them on only when present)."""
    if q_mask is not None:
        case["query_mask"] = q_mask
    if v_mask is not None:
        case["value_mask"] = v_mask
    return case


def _course_softmax(x, axis, mask=None):
    from attention_course.softmax import softmax

    return softmax(np.asarray(x, dtype=np.float64), axis=axis, mask=mask)


# ---------------------------------------------------------------------------
# Assignment 1: softmax and additive attention
# ---------------------------------------------------------------------------

def softmax_stability_hidden():
    """Softmax of large, very negative and widely spread scores (reference: float64, course softmax)."""
    rng = np.random.default_rng(101)
    cases = {
        "large": rng.normal(size=(3, 6)) * 3 + 1000.0,
        "very_negative": rng.normal(size=(2, 5)) * 2 - 1000.0,
        "float32_spread": (rng.uniform(-300, 300, size=(4, 7))).astype(F32),
        "one_huge": np.array([[0.0, 800.0, 1.0], [-5.0, 3.0, 720.0]]),
    }
    return {name: {"x": x, "expected": _course_softmax(x, -1).astype(x.dtype)}
            for name, x in cases.items()}


def softmax_axes_hidden():
    """Softmax over each axis of a 3-D array, and of a 1-D one."""
    rng = np.random.default_rng(102)
    x = rng.normal(size=(2, 3, 4)) * 2
    out = {f"axis{axis}": {"x": x, "axis": np.array(axis), "expected": _course_softmax(x, axis)}
           for axis in (0, 1, 2, -1, -2)}
    v = rng.normal(size=5)
    out["vector"] = {"x": v, "axis": np.array(-1), "expected": _course_softmax(v, -1)}
    return out


def softmax_masks_hidden():
    """Masked softmax: broadcast masks, a fully masked row, large masked scores."""
    rng = np.random.default_rng(103)
    x = rng.normal(size=(2, 3, 5))
    key_mask = np.array([True, True, False, True, False])
    batch_mask = rng.random((2, 1, 5)) > 0.4
    batch_mask[..., 0] = True
    full = rng.random((2, 3, 5)) > 0.5
    full[0, 1] = False                       # a row with nothing to attend to
    full[1, :, 2] = True
    big = x.copy()
    big[..., 1] = 1e4                        # a huge score that is masked out
    big_mask = np.ones_like(big, dtype=bool)
    big_mask[..., 1] = False
    cases = {"key_mask": (x, key_mask), "batch_mask": (x, batch_mask), "fully_masked_row": (x, full),
             "masked_huge_score": (big, big_mask)}
    return {name: {"x": x, "mask": mask, "expected": _course_softmax(x, -1, mask)}
            for name, (x, mask) in cases.items()}


def _additive(rng, B, Tq, Tk, d, dv, use_scale=True, q_mask=None, v_mask=None):
    keras = _keras()
    layer = keras.layers.AdditiveAttention(use_scale=use_scale)
    q, k, v = _normal(rng, B, Tq, d), _normal(rng, B, Tk, d), _normal(rng, B, Tk, dv)
    layer([q, v, k])
    if use_scale:
        _randomise(layer, rng, scale=1.0)
    mask = None if q_mask is None and v_mask is None else [q_mask, v_mask]
    out, weights = layer([q, v, k], mask=mask, return_attention_scores=True)
    case = {"query": q, "key": k, "value": v, "output": _np(out), "weights": _np(weights)}
    if use_scale:
        case["scale"] = _np(layer.scale)
    return _with_masks(case, q_mask, v_mask)


def additive_example():
    """keras.layers.AdditiveAttention(use_scale=True) on one small batch, with a value mask."""
    rng = np.random.default_rng(111)
    v_mask = np.array([[True, True, False]])
    case = _additive(rng, 1, 2, 3, 2, 2, v_mask=v_mask)
    return {"query": case["query"], "key": case["key"], "value": case["value"],
            "scale": case["scale"], "value_mask": v_mask,
            "keras_output": case["output"], "keras_weights": case["weights"]}


def additive_hidden():
    rng = np.random.default_rng(112)
    v_mask = np.array([[True, False, True, True, False], [True, True, True, False, False]])
    q_mask = np.array([[True, True, False], [False, True, True]])
    return {
        "no_mask": _additive(rng, 2, 3, 5, 4, 6),
        "value_mask": _additive(rng, 2, 3, 5, 4, 6, v_mask=v_mask),
        "query_and_value_mask": _additive(rng, 2, 3, 5, 4, 3, q_mask=q_mask, v_mask=v_mask),
        "no_scale": _additive(rng, 2, 4, 3, 5, 2, use_scale=False),
        "one_query": _additive(rng, 3, 1, 6, 3, 4),
    }


# ---------------------------------------------------------------------------
# Assignment 2: dot-product attention
# ---------------------------------------------------------------------------

def _luong(rng, B, Tq, Tk, d, dv, scale, q_mask=None, v_mask=None, causal=False):
    keras = _keras()
    layer = keras.layers.Attention(use_scale=True)
    q, k, v = _normal(rng, B, Tq, d), _normal(rng, B, Tk, d), _normal(rng, B, Tk, dv)
    layer([q, v, k])
    layer.set_weights([np.array(scale, dtype=F32)])
    mask = None if q_mask is None and v_mask is None else [q_mask, v_mask]
    out, weights = layer([q, v, k], mask=mask, return_attention_scores=True, use_causal_mask=causal)
    case = {"query": q, "key": k, "value": v, "scale": np.array(scale, dtype=F32),
            "output": _np(out), "weights": _np(weights), "causal": np.array(causal)}
    return _with_masks(case, q_mask, v_mask)


def dot_example():
    """keras.layers.Attention(use_scale=True), its scale set to 0.5, on one small batch."""
    rng = np.random.default_rng(201)
    case = _luong(rng, 1, 2, 3, 2, 2, 0.5)
    return {"query": case["query"], "key": case["key"], "value": case["value"],
            "keras_output": case["output"], "keras_weights": case["weights"]}


def dot_scores_hidden():
    """Scores q . k * scale (reference: einsum in float64)."""
    rng = np.random.default_rng(202)
    out = {}
    for name, (B, Tq, Tk, d, scale) in {"batch": (2, 3, 4, 5, 1.0), "scaled": (2, 4, 2, 3, 0.25),
                                        "no_batch": (0, 3, 5, 4, 2.0)}.items():
        shape_q = (B, Tq, d) if B else (Tq, d)
        shape_k = (B, Tk, d) if B else (Tk, d)
        q, k = rng.normal(size=shape_q), rng.normal(size=shape_k)
        out[name] = {"query": q, "key": k, "scale": np.array(scale),
                     "expected": np.einsum("...qd,...kd->...qk", q, k) * scale}
    return out


def causal_hidden():
    """Causal masks, query i sees keys 0..i (reference: explicit comparison of indices)."""
    out = {}
    for T_q, T_k in ((4, 4), (3, 5), (5, 3), (1, 1), (1, 4)):
        i, j = np.meshgrid(np.arange(T_q), np.arange(T_k), indexing="ij")
        out[f"q{T_q}_k{T_k}"] = {"T_q": np.array(T_q), "T_k": np.array(T_k), "expected": j <= i}
    return out


def attention_hidden():
    """keras.layers.Attention(use_scale=True), its scale set, with and without padding masks."""
    rng = np.random.default_rng(203)
    v_mask = np.array([[True, True, False, True], [True, False, True, False]])
    q_mask = np.array([[True, False, True, True], [True, True, True, False]])
    return {
        "no_mask": _luong(rng, 2, 3, 4, 5, 6, 0.7),
        "value_mask": _luong(rng, 2, 4, 4, 5, 3, 1.3, v_mask=v_mask),
        "query_mask": _luong(rng, 2, 4, 4, 3, 3, 0.4, q_mask=q_mask),
        "both_masks": _luong(rng, 2, 4, 4, 3, 2, 0.8, q_mask=q_mask, v_mask=v_mask),
    }


def attention_causal_hidden():
    """keras.layers.Attention(use_scale=True) with use_causal_mask=True."""
    rng = np.random.default_rng(205)
    v_mask = np.array([[True, True, False, True], [True, False, True, False]])
    return {
        "causal": _luong(rng, 2, 4, 4, 5, 2, 0.9, causal=True),
        "causal_and_value_mask": _luong(rng, 2, 4, 4, 5, 2, 1.1, v_mask=v_mask, causal=True),
        "causal_wide": _luong(rng, 1, 3, 5, 4, 4, 0.6, causal=True),
    }


def scaled_hidden():
    """softmax(Q K^T / sqrt(d_k)) V with an optional (B, T_q, T_k) mask: keras.ops.dot_product_attention.

    The weights, which that op does not return, come from the course softmax.
    """
    keras = _keras()
    rng = np.random.default_rng(204)
    out = {}
    for name, (B, Tq, Tk, d, dv, with_mask) in {"d16": (2, 3, 4, 16, 5, False),
                                                "d64_mask": (2, 4, 5, 64, 3, True),
                                                "d1": (1, 2, 3, 1, 2, False)}.items():
        q, k, v = _normal(rng, B, Tq, d), _normal(rng, B, Tk, d), _normal(rng, B, Tk, dv)
        mask = None
        if with_mask:
            mask = rng.random((B, Tq, Tk)) > 0.4
            mask[..., 0] = True
        # keras.ops.dot_product_attention wants (batch, length, heads, depth): one head here.
        output = _np(keras.ops.dot_product_attention(
            q[:, :, None], k[:, :, None], v[:, :, None],
            mask=None if mask is None else mask[:, None], scale=float(1 / np.sqrt(d))))[:, :, 0]
        scores = np.einsum("bqd,bkd->bqk", q.astype(np.float64), k) / np.sqrt(d)
        case = {"query": q, "key": k, "value": v, "output": output,
                "weights": _course_softmax(scores, -1, mask).astype(F32)}
        if mask is not None:
            case["mask"] = mask
        out[name] = case
    return out


# ---------------------------------------------------------------------------
# Assignment 4: multi-head attention
# ---------------------------------------------------------------------------

WEIGHT_NAMES = ("query_kernel", "query_bias", "key_kernel", "key_bias", "value_kernel",
                "value_bias", "output_kernel", "output_bias")


def _mha(rng, B, T, S, d_q, d_v, heads, key_dim, value_dim=None, separate_key=False,
         mask=None, causal=False):
    keras = _keras()
    layer = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=key_dim, value_dim=value_dim)
    query, value = _normal(rng, B, T, d_q), _normal(rng, B, S, d_v)
    key = _normal(rng, B, S, d_v) if separate_key else None
    layer(query, value, key)
    _randomise(layer, rng, scale=0.5)
    out, scores = layer(query, value, key, attention_mask=mask, use_causal_mask=causal,
                        return_attention_scores=True)
    variables = {
        "query_kernel": layer.query_dense.kernel, "query_bias": layer.query_dense.bias,
        "key_kernel": layer.key_dense.kernel, "key_bias": layer.key_dense.bias,
        "value_kernel": layer.value_dense.kernel, "value_bias": layer.value_dense.bias,
        "output_kernel": layer.output_dense.kernel, "output_bias": layer.output_dense.bias}
    case = {f"w_{name}": _np(variables[name]) for name in WEIGHT_NAMES}
    case.update(query=query, value=value, output=_np(out), scores=_np(scores),
                causal=np.array(causal))
    if key is not None:
        case["key"] = key
    if mask is not None:
        case["attention_mask"] = mask
    return case


def mha_example_data():
    """keras.layers.MultiHeadAttention(num_heads=2, key_dim=2) on a batch of one 3-token sequence."""
    rng = np.random.default_rng(301)
    return {"example": _mha(rng, 1, 3, 3, 4, 4, 2, 2)}


def split_hidden():
    """split_heads / merge_heads on arrays whose values say where they came from."""
    out = {}
    for name, (B, T, heads, depth) in {"b2_t3_h4": (2, 3, 4, 5), "one_head": (1, 4, 1, 6),
                                       "t1": (3, 1, 2, 2)}.items():
        x = np.arange(B * T * heads * depth, dtype=np.float64).reshape(B, T, heads * depth)
        # (b, t, h*depth + j) -> (b, h, t, j), written index by index
        expected = np.empty((B, heads, T, depth))
        for b in range(B):
            for t in range(T):
                for h in range(heads):
                    expected[b, h, t] = x[b, t, h * depth:(h + 1) * depth]
        out[name] = {"x": x, "num_heads": np.array(heads), "expected": expected}
    return out


def mha_hidden():
    rng = np.random.default_rng(302)
    return {
        "self": _mha(rng, 2, 4, 4, 8, 8, 2, 4),
        "four_heads": _mha(rng, 2, 5, 5, 12, 12, 4, 3),
        "cross_with_key": _mha(rng, 2, 3, 5, 6, 10, 2, 4, separate_key=True),
        "value_dim": _mha(rng, 1, 4, 6, 8, 8, 3, 2, value_dim=5),
    }


def mha_masks_hidden():
    rng = np.random.default_rng(303)
    mask = rng.random((2, 4, 4)) > 0.35
    mask[..., 0] = True
    cross_mask = rng.random((2, 3, 5)) > 0.3
    cross_mask[..., 1] = True
    return {
        "attention_mask": _mha(rng, 2, 4, 4, 8, 8, 2, 4, mask=mask),
        "causal": _mha(rng, 2, 4, 4, 8, 8, 2, 4, causal=True),
        "cross_mask": _mha(rng, 2, 3, 5, 6, 6, 2, 3, mask=cross_mask),
        "causal_and_mask": _mha(rng, 2, 4, 4, 8, 8, 2, 4, mask=mask, causal=True),
    }


# ---------------------------------------------------------------------------
# Assignment 6: positional encoding, layer normalization, residuals
# ---------------------------------------------------------------------------

def positional_hidden():
    """Vaswani et al.'s sinusoids, element by element from the formula (a deliberately plain loop)."""
    import math

    out = {}
    for length, d_model in ((50, 16), (7, 6), (1, 4), (30, 2)):
        pe = np.zeros((length, d_model))
        for pos in range(length):
            for i in range(d_model // 2):
                angle = pos / 10000 ** (2 * i / d_model)
                pe[pos, 2 * i] = math.sin(angle)
                pe[pos, 2 * i + 1] = math.cos(angle)
        out[f"len{length}_d{d_model}"] = {"length": np.array(length), "d_model": np.array(d_model),
                                          "expected": pe}
    return out


def _layer_norm(rng, x, epsilon=1e-3):
    keras = _keras()
    layer = keras.layers.LayerNormalization(epsilon=epsilon)
    layer(x)
    gamma, beta = 1 + _normal(rng, x.shape[-1], scale=0.5), _normal(rng, x.shape[-1], scale=0.5)
    layer.set_weights([gamma, beta])
    return {"x": x, "gamma": gamma, "beta": beta, "epsilon": np.array(epsilon), "expected": _np(layer(x))}


def layer_norm_example():
    """keras.layers.LayerNormalization(epsilon=1e-3) with random gamma and beta on 2 x 4 features."""
    rng = np.random.default_rng(401)
    case = _layer_norm(rng, _normal(rng, 2, 4, scale=2.0))
    return {"x": case["x"], "gamma": case["gamma"], "beta": case["beta"], "keras_output": case["expected"]}


def layer_norm_hidden():
    rng = np.random.default_rng(402)
    constant = np.full((2, 6), 3.5, dtype=F32)
    constant[1] = _normal(rng, 6)
    shifted = (100 + _normal(rng, 3, 8)).astype(F32)
    return {
        "matrix": _layer_norm(rng, _normal(rng, 4, 8, scale=3.0)),
        "batch_time": _layer_norm(rng, _normal(rng, 2, 3, 10)),
        "constant_row": _layer_norm(rng, constant),
        "shifted": _layer_norm(rng, shifted),
        "epsilon_1e-6": _layer_norm(rng, _normal(rng, 3, 5, scale=0.01), epsilon=1e-6),
        "two_features": _layer_norm(rng, _normal(rng, 5, 2)),
    }


def residual_hidden():
    """Post-LN ``LayerNorm(x + sublayer_out)`` and pre-LN ``x + Dense(LayerNorm(x))`` with Keras layers."""
    keras = _keras()
    rng = np.random.default_rng(403)
    out = {}
    for name, shape in {"matrix": (4, 6), "batch_time": (2, 3, 8)}.items():
        x, sub = _normal(rng, *shape), _normal(rng, *shape)
        ln = _layer_norm(rng, x + sub)
        out[f"post_{name}"] = {"x": x, "sublayer_output": sub, "gamma": ln["gamma"], "beta": ln["beta"],
                               "expected": ln["expected"]}
        norm = keras.layers.LayerNormalization()
        dense = keras.layers.Dense(shape[-1])
        norm(x)
        dense(x)
        _randomise(norm, rng)
        _randomise(dense, rng)
        gamma, beta = (_np(w) for w in norm.weights)
        W, b = (_np(w) for w in dense.weights)
        out[f"pre_{name}"] = {"x": x, "gamma": gamma, "beta": beta, "W": W, "b": b,
                              "expected": _np(keras.layers.Add()([x, dense(norm(x))]))}
    return out


# ---------------------------------------------------------------------------
# Assignment 8: the encoder block
# ---------------------------------------------------------------------------

def _encoder(rng, B, T, d_model, heads, d_ff, pre_ln=False, padding=None):
    """One Transformer encoder block built from Keras layers, with random weights."""
    keras = _keras()
    mha = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=d_model // heads)
    norm1, norm2 = keras.layers.LayerNormalization(), keras.layers.LayerNormalization()
    dense1, dense2 = keras.layers.Dense(d_ff, activation="relu"), keras.layers.Dense(d_model)
    x = _normal(rng, B, T, d_model)
    mask = None if padding is None else np.broadcast_to(padding[:, None, :], (B, T, T))

    def block(x):
        if pre_ln:
            h = norm1(x)
            h = keras.layers.Add()([x, mha(h, h, attention_mask=mask)])
            return keras.layers.Add()([h, dense2(dense1(norm2(h)))])
        h = norm1(keras.layers.Add()([x, mha(x, x, attention_mask=mask)]))
        return norm2(keras.layers.Add()([h, dense2(dense1(h))]))

    block(x)
    for layer in (mha, norm1, norm2, dense1, dense2):
        _randomise(layer, rng, scale=0.4)
    attention = {"query_kernel": mha.query_dense.kernel, "query_bias": mha.query_dense.bias,
                 "key_kernel": mha.key_dense.kernel, "key_bias": mha.key_dense.bias,
                 "value_kernel": mha.value_dense.kernel, "value_bias": mha.value_dense.bias,
                 "output_kernel": mha.output_dense.kernel, "output_bias": mha.output_dense.bias}
    case = {f"attention_{k}": _np(v) for k, v in attention.items()}
    case.update({"ln1_gamma": _np(norm1.gamma), "ln1_beta": _np(norm1.beta),
                 "ln2_gamma": _np(norm2.gamma), "ln2_beta": _np(norm2.beta),
                 "ff_W1": _np(dense1.kernel), "ff_b1": _np(dense1.bias),
                 "ff_W2": _np(dense2.kernel), "ff_b2": _np(dense2.bias),
                 "x": x, "expected": _np(block(x))})
    if padding is not None:
        case["padding_mask"] = padding
    return case


def ffn_hidden():
    """Dense(d_ff, relu) then Dense(d_model), in Keras."""
    keras = _keras()
    rng = np.random.default_rng(501)
    out = {}
    for name, shape, d_ff in (("matrix", (5, 4), 7), ("batch_time", (2, 3, 6), 10)):
        x = _normal(rng, *shape)
        d1, d2 = keras.layers.Dense(d_ff, activation="relu"), keras.layers.Dense(shape[-1])
        d2(d1(x))
        _randomise(d1, rng)
        _randomise(d2, rng)
        out[name] = {"x": x, "W1": _np(d1.kernel), "b1": _np(d1.bias), "W2": _np(d2.kernel),
                     "b2": _np(d2.bias), "expected": _np(d2(d1(x)))}
    return out


def encoder_example_data():
    rng = np.random.default_rng(502)
    return {"post_ln": _encoder(rng, 1, 3, 4, 2, 6), "pre_ln": _encoder(rng, 1, 3, 4, 2, 6, pre_ln=True)}


def encoder_hidden():
    rng = np.random.default_rng(503)
    padding = np.array([[True, True, True, False, False], [True, True, True, True, True]])
    return {"no_mask": _encoder(rng, 2, 4, 8, 2, 16),
            "padding": _encoder(rng, 2, 5, 8, 4, 12, padding=padding),
            "one_token": _encoder(rng, 3, 1, 6, 3, 5)}


def encoder_pre_ln_hidden():
    rng = np.random.default_rng(504)
    padding = np.array([[True, True, False, False], [True, True, True, False]])
    return {"no_mask": _encoder(rng, 2, 4, 8, 2, 16, pre_ln=True),
            "padding": _encoder(rng, 2, 4, 6, 3, 10, pre_ln=True, padding=padding)}


# ---------------------------------------------------------------------------
# Assignment 12: patches for the Vision Transformer
# ---------------------------------------------------------------------------

def patches_hidden():
    """keras.ops.image.extract_patches(images, size=P), flattened to (B, N, P*P*C)."""
    keras = _keras()
    rng = np.random.default_rng(601)
    out = {}
    for name, (B, H, W, C, P) in {"square": (2, 8, 8, 3, 4), "wide": (1, 4, 6, 2, 2),
                                  "grey": (3, 6, 6, 1, 3), "one_patch": (2, 5, 5, 2, 5)}.items():
        images = _normal(rng, B, H, W, C)
        patches = _np(keras.ops.image.extract_patches(images, P))
        out[name] = {"images": images, "patch_size": np.array(P),
                     "expected": patches.reshape(B, -1, P * P * C)}
    return out


def embed_hidden():
    """Patch embedding as a ViT computes it: a Conv2D with stride = kernel = P, class token, positions."""
    keras = _keras()
    rng = np.random.default_rng(602)
    out = {}
    for name, (B, H, W, C, P, d) in {"square": (2, 8, 8, 3, 4, 5), "rect": (1, 4, 6, 2, 2, 3)}.items():
        images = _normal(rng, B, H, W, C)
        conv = keras.layers.Conv2D(d, P, strides=P)
        conv(images)
        _randomise(conv, rng)
        N = (H // P) * (W // P)
        cls, pos = _normal(rng, d), _normal(rng, N + 1, d)
        tokens = _np(conv(images)).reshape(B, N, d)
        expected = np.concatenate([np.broadcast_to(cls, (B, 1, d)), tokens], axis=1) + pos
        kernel = _np(conv.kernel)                         # (P, P, C, d)
        out[name] = {"images": images, "patch_size": np.array(P), "W": kernel.reshape(P * P * C, d),
                     "b": _np(conv.bias), "class_token": cls, "position_embeddings": pos,
                     "expected": expected.astype(F32)}
    return out


# ---------------------------------------------------------------------------
# Assignment 5: grouped-query attention
# ---------------------------------------------------------------------------

def _gqa(rng, B, T, S, d, query_heads, kv_heads, head_dim, separate_key=False, mask=None, causal=False):
    """keras.layers.GroupQueryAttention with its own randomised weights, and what it returns."""
    keras = _keras()
    layer = keras.layers.GroupQueryAttention(head_dim=head_dim, num_query_heads=query_heads,
                                             num_key_value_heads=kv_heads)
    query, value = _normal(rng, B, T, d), _normal(rng, B, S, d)
    key = _normal(rng, B, S, d) if separate_key else None
    layer(query, value, key)
    _randomise(layer, rng, scale=0.5)
    out, scores = layer(query, value, key, attention_mask=mask, use_causal_mask=causal,
                        return_attention_scores=True)
    case = {f"w_{name}": w for name, w in zip(WEIGHT_NAMES, layer.get_weights())}
    case.update(query=query, value=value, output=_np(out), scores=_np(scores), causal=np.array(causal),
                num_key_value_heads=np.array(kv_heads))
    if key is not None:
        case["key"] = key
    if mask is not None:
        case["attention_mask"] = mask
    return case


def gqa_example_data():
    """keras.layers.GroupQueryAttention(head_dim=2, num_query_heads=4, num_key_value_heads=2), 3 tokens."""
    rng = np.random.default_rng(801)
    return {"example": _gqa(rng, 1, 3, 3, 4, 4, 2, 2)}


def gqa_hidden():
    """Grouped, multi-query (one key/value head) and multi-head (as many as query heads) layers."""
    rng = np.random.default_rng(802)
    return {
        "groups_of_two": _gqa(rng, 2, 4, 4, 8, 4, 2, 4),
        "groups_of_three": _gqa(rng, 2, 5, 5, 12, 6, 2, 3),
        "multi_query": _gqa(rng, 2, 4, 4, 6, 4, 1, 5),
        "multi_head": _gqa(rng, 1, 3, 3, 6, 3, 3, 2),
        "cross_with_key": _gqa(rng, 2, 3, 5, 6, 6, 3, 4, separate_key=True),
    }


def gqa_masks_hidden():
    """keras.layers.GroupQueryAttention with an attention mask, the causal mask and both."""
    rng = np.random.default_rng(803)
    mask = rng.random((2, 4, 4)) > 0.35
    mask[..., 0] = True
    cross_mask = rng.random((2, 3, 5)) > 0.3
    cross_mask[..., 1] = True
    return {
        "attention_mask": _gqa(rng, 2, 4, 4, 8, 4, 2, 4, mask=mask),
        "causal": _gqa(rng, 2, 5, 5, 8, 6, 3, 2, causal=True),
        "causal_and_mask": _gqa(rng, 2, 4, 4, 6, 4, 1, 3, mask=mask, causal=True),
        "cross_mask": _gqa(rng, 2, 3, 5, 6, 4, 2, 4, mask=cross_mask),
    }


def gqa_pool_hidden():
    """A keras.layers.MultiHeadAttention whose heads agree within each group is a grouped layer:
    mean-pooling its key and value heads and running grouped-query attention gives its output."""
    keras = _keras()
    rng = np.random.default_rng(804)
    out = {}
    for name, (B, T, d, heads, groups, depth) in {"four_to_two": (2, 4, 8, 4, 2, 3),
                                                  "six_to_three": (1, 5, 6, 6, 3, 2),
                                                  "four_to_one": (2, 3, 6, 4, 1, 4)}.items():
        layer = keras.layers.MultiHeadAttention(num_heads=heads, key_dim=depth)
        query = _normal(rng, B, T, d)
        layer(query, query)
        _randomise(layer, rng, scale=0.5)
        weights = dict(zip(WEIGHT_NAMES, layer.get_weights()))
        r = heads // groups
        # Heads g*r ... g*r + r - 1 share the key and value projections of head g*r, plus a
        # disturbance that averages to zero in the group (so only the right groups pool it away).
        for part in ("key", "value"):
            kernel, bias = weights[f"{part}_kernel"], weights[f"{part}_bias"]
            noise_k, noise_b = _normal(rng, *kernel.shape, scale=0.3), _normal(rng, *bias.shape, scale=0.3)
            noise_k -= np.repeat(noise_k.reshape(d, groups, r, depth).mean(2), r, axis=1)
            noise_b -= np.repeat(noise_b.reshape(groups, r, depth).mean(1), r, axis=0)
            weights[f"{part}_kernel"] = np.repeat(kernel[:, ::r], r, axis=1) + noise_k
            weights[f"{part}_bias"] = np.repeat(bias[::r], r, axis=0) + noise_b
            out[name + f"_{part}_group_mean"] = {"kernel": weights[f"{part}_kernel"], "bias": weights[f"{part}_bias"],
                                                 "num_key_value_heads": np.array(groups),
                                                 "kernel_expected": kernel[:, ::r], "bias_expected": bias[::r]}
        # Without the disturbance the heads of a group are equal and the layers agree.
        same = dict(weights)
        for part in ("key", "value"):
            same[f"{part}_kernel"] = out[name + f"_{part}_group_mean"]["kernel_expected"].repeat(r, axis=1)
            same[f"{part}_bias"] = out[name + f"_{part}_group_mean"]["bias_expected"].repeat(r, axis=0)
        layer.set_weights([same[n] for n in WEIGHT_NAMES])
        case = {f"w_{n}": same[n] for n in WEIGHT_NAMES}
        case.update(query=query, output=_np(layer(query, query)), num_key_value_heads=np.array(groups))
        out[name + "_layer"] = case
    return out


def gqa_params_hidden():
    """keras.layers.GroupQueryAttention(...).count_params() for several shapes."""
    keras = _keras()
    out = {}
    for d, depth, heads, groups in ((16, 4, 4, 2), (32, 8, 8, 1), (12, 3, 6, 6), (64, 16, 8, 4)):
        layer = keras.layers.GroupQueryAttention(head_dim=depth, num_query_heads=heads, num_key_value_heads=groups)
        x = np.zeros((1, 2, d), dtype=F32)
        layer(x, x)
        out[f"d{d}_h{heads}_g{groups}"] = {"d_model": np.array(d), "head_dim": np.array(depth),
                                           "num_query_heads": np.array(heads),
                                           "num_key_value_heads": np.array(groups),
                                           "expected": np.array(layer.count_params())}
    return out


# ---------------------------------------------------------------------------
# Assignment 7: rotary position embeddings (no Keras layer: Su et al.'s complex-number form)
# ---------------------------------------------------------------------------

def _rotary_complex(x, positions, base=10000.0):
    """RoPE as Su et al. (2021) write it: pair (x_2i, x_2i+1) is the complex number
    x_2i + i x_2i+1, multiplied by exp(i m theta_i), theta_i = base^(-2i/d), at position m."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    theta = np.exp(-np.log(base) * 2 * np.arange(d // 2) / d)
    z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * np.multiply.outer(np.asarray(positions, float), theta))
    return np.stack([z.real, z.imag], axis=-1).reshape(x.shape)


def rotary_angles_hidden():
    """Angles m theta_i, written as exp(-log(base) 2i/d) m."""
    rng = np.random.default_rng(901)
    out = {}
    for name, (length, d, base) in {"d8": (5, 8, 10000.0), "d64": (7, 64, 10000.0), "base_500": (4, 16, 500.0),
                                    "d2": (3, 2, 10000.0)}.items():
        positions = rng.integers(0, 200, size=length)
        out[name] = {"positions": positions, "d": np.array(d), "base": np.array(base),
                     "expected": np.multiply.outer(positions.astype(float),
                                                   np.exp(-np.log(base) * 2 * np.arange(d // 2) / d))}
    return out


def rotary_hidden():
    """Rotated features by the complex-number form, for batches, heads and bases."""
    rng = np.random.default_rng(902)
    out = {}
    for name, (shape, base) in {"sequence": ((6, 8), 10000.0), "batch": ((2, 5, 4), 10000.0),
                                "batch_heads": ((2, 3, 4, 16), 10000.0), "base_100": ((3, 6), 100.0),
                                "far": ((2, 3, 32), 10000.0)}.items():
        x = rng.normal(size=shape)
        positions = rng.integers(0, 5000 if name == "far" else 100, size=shape[-2])
        out[name] = {"x": x, "positions": positions, "base": np.array(base),
                     "expected": _rotary_complex(x, positions, base)}
    return out


def rotary_attention_hidden():
    """Attention on complex-rotated queries and keys (course softmax, float64), values as they are."""
    rng = np.random.default_rng(903)
    out = {}
    for name, (lead, T_q, T_k, d, d_v, positions, causal) in {
            "self": ((2,), 5, 5, 8, 4, False, False), "heads": ((2, 3), 4, 4, 6, 4, False, False),
            "cross": ((2,), 3, 6, 4, 6, False, False), "positions": ((2,), 4, 7, 8, 2, True, False),
            "causal": ((2, 2), 5, 5, 8, 4, False, True), "one_query": ((2,), 1, 6, 8, 4, True, True)}.items():
        q, k, v = rng.normal(size=lead + (T_q, d)), rng.normal(size=lead + (T_k, d)), rng.normal(size=lead + (T_k, d_v))
        k_pos = np.sort(rng.choice(60, size=T_k, replace=False)) if positions else np.arange(T_k)
        q_pos = k_pos[-T_q:] if positions else np.arange(T_q)
        scores = _rotary_complex(q, q_pos) @ np.swapaxes(_rotary_complex(k, k_pos), -1, -2) / np.sqrt(d)
        mask = (k_pos[None, :] <= q_pos[:, None]) if causal else None
        weights = _course_softmax(scores, -1, mask)
        out[name] = {"query": q, "key": k, "value": v, "query_positions": q_pos, "key_positions": k_pos,
                     "causal": np.array(causal), "weights": weights, "output": weights @ v}
    return out


#: Every block a source notebook may contain, by the name it has there (``# BEGIN GENERATED <name>``).
#: A name ending in ``_hidden`` or ``_data`` is rendered encoded (:func:`is_hidden`).
GENERATORS = {
    # Assignment 1: softmax and additive attention
    "softmax_stability_hidden": softmax_stability_hidden,
    "softmax_axes_hidden": softmax_axes_hidden,
    "softmax_masks_hidden": softmax_masks_hidden,
    "additive_example": additive_example,
    "additive_hidden": additive_hidden,
    # Assignment 2: dot-product attention
    "dot_example": dot_example,
    "dot_scores_hidden": dot_scores_hidden,
    "causal_hidden": causal_hidden,
    "attention_hidden": attention_hidden,
    "attention_causal_hidden": attention_causal_hidden,
    "scaled_hidden": scaled_hidden,
    # Assignment 4: multi-head attention
    "mha_example_data": mha_example_data,
    "split_hidden": split_hidden,
    "mha_hidden": mha_hidden,
    "mha_masks_hidden": mha_masks_hidden,
    # Assignment 6: positional encoding, layer normalization, residuals
    "positional_hidden": positional_hidden,
    "layer_norm_example": layer_norm_example,
    "layer_norm_hidden": layer_norm_hidden,
    "residual_hidden": residual_hidden,
    # Assignment 8: the encoder block
    "ffn_hidden": ffn_hidden,
    "encoder_example_data": encoder_example_data,
    "encoder_hidden": encoder_hidden,
    "encoder_pre_ln_hidden": encoder_pre_ln_hidden,
    # Assignment 12: patches for the Vision Transformer
    "patches_hidden": patches_hidden,
    "embed_hidden": embed_hidden,
    # Assignment 5: grouped-query attention
    "gqa_example_data": gqa_example_data,
    "gqa_hidden": gqa_hidden,
    "gqa_masks_hidden": gqa_masks_hidden,
    "gqa_pool_hidden": gqa_pool_hidden,
    "gqa_params_hidden": gqa_params_hidden,
    # Assignment 7: rotary position embeddings
    "rotary_angles_hidden": rotary_angles_hidden,
    "rotary_hidden": rotary_hidden,
    "rotary_attention_hidden": rotary_attention_hidden,
}


# ---------------------------------------------------------------------------
# Rendering into cells, and reading back
# ---------------------------------------------------------------------------

def is_hidden(name: str) -> bool:
    """Blocks rendered as encoded data (hidden tests, and examples too big to read)."""
    return name.endswith(("_hidden", "_data"))


def encode_cases(cases: dict) -> str:
    """``{case: {field: array}}`` as text: a JSON index and the raw bytes, zlib-compressed, base64."""
    index, body = [], []
    for case, fields in cases.items():
        for field, value in fields.items():
            value = np.array(value, order="C")  # (not ascontiguousarray: it turns 0-d into 1-d)
            index.append([f"{case}/{field}", value.dtype.str, list(value.shape)])
            body.append(value.tobytes())
    head = json.dumps(index, separators=(",", ":")).encode()
    payload = len(head).to_bytes(4, "little") + head + b"".join(body)
    return base64.b64encode(zlib.compress(payload, 9)).decode()


def _notebook_helpers() -> dict:
    namespace: dict = {}
    exec(assignment_header.HELPERS, namespace)
    return namespace


#: The inverse of :func:`encode_cases`: the notebooks' own ``decode_reference``
#: (``assignment_header.HELPERS``), so that the generator and the tests read the data alike.
decode_cases = _notebook_helpers()["decode_reference"]


def _literal(array: np.ndarray, prefix: str) -> str:
    array = np.asarray(array)
    body = np.array2string(array, separator=", ", floatmode="unique", threshold=10 ** 9,
                           max_line_width=96, prefix=prefix)
    if array.dtype == bool:
        return f"{prefix}{body})"
    return f"{prefix}{body}, dtype=np.{array.dtype.name})"


def render(name: str, data: dict) -> str:
    lines = [f"{BEGIN}{name} {NOTICE}"]
    if is_hidden(name):
        text = encode_cases(data)
        lines.append(f"{name} = decode_reference(")
        lines += [f'    "{text[i:i + 88]}"' for i in range(0, len(text), 88)]
        lines.append(")")
    else:
        lines += [_literal(value, f"{var} = np.array(") for var, value in data.items()]
    lines.append(END)
    return "\n".join(lines)


BLOCK = re.compile(re.escape(BEGIN) + r"(\w+)[^\n]*\n.*?" + re.escape(END), re.S)


def blocks_in(source: str) -> list[str]:
    return BLOCK.findall(source)


def read_block(source: str, name: str):
    """Execute a generated block on its own and return what it defines."""
    match = next(m for m in BLOCK.finditer(source) if m.group(1) == name)
    namespace = {"np": np, "decode_reference": decode_cases}
    exec(match.group(0), namespace)
    if is_hidden(name):
        return namespace[name]
    return {k: v for k, v in namespace.items() if isinstance(v, np.ndarray)}


def shared_cells(nb, path) -> tuple:
    """The notebook's instructions cell and its first code cell (which starts with the shared helpers)."""
    instructions = [c for c in nb.cells if c.cell_type == "markdown"
                    and c.source.startswith(assignment_header.INSTRUCTIONS.split("\n", 1)[0])]
    code = [c for c in nb.cells if c.cell_type == "code"]
    if len(instructions) != 1 or not code:
        raise ValueError(f"{path}: expected one '## How this assignment works' cell and a first code cell")
    return instructions[0], code[0]


def with_shared_helpers(source: str, path) -> str:
    """``source`` (a first code cell) with its leading helpers, up to ``decode_reference``, replaced."""
    import ast

    ends = [node.end_lineno for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef) and node.name == "decode_reference"]
    if not ends:
        raise ValueError(f"{path}: the first code cell has no decode_reference function: "
                         "it must begin with course_authoring/assignment_header.py's HELPERS")
    rest = source.splitlines(keepends=True)[ends[0]:]
    return assignment_header.HELPERS + ("\n" + "".join(rest) if rest else "")


def with_practice_cell(nb) -> bool:
    """Make the notebook's last cell the practice call (assignment_header.PRACTICE); whether it changed."""
    import nbformat

    # ids carry the assignment's number, as its other cells' do ("a1-..."; tests/book/test_assignment_numbers.py)
    cell_id = nb.cells[0].get("id", "").split("-")[0] + "-practice"
    last = nb.cells[-1] if nb.cells else None
    if last is not None and last.cell_type == "code" and "course_grader.practice" in last.source:
        changed = (last.source, last.metadata.get("tags"), last.get("id")) != (
            assignment_header.PRACTICE, assignment_header.PRACTICE_TAGS, cell_id)
        last.source, last["id"] = assignment_header.PRACTICE, cell_id
        last.metadata["tags"] = list(assignment_header.PRACTICE_TAGS)
        return changed
    cell = nbformat.v4.new_code_cell(assignment_header.PRACTICE, metadata={"tags": list(assignment_header.PRACTICE_TAGS)})
    cell["id"] = cell_id
    nb.cells.append(cell)
    return True


def rewrite(paths=None, names=None) -> list[str]:
    """Regenerate the shared cells and the blocks in the source notebooks; returns the block names rewritten."""
    import nbformat

    done = []
    cache: dict = {}
    for path in paths or sorted(SOLUTIONS.glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        instructions, first_code = shared_cells(nb, path)
        changed = instructions.source != assignment_header.INSTRUCTIONS
        instructions.source = assignment_header.INSTRUCTIONS
        helpers = with_shared_helpers(first_code.source, path)
        changed |= helpers != first_code.source
        first_code.source = helpers
        changed |= with_practice_cell(nb)
        for cell in nb.cells:
            for name in blocks_in(cell.source):
                if names and name not in names:
                    continue
                if name not in cache:
                    cache[name] = GENERATORS[name]()
                new = BLOCK.sub(lambda m, n=name: render(n, cache[n]) if m.group(1) == n else m.group(0),
                                cell.source)
                changed |= new != cell.source
                cell.source = new
                done.append(name)
        if changed:
            nbformat.write(nb, path)
    return done


if __name__ == "__main__":
    rewritten = rewrite(names=sys.argv[1:] or None)
    print(f"regenerated {len(rewritten)} blocks: {', '.join(rewritten)}")
