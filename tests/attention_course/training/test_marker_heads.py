"""marker_heads: chapter 6's training harness, scoring and learning-curve readers, on tiny data."""

import numpy as np
import pytest

from attention_course.data import marker_task
from attention_course.models import attention_only as keras_attention_only
from attention_course.training import marker_heads
from attention_course.weights.from_keras import attention_only as attention_only_from_keras


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def data():
    return (marker_task.make_data(256, length=16, digits=8, max_marks=3, seed=0),
            marker_task.make_data(32, length=16, digits=8, max_marks=3, seed=1))


def build(data, num_heads, identical=False):
    train, _ = data
    model = keras_attention_only.build_model(train.vocab_size, 16, train.num_classes, d_model=16,
                                             num_heads=(num_heads,), key_dim=4, mark_embedding=True)
    if identical:
        keras_attention_only.make_heads_identical(model.get_layer("attention_0"))
    return model


def test_epochs_to_counts_from_one_and_past_the_end_when_never_reached():
    assert marker_heads.epochs_to([0.5, 0.99, 1.0]) == 2
    assert marker_heads.epochs_to([0.995, 0.2]) == 1
    assert marker_heads.epochs_to([0.1, 0.2, 0.98]) == 4
    assert marker_heads.epochs_to([0.1, 0.6], level=0.5) == 2


def test_when_says_it_in_words():
    assert marker_heads.when(3) == "after epoch 3"
    assert marker_heads.when(marker_heads.EPOCHS + 1) == f"not within the {marker_heads.EPOCHS} epochs"
    assert marker_heads.when(5, trained=4) == "not within the 4 epochs"


def test_score_returns_three_accuracies_and_the_attention(data):
    _, test = data
    weights = attention_only_from_keras.attention_only(build(data, 2))
    accuracy, attention = marker_heads.score(weights, test)
    assert set(accuracy) == {"pair", "previous digit", "marked digit"}
    assert all(0.0 <= value <= 1.0 for value in accuracy.values())
    # a pair is right only when both of its halves are
    assert accuracy["pair"] <= min(accuracy["previous digit"], accuracy["marked digit"])
    assert attention.shape == (32, 2, 16, 16)
    np.testing.assert_allclose(attention.sum(-1), 1.0, rtol=1e-5)


def test_heads_alike_is_one_for_identical_heads_and_for_a_single_head(data):
    _, test = data
    assert marker_heads.heads_alike(build(data, 1), test.tokens) == 1.0
    assert marker_heads.heads_alike(build(data, 3, identical=True), test.tokens) == pytest.approx(1.0, abs=1e-6)


def test_train_model_records_the_curve_and_the_heads(data, monkeypatch):
    train, test = data
    monkeypatch.setattr(marker_heads, "PROBE_SIZE", 8)
    model, record, seconds = marker_heads.train_model(train, test, num_heads=2, key_dim=4, epochs=2, seed=0)
    assert seconds > 0
    assert model.get_layer("attention_0").num_heads == 2
    assert len(record["held_out"]) == 2 and all(0.0 <= a <= 1.0 for a in record["held_out"])
    alike = np.asarray(record["heads_alike"])
    assert alike.ndim == 2 and alike.shape[1] == 2
    assert alike[0, 0] == 0                                   # before the first step
    # 256 sequences in batches of 128: 4 steps in 2 epochs, none of them a multiple of 20
    assert len(alike) == 1
    # the same call again loads the same run
    again, again_record, _ = marker_heads.train_model(train, test, num_heads=2, key_dim=4, epochs=2, seed=0)
    assert again_record["held_out"] == record["held_out"]
    for a, b in zip(model.get_weights(), again.get_weights()):
        np.testing.assert_array_equal(a, b)
