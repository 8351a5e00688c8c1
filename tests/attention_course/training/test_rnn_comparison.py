"""Chapter 3's comparison tuned alike: at the chapters' rates, an arm is the run the chapter trained."""

import pytest
from run_keys import run_key  # noqa: F401  (a fixture)

from attention_course.models import rnn_seq2seq
from attention_course.data import toy_translation
from attention_course.training import experiments, rnn_comparison
from attention_course.training.rnn_comparison import ARMS, translator

CHAPTER_ARMS = {"no attention (ch. 1)": False, "additive attention (ch. 3)": True}


def test_each_chapter_arm_at_its_chapters_rate_is_the_run_rnn_translator_trains(run_key):
    for arm, attention in CHAPTER_ARMS.items():
        rate = experiments.RNN_RECIPES[attention]["learning_rate"]
        assert run_key(translator, arm, rate) == run_key(experiments.rnn_translator, attention), arm


def test_the_arms_rate_and_seed_are_part_of_the_run(run_key):
    keys = {run_key(translator, arm, 1e-2) for arm in ARMS}
    assert len(keys) == len(ARMS)
    assert run_key(translator, "no attention (ch. 1)", 5e-3) not in keys
    assert run_key(translator, "no attention (ch. 1)", 1e-2, seed=1) not in keys


def _parameters(arm):
    import numpy as np

    settings = ARMS[arm]
    model = (rnn_seq2seq.BahdanauSeq2Seq if settings["attention"] else rnn_seq2seq.RNNSeq2Seq)(
        len(toy_translation.SOURCE_VOCAB), len(toy_translation.TARGET_VOCAB),
        units=settings["units"], embedding_dim=64)
    model((np.ones((1, 3), "int32"), np.ones((1, 3), "int32")))
    return model.count_params()


def test_the_wide_arm_has_as_many_parameters_as_the_model_with_attention():
    """The confound it controls: 171 k parameters without attention against 311 k with."""
    wide, attentive = _parameters("no attention, 184 units"), _parameters("additive attention (ch. 3)")
    assert abs(wide - attentive) / attentive < 0.02, (wide, attentive)
    assert _parameters("no attention (ch. 1)") < 0.6 * attentive


def test_an_unknown_arm_is_refused():
    with pytest.raises(ValueError, match="arm must be one of"):
        translator("a transformer", 1e-2)


def test_the_comparison_sweeps_every_arm_around_both_chapters_rates():
    [comparison] = rnn_comparison.COMPARISONS
    assert comparison.arms == tuple(ARMS)
    for recipe in experiments.RNN_RECIPES.values():
        assert comparison.values[0] < recipe["learning_rate"] < comparison.values[-1]


def test_pages_after_chapter_3_compare_with_the_rnns_at_their_searched_rates():
    """A later page that sets a model beside the RNNs takes them at the rates chapter 3's search
    chose: ``rnn_translator`` trains them at their chapters' rates, below chapter 3's best for the
    model with attention, which would favour whatever they are compared with."""
    import re
    from pathlib import Path

    chapters = Path(__file__).resolve().parents[3] / "book" / "chapters"
    later = [p for p in sorted(chapters.glob("*.md")) if int(p.name[:2]) > 3]
    calls = {p.name for p in later if re.search(r"\brnn_translator\(", p.read_text())}
    assert calls == set(), f"pages that train the RNNs at their chapters' rates: {sorted(calls)}"
    comparing = [p.name for p in later if "rnn_comparison.translator(" in p.read_text()]
    assert comparing, "no later page compares with the RNNs (this test lost its subject)"
    for name in comparing:
        assert re.search(r"best_setting\(\s*[\"']ch3_attention_or_none[\"']",
                         (chapters / name).read_text()), name
