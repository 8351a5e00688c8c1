"""Choosing the next token from a language model's logits: temperature and top-k sampling.

A language model gives, for every sequence in a batch, a score (logit) per
vocabulary entry.  Turning them into one token:

* **greedy**: the arg-max, every time (deterministic, and repetitive);
* **sampling** from ``softmax(logits / temperature)``: ``temperature = 1`` is
  the model's own distribution, lower sharpens it towards greedy (``-> 0``
  *is* greedy), higher flattens it towards uniform;
* **top-k**: sample only among the ``k`` highest-scoring tokens, their
  probabilities renormalised, so the long tail of unlikely tokens -- each
  rare, but together likely enough to derail a long sample -- is cut off.

The sampling is vectorized over the batch with the Gumbel-max trick: adding
independent Gumbel noise ``g = -log(-log(u))`` to the scaled logits and taking
the arg-max draws exactly from ``softmax(logits / temperature)``.  A token
removed by top-k has a score of ``-inf`` and can never win.
"""

from __future__ import annotations

import numpy as np

from .checks import as_float_array
from .softmax import softmax


def _scaled(logits, temperature: float, top_k: int | None) -> np.ndarray:
    logits = as_float_array(logits, "logits")
    if logits.ndim != 2 or logits.shape[1] == 0:
        raise ValueError(f"logits must have shape (B, V) with V >= 1; got {logits.shape}")
    if not temperature > 0:
        raise ValueError(f"temperature must be positive here (0 means greedy); got {temperature}")
    scaled = logits / logits.dtype.type(temperature)
    if top_k is not None:
        V = logits.shape[1]
        if not 1 <= top_k <= V:
            raise ValueError(f"top_k must lie in [1, V={V}]; got {top_k}")
        if top_k < V:
            # argpartition keeps exactly k entries per row, ties included or not
            top = np.argpartition(scaled, V - top_k, axis=1)[:, V - top_k:]      # (B, k)
            keep = np.zeros(scaled.shape, dtype=bool)
            np.put_along_axis(keep, top, True, axis=1)
            scaled = np.where(keep, scaled, -np.inf)
    return scaled


def next_token_probabilities(logits, temperature: float = 1.0, top_k: int | None = None) -> np.ndarray:
    """``(B, V)`` logits -> the ``(B, V)`` distribution :func:`sample_next_token` draws from.

    Used in chapter 13, *GPT: a decoder-only Transformer*, section "Sampling: temperature and top-k".
    """
    return softmax(_scaled(logits, temperature, top_k), axis=-1)


def sample_next_token(logits, rng, temperature: float = 1.0, top_k: int | None = None) -> np.ndarray:
    """One token per row of ``logits (B, V)``: ``(B,)`` int32 ids.

    Args:
        logits: the model's scores for the next token.
        rng: a ``numpy.random.Generator`` or a seed (same seed, same tokens).
        temperature: divides the logits before the softmax; ``0`` is greedy
            (the arg-max, no randomness).
        top_k: if given, only the ``top_k`` highest-scoring tokens of each row
            can be drawn.

    Explained in chapter 13, *GPT: a decoder-only Transformer*, section "Sampling: temperature and top-k".
    """
    rng = np.random.default_rng(rng)
    if temperature == 0:
        logits = as_float_array(logits, "logits")
        if logits.ndim != 2 or logits.shape[1] == 0:
            raise ValueError(f"logits must have shape (B, V) with V >= 1; got {logits.shape}")
        return logits.argmax(axis=1).astype(np.int32)
    scaled = _scaled(logits, temperature, top_k)
    noise = rng.gumbel(size=scaled.shape)
    return (scaled + noise).argmax(axis=1).astype(np.int32)
