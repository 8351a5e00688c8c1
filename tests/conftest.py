"""Shared fixtures, and TensorFlow's settings for the test process (before anything imports it)."""

import os
import sys

# No start-up messages, and TensorFlow's own CPU kernels rather than oneDNN's (the book trains
# with oneDNN, which is faster; the tests compare float32 results, which it rounds differently).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
# The environment's own commands (nbgrader runs `alembic` when it creates a gradebook) are found
# whether or not the virtual environment is activated, as `make test` does not activate it.
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_course.weights.randomise import randomise_weights  # noqa: E402
from environment import environment_restored  # noqa: E402


@pytest.fixture(autouse=True)
def _environment_of_the_session():
    """Whatever a test does to ``os.environ``, the next test of the worker does not see it
    (tests/environment.py)."""
    with environment_restored():
        yield


#: The folders whose tests ``make check`` leaves out, and why (the markers of pyproject.toml)
MARKED_FOLDERS = {"site": "needs_book", "course_grader": "needs_root"}


def pytest_collection_modifyitems(config, items):
    """Mark each test of :data:`MARKED_FOLDERS` (``make check`` runs ``-m "not needs_book and not
    needs_root"``)."""
    tests = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        folder = os.path.relpath(str(item.path), tests).split(os.sep)[0]
        if folder in MARKED_FOLDERS:
            item.add_marker(MARKED_FOLDERS[folder])


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def tolerance(dtype) -> dict:
    """The tolerances the course states: float32 ~1e-5, float64 ~1e-10."""
    return {"rtol": 1e-5, "atol": 1e-6} if np.dtype(dtype) == np.float32 else {"rtol": 1e-10, "atol": 1e-12}


def randomise(layer, rng):
    """Every weight of a built Keras layer random, none at its default (see ``randomise_weights``)."""
    randomise_weights(layer, rng, scale=0.3, vector_shift=0.1)


def numpy(x):
    """A Keras tensor as a NumPy array (Keras is imported only by the tests that use it)."""
    import keras

    return keras.ops.convert_to_numpy(x)


@pytest.fixture
def graph_rewrites_restored():
    """Grappler's rewrites on again after a test that turned them off (``notebook.setup()`` does)."""
    yield
    import tensorflow as tf

    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": False})
