"""The cache key a training function would use, without training: a fixture for the training tests.

A module of its own, not a ``conftest.py``: pytest imports every ``conftest.py`` as the module
``conftest``, so a second one here would be what ``from conftest import ...`` finds in every test
collected after it (tests/test_project_files.py keeps it so)."""

import sys

import pytest

from attention_course.training import cache


class _Asked(Exception):
    """Raised instead of training: the test only wants the run's key."""


@pytest.fixture
def run_key(monkeypatch):
    """``run_key(run, *args, **kwargs)``: the cache key of the model ``run(*args, **kwargs)``
    would train, without training it (every call into the cache stops there: ``cache.trained_model``
    and the name in each module of the package that imported it)."""
    asked = []

    def key_only(name, build, fit, *, example=None, config=None, seed=None, shipped=None):
        asked.append(cache.content_key(name, build, fit, config, seed))
        raise _Asked

    original = cache.trained_model
    monkeypatch.setattr(cache, "trained_model", key_only)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("attention_course.") \
                and getattr(module, "trained_model", None) is original:
            monkeypatch.setattr(module, "trained_model", key_only)

    def key_of(run, *args, **kwargs):
        with pytest.raises(_Asked):
            run(*args, **kwargs)
        return asked[-1]

    return key_of
