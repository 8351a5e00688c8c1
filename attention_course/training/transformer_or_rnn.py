"""Chapter 11's comparison with the RNNs: the Transformer and chapter 3's RNN with attention,
each at its own best peak learning rate.

Chapter 11 compares its Transformer with chapter 1's and chapter 3's RNN
models.  The RNNs run at the rates chapter 3's search (:mod:`.rnn_comparison`)
chose for them; a Transformer left at a rate set by hand would be the one arm
not tuned alike.  So :data:`COMPARISONS` sweeps the peak rate of the
Transformer and of chapter 3's RNN with attention over one grid (chapter 3's,
and one rate below it), each at its own budget, scored by the held-out loss,
and chapter 11 trains its Transformer at the best rate found.  ``make tune``
runs the sweep (:mod:`.tuning`).

:func:`transformer` at ``TRANSFORMER_PEAK_RATE`` (the rate set by hand that
the search replaced) is the very run that ``experiments.transformer_translator()``
trains (the same settings, so the same cache key): a test checks it.
"""

from __future__ import annotations

from ..data import toy_translation
from . import experiments, rnn_comparison
from .experiments import TranslationRun
from .tuning import Comparison

ARMS = ("Transformer (ch. 11)", "RNN + additive attention (ch. 3)")


def transformer(learning_rate: float, seed: int | None = None) -> TranslationRun:
    """Chapter 11's Transformer trained at peak rate ``learning_rate`` under ``seed`` (default:
    the course seed); otherwise exactly as ``experiments.transformer_translator()``."""
    from ..models import transformer as transformer_model

    config = {"source_vocab_size": len(toy_translation.SOURCE_VOCAB),
              "target_vocab_size": len(toy_translation.TARGET_VOCAB),
              "max_length": experiments.SPLIT["max_length"] + 2, **experiments.TRANSFORMER_SIZE,
              "pre_ln": True, "positions": "sinusoidal", "scale_attention": True}
    return experiments.run_translation(
        "transformer", transformer_model.Transformer, config, epochs=1,
        batch_size=experiments.TRANSFORMER_BATCH_SIZE,
        warmup_steps=experiments.TRANSFORMER_WARMUP_STEPS, learning_rate=learning_rate,
        seed=seed, bucketed=False, sentences=experiments.TRANSFORMER_SENTENCES, max_words=None,
        snapshot_step=None, steps_per_execution=10)


def translator(arm: str, learning_rate: float, seed: int | None = None) -> TranslationRun:
    """The arm ``arm`` of :data:`ARMS` at peak rate ``learning_rate`` under ``seed``."""
    if arm == ARMS[0]:
        return transformer(learning_rate, seed)
    if arm == ARMS[1]:
        return rnn_comparison.translator("additive attention (ch. 3)", learning_rate, seed)
    raise ValueError(f"arm must be one of {list(ARMS)}, got {arm!r}")


def held_out_loss(arm: str, learning_rate: float, seed: int) -> float:
    """The tuning metric: the arm's teacher-forced held-out loss (nats per word) at its end."""
    return float(translator(arm, learning_rate, seed).history["val_loss"][-1])


COMPARISONS = [
    Comparison(
        name="ch11_transformer_or_rnn",
        question="Does the Transformer still beat chapter 3's RNN with attention when each trains "
                 "at its own best learning rate?",
        arms=ARMS, setting="peak learning rate (Adam, warm-up then cosine)",
        values=(1.25e-3, 2.5e-3, 5e-3, 1e-2, 2e-2, 4e-2),
        metric="held-out loss (nats per word) after each model's passes", higher_is_better=False,
        run=held_out_loss),
]
