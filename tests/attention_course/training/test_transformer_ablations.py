"""Chapter 11's ablations tuned alike: at the chapter's rate, a row is the run the chapter trained."""

import pytest
from run_keys import run_key  # noqa: F401  (a fixture)

from attention_course.training import experiments, transformer_ablations
from attention_course.training.transformer_ablations import ROW, ROWS, ablation


def test_each_row_at_the_chapters_rate_is_the_run_transformer_translator_trains(run_key):
    chapter = {row: run_key(experiments.transformer_translator, **ROW, **change)
               for row, change in ROWS.items()}
    for row in ROWS:
        assert run_key(ablation, row, experiments.TRANSFORMER_PEAK_RATE) == chapter[row], row
    assert len(set(chapter.values())) == len(ROWS)           # five different rows


def test_the_rate_and_the_seed_are_part_of_the_run(run_key):
    base = next(iter(ROWS))
    at_chapter_rate = run_key(ablation, base, experiments.TRANSFORMER_PEAK_RATE)
    assert run_key(ablation, base, 1e-3) != at_chapter_rate
    assert run_key(ablation, base, experiments.TRANSFORMER_PEAK_RATE, seed=1) != at_chapter_rate


def test_an_unknown_row_is_refused():
    with pytest.raises(ValueError, match="row must be one of"):
        ablation("no feed-forward", 3e-3)


def test_the_comparison_sweeps_every_row_around_the_chapters_rate():
    [comparison] = transformer_ablations.COMPARISONS
    assert comparison.arms == tuple(ROWS)
    assert comparison.values[0] < experiments.TRANSFORMER_PEAK_RATE < comparison.values[-1]
