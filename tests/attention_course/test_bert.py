"""BERT in NumPy == the original all-MiniLM-L6-v2 outputs == the Keras BertEncoder; GELU; MLM parts."""

import keras
import numpy as np
import pytest

from attention_course.weights import pretrained
from attention_course import transformer as nt
from attention_course.bert import (BertEmbeddingWeights, BertEncoderWeights, bert_embeddings,
                                   bert_encoder, mean_pool, sentence_embeddings)
from attention_course.bert_pretraining import IGNORE_INDEX
from attention_course.data import bilingual
from attention_course.models import transformer as kt
from attention_course.models.bert import BertEncoder, BertForMaskedLM, MaskedLMBatches
from attention_course.normalization import layer_norm
from attention_course.weights import from_keras
from attention_course.weights.from_keras import bert as bert_from_keras
from conftest import numpy, randomise, tolerance

TOL = {"rtol": 1e-5, "atol": 1e-6}
# Six float32 blocks, hidden values up to ~6: entries near zero differ by up to ~2e-6
# between any two float32 implementations (a float64 run is as far from each).
HIDDEN_TOL = {"rtol": 1e-5, "atol": 1e-5}


# ----------------------------------------------------------------------------
# The pretrained model against the committed reference outputs
# ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def weights():
    return pretrained.load_encoder_weights()


@pytest.fixture(scope="module")
def reference():
    return pretrained.load_reference()


@pytest.fixture(scope="module")
def tokenizer():
    return pretrained.load_tokenizer()


@pytest.fixture(scope="module")
def batch(tokenizer, reference):
    return tokenizer.encode_batch(list(reference.sentences))


@pytest.fixture(scope="module")
def numpy_output(weights, batch):
    return bert_encoder(batch.ids, weights, batch.type_ids, batch.attention_mask)


@pytest.fixture(scope="module")
def keras_model(weights):
    return BertEncoder.from_numpy(weights)


@pytest.fixture(scope="module")
def keras_output(keras_model, batch):
    hidden, scores = keras_model(batch.ids, batch.type_ids, batch.attention_mask,
                                 return_attention_scores=True)
    return numpy(hidden), np.stack([numpy(s) for s in scores])


def test_batch_tokens_equal_reference(batch, reference):
    np.testing.assert_array_equal(batch.ids, reference.input_ids)
    np.testing.assert_array_equal(batch.attention_mask, reference.attention_mask)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_encoder_matches_reference(weights, batch, reference, dtype):
    w = weights if dtype == "float32" else weights.astype(np.float64)
    out = bert_encoder(batch.ids, w, batch.type_ids, batch.attention_mask)
    real = batch.attention_mask
    assert out.last_hidden_state.dtype == np.dtype(dtype)
    assert out.last_hidden_state.shape == reference.last_hidden_state.shape
    assert out.attention.shape == (6, 16, 12, reference.input_ids.shape[1], reference.input_ids.shape[1])
    # the reference is float32: compare at float32 tolerance whatever our dtype
    np.testing.assert_allclose(out.last_hidden_state[real], reference.last_hidden_state[real], **HIDDEN_TOL)
    np.testing.assert_allclose(sentence_embeddings(out.last_hidden_state, real),
                               reference.sentence_embeddings, **TOL)


@pytest.mark.parametrize("index", [0, 1, 13, 14, 15])
def test_one_sentence_without_padding_matches_reference(weights, tokenizer, reference, index):
    encoding = tokenizer.encode(reference.sentences[index])
    out = bert_encoder(encoding.ids[None], weights, encoding.type_ids[None])
    n = len(encoding)
    np.testing.assert_allclose(out.last_hidden_state[0], reference.last_hidden_state[index, :n],
                               **HIDDEN_TOL)
    embedding = sentence_embeddings(out.last_hidden_state, np.ones((1, n), dtype=bool))
    np.testing.assert_allclose(embedding[0], reference.sentence_embeddings[index], **TOL)


def test_keras_encoder_matches_numpy_and_reference(numpy_output, keras_output, batch, reference):
    hidden, attention = keras_output
    real = batch.attention_mask
    np.testing.assert_allclose(hidden[real], numpy_output.last_hidden_state[real], **HIDDEN_TOL)
    np.testing.assert_allclose(hidden[real], reference.last_hidden_state[real], **HIDDEN_TOL)
    # Later blocks' attention inherits the hidden states' float32 differences (~2e-6).
    np.testing.assert_allclose(attention, numpy_output.attention, rtol=1e-5, atol=1e-5)
    embeddings = sentence_embeddings(hidden, real)
    np.testing.assert_allclose(embeddings, sentence_embeddings(numpy_output.last_hidden_state, real), **TOL)
    np.testing.assert_allclose(embeddings, reference.sentence_embeddings, **TOL)


def test_padded_keys_get_no_attention(numpy_output, keras_output, batch):
    padded = ~batch.attention_mask                                     # (B, T)
    for attention in (numpy_output.attention, keras_output[1]):
        assert np.all(attention[np.broadcast_to(padded[None, :, None, None, :], attention.shape)] == 0)
        np.testing.assert_allclose(attention.sum(-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("implementation", ["numpy", "keras"])
@pytest.mark.parametrize("extra_padding", [0, 9])
def test_padding_does_not_change_embeddings(weights, keras_model, tokenizer, reference, implementation,
                                            extra_padding):
    sentences = list(reference.sentences[::3])                        # lengths differ
    batch = tokenizer.encode_batch(sentences)
    ids = np.pad(batch.ids, ((0, 0), (0, extra_padding)))
    type_ids = np.pad(batch.type_ids, ((0, 0), (0, extra_padding)))
    mask = np.pad(batch.attention_mask, ((0, 0), (0, extra_padding)))

    def encode(ids, type_ids, mask):
        if implementation == "numpy":
            return bert_encoder(ids, weights, type_ids, mask).last_hidden_state
        return numpy(keras_model(ids, type_ids, mask))

    padded = sentence_embeddings(encode(ids, type_ids, mask), mask)
    alone = np.concatenate([sentence_embeddings(encode(e.ids[None], e.type_ids[None], np.ones((1, len(e)), bool)),
                                                np.ones((1, len(e)), bool))
                            for e in map(tokenizer.encode, sentences)])
    np.testing.assert_allclose(padded, alone, **TOL)


def test_whatever_fills_the_padding_is_invisible(weights, batch):
    """With the mask, random tokens in the padded positions change no real token's output."""
    rng = np.random.default_rng(0)
    garbage = np.where(batch.attention_mask, batch.ids, rng.integers(1000, 30000, size=batch.ids.shape))
    real = batch.attention_mask
    clean = bert_encoder(batch.ids, weights, batch.type_ids, real).last_hidden_state
    dirty = bert_encoder(garbage, weights, batch.type_ids, real).last_hidden_state
    np.testing.assert_allclose(dirty[real], clean[real], **HIDDEN_TOL)
    unmasked = bert_encoder(garbage, weights, batch.type_ids, np.ones_like(real)).last_hidden_state
    assert np.abs(unmasked[real] - clean[real]).max() > 0.1


def test_default_attention_mask_is_ids_not_zero(weights, batch, numpy_output):
    out = bert_encoder(batch.ids, weights, batch.type_ids)
    np.testing.assert_array_equal(out.last_hidden_state, numpy_output.last_hidden_state)


def test_embeddings_sum_three_tables_then_normalize(weights, tokenizer):
    pair = tokenizer.encode("The animal was tired.", "It slept.")
    e = weights.embeddings
    x = bert_embeddings(pair.ids[None], e, pair.type_ids[None])
    T = len(pair)
    expected = layer_norm(e.word[pair.ids] + e.position[:T] + e.token_type[pair.type_ids],
                          e.norm.gamma, e.norm.beta, epsilon=1e-12)
    np.testing.assert_allclose(x[0], expected, **TOL)
    # the segment matters: the same tokens as segment 0 give other vectors from the first B token on
    first_b = int(np.argmax(pair.type_ids))
    as_single = bert_embeddings(pair.ids[None], e)
    np.testing.assert_array_equal(as_single[0, :first_b], x[0, :first_b])
    assert not np.allclose(as_single[0, first_b:], x[0, first_b:])


def test_keras_round_trip_copies_every_weight(weights, keras_model):
    back = bert_from_keras.bert_encoder(keras_model)
    np.testing.assert_array_equal(back.embeddings.word, weights.embeddings.word)
    np.testing.assert_array_equal(back.embeddings.token_type, weights.embeddings.token_type)
    assert back.embeddings.norm.epsilon == pytest.approx(1e-12)
    for ours, theirs in zip(back.blocks, weights.blocks):
        for name, value in vars(theirs.self_attention).items():
            np.testing.assert_array_equal(getattr(ours.self_attention, name), value)
        np.testing.assert_array_equal(ours.feed_forward.kernel_2, theirs.feed_forward.kernel_2)
        np.testing.assert_array_equal(ours.feed_forward_norm.gamma, theirs.feed_forward_norm.gamma)
        assert ours.feed_forward.activation == "gelu"
    n_parameters = sum(a.size for name, a in pretrained.load_hf_state_dict().items()
                       if a.dtype == np.float32 and not name.startswith("pooler"))
    assert keras_model.count_params() == n_parameters


# ----------------------------------------------------------------------------
# The Keras encoder with random weights, against the NumPy one
# ----------------------------------------------------------------------------

SMALL_CASES = {  # B, T, vocab, d_model, heads, d_ff, layers
    "one layer": (2, 5, 30, 8, 2, 16, 1),
    "three layers": (3, 9, 50, 12, 3, 20, 3),
}


@pytest.mark.parametrize("segments", [False, True], ids=["one segment", "two segments"])
@pytest.mark.parametrize("padded", [False, True], ids=["no padding", "padding"])
@pytest.mark.parametrize("case", SMALL_CASES)
def test_random_keras_encoder_matches_numpy(rng, case, padded, segments):
    B, T, V, d, heads, d_ff, layers = SMALL_CASES[case]
    model = BertEncoder(V, d, heads, d_ff, layers, max_length=T + 3, epsilon=1e-6)
    ids = rng.integers(1, V, size=(B, T)).astype("int32")
    lengths = rng.integers(1, T + 1, size=B) if padded else np.full(B, T)
    lengths[0] = T
    mask = np.arange(T) < lengths[:, None]
    ids[~mask] = 0
    type_ids = ((np.arange(T) >= T // 2) & mask).astype("int32") if segments else np.zeros_like(ids)
    model(ids, type_ids)
    randomise(model, rng)
    expected, scores = model(ids, type_ids, return_attention_scores=True)

    weights = bert_from_keras.bert_encoder(model)
    assert weights.blocks[0].attention_norm.epsilon == pytest.approx(1e-6)
    out = bert_encoder(ids, weights, type_ids)
    assert out.last_hidden_state.shape == (B, T, d) and out.attention.shape == (layers, B, heads, T, T)
    np.testing.assert_allclose(out.last_hidden_state[mask], numpy(expected)[mask], **TOL)
    np.testing.assert_allclose(out.attention, np.stack([numpy(s) for s in scores]), **TOL)


def test_from_numpy_rejects_mismatched_weights(rng):
    small = BertEncoder(20, 8, 2, 16, 2, max_length=6)
    small(np.ones((1, 3), "int32"))
    other = BertEncoder(20, 8, 2, 16, 1, max_length=6)
    other(np.ones((1, 3), "int32"))
    with pytest.raises(ValueError, match="blocks"):
        small.set_numpy_weights(bert_from_keras.bert_encoder(other))
    weights = bert_from_keras.bert_encoder(small)
    weights.embeddings.position = weights.embeddings.position[:4]
    with pytest.raises(ValueError, match="position_embedding"):
        small.set_numpy_weights(weights)


# ----------------------------------------------------------------------------
# GELU
# ----------------------------------------------------------------------------

def test_gelu_known_values():
    # x * Phi(x): Phi(1) = 0.841344746..., Phi(-1) = 0.158655254..., Phi(3) = 0.998650102...
    x = np.array([0.0, 1.0, -1.0, 3.0, -3.0])
    expected = x * np.array([0.5, 0.8413447460685429, 0.15865525393145707,
                             0.9986501019683699, 0.0013498980316301035])
    np.testing.assert_allclose(nt.gelu(x), expected, **tolerance("float64"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gelu_matches_keras(rng, dtype):
    x = (3 * rng.normal(size=(4, 7, 5))).astype(dtype)
    got = nt.gelu(x)
    assert got.dtype == np.dtype(dtype)
    # Keras computes in float32 (its default float type) whatever the input
    np.testing.assert_allclose(got, numpy(keras.activations.gelu(x, approximate=False)), **TOL)
    # not the tanh approximation (they differ by up to ~5e-4)
    assert np.abs(got - numpy(keras.activations.gelu(x, approximate=True))).max() > 1e-5


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_feed_forward_activation_matches_keras(rng, activation):
    ffn = kt.FeedForward(6, 10, activation=activation)
    x = rng.normal(size=(2, 5, 6)).astype("float32")
    ffn(x)
    randomise(ffn, rng)
    weights = from_keras.feed_forward(ffn)
    assert weights.activation == activation
    np.testing.assert_allclose(nt.feed_forward(x, weights), numpy(ffn(x)), **TOL)
    other = nt.FeedForwardWeights(weights.kernel_1, weights.bias_1, weights.kernel_2, weights.bias_2,
                                  activation="relu" if activation == "gelu" else "gelu")
    assert not np.allclose(nt.feed_forward(x, other), numpy(ffn(x)), **TOL)


@pytest.mark.parametrize("pre_ln", [False, True], ids=["post-LN", "pre-LN"])
def test_gelu_encoder_block_matches_keras(rng, pre_ln):
    block = kt.EncoderBlock(12, 3, 24, pre_ln=pre_ln, activation="gelu", epsilon=1e-12)
    x = rng.normal(size=(2, 6, 12)).astype("float32")
    mask = np.arange(6) < np.array([[6], [3]])
    block(x, mask)
    randomise(block, rng)
    expected, scores = block(x, mask, return_attention_scores=True)
    out, attention = nt.encoder_block(x, from_keras.encoder_block(block), mask, pre_ln=pre_ln)
    np.testing.assert_allclose(out, numpy(expected), **TOL)
    np.testing.assert_allclose(attention, numpy(scores), **TOL)


def test_feed_forward_defaults_to_relu_and_rejects_unknown_activations():
    assert kt.FeedForward(4, 8).activation == "relu"
    w = nt.FeedForwardWeights(np.eye(2), np.zeros(2), np.eye(2), np.zeros(2))
    np.testing.assert_array_equal(nt.feed_forward(np.array([[[-1.0, 2.0]]]), w), [[[0.0, 2.0]]])
    with pytest.raises(ValueError, match="activation"):
        nt.FeedForwardWeights(np.eye(2), np.zeros(2), np.eye(2), np.zeros(2), activation="tanh")
    with pytest.raises(ValueError, match="activation"):
        kt.FeedForward(4, 8, activation="swish")


# ----------------------------------------------------------------------------
# Pooling and errors
# ----------------------------------------------------------------------------

def test_mean_pool_ignores_padding(rng):
    hidden = rng.normal(size=(3, 5, 4))
    mask = np.arange(5) < np.array([[5], [2], [1]])
    pooled = mean_pool(hidden, mask)
    for b in range(3):
        np.testing.assert_allclose(pooled[b], hidden[b, mask[b]].mean(0), **tolerance("float64"))
    hidden[~mask] = 1e6
    np.testing.assert_allclose(mean_pool(hidden, mask), pooled, **tolerance("float64"))
    embeddings = sentence_embeddings(hidden, mask)
    np.testing.assert_allclose(np.linalg.norm(embeddings, axis=-1), 1.0, **tolerance("float64"))
    np.testing.assert_allclose(embeddings, pooled / np.linalg.norm(pooled, axis=-1, keepdims=True),
                               **tolerance("float64"))


@pytest.mark.parametrize("call, message", [
    (lambda w: bert_embeddings(np.zeros(5, int), w.embeddings), r"shape \(B, T\)"),
    (lambda w: bert_embeddings(np.zeros((2, 5)), w.embeddings), "integer"),
    (lambda w: bert_embeddings(np.full((1, 3), 30522), w.embeddings), "must lie in"),
    (lambda w: bert_embeddings(np.zeros((1, 513), int), w.embeddings), "512 positions"),
    (lambda w: bert_embeddings(np.zeros((1, 3), int), w.embeddings, np.full((1, 3), 2)), "type_ids must lie"),
    (lambda w: bert_embeddings(np.zeros((1, 3), int), w.embeddings, np.zeros((1, 4), int)), "shape of ids"),
    (lambda w: bert_encoder(np.ones((2, 3), int), w, attention_mask=np.ones((2, 4), bool)), "attention_mask"),
    (lambda w: mean_pool(np.zeros((2, 3, 4)), np.array([[True] * 3, [False] * 3])), "at least one real"),
    (lambda w: mean_pool(np.zeros((2, 3)), np.ones((2, 3), bool)), r"\(B, T, d\)"),
    (lambda w: BertEmbeddingWeights(np.zeros((5, 4)), np.zeros((3, 4)), np.zeros((2, 3)),
                                    w.embeddings.norm), "token_type must have shape"),
])
def test_wrong_inputs_raise_clear_errors(weights, call, message):
    with pytest.raises(ValueError, match=message):
        call(weights)


# ----------------------------------------------------------------------------
# Masked-language-model training parts
# ----------------------------------------------------------------------------

def test_masked_lm_shares_the_word_embedding(rng):
    V = len(bilingual.TOKENS)
    model = BertForMaskedLM(V, d_model=8, num_heads=2, d_ff=16, num_layers=1, max_length=23)
    data = bilingual.make_pairs(3, seed=0)
    logits = numpy(model((data.ids, data.type_ids)))
    assert logits.shape == (3, data.ids.shape[1], V)
    encoder_params = model.encoder.count_params()
    assert model.count_params() == encoder_params + (8 * 8 + 8) + 2 * 8 + V   # transform, norm, bias
    # the output scores are dot products with the word embedding table, plus a bias
    table = numpy(model.encoder.embedding.word_embedding.embeddings)
    h = numpy(model.transform_norm(model.transform(model.encoder(data.ids, data.type_ids))))
    np.testing.assert_allclose(logits, h @ table.T + numpy(model.output_bias), **TOL)


def test_masked_lm_loss_scores_only_selected_positions(rng):
    """SparseCategoricalCrossentropy(ignore_class=-100) == the mean cross-entropy over selected positions."""
    logits = rng.normal(size=(4, 6, 11)).astype("float32")
    labels = np.full((4, 6), IGNORE_INDEX)
    chosen = rng.random((4, 6)) < 0.3
    chosen[0, 0] = True
    labels[chosen] = rng.integers(0, 11, size=chosen.sum())
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=IGNORE_INDEX)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -log_probs[chosen, labels[chosen]].mean()
    np.testing.assert_allclose(numpy(loss(labels, logits)), expected, rtol=1e-5)


def test_masked_lm_batches_remask_every_epoch():
    data = bilingual.make_pairs(100, seed=3)
    kwargs = {"mask_id": bilingual.MASK_ID, "vocab_size": len(bilingual.TOKENS),
              "special_ids": bilingual.SPECIAL_IDS, "batch_size": 32, "attention_mask": data.attention_mask}
    batches = MaskedLMBatches(data.ids, data.type_ids, seed=5, **kwargs)
    assert len(batches) == 4
    (inputs, type_ids), labels = batches[3]
    assert inputs.shape == labels.shape == type_ids.shape == (4, data.ids.shape[1])
    first = batches.corrupted
    chosen = labels != IGNORE_INDEX
    np.testing.assert_array_equal(labels[chosen], data.ids[96:][chosen])
    assert not np.isin(data.ids[first.selected], bilingual.SPECIAL_IDS).any()
    assert not first.selected[~data.attention_mask].any()
    batches.on_epoch_end()
    assert not np.array_equal(batches.corrupted.selected, first.selected)
    again = MaskedLMBatches(data.ids, data.type_ids, seed=5, **kwargs)
    np.testing.assert_array_equal(again.corrupted.inputs, first.inputs)
    with pytest.raises(ValueError, match="ids and type_ids"):
        MaskedLMBatches(data.ids, data.type_ids[:, :3], **kwargs)
