"""Chapter 11's ablations tuned alike: at the chapter's rate, a row is the run the chapter trained."""

import pytest

from attention_course.training import cache, experiments, transformer_ablations
from attention_course.training.transformer_ablations import ROW, ROWS, ablation


class Asked(Exception):
    """Raised instead of training: the test only wants the run's key."""


@pytest.fixture
def keys(monkeypatch):
    asked = []

    def key_only(name, build, fit, *, example=None, config=None, seed=None, shipped=None):
        asked.append(cache.content_key(name, build, fit, config, seed))
        raise Asked

    monkeypatch.setattr(experiments.cache, "trained_model", key_only)
    return asked


def _key(keys, run, *args, **kwargs):
    with pytest.raises(Asked):
        run(*args, **kwargs)
    return keys[-1]


def test_each_row_at_the_chapters_rate_is_the_run_transformer_translator_trains(keys):
    for row, change in ROWS.items():
        chapter = _key(keys, experiments.transformer_translator, **ROW, **change)
        assert _key(keys, ablation, row, experiments.TRANSFORMER_PEAK_RATE) == chapter, row
    assert len(set(keys)) == len(ROWS)                       # five different rows


def test_the_rate_and_the_seed_are_part_of_the_run(keys):
    base = next(iter(ROWS))
    at_chapter_rate = _key(keys, ablation, base, experiments.TRANSFORMER_PEAK_RATE)
    assert _key(keys, ablation, base, 1e-3) != at_chapter_rate
    assert _key(keys, ablation, base, experiments.TRANSFORMER_PEAK_RATE, seed=1) != at_chapter_rate


def test_an_unknown_row_is_refused():
    with pytest.raises(ValueError, match="row must be one of"):
        ablation("no feed-forward", 3e-3)


def test_the_comparison_sweeps_every_row_around_the_chapters_rate():
    [comparison] = transformer_ablations.COMPARISONS
    assert comparison.arms == tuple(ROWS)
    assert comparison.values[0] < experiments.TRANSFORMER_PEAK_RATE < comparison.values[-1]
