"""Chapter 14's comparison tuned alike: each model's dropout swept, chosen on validation images."""

import numpy as np
import pytest

from attention_course.data import digits
from attention_course.training import digit_classifiers, vit_or_cnn
from attention_course.training.vit_or_cnn import ARMS, COMPARISONS, validation_loss

from run_keys import run_key  # noqa: F401  (a fixture)


@pytest.fixture(scope="module")
def train():
    return digits.load_splits()[0]


def test_dropout_and_seed_are_part_of_each_run(run_key, train):
    for arm, run in ARMS.items():
        keys = {run_key(run, train, 0.0), run_key(run, train, 0.1), run_key(run, train, 0.0, seed=1)}
        assert len(keys) == 3, arm
    # the defaults are the recipe the chapter described before the search: ViT 0.1, CNN none
    vit, cnn = ARMS["Vision Transformer"], ARMS["small CNN"]
    assert run_key(vit, train) == run_key(vit, train, 0.1)
    assert run_key(cnn, train) == run_key(cnn, train, 0.0)


def test_the_search_trains_on_other_images_than_the_chapters_runs(run_key, train):
    fit_part, _ = digits.validation_split(train)
    cnn = ARMS["small CNN"]
    assert run_key(cnn, fit_part, 0.0) != run_key(cnn, train, 0.0)


def test_the_comparison_sweeps_both_models_from_no_dropout_up():
    (comparison,) = COMPARISONS
    assert comparison.arms == tuple(ARMS) and comparison.values[0] == 0.0
    assert digit_classifiers.VIT["dropout"] in comparison.values
    assert comparison.run is validation_loss and not comparison.higher_is_better


def test_the_sweep_is_no_part_of_the_runs_keys():
    """The comparison lives apart from the recipe, so a new grid re-trains nothing the pages use:
    the runs' keys cover ``digit_classifiers`` and the package modules it imports, and neither
    the sweep's module nor the tuning machinery is among them."""
    from attention_course.training import dependencies

    imported = dependencies.module_closure(["from attention_course.training import digit_classifiers"])
    assert "attention_course.training.digit_classifiers" in imported
    assert not {"attention_course.training.vit_or_cnn", "attention_course.training.tuning"} & set(imported)


def test_an_unknown_arm_is_refused():
    with pytest.raises(ValueError, match="arm must be one of"):
        validation_loss("ResNet", 0.1, 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_validation_images_are_a_stratified_part_of_the_training_images(seed):
    train, test = digits.load_splits(seed=seed)
    fit_part, validation = digits.validation_split(train)
    assert len(fit_part) + len(validation) == len(train) and len(validation) == 288
    assert not set(fit_part.indices) & set(validation.indices)
    assert not set(validation.indices) & set(test.indices)       # the test images stay unseen
    np.testing.assert_array_equal(validation.images, digits.load_all()[0][validation.indices])
    expected = np.bincount(train.labels) * len(validation) / len(train)
    assert (np.abs(np.bincount(validation.labels, minlength=10) - expected) <= 1).all()
    with pytest.raises(ValueError, match="fraction"):
        digits.validation_split(train, fraction=0)
