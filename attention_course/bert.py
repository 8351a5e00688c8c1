"""BERT's encoder (Devlin et al. 2019) in NumPy, built from the course's encoder blocks.

BERT is the Transformer's encoder alone, with three changes to the input and
one to the feed-forward network:

* the input vector of token ``t`` is the sum of three *learned* embeddings,
  of the token, of its position ``t`` and of its segment (token type 0 for
  ``[CLS] A [SEP]``, 1 for ``B [SEP]``), layer-normalized;
* the feed-forward network uses the GELU instead of the ReLU;
* the blocks are post-LN (:func:`~attention_course.transformer.encoder_block`
  with ``pre_ln=False``), with a layer-norm epsilon of ``1e-12``.

Everything else is :func:`~attention_course.transformer.encoder_block` of
chapter 9, unchanged.  A **sentence embedding** in the sentence-transformers
style (Reimers & Gurevych 2019) is the mean of the last hidden states over the
real tokens, scaled to unit length (:func:`sentence_embeddings`).

:class:`BertEncoderWeights` is loaded either from the pretrained
all-MiniLM-L6-v2 (:func:`attention_course.weights.pretrained.load_encoder_weights`)
or from the Keras model
:class:`attention_course.models.bert.BertEncoder`
(:func:`attention_course.weights.from_keras.bert.bert_encoder`).

Shapes: ``B`` batch, ``T`` tokens, ``d`` model width, ``L`` layers, ``N`` heads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .checks import as_float_array, as_mask, checked
from .multi_head import MultiHeadAttentionWeights
from .normalization import LayerNormWeights
from .transformer import EncoderBlockWeights, FeedForwardWeights, encoder_block


@dataclass
class BertEmbeddingWeights:
    """The three embedding tables and the layer norm applied to their sum.

    ``word (V, d)``, ``position (max_length, d)``, ``token_type (types, d)``.

    Used by the code of chapter 12, *BERT: an encoder-only Transformer*.
    """

    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    norm: LayerNormWeights

    def __post_init__(self):
        d = self.word.shape[-1]
        for name in ("word", "position", "token_type"):
            table = as_float_array(getattr(self, name), name)
            if table.ndim != 2 or table.shape[1] != d:
                raise ValueError(f"{name} must have shape (rows, d={d}); got {table.shape}")
            setattr(self, name, table)


@dataclass
class BertEncoderWeights:
    """Every parameter of a BERT encoder: the embeddings and ``L`` encoder blocks.

    Used in chapter 12, *BERT: an encoder-only Transformer*, section "A real pretrained BERT: all-MiniLM-L6-v2".
    """

    embeddings: BertEmbeddingWeights
    blocks: list[EncoderBlockWeights]

    @property
    def d_model(self) -> int:
        return self.embeddings.word.shape[1]

    @property
    def num_heads(self) -> int:
        return self.blocks[0].self_attention.num_heads

    def astype(self, dtype) -> "BertEncoderWeights":
        """A copy with every array cast to ``dtype`` (e.g. float64, to measure float32 round-off)."""
        def cast(a):
            return None if a is None else np.asarray(a, dtype=dtype)

        def norm(n):
            return replace(n, gamma=cast(n.gamma), beta=cast(n.beta))

        e = self.embeddings
        embeddings = BertEmbeddingWeights(cast(e.word), cast(e.position), cast(e.token_type), norm(e.norm))
        blocks = [EncoderBlockWeights(
            MultiHeadAttentionWeights(**{k: cast(v) for k, v in vars(b.self_attention).items()}),
            norm(b.attention_norm),
            FeedForwardWeights(cast(b.feed_forward.kernel_1), cast(b.feed_forward.bias_1),
                               cast(b.feed_forward.kernel_2), cast(b.feed_forward.bias_2),
                               b.feed_forward.activation),
            norm(b.feed_forward_norm)) for b in self.blocks]
        return BertEncoderWeights(embeddings, blocks)


def _check_ids(ids, name: str) -> np.ndarray:
    ids = np.asarray(ids)
    if ids.ndim != 2 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"{name} must be an integer array of shape (B, T); got {ids.dtype} {ids.shape}")
    return ids


def check_bert_embeddings(ids, weights, type_ids):
    """The ids of :func:`bert_embeddings` (chapter 12): ``(B, T)`` integers the tables have rows for.

    ``type_ids`` comes back filled in (all 0) when None.
    """
    ids = _check_ids(ids, "ids")
    B, T = ids.shape
    if T > len(weights.position):
        raise ValueError(f"sequences of {T} tokens are longer than the {len(weights.position)} "
                         "positions the model knows")
    if ids.size and (ids.min() < 0 or ids.max() >= len(weights.word)):
        raise ValueError(f"ids must lie in [0, {len(weights.word)}); got {ids.min()}..{ids.max()}")
    type_ids = np.zeros_like(ids) if type_ids is None else _check_ids(type_ids, "type_ids")
    if type_ids.shape != ids.shape:
        raise ValueError(f"type_ids must have the shape of ids {ids.shape}; got {type_ids.shape}")
    if type_ids.size and (type_ids.min() < 0 or type_ids.max() >= len(weights.token_type)):
        raise ValueError(f"type_ids must lie in [0, {len(weights.token_type)})")
    return dict(ids=ids, type_ids=type_ids)


@checked(check_bert_embeddings)
def bert_embeddings(ids, weights: BertEmbeddingWeights, type_ids=None) -> np.ndarray:
    """``(B, T)`` ids -> ``(B, T, d)``: ``LayerNorm(word + position + token type)``.

    Token ``t`` of a sequence gets ``word[ids[t]] + position[t] + token_type[type_ids[t]]``,
    layer-normalized.

    ``type_ids``: ``(B, T)`` segment ids (0 for the first sentence, 1 for the
    second); None means all 0.

    Explained in chapter 12, *BERT: an encoder-only Transformer*, section "A real pretrained BERT: all-MiniLM-L6-v2".
    """
    T = ids.shape[1]
    x = weights.word[ids] + weights.position[:T] + weights.token_type[type_ids]
    return weights.norm(x)                                               # (B, T, d)


@dataclass(frozen=True)
class BertOutput:
    """What :func:`bert_encoder` returns.

    Attributes:
        last_hidden_state: ``(B, T, d)``, the last block's output (one vector per token).
        attention: ``(L, B, N, T, T)``, every block's self-attention weights.

    Used by the code of chapter 12, *BERT: an encoder-only Transformer*.
    """

    last_hidden_state: np.ndarray
    attention: np.ndarray


def check_bert_encoder(ids, attention_mask):
    """The ids and mask of :func:`bert_encoder` (chapter 12): integers and booleans ``(B, T)``."""
    ids = _check_ids(ids, "ids")
    if attention_mask is not None:
        attention_mask = as_mask(attention_mask, "attention_mask", ids.shape, "(B, T)")
    return dict(ids=ids, attention_mask=attention_mask)


@checked(check_bert_encoder)
def bert_encoder(ids, weights: BertEncoderWeights, type_ids=None,
                 attention_mask=None) -> BertOutput:
    """The BERT encoder: embeddings, then ``L`` post-LN encoder blocks.

    Args:
        ids: ``(B, T)`` token ids, right-padded with ``[PAD]`` (id 0).
        weights: the model's parameters.
        type_ids: ``(B, T)`` segment ids; None = all 0.
        attention_mask: ``(B, T)`` bool, True on real tokens; None = ``ids != 0``.
            Padded tokens are hidden (as keys) from every query; their own
            outputs are computed too, and mean nothing.

    Explained in chapter 12, *BERT: an encoder-only Transformer*, section "A real pretrained BERT: all-MiniLM-L6-v2".
    """
    if attention_mask is None:
        attention_mask = ids != 0                                     # [PAD] is id 0
    x = bert_embeddings(ids, weights.embeddings, type_ids)            # (B, T, d)
    attention = []
    for block in weights.blocks:
        x, a = encoder_block(x, block, padding_mask=attention_mask, pre_ln=False)
        attention.append(a)                                           # (B, N, T, T)
    return BertOutput(last_hidden_state=x, attention=np.stack(attention))


def check_mean_pool(hidden, attention_mask):
    """The inputs of :func:`mean_pool` (chapter 12): ``(B, T, d)`` floats, a ``(B, T)`` mask.

    The mask comes back as booleans of shape ``(B, T)``, with a real token in every row.
    """
    hidden = as_float_array(hidden, "hidden")
    if hidden.ndim != 3:
        raise ValueError(f"hidden must have shape (B, T, d); got {hidden.shape}")
    mask = np.broadcast_to(as_mask(attention_mask, "attention_mask", hidden.shape[:2], "(B, T)"),
                           hidden.shape[:2])
    if (mask.sum(axis=1) == 0).any():
        raise ValueError("every sequence needs at least one real token to be averaged")
    return dict(hidden=hidden, attention_mask=mask)


@checked(check_mean_pool)
def mean_pool(hidden, attention_mask) -> np.ndarray:
    """``(B, T, d)`` -> ``(B, d)``: the average of each sequence's *real* tokens' vectors.

    Explained in chapter 12, *BERT: an encoder-only Transformer*, section "A real pretrained BERT: all-MiniLM-L6-v2".
    """
    counts = attention_mask.sum(axis=1, keepdims=True)               # (B, 1)
    weights = attention_mask.astype(hidden.dtype)                      # (B, T): 1 or 0
    return np.einsum("bt,btd->bd", weights, hidden) / counts.astype(hidden.dtype)


def sentence_embeddings(hidden, attention_mask) -> np.ndarray:
    """Mean pooling, then unit length: ``(B, T, d)`` -> ``(B, d)``, each row of norm 1.

    What sentence-transformers computes for all-MiniLM-L6-v2 (its ``Pooling``
    and ``Normalize`` modules); cosine similarity is then a dot product.

    Explained in chapter 12, *BERT: an encoder-only Transformer*, section "A real pretrained BERT: all-MiniLM-L6-v2".
    """
    pooled = mean_pool(hidden, attention_mask)
    return pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)
