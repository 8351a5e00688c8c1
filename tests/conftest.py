"""Shared fixtures.  Importing attention_course first quiets TensorFlow."""

import attention_course  # noqa: F401  (sets the TF_* environment before Keras loads)
import numpy as np
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def tolerance(dtype) -> dict:
    """The tolerances the course states: float32 ~1e-5, float64 ~1e-10."""
    return {"rtol": 1e-5, "atol": 1e-6} if np.dtype(dtype) == np.float32 else {"rtol": 1e-10, "atol": 1e-12}
