"""Random, non-default weights for a Keras layer: what every parity check starts from.

Keras initialises biases and layer-norm betas to 0 and gammas to 1; a parity
check with those values could not tell a missing bias from a correct one.  The
tests (``tests/conftest.py``) and the exercises' reference generator
(:mod:`course_authoring.references`) both randomise layers with this one function.
"""

from __future__ import annotations

import numpy as np


def randomise_weights(layer, rng: np.random.Generator, scale: float = 0.3, vector_shift: float = 0.1):
    """Set every weight of the built ``layer`` to ``scale * N(0, 1)``; vectors also get ``+ vector_shift``.

    The shift keeps biases, gammas and betas away from 0 (and from each other's defaults).
    Draws from ``rng`` in the order of ``layer.get_weights()``.
    """
    if not layer.get_weights():
        raise ValueError(f"{layer.name} has no weights yet: build it (call it once) before randomising it")
    layer.set_weights([(scale * rng.standard_normal(w.shape)).astype(w.dtype) + (w.ndim == 1) * vector_shift
                       for w in layer.get_weights()])
    return layer
