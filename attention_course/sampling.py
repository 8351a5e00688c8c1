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

from .checks import as_float_array, checked
from .softmax import softmax


def _check_logits(logits) -> np.ndarray:
    logits = as_float_array(logits, "logits")
    if logits.ndim != 2 or logits.shape[1] == 0:
        raise ValueError(f"logits must have shape (B, V) with V >= 1; got {logits.shape}")
    return logits


def _check_temperature_and_top_k(temperature, top_k, V: int) -> None:
    if not temperature > 0:
        raise ValueError(f"temperature must be positive here (0 means greedy); got {temperature}")
    if top_k is not None and not 1 <= top_k <= V:
        raise ValueError(f"top_k must lie in [1, V={V}]; got {top_k}")


def keep_top_k(scores: np.ndarray, top_k: int | None) -> np.ndarray:
    """``scores (B, V)`` with all but the ``top_k`` highest of each row set to ``-inf``.

    ``top_k=None`` (or ``>= V``) keeps them all.  Used by the code of chapter 13.
    """
    V = scores.shape[1]
    if top_k is None or top_k >= V:
        return scores
    # argpartition keeps exactly k entries per row, ties included or not
    top = np.argpartition(scores, V - top_k, axis=1)[:, V - top_k:]      # (B, k)
    keep = np.zeros(scores.shape, dtype=bool)
    np.put_along_axis(keep, top, True, axis=1)
    return np.where(keep, scores, -np.inf)


def check_next_token_probabilities(logits, temperature, top_k):
    """The arguments of :func:`next_token_probabilities` (chapter 13), checked."""
    logits = _check_logits(logits)
    _check_temperature_and_top_k(temperature, top_k, logits.shape[1])
    return dict(logits=logits)


@checked(check_next_token_probabilities)
def next_token_probabilities(logits, temperature: float = 1.0,
                             top_k: int | None = None) -> np.ndarray:
    """``(B, V)`` logits -> the ``(B, V)`` distribution :func:`sample_next_token` draws from.

    Used in chapter 13, *Generating text: sampling and a key/value cache*, section "Sampling: temperature and top-k".
    """
    return softmax(keep_top_k(logits / logits.dtype.type(temperature), top_k), axis=-1)


def check_sample_next_token(logits, rng, temperature, top_k):
    """The arguments of :func:`sample_next_token` (chapter 13), checked; ``rng`` a generator."""
    rng = np.random.default_rng(rng)
    logits = _check_logits(logits)
    if temperature != 0:
        _check_temperature_and_top_k(temperature, top_k, logits.shape[1])
    return dict(logits=logits, rng=rng)


@checked(check_sample_next_token)
def sample_next_token(logits, rng, temperature: float = 1.0,
                      top_k: int | None = None) -> np.ndarray:
    """One token per row of ``logits (B, V)``: ``(B,)`` int32 ids.

    Args:
        logits: the model's scores for the next token.
        rng: a ``numpy.random.Generator`` or a seed (same seed, same tokens).
        temperature: divides the logits before the softmax; ``0`` is greedy
            (the arg-max, no randomness).
        top_k: if given, only the ``top_k`` highest-scoring tokens of each row
            can be drawn.

    Explained in chapter 13, *Generating text: sampling and a key/value cache*, section "Sampling: temperature and top-k".
    """
    if temperature == 0:                                  # greedy
        return logits.argmax(axis=1).astype(np.int32)
    scaled = keep_top_k(logits / logits.dtype.type(temperature), top_k)   # (B, V)
    noise = rng.gumbel(size=scaled.shape)  # Gumbel-max: argmax samples the softmax
    return (scaled + noise).argmax(axis=1).astype(np.int32)
