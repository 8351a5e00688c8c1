"""What the first code cell of every chapter calls.

``SEED = setup()`` seeds the chapter with the course seed
(:mod:`attention_course.seeding`) and makes its figures consistent; ``glue()``
hands a computed number to the prose (Jupyter Book's ``{glue:text}`` role), so
that no number in the text is typed by hand.  Outside Jupyter Book (Colab, a
plain Jupyter) ``glue`` just returns the value.
"""

from __future__ import annotations

import numpy as np

from ..seeding import course_seed


def setup(seed: int | None = None) -> int:
    """Seed every generator, fix NumPy's print width and the figure style; returns the seed.

    The seed is the course seed (``$ATTENTION_COURSE_SEED``, default 0) unless
    ``seed`` is given.  A chapter passes the returned seed (or ``seed + k``)
    to everything else it seeds: data splits, initialisers, training runs.
    """
    import matplotlib.pyplot as plt

    if seed is None:
        seed = course_seed()

    np.random.seed(seed)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "figure.figsize": (6, 3.6),
                         "axes.spines.top": False, "axes.spines.right": False})
    try:
        import keras
    except ImportError:  # NumPy-only chapters run without Keras installed
        return seed
    keras.utils.set_random_seed(seed)
    return seed


def glue(name: str, value, display: bool = False):
    """Store ``value`` for the prose under ``name``; returns ``value``."""
    if isinstance(value, np.generic):
        # Plain Python numbers, so that the prose can format them
        # ({glue:text}`name:.1%`); NumPy scalars' reprs cannot be parsed back.
        value = value.item()
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return value
    myst_glue(name, value, display=display)
    return value
