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


def greedy_decode(step, initial_state, batch_size: int, start_id: int, end_id: int,
                  max_steps: int):
    """Pick the most likely next word at every step, until ``</s>`` or ``max_steps``.

    Returns:
        ``tokens (B, max_steps)``: the generated ids (``</s>`` included), 0 after
        ``</s>``; and ``attention (B, max_steps, S)`` (None if the model gives
        none), zero after ``</s>``.
    """
    generated = np.full((batch_size, 1), start_id, dtype=np.int32)
    finished = np.zeros(batch_size, dtype=bool)
    state, attention_rows = initial_state, []
    for _ in range(max_steps):
        logits, state, attention = step(generated, state)
        next_token = np.asarray(logits).argmax(axis=-1).astype(np.int32)
        next_token[finished] = 0
        if attention is not None:
            attention_rows.append(np.where(finished[:, None], 0.0, np.asarray(attention)))
        generated = np.concatenate([generated, next_token[:, None]], axis=1)
        finished |= next_token == end_id
        if finished.all():
            break
    tokens = np.zeros((batch_size, max_steps), dtype=np.int32)
    tokens[:, : generated.shape[1] - 1] = generated[:, 1:]
    if not attention_rows:
        return tokens, None
    attention = np.zeros((batch_size, max_steps, attention_rows[0].shape[-1]), dtype=np.float32)
    attention[:, : len(attention_rows)] = np.stack(attention_rows, axis=1)
    return tokens, attention
