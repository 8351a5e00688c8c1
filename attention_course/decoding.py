"""Turning a trained sequence model into output sequences.

Decoders here are model-agnostic.  A model provides a ``step`` function::

    step(tokens, state) -> (logits, new_state, attention)

``tokens (B, t)`` are the words generated so far (starting with ``<s>``),
``logits (B, V)`` score the next word, ``state`` is whatever the model carries
between steps (an RNN's ``[h, c]``, or None for a model that re-reads the
prefix) and ``attention`` is ``(B, S)`` or None.
"""

from __future__ import annotations

import numpy as np

from .checks import checked
from .softmax import log_softmax


def greedy_decode(step, initial_state, batch_size: int, start_id: int, end_id: int,
                  max_steps: int):
    """Pick the most likely next word at every step, until ``</s>`` or ``max_steps``.

    Returns:
        ``tokens (B, max_steps)``: the generated ids (``</s>`` included), 0 after
        ``</s>``; and ``attention (B, max_steps, S)`` (None if the model gives
        none), zero after ``</s>``.

    Explained in chapter 1, *Sequence to sequence with RNNs*, section "Greedy decoding".
    """
    generated = np.full((batch_size, 1), start_id, dtype=np.int32)
    finished = np.zeros(batch_size, dtype=bool)
    state, attention_rows = initial_state, []
    for _ in range(max_steps):
        logits, state, attention = step(generated, state)
        next_token = np.asarray(logits).argmax(axis=-1).astype(np.int32)
        next_token[finished] = 0
        if attention is not None:
            row = np.where(finished[:, None], 0.0, np.asarray(attention))  # (B, S)
            attention_rows.append(row)
        generated = np.concatenate([generated, next_token[:, None]], axis=1)
        finished |= next_token == end_id
        if finished.all():
            break
    tokens = np.zeros((batch_size, max_steps), dtype=np.int32)
    tokens[:, : generated.shape[1] - 1] = generated[:, 1:]
    if not attention_rows:
        return tokens, None
    S = attention_rows[0].shape[-1]
    attention = np.zeros((batch_size, max_steps, S), dtype=np.float32)
    attention[:, : len(attention_rows)] = np.stack(attention_rows, axis=1)
    return tokens, attention


def _reorder_state(state, rows: np.ndarray):
    """Pick ``rows`` out of every array in a (nested list/tuple of) state arrays, None kept."""
    if state is None:
        return None
    if isinstance(state, (list, tuple)):
        return type(state)(_reorder_state(s, rows) for s in state)
    return np.asarray(state)[rows]


def check_beam_search(beam_width):
    """The width of :func:`beam_search` (chapter 11): at least one beam."""
    if beam_width < 1:
        raise ValueError(f"beam_width must be >= 1, got {beam_width}")


@checked(check_beam_search)
def beam_search(step, initial_state, batch_size: int, beam_width: int, start_id: int,
                end_id: int, max_steps: int, length_penalty: float = 0.0):
    """Keep the ``beam_width`` most probable prefixes at every step, not just one.

    ``step`` and ``initial_state`` must serve ``batch_size * beam_width`` rows:
    row ``b * beam_width + k`` is beam ``k`` of sentence ``b``.  For a model with
    a ``greedy_step(source)`` method, build them from the source repeated once
    per beam, ``model.greedy_step(np.repeat(source, beam_width, axis=0))``.  A
    state (an RNN's ``[h, c]``) is reordered along with the beams; None stays None.

    Every step scores all ``beam_width * V`` one-word extensions of the current
    beams by their total log-probability and keeps the best ``beam_width``.  A
    beam that has produced ``</s>`` is finished: it extends only with padding, at
    no cost, so it competes with the unfinished ones on its final score.

    Args:
        length_penalty: ``alpha`` for ranking the final beams by
            ``log p / length ** alpha``; 0 (the default) ranks by ``log p``,
            which favours short outputs; 1 ranks by the mean log-probability per word.

    Returns:
        ``tokens (B, beam_width, max_steps)``, as in :func:`greedy_decode` (``</s>``
        included, 0 after it), best beam first; and their ``scores (B, beam_width)``:
        total log-probabilities (divided by ``length ** alpha``).

    Explained in chapter 11, *Beam search and ablations*, section "Beam search".
    """
    B, K = batch_size, beam_width
    generated = np.full((B * K, 1), start_id, dtype=np.int32)
    # All beams start as the same prefix "<s>"; only one may expand at step one,
    # or the first beam_width picks would be beam_width copies of the same word.
    scores = np.tile(np.r_[0.0, np.full(K - 1, -np.inf)], B)       # (B*K,)
    finished = np.zeros(B * K, dtype=bool)
    state = initial_state
    for _ in range(max_steps):
        logits, state, _ = step(generated, state)
        log_p = log_softmax(logits)                                    # (B*K, V)
        V = log_p.shape[-1]
        # A finished beam may only append padding (id 0), at log-probability 0.
        log_p[finished] = -np.inf
        log_p[finished, 0] = 0.0
        candidates = (scores[:, None] + log_p).reshape(B, K * V)
        # Stable sort: among equal scores the lower beam and word id wins, so
        # beam_width=1 breaks ties exactly as greedy decoding's argmax does.
        best = np.argsort(-candidates, axis=1, kind="stable")[:, :K]   # (B, K)
        parent = (np.arange(B)[:, None] * K + best // V).reshape(-1)  # old beams' rows
        word = (best % V).reshape(-1).astype(np.int32)
        scores = np.take_along_axis(candidates, best, axis=1).reshape(-1)
        generated = np.concatenate([generated[parent], word[:, None]], axis=1)
        finished = finished[parent] | (word == end_id)
        state = _reorder_state(state, parent)
        if finished.all():
            break
    tokens = np.zeros((B * K, max_steps), dtype=np.int32)
    tokens[:, : generated.shape[1] - 1] = generated[:, 1:]
    if length_penalty:
        lengths = np.maximum((tokens != 0).sum(axis=1), 1)
        scores = scores / lengths ** length_penalty
    scores, tokens = scores.reshape(B, K), tokens.reshape(B, K, max_steps)
    order = np.argsort(-scores, axis=1, kind="stable")
    return (np.take_along_axis(tokens, order[:, :, None], axis=1),
            np.take_along_axis(scores, order, axis=1))
