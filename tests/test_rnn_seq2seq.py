"""The Keras encoder--decoder: its step-by-step decoding path agrees with the full forward pass."""

import keras
import numpy as np
import pytest

from attention_course.data import toy_translation as task
from attention_course.models.rnn_seq2seq import RNNSeq2Seq


@pytest.fixture(scope="module")
def data():
    return task.make_dataset(8, max_length=9, seed=5)


@pytest.mark.parametrize("attention", [False, True])
def test_stepwise_decoding_matches_teacher_forcing(data, attention):
    keras.utils.set_random_seed(0)
    model = RNNSeq2Seq(len(task.SOURCE_VOCAB), len(task.TARGET_VOCAB), units=16,
                       embedding_dim=8, attention=attention)
    full = keras.ops.convert_to_numpy(model([data.source, data.decoder_input]))
    step, state = model.greedy_step(data.source)
    for t in range(data.decoder_input.shape[1]):
        logits, state, weights = step(data.decoder_input[:, : t + 1], state)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(logits), full[:, t], rtol=1e-4, atol=1e-5)
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
    model = RNNSeq2Seq(len(task.SOURCE_VOCAB), len(task.TARGET_VOCAB), units=16,
                       embedding_dim=8, attention=True)
    wider = np.pad(data.source, ((0, 0), (0, 5)))
    a = keras.ops.convert_to_numpy(model([data.source, data.decoder_input]))
    b = keras.ops.convert_to_numpy(model([wider, data.decoder_input]))
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
