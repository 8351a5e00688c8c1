"""The Transformer of Vaswani et al. (2017), in NumPy, with the weights of the Keras blocks.

Built from the pieces of the earlier chapters:
:func:`~attention_course.multi_head.multi_head_attention` (chapter 6), the
sinusoidal positions of :mod:`~attention_course.positional_encoding` (chapter 7)
and :func:`~attention_course.normalization.layer_norm` (chapter 8).

Every sub-layer ``f`` (attention or feed-forward) is wrapped in a residual
connection and a layer normalization, in one of two placements::

    post-LN (the paper):   x = LayerNorm(x + f(x))
    pre-LN  (GPT-2 on):    x = x + f(LayerNorm(x))

Every weight class is read out of the corresponding layer of
:mod:`attention_course.models.transformer` by a function of
:mod:`attention_course.weights.from_keras` (this module imports nothing from
there), so the two implementations can be compared number for number.

Shapes: ``B`` batch, ``S`` source length, ``T`` target length, ``d`` model width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .checks import as_float_array, as_mask, checked
from .multi_head import MultiHeadAttentionWeights, multi_head_attention
from .normalization import LayerNormWeights




def _check_sequence(x, name: str, width: int) -> np.ndarray:
    x = as_float_array(x, name)
    if x.ndim != 3 or x.shape[-1] != width:
        raise ValueError(f"{name} must have shape (B, T, d_model={width}); got {x.shape}")
    return x


def _padding_mask(mask, name: str, batch: int, length: int) -> np.ndarray | None:
    """A ``(B, S)`` padding mask (True = real token) as booleans."""
    if mask is None:
        return None
    return as_mask(mask, name, (batch, length), "(B, S)")


# ----------------------------------------------------------------------------
# Position-wise feed-forward network
# ----------------------------------------------------------------------------

ACTIVATIONS = ("relu", "gelu")


def check_gelu(x):
    """The input of :func:`gelu` (chapter 12), as floats."""
    return dict(x=as_float_array(x, "x"))


@checked(check_gelu)
def gelu(x) -> np.ndarray:
    """The Gaussian error linear unit (Hendrycks & Gimpel, 2016): ``x * Phi(x)``.

    ``Phi`` is the standard normal CDF, ``Phi(x) = (1 + erf(x / sqrt(2))) / 2``:
    the exact form BERT uses and ``keras.activations.gelu`` computes by default
    (``approximate=False``), not GPT-2's tanh approximation.  Like ReLU for
    large ``|x|``, but smooth, and slightly negative for small negative ``x``.

    Explained in chapter 12, *BERT: an encoder-only Transformer*, section "A real pretrained BERT: all-MiniLM-L6-v2".
    """
    from scipy.special import erf  # NumPy has no erf

    return 0.5 * x * (1.0 + erf(x / x.dtype.type(np.sqrt(2.0))))


@dataclass
class FeedForwardWeights:
    """``FFN(x) = act(x W_1 + b_1) W_2 + b_2``: ``W_1 (d, d_ff)``, ``W_2 (d_ff, d)``.

    ``act`` is ``"relu"`` (the Transformer paper) or ``"gelu"`` (BERT, GPT).

    Used in chapter 9, *The encoder block*.
    """

    kernel_1: np.ndarray
    bias_1: np.ndarray
    kernel_2: np.ndarray
    bias_2: np.ndarray
    activation: str = "relu"

    def __post_init__(self):
        for name in ("kernel_1", "bias_1", "kernel_2", "bias_2"):
            setattr(self, name, as_float_array(getattr(self, name), name))
        d, d_ff = self.kernel_1.shape
        expected = {"bias_1": (d_ff,), "kernel_2": (d_ff, d), "bias_2": (d,)}
        for name, shape in expected.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} must have shape {shape} to match kernel_1 "
                                 f"{self.kernel_1.shape}; got {getattr(self, name).shape}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")


def check_feed_forward(x, weights):
    """The input of :func:`feed_forward` (chapter 9): floats with the network's width."""
    x = as_float_array(x, "x")
    if x.shape[-1] != weights.kernel_1.shape[0]:
        raise ValueError(f"x has {x.shape[-1]} features but the feed-forward network "
                         f"expects {weights.kernel_1.shape[0]}")
    return dict(x=x)


@checked(check_feed_forward)
def feed_forward(x, weights: FeedForwardWeights) -> np.ndarray:
    """The same two-layer network applied to every position on its own.

    ``x (..., T, d) -> (..., T, d)``, through a hidden layer of width ``d_ff``
    (four times ``d`` in the paper).  "Position-wise": no position sees another.

    Explained in chapter 9, *The encoder block*, section "The block".
    """
    hidden = x @ weights.kernel_1 + weights.bias_1                      # (..., T, d_ff)
    hidden = gelu(hidden) if weights.activation == "gelu" else np.maximum(hidden, 0.0)
    return hidden @ weights.kernel_2 + weights.bias_2                   # (..., T, d)


def residual(x, sublayer, norm: LayerNormWeights, pre_ln: bool):
    """``x + sublayer(norm(x))`` (pre-LN) or ``norm(x + sublayer(x))`` (post-LN).

    ``sublayer`` returns ``(output, extra)``; ``extra`` (attention weights) is
    passed through: the function returns ``(new x, extra)``.

    Explained in chapter 8, *Residual connections and layer normalization*, section "Post-LN and pre-LN".
    """
    if pre_ln:
        out, extra = sublayer(norm(x))
        return x + out, extra
    out, extra = sublayer(x)
    return norm(x + out), extra


# ----------------------------------------------------------------------------
# Encoder block
# ----------------------------------------------------------------------------

@dataclass
class EncoderBlockWeights:
    """Self-attention, feed-forward network and the two layer norms of one encoder block.

    Used in chapter 9, *The encoder block*, section "NumPy equals Keras".
    """

    self_attention: MultiHeadAttentionWeights
    attention_norm: LayerNormWeights
    feed_forward: FeedForwardWeights
    feed_forward_norm: LayerNormWeights

    @property
    def d_model(self) -> int:
        return self.feed_forward.kernel_1.shape[0]


def check_encoder_block(x, weights, padding_mask):
    """The inputs of :func:`encoder_block` (chapter 9): ``x (B, S, d)``, a ``(B, S)`` mask."""
    x = _check_sequence(x, "x", weights.d_model)
    return dict(x=x, padding_mask=_padding_mask(padding_mask, "padding_mask", *x.shape[:2]))


@checked(check_encoder_block)
def encoder_block(x, weights: EncoderBlockWeights, padding_mask=None,
                  pre_ln: bool = False):
    """One encoder block: self-attention and feed-forward, each with residual + norm.

    Args:
        x: ``(B, S, d)`` the source tokens' vectors.
        weights: the block's parameters.
        padding_mask: optional ``(B, S)``, True for real tokens: padding is
            hidden from every query (the padded positions' own outputs are
            computed too, and ignored by whoever reads them).
        pre_ln: layer norm before each sub-layer (True) or after the residual
            sum (False, the original Transformer).

    Returns:
        ``output (B, S, d)`` and the self-attention weights ``(B, heads, S, S)``.

    Explained in chapter 9, *The encoder block*, section "The block".
    """
    mask = None if padding_mask is None else padding_mask[:, None, :]  # (B, 1, S)

    def attend(h):
        return multi_head_attention(h, h, weights.self_attention, attention_mask=mask)

    def ffn(h):
        return feed_forward(h, weights.feed_forward), None

    x, attention = residual(x, attend, weights.attention_norm, pre_ln)
    x, _ = residual(x, ffn, weights.feed_forward_norm, pre_ln)
    return x, attention


# ----------------------------------------------------------------------------
# Decoder block
# ----------------------------------------------------------------------------

@dataclass
class DecoderBlockWeights:
    """Masked self-attention, cross-attention, feed-forward and three layer norms.

    A decoder-only model (GPT, chapter 13) has no encoder to read: its blocks
    have ``cross_attention`` and ``cross_attention_norm`` set to None.

    Used in chapter 10, *The decoder block*, section "NumPy equals Keras".
    """

    self_attention: MultiHeadAttentionWeights
    self_attention_norm: LayerNormWeights
    cross_attention: MultiHeadAttentionWeights | None
    cross_attention_norm: LayerNormWeights | None
    feed_forward: FeedForwardWeights
    feed_forward_norm: LayerNormWeights

    def __post_init__(self):
        if (self.cross_attention is None) != (self.cross_attention_norm is None):
            raise ValueError("cross_attention and cross_attention_norm must both be given "
                             "or both be None (a block without cross-attention)")

    @property
    def d_model(self) -> int:
        return self.feed_forward.kernel_1.shape[0]

    @property
    def has_cross_attention(self) -> bool:
        return self.cross_attention is not None


def check_decoder_block(y, memory, weights, source_mask):
    """The inputs of :func:`decoder_block` (chapter 10): a memory where there is cross-attention."""
    y = _check_sequence(y, "y", weights.d_model)
    if memory is None:
        if weights.has_cross_attention:
            raise ValueError("this block has cross-attention weights: pass the encoder's memory")
        if source_mask is not None:
            raise ValueError("source_mask needs a memory to mask")
        return dict(y=y)
    if not weights.has_cross_attention:
        raise ValueError("this block has no cross-attention (decoder-only): memory must be None")
    memory = _check_sequence(memory, "memory", weights.d_model)
    if memory.shape[0] != y.shape[0]:
        raise ValueError(f"y and memory must have the same batch size; got {y.shape} "
                         f"and {memory.shape}")
    source_mask = _padding_mask(source_mask, "source_mask", *memory.shape[:2])
    return dict(y=y, memory=memory, source_mask=source_mask)


@checked(check_decoder_block)
def decoder_block(y, memory, weights: DecoderBlockWeights, source_mask=None,
                  pre_ln: bool = False, causal: bool = True):
    """One decoder block: masked self-attention, cross-attention, feed-forward.

    Args:
        y: ``(B, T, d)`` the target prefix's vectors (teacher forcing: the
            true previous words).
        memory: ``(B, S, d)`` the encoder's output, read by the cross-attention;
            None for a decoder-only model (GPT), whose blocks have no
            cross-attention: masked self-attention and feed-forward only.
        weights: the block's parameters.
        source_mask: optional ``(B, S)``, True for real source tokens.
        pre_ln: see :func:`encoder_block`.
        causal: hide target positions ``j > i`` from position ``i`` (always, in
            a real decoder; ``False`` shows what leaks without the mask).

    Returns:
        ``output (B, T, d)``, the self-attention weights ``(B, heads, T, T)``
        and the cross-attention weights ``(B, heads, T, S)`` (None without memory).

    Explained in chapter 10, *The decoder block*, section "Three sub-layers".
    """
    cross_mask = None if source_mask is None else source_mask[:, None, :]  # (B, 1, S)

    def self_attend(h):
        return multi_head_attention(h, h, weights.self_attention,
                                    use_causal_mask=causal)

    def cross_attend(h):
        return multi_head_attention(h, memory, weights.cross_attention,
                                    attention_mask=cross_mask)

    def ffn(h):
        return feed_forward(h, weights.feed_forward), None

    y, self_weights = residual(y, self_attend, weights.self_attention_norm, pre_ln)
    cross_weights = None
    if memory is not None:  # a decoder-only model (GPT) has no memory to read
        y, cross_weights = residual(y, cross_attend, weights.cross_attention_norm,
                                    pre_ln)
    y, _ = residual(y, ffn, weights.feed_forward_norm, pre_ln)
    return y, self_weights, cross_weights


# ----------------------------------------------------------------------------
# The whole encoder--decoder
# ----------------------------------------------------------------------------

@dataclass
class TransformerWeights:
    """Every parameter of :class:`attention_course.models.transformer.Transformer`, and its settings.

    ``source_positions`` / ``target_positions`` are ``(max_length, d)``: the
    learned tables, or the sinusoids the Keras model adds (all zeros when the
    model uses no positions at all).  ``final_*_norm`` exist for pre-LN only,
    where the residual stream leaves the last block un-normalised.

    Used in chapter 11, *Training a Transformer*, section "The whole model in NumPy".
    """

    source_embedding: np.ndarray            # (V_source, d)
    target_embedding: np.ndarray            # (V_target, d)
    source_positions: np.ndarray            # (max_length, d)
    target_positions: np.ndarray            # (max_length, d)
    encoder: list[EncoderBlockWeights]
    decoder: list[DecoderBlockWeights]
    classifier_kernel: np.ndarray           # (d, V_target)
    classifier_bias: np.ndarray             # (V_target,)
    final_encoder_norm: LayerNormWeights | None = None
    final_decoder_norm: LayerNormWeights | None = None
    pre_ln: bool = False
    scale_embeddings: bool = True
    causal: bool = True


def embed(tokens, table: np.ndarray, positions: np.ndarray, scale: bool) -> np.ndarray:
    """``(B, T)`` ids -> ``(B, T, d)``: token embedding (times ``sqrt(d)``) plus position ``t``'s vector.

    Used in chapter 11, *Training a Transformer*.
    """
    tokens = np.asarray(tokens)
    if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
        raise ValueError(f"tokens must be an integer array of shape (B, T); got {tokens.dtype} {tokens.shape}")
    if tokens.shape[1] > len(positions):
        raise ValueError(f"sequences of {tokens.shape[1]} tokens are longer than the "
                         f"{len(positions)} positions the model knows")
    x = table[tokens]
    if scale:
        x = x * x.dtype.type(np.sqrt(table.shape[1]))
    return x + positions[: tokens.shape[1]]


def encode(source, weights: TransformerWeights):
    """``source (B, S)`` ids (0 = padding) -> memory ``(B, S, d)``, and the attention.

    The encoder's attention weights, ``(layers, B, heads, S, S)``.

    Explained in chapter 11, *Training a Transformer*, section "The model".
    """
    source = np.asarray(source)
    source_mask = source != 0
    x = embed(source, weights.source_embedding, weights.source_positions,
              weights.scale_embeddings)                          # (B, S, d)
    attention = []
    for block in weights.encoder:
        x, a = encoder_block(x, block, padding_mask=source_mask, pre_ln=weights.pre_ln)
        attention.append(a)                                      # (B, heads, S, S)
    if weights.final_encoder_norm is not None:
        x = weights.final_encoder_norm(x)
    return x, np.stack(attention)


def decode(decoder_input, memory, source, weights: TransformerWeights):
    """Teacher-forced decoder: ``decoder_input (B, T)`` ids -> logits ``(B, T, V_target)``.

    Also returns the self- and cross-attention weights,
    ``(layers, B, heads, T, T)`` and ``(layers, B, heads, T, S)``.

    Explained in chapter 11, *Training a Transformer*, section "The model".
    """
    source_mask = np.asarray(source) != 0
    y = embed(decoder_input, weights.target_embedding, weights.target_positions,
              weights.scale_embeddings)
    self_attention, cross_attention = [], []
    for block in weights.decoder:
        y, s, c = decoder_block(y, memory, block, source_mask=source_mask, pre_ln=weights.pre_ln,
                                causal=weights.causal)
        self_attention.append(s)
        cross_attention.append(c)
    if weights.final_decoder_norm is not None:
        y = weights.final_decoder_norm(y)
    logits = y @ weights.classifier_kernel + weights.classifier_bias
    return logits, np.stack(self_attention), np.stack(cross_attention)


def transformer_forward(source, decoder_input, weights: TransformerWeights):
    """The whole model: ``source (B, S)``, ``decoder_input (B, T)`` -> ``(B, T, V_target)``.

    Returns ``(logits, attention)``: the logits ``(B, T, V_target)`` and a dict
    with the ``"encoder"``, ``"decoder_self"`` and ``"cross"`` weights of every layer.

    Explained in chapter 11, *Training a Transformer*, section "The whole model in NumPy".
    """
    memory, encoder_attention = encode(source, weights)               # (B, S, d)
    logits, self_attention, cross = decode(decoder_input, memory, source, weights)
    return logits, {"encoder": encoder_attention, "decoder_self": self_attention,
                    "cross": cross}
