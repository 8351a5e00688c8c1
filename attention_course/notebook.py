"""What the first code cell of every chapter calls.

``setup()`` makes a chapter reproducible and its figures consistent; ``glue()``
hands a computed number to the prose (Jupyter Book's ``{glue:text}`` role), so
that no number in the text is typed by hand.  Outside Jupyter Book (Colab, a
plain Jupyter) ``glue`` just returns the value.
"""

from __future__ import annotations

import numpy as np


def setup(seed: int = 0) -> None:
    """Seed every generator, fix NumPy's print width and the figure style."""
    import matplotlib.pyplot as plt

    np.random.seed(seed)
    np.set_printoptions(precision=4, suppress=True, linewidth=100)
    plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "figure.figsize": (6, 3.6),
                         "axes.spines.top": False, "axes.spines.right": False})
    try:
        import keras
    except ImportError:  # NumPy-only chapters run without Keras installed
        return
    keras.utils.set_random_seed(seed)


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
