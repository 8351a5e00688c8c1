"""The Keras encoder--decoders: step-by-step decoding agrees with the full forward pass."""

import keras
import numpy as np
import pytest

from attention_course.data import toy_translation as task
from attention_course.attention import additive_attention
from attention_course.masks import key_padding_mask
from attention_course.models.rnn_seq2seq import BahdanauSeq2Seq, RNNSeq2Seq


@pytest.fixture(scope="module")
def data():
    return task.make_dataset(8, max_length=9, seed=5)


@pytest.mark.parametrize("attention", [False, True])
def test_stepwise_decoding_matches_teacher_forcing(data, attention):
    keras.utils.set_random_seed(0)
    model = (BahdanauSeq2Seq if attention else RNNSeq2Seq)(
        len(task.SOURCE_VOCAB), len(task.TARGET_VOCAB), units=16, embedding_dim=8)
    full = keras.ops.convert_to_numpy(model([data.source, data.decoder_input]))
    step, state = model.greedy_step(data.source)
    for t in range(data.decoder_input.shape[1]):
        logits, state, weights = step(data.decoder_input[:, : t + 1], state)
        # float32 on both paths, which differ only in the order of operations
        np.testing.assert_allclose(keras.ops.convert_to_numpy(logits), full[:, t], rtol=1e-5, atol=1e-6)
        if attention:
            weights = keras.ops.convert_to_numpy(weights)
            source_mask = data.source != 0
            np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-5)
            assert (weights[~source_mask] < 1e-6).all()  # padding gets no attention
        else:
            assert weights is None


def test_padding_does_not_change_the_encoding(data):
    """Padding a batch further must not change what the model computes."""
    keras.utils.set_random_seed(0)
    model = BahdanauSeq2Seq(len(task.SOURCE_VOCAB), len(task.TARGET_VOCAB), units=16, embedding_dim=8)
    wider = np.pad(data.source, ((0, 0), (0, 5)))
    a = keras.ops.convert_to_numpy(model([data.source, data.decoder_input]))
    b = keras.ops.convert_to_numpy(model([wider, data.decoder_input]))
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_bahdanau_attention_is_the_numpy_additive_attention(data):
    """The decoder's score is v^T tanh(W s + U h_j), with the layer's own W, U, v."""
    keras.utils.set_random_seed(1)
    model = BahdanauSeq2Seq(len(task.SOURCE_VOCAB), len(task.TARGET_VOCAB), units=16, embedding_dim=8)
    model([data.source, data.decoder_input])
    annotations, (state, _), mask = model.encode(data.source)
    layer = model.attention
    context, weights = layer(state, layer.project_keys(annotations), annotations, mask)
    numpy = lambda x: keras.ops.convert_to_numpy(x).astype(np.float64)
    expected_context, expected_weights = additive_attention(
        numpy(state)[:, None, :], numpy(annotations), numpy(annotations),
        mask=key_padding_mask(data.source != 0), W_query=numpy(layer.W.kernel),
        W_key=numpy(layer.U.kernel), v=numpy(layer.v.kernel)[:, 0])
    # float32 (Keras) against float64 (NumPy): round-off of order 1e-7 on values of order 1
    np.testing.assert_allclose(numpy(weights), expected_weights[:, 0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(numpy(context), expected_context[:, 0], rtol=1e-5, atol=1e-6)


def test_the_context_enters_the_recurrence(data):
    """Bahdanau's decoder reads c_i inside its LSTM step: changing the source changes the state."""
    keras.utils.set_random_seed(2)
    model = BahdanauSeq2Seq(len(task.SOURCE_VOCAB), len(task.TARGET_VOCAB), units=16, embedding_dim=8)
    model([data.source, data.decoder_input])
    annotations, state, mask = model.encode(data.source)
    other = annotations[::-1]   # another sentence's annotations, same initial state
    embedded = model.target_embedding(data.decoder_input[:, 0])
    keys = model.attention.project_keys
    _, (h1, _), _ = model.decode_step(embedded, state, keys(annotations), annotations, mask)
    _, (h2, _), _ = model.decode_step(embedded, state, keys(other), other, mask[::-1])
    assert np.abs(keras.ops.convert_to_numpy(h1 - h2)).max() > 1e-4
