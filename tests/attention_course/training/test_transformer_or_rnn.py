"""Chapter 11 against the RNNs tuned alike: the Transformer's rate searched beside the RNN's."""

import pytest
from run_keys import run_key  # noqa: F401  (a fixture)

from attention_course.training import experiments, rnn_comparison, transformer_or_rnn
from attention_course.training.transformer_or_rnn import ARMS, translator


def test_at_the_chapters_rate_the_transformer_is_the_run_the_chapter_trained(run_key):
    chapter = run_key(experiments.transformer_translator)
    assert run_key(translator, ARMS[0], experiments.TRANSFORMER_PEAK_RATE) == chapter
    assert run_key(translator, ARMS[0], 1e-3) != chapter
    assert run_key(translator, ARMS[0], experiments.TRANSFORMER_PEAK_RATE, seed=1) != chapter


def test_the_rnn_arm_is_chapter_3s_search_arm(run_key):
    """Its runs are those of chapter 3's search, rate for rate."""
    for rate in (5e-3, 2e-2):
        assert run_key(translator, ARMS[1], rate) == \
            run_key(rnn_comparison.translator, "additive attention (ch. 3)", rate)


def test_the_grid_holds_chapter_3s_and_brackets_the_chapters_transformer_rate():
    [comparison] = transformer_or_rnn.COMPARISONS
    [chapter_3] = rnn_comparison.COMPARISONS
    assert set(chapter_3.values) <= set(comparison.values) and comparison.seeds == chapter_3.seeds
    assert comparison.values[0] < experiments.TRANSFORMER_PEAK_RATE < comparison.values[-1]


def test_an_unknown_arm_is_refused():
    with pytest.raises(ValueError, match="arm must be one of"):
        translator("LSTM", 3e-3)
