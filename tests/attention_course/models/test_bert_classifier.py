"""BertClassifier (chapter 12): logits per class, pooling over real tokens only."""

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from attention_course.models.bert import BertClassifier, BertEncoder  # noqa: E402


def small_classifier(pooling="mean", num_classes=3):
    keras.utils.set_random_seed(0)
    encoder = BertEncoder(vocab_size=50, d_model=16, num_heads=2, d_ff=32, num_layers=2,
                          max_length=12)
    return BertClassifier(encoder, num_classes=num_classes, pooling=pooling)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_shape_and_padding_changes_nothing(pooling):
    model = small_classifier(pooling)
    ids = np.array([[2, 5, 7, 9, 3]], dtype="int32")
    padded = np.concatenate([ids, np.zeros((1, 4), "int32")], axis=1)
    logits = keras.ops.convert_to_numpy(model((ids, np.zeros_like(ids))))
    logits_padded = keras.ops.convert_to_numpy(model((padded, np.zeros_like(padded))))
    assert logits.shape == (1, 3)
    np.testing.assert_allclose(logits_padded, logits, rtol=1e-5, atol=1e-6)


def test_mean_pooling_is_the_mean_of_real_hidden_states():
    model = small_classifier("mean", num_classes=2)
    ids = np.array([[2, 5, 7, 0, 0], [2, 8, 9, 4, 3]], dtype="int32")
    type_ids = np.zeros_like(ids)
    logits = keras.ops.convert_to_numpy(model((ids, type_ids)))
    hidden = keras.ops.convert_to_numpy(model.encoder(ids, type_ids))
    real = (ids != 0)[..., None]
    pooled = (hidden * real).sum(1) / real.sum(1)
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in model.head.weights)
    np.testing.assert_allclose(logits, pooled @ kernel + bias, rtol=1e-5, atol=1e-5)


def test_trains_one_step():
    model = small_classifier(num_classes=2)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    ids = np.array([[2, 5, 3], [2, 6, 3]], dtype="int32")
    history = model.fit((ids, np.zeros_like(ids)), np.array([0, 1]), epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()


def test_bad_pooling():
    with pytest.raises(ValueError, match="pooling must be"):
        small_classifier("max")
