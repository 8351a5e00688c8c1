"""Train chapter 13's character-level GPT on Shakespeare, once, and save it into the package's data.

The chapter cannot train for minutes, so this script does, and writes

* ``attention_course/data/char_gpt.npz`` -- the weights, float16, keyed by
  Keras variable path (about 1.6 MB);
* ``attention_course/data/char_gpt.json`` -- the recipe's key, the
  configuration, the alphabet, the training curve (training and validation
  loss every 100 steps, seconds of training), the validation loss on the whole
  validation split and on the chapter's fixed subset, and the versions used.

It trains through :func:`attention_course.training.char_gpt.trained_gpt`, the
recipe the chapter loads the shipped run with, so a change to the recipe
makes the chapter (and the tests) refuse the old weights until this script
has shipped new ones.

Run it from the repository root, on CPU (nothing is downloaded)::

    .venv/bin/python scripts/train_char_gpt.py

It is seeded: the same versions on the same machine give the same weights
(TensorFlow's op determinism is switched on).  ``--help`` lists the settings;
the defaults are nanoGPT's CPU recipe for tiny Shakespeare.  The tests run it
with tiny settings and ``--output`` elsewhere, so the code path cannot rot.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from dataclasses import fields
from pathlib import Path

# TensorFlow's settings, before anything imports it (as the Makefile and the chapters set them)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
from attention_course.data.shakespeare import load_splits  # noqa: E402
from attention_course.training import cache, char_gpt  # noqa: E402

# the chapter measures the validation loss on this many evenly spread windows
CHAPTER_VALIDATION_WINDOWS = 512


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for field in fields(char_gpt.Config):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default),
                            default=field.default, help=f"(default {field.default})")
    parser.add_argument("--output", type=Path, default=None,
                        help="folder for char_gpt.npz and char_gpt.json (default: the package's data)")
    return parser.parse_args(argv)


def main(argv=None) -> dict:
    args = parse(sys.argv[1:] if argv is None else argv)
    config = char_gpt.Config(**{f.name: getattr(args, f.name) for f in fields(char_gpt.Config)})

    import tensorflow as tf

    tf.config.experimental.enable_op_determinism()
    splits = load_splits()
    train_ids, validation_ids = splits.encoded()
    print(f"{len(train_ids):,} training and {len(validation_ids):,} validation characters, "
          f"{len(splits.vocab)} distinct; {config}", flush=True)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    run = char_gpt.trained_gpt(config, splits, shipped=None)
    model, history = run.model, run.record["history"]
    seconds = history["seconds"][-1]

    started = time.perf_counter()
    full = char_gpt.mean_loss(model, char_gpt.evaluation_windows(validation_ids, config.block_size))
    subset = char_gpt.mean_loss(model, char_gpt.evaluation_windows(
        validation_ids, config.block_size, CHAPTER_VALIDATION_WINDOWS))
    print(f"training: {seconds:.0f} s; validation loss {full:.4f} nats/char over the whole "
          f"split, {subset:.4f} over the chapter's {CHAPTER_VALIDATION_WINDOWS} windows "
          f"(scored in {time.perf_counter() - started:.0f} s)", flush=True)

    output = args.output or char_gpt.DATA
    output.mkdir(parents=True, exist_ok=True)
    measured = {"training_seconds": seconds, "validation_loss": full,
                "chapter_validation_windows": CHAPTER_VALIDATION_WINDOWS,
                "chapter_validation_loss": subset, "cpu_count": os.cpu_count(),
                "command": " ".join(["python", "scripts/train_char_gpt.py",
                                     *(sys.argv[1:] if argv is None else argv)])}
    shipped = cache.ShippedRun(output / char_gpt.WEIGHTS_FILE.name, output / char_gpt.HISTORY_FILE.name,
                               char_gpt.SHIPPED.script)
    cache.ship(run, shipped, {**measured, "versions": char_gpt.versions()})
    print(f"wrote {output / char_gpt.WEIGHTS_FILE.name} and {output / char_gpt.HISTORY_FILE.name}")
    return measured


if __name__ == "__main__":
    main()
