"""The attention-only model: NumPy forward pass == Keras, with the model's own weights."""

import keras
import numpy as np
import pytest

from attention_course import head_analysis
from attention_course import attention_only
from attention_course.models import attention_only as keras_attention_only
from attention_course.weights.from_keras import attention_only as attention_only_from_keras


def randomised_model(rng, num_heads, readout_position, vocab_size=11, length=6, num_classes=5,
                     mark_embedding=False):
    model = keras_attention_only.build_model(vocab_size, length, num_classes, d_model=12,
                                       num_heads=num_heads, key_dim=4,
                                       readout_position=readout_position,
                                       mark_embedding=mark_embedding)
    model.set_weights([rng.normal(scale=0.4, size=w.shape).astype(w.dtype) for w in model.get_weights()])
    return model


@pytest.mark.parametrize("num_heads", [(1,), (1, 1), (3,), (2, 4)])
@pytest.mark.parametrize("readout_position", [None, 0, 4])
def test_numpy_forward_matches_keras(rng, num_heads, readout_position):
    model = randomised_model(rng, num_heads, readout_position)
    tokens = rng.integers(0, 11, size=(7, 6)).astype("int32")
    weights = attention_only_from_keras.attention_only(model)
    assert len(weights.layers) == len(num_heads)
    assert [layer.num_heads for layer in weights.layers] == list(num_heads)
    logits, attention = attention_only.numpy_forward(weights, tokens)
    expected = model.predict(tokens, verbose=0)
    assert logits.shape == expected.shape
    # float32 through up to two layers with weights of scale 0.4: round-off reaches ~1e-6 absolute.
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)
    for layer, heads in zip(attention, num_heads):
        assert layer.shape == (7, heads, 6, 6)
        np.testing.assert_allclose(layer.sum(-1), 1.0, rtol=1e-5)


def test_attention_matches_the_keras_layers_scores(rng):
    model = randomised_model(rng, (2,), None)
    tokens = rng.integers(0, 11, size=(3, 6)).astype("int32")
    weights = attention_only_from_keras.attention_only(model)
    _, attention = attention_only.numpy_forward(weights, tokens)
    x = keras.ops.convert_to_numpy(model.get_layer("embedding")(tokens))
    _, scores = model.get_layer("attention_0")(x, x, return_attention_scores=True)
    np.testing.assert_allclose(attention[0], keras.ops.convert_to_numpy(scores), rtol=1e-5, atol=1e-6)


def test_ablating_every_head_leaves_the_embeddings_and_output_biases(rng):
    model = randomised_model(rng, (3,), None)
    weights = attention_only_from_keras.attention_only(model)
    tokens = rng.integers(0, 11, size=(2, 6))
    silent = weights.with_layer(0, head_analysis.ablate_heads(weights.layers[0], range(3)))
    logits, _ = attention_only.numpy_forward(silent, tokens)
    x = weights.token_embeddings[tokens] + weights.position_embeddings + weights.layers[0].output_bias
    np.testing.assert_allclose(logits, x @ weights.readout_kernel + weights.readout_bias, rtol=1e-5, atol=1e-6)
    assert weights.layers[0] is not silent.layers[0]  # with_layer copies, the original is kept


def test_tokens_of_the_wrong_shape_are_rejected(rng):
    weights = attention_only_from_keras.attention_only(randomised_model(rng, (1,), None))
    with pytest.raises(ValueError, match="shape \\(B, 6\\)"):
        attention_only.numpy_forward(weights, np.zeros((2, 5), int))
    with pytest.raises(ValueError, match="integer ids"):
        attention_only.numpy_forward(weights, np.zeros((2, 6)))



@pytest.mark.parametrize("num_heads", [(1,), (4,), (2, 3)])
@pytest.mark.parametrize("readout_position", [None, 2])
def test_numpy_forward_matches_keras_with_a_mark_embedding(rng, num_heads, readout_position):
    model = randomised_model(rng, num_heads, readout_position, vocab_size=10, mark_embedding=True)
    weights = attention_only_from_keras.attention_only(model)
    assert weights.token_embeddings.shape == (5, 12) and weights.mark_embedding.shape == (12,)
    tokens = rng.integers(0, 10, size=(9, 6)).astype("int32")           # ids 5..9: marked 0..4
    logits, _ = attention_only.numpy_forward(weights, tokens)
    np.testing.assert_allclose(logits, model.predict(tokens, verbose=0), rtol=1e-5, atol=1e-5)
    # The embedding itself: a marked token is its plain token plus the mark vector.
    keras_embedded = keras.ops.convert_to_numpy(model.get_layer("embedding")(tokens))
    embedded = attention_only.embed(weights, tokens)
    np.testing.assert_allclose(embedded, keras_embedded, rtol=1e-6, atol=1e-7)
    marked_3, plain_3 = np.full((1, 6), 8), np.full((1, 6), 3)
    np.testing.assert_allclose(attention_only.embed(weights, marked_3) - attention_only.embed(weights, plain_3),
                               np.broadcast_to(weights.mark_embedding, (1, 6, 12)), rtol=1e-5, atol=1e-6)


def test_the_mark_embedding_is_an_option_that_changes_nothing_when_off():
    keras.utils.set_random_seed(3)
    plain = keras_attention_only.build_model(10, 6, 5, d_model=12, num_heads=(2,), key_dim=4)
    keras.utils.set_random_seed(3)
    marked = keras_attention_only.build_model(10, 6, 5, d_model=12, num_heads=(2,), key_dim=4,
                                              mark_embedding=True)
    # Without the option: one vector per id, no mark, the weights of the chapter 5 model.
    plain_weights = attention_only_from_keras.attention_only(plain)
    assert plain_weights.token_embeddings.shape == (10, 12) and plain_weights.mark_embedding is None
    assert [w.path for w in plain.weights] == [w.path for w in marked.weights
                                                if w.path != "embedding/mark_embedding"]
    with pytest.raises(ValueError, match="even vocab_size"):
        keras_attention_only.build_model(11, 6, 5, mark_embedding=True)


def test_token_ids_outside_the_vocabulary_are_rejected(rng):
    weights = attention_only_from_keras.attention_only(
        randomised_model(rng, (1,), None, vocab_size=10, mark_embedding=True))
    attention_only.numpy_forward(weights, np.full((1, 6), 9))            # the last marked id
    with pytest.raises(ValueError, match="ids in \\[0, 10\\)"):
        attention_only.numpy_forward(weights, np.full((1, 6), 10))
