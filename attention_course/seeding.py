"""The course-wide seed: one setting that every chapter's randomness goes through.

Every seeded data split, initialisation and training run in the chapters uses
the seed that :func:`course_seed` returns (chapters call
``SEED = notebook.setup()``, which seeds NumPy and Keras with it, and pass
``SEED`` or ``SEED + k`` to whatever else needs a seed).  It is 0 unless the
environment variable ``ATTENTION_COURSE_SEED`` says otherwise, so the whole
book can be executed under another seed without editing a chapter::

    ATTENTION_COURSE_SEED=1 make book

``make claims`` does exactly that for seeds 0-7 and checks that every
claim the chapters assert about a trained result holds under each
(:mod:`attention_course.chapter_tools.claims`).
"""

from __future__ import annotations

import os

SEED_VARIABLE = "ATTENTION_COURSE_SEED"


def course_seed() -> int:
    """The seed of this run: ``$ATTENTION_COURSE_SEED``, or 0 when it is unset or empty."""
    text = os.environ.get(SEED_VARIABLE, "").strip()
    if not text:
        return 0
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(f"{SEED_VARIABLE} must be a non-negative integer, got {text!r}") from None
    if seed < 0:
        raise ValueError(f"{SEED_VARIABLE} must be a non-negative integer, got {seed}")
    return seed
