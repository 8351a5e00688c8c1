"""Chapter 11's ablations of the Transformer, each row at its own learning rate.

The chapter's table changes one setting of a small Transformer per row (one
head, no positions, no ``1/sqrt(d_k)``, post-LN).  A row trained at a rate
that suits the base model and not itself would lose for the rate's sake,
not the setting's (chapter 8's deep stacks did, until their rates were
tuned), so :data:`COMPARISONS` sweeps the peak learning rate of every row
alike, scored by the held-out loss, and the chapter trains each row at its
best.  ``make tune`` runs the sweep (:mod:`.tuning`).

:func:`ablation` at the chapter's rate (``TRANSFORMER_PEAK_RATE``) is the very
run that ``experiments.transformer_translator(**ROW, **ROWS[row])`` trains
(the same settings, so the same cache key): a test checks it.
"""

from __future__ import annotations

from ..data import toy_translation
from . import experiments
from .experiments import TranslationRun
from .tuning import Comparison

#: what every row shares: one layer, sentences of at most 15 words, 5,000 of them, 100 warm-up steps
ROW = {"num_layers": 1, "max_words": 15, "sentences": 5_000, "warmup_steps": 100}
#: each row's one change to the base model
ROWS = {"base (4 heads, sinusoidal, scaled, pre-LN)": {},
        "1 head (of width 64)": {"num_heads": 1},
        "no positional encoding": {"positions": "none"},
        "no 1/√d_k scaling": {"scale_attention": False},
        "post-LN": {"pre_ln": False}}


def ablation(row: str, learning_rate: float, seed: int | None = None) -> TranslationRun:
    """The row ``row`` of :data:`ROWS`, trained at peak rate ``learning_rate`` under ``seed``
    (default: the course seed); otherwise exactly as ``experiments.transformer_translator``."""
    from ..models import transformer

    if row not in ROWS:
        raise ValueError(f"row must be one of {list(ROWS)}, got {row!r}")
    settings = {**ROW, **ROWS[row]}
    sentences, max_words, warmup_steps = (settings.pop(k) for k in ("sentences", "max_words",
                                                                    "warmup_steps"))
    # the settings transformer_translator passes (its defaults, then the row's changes)
    config = {"source_vocab_size": len(toy_translation.SOURCE_VOCAB),
              "target_vocab_size": len(toy_translation.TARGET_VOCAB),
              "max_length": experiments.SPLIT["max_length"] + 2, **experiments.TRANSFORMER_SIZE,
              "pre_ln": True, "positions": "sinusoidal", "scale_attention": True, **settings}
    return experiments.run_translation(
        "transformer", transformer.Transformer, config, epochs=1,
        batch_size=experiments.TRANSFORMER_BATCH_SIZE, warmup_steps=warmup_steps,
        learning_rate=learning_rate, seed=seed, bucketed=False, sentences=sentences,
        max_words=max_words, snapshot_step=None, steps_per_execution=10)


def held_out_loss(row: str, learning_rate: float, seed: int) -> float:
    """The tuning metric: the row's held-out loss (nats per target word) after its one pass."""
    return float(ablation(row, learning_rate, seed).history["val_loss"][-1])


COMPARISONS = [
    Comparison(
        name="ch11_ablations",
        question="Does each ablation of the Transformer cost what it costs at its own best "
                 "learning rate, or only at the base model's?",
        arms=tuple(ROWS), setting="peak learning rate (Adam, warm-up then cosine)",
        values=(1e-3, 2e-3, 3e-3, 5e-3, 1e-2),
        metric="held-out loss (nats per word) after one pass", higher_is_better=False,
        run=held_out_loss),
]
