"""Chapter 8's experiments (``attention_course.training.deep_stacks``): the pieces a wrong version would break."""

import numpy as np
import pytest

from attention_course.training import deep_stacks


def test_the_rings_are_two_labelled_radii():
    points, labels = deep_stacks.rings(2000, seed=3)
    radius = np.linalg.norm(points, axis=1)
    assert points.shape == (2000, 2) and labels.shape == (2000, 1)
    assert abs(radius[labels[:, 0] == 0].mean() - 0.5) < 0.02
    assert abs(radius[labels[:, 0] == 1].mean() - 1.0) < 0.02
    again, _ = deep_stacks.rings(2000, seed=3)
    other, _ = deep_stacks.rings(2000, seed=4)
    assert np.array_equal(points, again) and not np.array_equal(points, other)


@pytest.mark.parametrize("residual", [False, True])
def test_a_stack_with_silent_layers_passes_the_input_only_through_the_identity_path(residual):
    """With every tanh layer's weights zero, F(x) = 0: the residual stack computes
    Dense_out(Dense_in(x)); the plain one has lost its input and returns the output bias."""
    model = deep_stacks.stack(depth=5, residual_connections=residual)
    dense = [layer for layer in model.layers if layer.__class__.__name__ == "Dense"]
    assert len(dense) == 5 + 2
    for layer in dense[1:-1]:
        layer.set_weights([np.zeros_like(w) for w in layer.get_weights()])
    x = np.random.default_rng(0).normal(size=(4, 2)).astype("float32")
    (w_in, b_in), (w_out, b_out) = dense[0].get_weights(), dense[-1].get_weights()
    expected = (x @ w_in + b_in) @ w_out + b_out if residual else np.broadcast_to(b_out, (4, 1))
    np.testing.assert_allclose(np.asarray(model(x)), expected, rtol=1e-5, atol=1e-6)


def test_the_warm_up_rises_linearly_to_the_peak_and_stays_there():
    peak = 2e-3
    rates = [deep_stacks.learning_rate(step, peak, warmup=True) for step in range(deep_stacks.STEPS)]
    assert rates[0] == 0 and rates[deep_stacks.WARMUP // 2] == pytest.approx(peak / 2)
    assert all(rate == peak for rate in rates[deep_stacks.WARMUP:])
    assert np.all(np.diff(rates[:deep_stacks.WARMUP + 1]) > 0)
    assert {deep_stacks.learning_rate(step, peak, warmup=False) for step in range(10)} == {peak}


def test_unknown_arms_are_refused_by_name():
    with pytest.raises(ValueError, match="arm must be one of"):
        deep_stacks.train_stack("plain, 7 layers", 1e-3, seed=0)
    with pytest.raises(ValueError, match="arm must be one of"):
        deep_stacks.encoder_held_out_loss("mid-LN, constant", 1e-3, seed=0)


def test_the_comparisons_tune_every_arm_over_the_same_rates():
    names = {c.name: c for c in deep_stacks.COMPARISONS}
    assert set(names) == {"ch8_plain_vs_residual", "ch8_warmup"}
    assert names["ch8_plain_vs_residual"].arms == deep_stacks.STACKS
    assert names["ch8_warmup"].arms == deep_stacks.ENCODERS
