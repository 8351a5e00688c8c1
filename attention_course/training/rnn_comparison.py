"""Chapter 3's comparison: the encoder--decoder with attention against the one without,
each at its own best learning rate, and a model without attention as large as the one with it.

Chapter 3 sets its model with attention (311 k parameters) beside chapter 1's
model without (171 k).  Two things besides attention could decide that
comparison: the learning rate each model happens to train at, and the
parameters the attention adds.  So :data:`COMPARISONS` sweeps the peak
learning rate of three arms alike -- chapter 1's model, the same model
widened to 184 units (307 k parameters, 1.3 % fewer than the attention
model's), and chapter 3's model -- each at its chapter's budget (6 passes
without attention, 1.25 with), scored by the held-out loss.  ``make tune``
runs the sweep (:mod:`.tuning`).  Chapter 3 trains the two arms without
attention at their best rates and keeps its model with attention at the
chapter's rate, below its best: if anything, that favours the other two.

:func:`translator` of the two chapter arms at their chapter's rates is the very
run that ``experiments.rnn_translator`` trains (the same settings, so the same
cache key): a test checks it.
"""

from __future__ import annotations

from ..data import toy_translation
from . import experiments
from .experiments import TranslationRun
from .tuning import Comparison

#: each arm: whether it attends, and the units of its encoder and decoder
ARMS = {"no attention (ch. 1)": {"attention": False, "units": 128},
        "no attention, 184 units": {"attention": False, "units": 184},
        "additive attention (ch. 3)": {"attention": True, "units": 128}}


def translator(arm: str, learning_rate: float, seed: int | None = None) -> TranslationRun:
    """The arm ``arm`` of :data:`ARMS`, trained at peak rate ``learning_rate`` under ``seed``
    (default: the course seed) for its chapter's number of passes; otherwise exactly as
    ``experiments.rnn_translator``."""
    from ..models import rnn_seq2seq

    if arm not in ARMS:
        raise ValueError(f"arm must be one of {list(ARMS)}, got {arm!r}")
    attention, units = ARMS[arm]["attention"], ARMS[arm]["units"]
    config = {"source_vocab_size": len(toy_translation.SOURCE_VOCAB),
              "target_vocab_size": len(toy_translation.TARGET_VOCAB),
              "units": units, "embedding_dim": 64}
    name = "rnn-bahdanau-attention" if attention else "rnn-no-attention"
    if units != 128:
        name += f"-{units}-units"
    model = rnn_seq2seq.BahdanauSeq2Seq if attention else rnn_seq2seq.RNNSeq2Seq
    return experiments.run_translation(
        name, model, config, warmup_steps=experiments.RNN_WARMUP_STEPS,
        epochs=experiments.RNN_RECIPES[attention]["epochs"], learning_rate=learning_rate, seed=seed)


def held_out_loss(arm: str, learning_rate: float, seed: int) -> float:
    """The tuning metric: the arm's teacher-forced held-out loss (nats per word) at its end."""
    return float(translator(arm, learning_rate, seed).history["val_loss"][-1])


COMPARISONS = [
    Comparison(
        name="ch3_attention_or_none",
        question="Does attention beat a fixed summary vector when each model trains at its own "
                 "best learning rate, and when the model without attention is as large?",
        arms=tuple(ARMS), setting="peak learning rate (Adam, warm-up then cosine)",
        values=(2.5e-3, 5e-3, 1e-2, 2e-2, 4e-2),
        metric="held-out loss (nats per word) after the chapter's passes", higher_is_better=False,
        run=held_out_loss),
]
