"""NumPy Transformer blocks and model == the Keras ones loaded with the same weights; causality."""

import keras
import numpy as np
import pytest

from attention_course import transformer as nt
from attention_course.decoding import beam_search, greedy_decode
from attention_course.models import transformer as kt
from attention_course.multi_head import MultiHeadAttentionWeights, multi_head_attention
from attention_course.weights import from_keras
from conftest import numpy, randomise

TOL = {"rtol": 1e-5, "atol": 1e-6}
# A whole model stacks many float32 layers; its logits (|logit| up to ~10) agree to a few 1e-6.
MODEL_TOL = {"rtol": 1e-5, "atol": 1e-5}


def padding(rng, batch, length):
    """A (batch, length) padding mask with different lengths per row, each >= 1."""
    lengths = rng.integers(1, length + 1, size=batch)
    lengths[0] = length
    return np.arange(length) < lengths[:, None]


# ----------------------------------------------------------------------------
# Encoder block
# ----------------------------------------------------------------------------

ENCODER_CASES = {  # B, S, d_model, heads, d_ff
    "small": (2, 5, 8, 2, 16),
    "wide": (3, 7, 24, 4, 40),
    "one head": (2, 4, 6, 1, 12),
}


@pytest.mark.parametrize("pre_ln", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("masked", [False, True], ids=["no mask", "padding mask"])
@pytest.mark.parametrize("case", ENCODER_CASES)
def test_encoder_block_matches_keras(rng, case, masked, pre_ln):
    B, S, d, heads, d_ff = ENCODER_CASES[case]
    block = kt.EncoderBlock(d, heads, d_ff, pre_ln=pre_ln, epsilon=1e-3)
    x = rng.normal(size=(B, S, d)).astype("float32")
    mask = padding(rng, B, S) if masked else None
    block(x, mask)
    randomise(block, rng)
    expected, expected_scores = block(x, mask, return_attention_scores=True)

    weights = from_keras.encoder_block(block)
    got, scores = nt.encoder_block(x, weights, padding_mask=mask, pre_ln=pre_ln)
    assert got.shape == (B, S, d) and scores.shape == (B, heads, S, S) and got.dtype == np.float32
    np.testing.assert_allclose(got, numpy(expected), **TOL)
    np.testing.assert_allclose(scores, numpy(expected_scores), **TOL)
    # Keras' fused path (no scores asked for) gives the same output.
    np.testing.assert_allclose(got, numpy(block(x, mask)), **TOL)
    if masked:  # padded keys get no attention at all
        assert (scores[~np.broadcast_to(mask[:, None, None, :], scores.shape)] == 0).all()


def test_pre_and_post_ln_differ(rng):
    block = kt.EncoderBlock(8, 2, 16)
    x = rng.normal(size=(2, 5, 8)).astype("float32")
    block(x)
    randomise(block, rng)
    weights = from_keras.encoder_block(block)
    post, _ = nt.encoder_block(x, weights, pre_ln=False)
    pre, _ = nt.encoder_block(x, weights, pre_ln=True)
    assert not np.allclose(post, pre)
    # Post-LN ends with a layer norm: every output vector is normalised (up to gamma, beta).
    norm = weights.feed_forward_norm
    normalised = (post - norm.beta) / norm.gamma
    np.testing.assert_allclose(normalised.mean(-1), 0.0, atol=1e-4)


def test_residual_placements():
    norm = lambda x: 2 * x  # noqa: E731  a stand-in "norm" that is easy to follow
    sublayer = lambda x: (x + 1, "extra")  # noqa: E731
    assert nt.residual(np.array(1.0), sublayer, norm, pre_ln=True) == (1 + (2 + 1), "extra")
    assert nt.residual(np.array(1.0), sublayer, norm, pre_ln=False) == (2 * (1 + 2), "extra")


def test_feed_forward_is_position_wise(rng):
    ffn = kt.FeedForward(6, 10)
    x = rng.normal(size=(2, 5, 6)).astype("float32")
    ffn(x)
    randomise(ffn, rng)
    weights = from_keras.feed_forward(ffn)
    out = nt.feed_forward(x, weights)
    np.testing.assert_allclose(out, numpy(ffn(x)), **TOL)
    permutation = rng.permutation(5)
    np.testing.assert_allclose(nt.feed_forward(x[:, permutation], weights), out[:, permutation], **TOL)
    assert (np.maximum(x @ weights.kernel_1 + weights.bias_1, 0) > 0).any()


# ----------------------------------------------------------------------------
# Decoder block
# ----------------------------------------------------------------------------

DECODER_CASES = {  # B, T, S, d_model, heads, d_ff
    "T < S": (2, 4, 6, 8, 2, 16),
    "T > S": (3, 7, 3, 12, 3, 20),
}


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "no causal mask"])
@pytest.mark.parametrize("pre_ln", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("masked", [False, True], ids=["no mask", "source padding"])
@pytest.mark.parametrize("case", DECODER_CASES)
def test_decoder_block_matches_keras(rng, case, masked, pre_ln, causal):
    B, T, S, d, heads, d_ff = DECODER_CASES[case]
    block = kt.DecoderBlock(d, heads, d_ff, pre_ln=pre_ln, causal=causal, epsilon=1e-4)
    y = rng.normal(size=(B, T, d)).astype("float32")
    memory = rng.normal(size=(B, S, d)).astype("float32")
    mask = padding(rng, B, S) if masked else None
    block(y, memory, mask)
    randomise(block, rng)
    expected, expected_self, expected_cross = block(y, memory, mask, return_attention_scores=True)

    weights = from_keras.decoder_block(block)
    got, self_scores, cross_scores = nt.decoder_block(y, memory, weights, source_mask=mask,
                                                      pre_ln=pre_ln, causal=causal)
    assert self_scores.shape == (B, heads, T, T) and cross_scores.shape == (B, heads, T, S)
    np.testing.assert_allclose(got, numpy(expected), **TOL)
    np.testing.assert_allclose(self_scores, numpy(expected_self), **TOL)
    np.testing.assert_allclose(cross_scores, numpy(expected_cross), **TOL)
    np.testing.assert_allclose(got, numpy(block(y, memory, mask)), **TOL)
    future = np.triu(np.ones((T, T), bool), k=1)
    assert (self_scores[..., future] == 0).all() == causal


@pytest.mark.parametrize("implementation", ["numpy", "keras"])
def test_decoder_block_is_causal(rng, implementation):
    """Changing target positions >= t leaves the outputs at positions < t unchanged."""
    B, T, S, d = 2, 6, 5, 8
    block = kt.DecoderBlock(d, 2, 16, pre_ln=False)
    y = rng.normal(size=(B, T, d)).astype("float32")
    memory = rng.normal(size=(B, S, d)).astype("float32")
    block(y, memory)
    randomise(block, rng)
    weights = from_keras.decoder_block(block)

    def run(inputs, causal=True):
        if implementation == "keras":
            block.causal = causal
            return numpy(block(inputs, memory))
        return nt.decoder_block(inputs, memory, weights, causal=causal)[0]

    for t in range(1, T):
        changed = y.copy()
        changed[:, t:] = rng.normal(size=(B, T - t, d))
        np.testing.assert_allclose(run(changed)[:, :t], run(y)[:, :t], **TOL)
        assert not np.allclose(run(changed)[:, t:], run(y)[:, t:])
        # Without the mask, the future leaks into every earlier position.
        assert not np.allclose(run(changed, causal=False)[:, :t], run(y, causal=False)[:, :t])


def test_unscaled_attention_drops_the_square_root(rng):
    layer = kt.UnscaledMultiHeadAttention(num_heads=2, key_dim=4)
    x = rng.normal(size=(2, 5, 8)).astype("float32")
    layer(x, x)
    randomise(layer, rng)
    weights = from_keras.multi_head_attention(layer)
    # softmax(Q K^T) is scaled attention with queries multiplied by sqrt(key_dim).
    weights.query_kernel *= 2.0
    weights.query_bias *= 2.0
    expected, _ = multi_head_attention(x, x, weights)
    np.testing.assert_allclose(numpy(layer(x, x)), expected, **TOL)


# ----------------------------------------------------------------------------
# The whole model
# ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference_model():
    """One small random model (post-LN by default, sinusoidal positions) shared by the read-only tests."""
    return small_model(np.random.default_rng(7), pre_ln=False)


def small_model(rng, **settings):
    config = {"source_vocab_size": 9, "target_vocab_size": 11, "max_length": 10, "d_model": 16,
              "num_heads": 2, "d_ff": 24, "num_layers": 2, **settings}
    model = kt.Transformer(**config)
    source = rng.integers(1, 9, size=(3, 7))
    source[1, 4:] = 0  # padding
    source[2, 2:] = 0
    decoder_input = rng.integers(1, 11, size=(3, 6))
    decoder_input[2, 3:] = 0
    model([source, decoder_input])
    randomise(model, rng)
    return model, source, decoder_input


@pytest.mark.parametrize("positions, pre_ln, num_layers", [
    ("sinusoidal", False, 2), ("sinusoidal", True, 2), ("learned", True, 2), ("learned", False, 1),
    ("none", True, 1)])
def test_numpy_forward_matches_keras_model(rng, positions, pre_ln, num_layers):
    model, source, decoder_input = small_model(rng, positions=positions, pre_ln=pre_ln,
                                               num_layers=num_layers)
    weights = from_keras.transformer(model)
    assert len(weights.encoder) == len(weights.decoder) == num_layers
    assert (weights.final_encoder_norm is not None) == pre_ln
    logits, attention = nt.transformer_forward(source, decoder_input, weights)
    assert logits.shape == (3, 6, 11)
    np.testing.assert_allclose(logits, numpy(model([source, decoder_input])), **MODEL_TOL)
    maps = model.attention_maps(source, decoder_input)
    for key, shape in (("encoder", (num_layers, 3, 2, 7, 7)), ("decoder_self", (num_layers, 3, 2, 6, 6)),
                       ("cross", (num_layers, 3, 2, 6, 7))):
        assert attention[key].shape == shape
        np.testing.assert_allclose(attention[key], maps[key], **MODEL_TOL)
    assert (attention["cross"][:, 1, :, :, 4:] == 0).all()  # padded source words get no attention


def test_model_switches_change_the_output(reference_model):
    """Each ablation switch, with the very same weights, changes the computation."""
    model, source, decoder_input = reference_model
    reference = numpy(model([source, decoder_input]))
    for setting in ({"positions": "none"}, {"scale_attention": False}, {"scale_embeddings": False},
                    {"causal": False}):
        other = kt.Transformer(9, 11, max_length=10, d_model=16, num_heads=2, d_ff=24,
                               **{"pre_ln": False, **setting})
        other([source, decoder_input])
        other.set_weights(model.get_weights())
        assert not np.allclose(numpy(other([source, decoder_input])), reference, atol=1e-4), setting


def test_numpy_forward_refuses_unscaled_attention(rng):
    model, _, _ = small_model(rng, scale_attention=False)
    with pytest.raises(ValueError, match="scaled attention only"):
        from_keras.transformer(model)


@pytest.mark.parametrize("implementation", ["numpy", "keras"])
def test_changing_future_target_tokens_leaves_earlier_logits_unchanged(rng, reference_model,
                                                                      implementation):
    model, source, decoder_input = reference_model
    weights = from_keras.transformer(model)

    def logits(tokens):
        if implementation == "keras":
            return numpy(model([source, tokens]))
        return nt.transformer_forward(source, tokens, weights)[0]

    reference = logits(decoder_input)
    for t in range(1, decoder_input.shape[1]):
        changed = decoder_input.copy()
        changed[:, t:] = rng.integers(1, 11, size=(3, decoder_input.shape[1] - t))
        np.testing.assert_allclose(logits(changed)[:, :t], reference[:, :t], **MODEL_TOL)
        assert not np.allclose(logits(changed)[:, t:], reference[:, t:])


def test_greedy_step_gives_the_last_positions_logits(reference_model):
    model, source, decoder_input = reference_model
    step, state = model.greedy_step(source)
    assert state is None
    full = numpy(model([source, decoder_input]))
    maps = model.attention_maps(source, decoder_input)
    for t in range(1, decoder_input.shape[1] + 1):
        logits, _, attention = step(decoder_input[:, :t], state)
        np.testing.assert_allclose(logits, full[:, t - 1], **MODEL_TOL)
        np.testing.assert_allclose(attention, maps["cross"][-1, :, :, t - 1].mean(axis=1), **MODEL_TOL)
    with pytest.raises(ValueError, match="longer than max_length"):
        step(np.ones((3, 11), dtype=int), None)


@pytest.mark.parametrize("settings", [
    {"pre_ln": False}, {"pre_ln": True}, {"positions": "learned", "pre_ln": True},
    {"positions": "none", "num_layers": 1}, {"scale_attention": False, "pre_ln": True},
    {"scale_embeddings": False}], ids=["post-LN", "pre-LN", "learned", "no positions", "unscaled",
                                       "unscaled embeddings"])
def test_cached_step_gives_greedy_steps_logits_at_every_step(rng, settings):
    """The KV cache changes the cost of a step, not its result (beam search reorders it too)."""
    model, source, decoder_input = small_model(rng, **settings)
    step, state = model.greedy_step(source)
    cached, cache = model.cached_step(source)
    assert cache is None
    for t in range(1, decoder_input.shape[1] + 1):
        expected, _, expected_attention = step(decoder_input[:, :t], state)
        logits, cache, attention = cached(decoder_input[:, :t], cache)
        np.testing.assert_allclose(logits, expected, **MODEL_TOL)
        np.testing.assert_allclose(attention, expected_attention, **MODEL_TOL)
        keys, values = cache
        assert len(keys) == len(values) == len(model.decoder_blocks)
        assert keys[0].shape == values[0].shape == (3, t, model.decoder_blocks[0].self_attention.num_heads,
                                                    model.d_model // model.decoder_blocks[0].self_attention.num_heads)
    for search in ("greedy", "beam"):
        step, state = model.greedy_step(np.repeat(source, 3, axis=0))
        cached, cache = model.cached_step(np.repeat(source, 3, axis=0))
        if search == "greedy":
            expected = greedy_decode(step, state, 9, start_id=1, end_id=2, max_steps=9)
            got = greedy_decode(cached, cache, 9, start_id=1, end_id=2, max_steps=9)
        else:
            expected = beam_search(step, state, 3, beam_width=3, start_id=1, end_id=2, max_steps=9)
            got = beam_search(cached, cache, 3, beam_width=3, start_id=1, end_id=2, max_steps=9)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_allclose(got[1], expected[1], **MODEL_TOL)


def test_cached_step_refuses_a_decoder_without_the_causal_mask(rng):
    model, source, _ = small_model(rng, causal=False)
    with pytest.raises(ValueError, match="needs the causal mask"):
        model.cached_step(source)
    step, _ = small_model(rng)[0].cached_step(source)
    with pytest.raises(ValueError, match="longer than max_length"):
        step(np.ones((3, 11), dtype=int), None)


@pytest.mark.parametrize("call, message", [
    (lambda w: nt.encoder_block(np.zeros((2, 3, 5)), w.encoder[0]), "d_model=16"),
    (lambda w: nt.encoder_block(np.zeros((2, 3, 16)), w.encoder[0], padding_mask=np.ones((2, 4), bool)),
     "padding_mask of shape"),
    (lambda w: nt.decoder_block(np.zeros((2, 3, 16)), np.zeros((3, 4, 16)), w.decoder[0]), "same batch size"),
    (lambda w: nt.embed(np.zeros((2, 11), int), w.source_embedding, w.source_positions, True),
     "longer than the 10 positions"),
    (lambda w: nt.embed(np.zeros((2, 3)), w.source_embedding, w.source_positions, True), "integer array"),
    (lambda w: nt.FeedForwardWeights(np.zeros((4, 8)), np.zeros(8), np.zeros((8, 5)), np.zeros(4)),
     "kernel_2 must have shape"),
])
def test_wrong_shapes_raise_clear_errors(reference_model, call, message):
    weights = from_keras.transformer(reference_model[0])
    with pytest.raises(ValueError, match=message):
        call(weights)


def test_heads_must_divide_d_model():
    with pytest.raises(ValueError, match="not divisible"):
        kt.EncoderBlock(10, 3, 16)


def test_beam_search_of_width_one_is_greedy_on_the_transformer(reference_model):
    model, source, _ = reference_model
    step, state = model.greedy_step(source)
    greedy, attention = greedy_decode(step, state, 3, start_id=1, end_id=2, max_steps=9)
    beams, _ = beam_search(step, state, 3, beam_width=1, start_id=1, end_id=2, max_steps=9)
    np.testing.assert_array_equal(beams[:, 0], greedy)
    assert attention.shape == (3, 9, 7)
    # Beams of one sentence need the source once per beam.
    step, state = model.greedy_step(np.repeat(source, 4, axis=0))
    beams, scores = beam_search(step, state, 3, beam_width=4, start_id=1, end_id=2, max_steps=9)
    assert beams.shape == (3, 4, 9) and (np.diff(scores, axis=1) <= 0).all()
