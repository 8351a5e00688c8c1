"""The argument checks: ``@checked(check)`` runs the check, then the plain function it decorates.

The printed code of a checked function is the plain function (``show_source``
prints it under one ``@checked(...)`` line); these tests check that the wrapper
still gives every bad input its clear error, that what it passes on is what
the check converted, and that nothing else about the function changes.
"""

import ast
import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import attention_course
from attention_course import (attention, bert, lookup, luong, masks, multi_head, normalization,
                              positional_encoding, softmax, transformer)
from attention_course.chapter_tools.display import readable_source
from attention_course.checks import checked


def check_scale(x, factor):
    x = np.asarray(x, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D; got shape {x.shape}")
    if factor == 0:
        raise ValueError("factor must not be 0")
    return dict(x=x)


@checked(check_scale)
def scale(x, factor=2.0, *, offset=0.0):
    """``x * factor + offset``."""
    return x * factor + offset


def test_the_check_runs_first_and_its_conversions_reach_the_function():
    out = scale([1, 2, 3])                                # a list, converted by the check
    assert isinstance(out, np.ndarray) and out.tolist() == [2.0, 4.0, 6.0]
    assert scale([1.0], 3.0, offset=1.0).tolist() == [4.0]
    assert scale(x=[1.0], factor=0.5).tolist() == [0.5]


def test_the_check_gets_the_defaults_filled_in():
    seen = {}

    def check_record(a, b, c):
        seen.update(a=a, b=b, c=c)

    @checked(check_record)
    def record(a, b=2, *, c=None):
        return a

    assert record(1) == 1 and seen == {"a": 1, "b": 2, "c": None}


def test_bad_arguments_raise_the_checks_messages():
    with pytest.raises(ValueError, match=r"x must be 1-D; got shape \(1, 2\)"):
        scale([[1.0, 2.0]])
    with pytest.raises(ValueError, match="factor must not be 0"):
        scale([1.0], factor=0)


@pytest.mark.parametrize("call, message", [
    (lambda: scale(), "missing a required argument: 'x'"),
    (lambda: scale([1.0], 2.0, 3.0), "too many positional arguments"),
    (lambda: scale([1.0], x=[2.0]), "multiple values for argument 'x'"),
    (lambda: scale([1.0], scale=2.0), "unexpected keyword argument 'scale'"),
    (lambda: scale(y=[1.0]), "missing a required argument: 'x'"),
])
def test_a_call_that_does_not_fit_the_signature_is_a_type_error_naming_the_function(call, message):
    with pytest.raises(TypeError, match=rf"^scale\(\): .*{message}"):
        call()


def test_the_function_keeps_its_name_signature_and_docstring():
    assert scale.__name__ == "scale" and scale.__doc__ == "``x * factor + offset``."
    assert str(inspect.signature(scale)) == "(x, factor=2.0, *, offset=0.0)"
    assert scale.check is check_scale
    assert scale.__wrapped__(np.array([1.0]), 3.0, offset=0.5).tolist() == [3.5]   # unchecked


def test_the_printed_source_is_the_plain_function_under_one_decorator_line():
    assert readable_source(scale) == (
        "@checked(check_scale)\n"
        "def scale(x, factor=2.0, *, offset=0.0):\n"
        '    """x * factor + offset."""\n'
        "    return x * factor + offset")


def test_a_check_must_name_parameters_of_the_function():
    def check_other(y):
        pass

    with pytest.raises(TypeError, match=r"check_other takes \['y'\]"):
        checked(check_other)(lambda x: x)


def test_a_checked_function_has_named_parameters_only():
    def check_nothing():
        pass

    for function in (lambda *args: args, lambda **kwargs: kwargs):
        with pytest.raises(TypeError, match="only named parameters"):
            checked(check_nothing)(function)


def test_the_training_cache_can_key_a_checked_function():
    """A chapter's training recipe may call a checked function: the cache keys it by its module."""
    from attention_course.training.cache import content_key

    def fit():
        return softmax.softmax(np.zeros(3)), multi_head.multi_head_attention

    assert content_key(fit, versions=False) == content_key(fit, versions=False)


# ---------------------------------------------------------------------------
# Every checked function of the package
# ---------------------------------------------------------------------------

def reference_modules():
    """The NumPy reference modules at the package's top (the code the chapters teach)."""
    for info in pkgutil.iter_modules(attention_course.__path__):
        if not info.ispkg and info.name not in {"checks", "seeding"}:
            yield importlib.import_module(f"attention_course.{info.name}")


def checked_functions():
    for module in reference_modules():
        for name, obj in vars(module).items():
            if callable(obj) and hasattr(obj, "__wrapped__") and getattr(obj, "check", None) \
                    and obj.__module__ == module.__name__:
                yield pytest.param(obj, id=f"{module.__name__.split('.')[-1]}.{name}")


CHECKED = list(checked_functions())


def test_the_reference_modules_check_their_arguments_with_checked():
    assert len(CHECKED) >= 40


@pytest.mark.parametrize("function", CHECKED)
def test_a_checked_function_prints_as_plain_code(function):
    """What a chapter prints: the decorator line, the signature, a summary, code without checks."""
    check = function.check
    assert check.__name__.startswith("check_") and check.__module__.startswith("attention_course.")
    source = readable_source(function)
    assert source.splitlines()[0] == f"@checked({check.__name__})"
    body = ast.parse(source).body[0]
    raises = [node for node in ast.walk(body) if isinstance(node, ast.Raise)]
    assert not raises, f"{function.__name__} raises in its printed code: move the check into {check.__name__}"
    assert inspect.signature(function) == inspect.signature(function.__wrapped__)


# ---------------------------------------------------------------------------
# The messages the checks give, as the functions gave them before the checks moved
# ---------------------------------------------------------------------------

Q, K, V = np.ones((2, 3)), np.ones((4, 3)), np.ones((4, 2))
MHA = multi_head.MultiHeadAttentionWeights.random(8, 2, 4)

MESSAGES = [
    (lambda: softmax.softmax([1.0, 2.0], temperature=0), "temperature must be positive, got 0"),
    (lambda: softmax.softmax([[1.0, 2.0]], axis=3), "axis 3 is out of range for x of shape (1, 2)"),
    (lambda: softmax.softmax([[1.0, 2.0]], mask=np.ones((3, 3), bool)),
     "mask of shape (3, 3) does not broadcast to the shape of x = (1, 2)"),
    (lambda: attention.dot_product_attention(Q, np.ones((4, 5)), V),
     "query and key must have the same last dimension d_k to be compared; got query (2, 3) and key (4, 5)"),
    (lambda: attention.dot_product_attention(Q, K, np.ones((5, 2))),
     "key and value must have the same number of positions T_k; got key (4, 3) and value (5, 2)"),
    (lambda: attention.dot_product_attention(Q, K, V, mask=np.ones((3, 4), bool)),
     "mask of shape (3, 4) does not broadcast to the scores' shape (..., T_q, T_k) = (2, 4)"),
    (lambda: attention.scaled_dot_product_attention(np.ones((2, 0)), np.ones((4, 0)), V),
     "query has d_k = 0 features; got shape (2, 0)"),
    (lambda: attention.additive_attention(Q, K, V, W_query=np.ones((4, 2))),
     "W_query must have shape (d_q=3, d_a); got (4, 2)"),
    (lambda: attention.additive_attention(Q, K, V, W_query=np.ones((3, 2))),
     "after the projections, query and key must have the same width d_a; got 2 and 3 "
     "(pass W_query/W_key to project them)"),
    (lambda: attention.additive_attention(Q, K, V, v=np.ones(4)), "v must have shape (d_a,) = (3,); got (4,)"),
    (lambda: attention.windowed_attention(Q, K, V, True),
     "window must be an integer >= 0 (the half-width D of the window), got True"),
    (lambda: lookup.local_attention(Q, K, V, -1), "window must be an integer >= 0, got -1"),
    (lambda: masks.local_window_mask(3, window=-2), "window must be >= 0, got -2"),
    (lambda: lookup.sample_attention(Q, K, V, 0), "rng must be a numpy.random.Generator, got int"),
    (lambda: lookup.location_attention(Q, V, np.ones((3, 3))),
     "W_location must have shape (d_q=3, max_length >= T_k=4); got (3, 3)"),
    (lambda: lookup.location_attention(np.ones((2, 2, 3)), np.ones((3, 4, 2)), np.ones((3, 5))),
     "the batch dimensions of query (2, 2, 3) and value (3, 4, 2) do not broadcast"),
    (lambda: luong.luong_scores(Q, K, "concat", W_a=np.ones((6, 3)), v_a=np.ones(2)),
     "the 'concat' score needs v_a of shape (d_a,) = (3,); got (2,)"),
    (lambda: multi_head.split_heads(np.ones((2, 5)), 2), "cannot split 5 features into 2 equal heads"),
    (lambda: multi_head.multi_head_attention(np.ones((1, 2, 7)), np.ones((1, 2, 8)), MHA),
     "query has 7 features but the layer's query_kernel expects 8"),
    (lambda: multi_head.multi_head_attention(np.ones((1, 2, 8)), np.ones((1, 2, 8)), MHA,
                                             query_mask=np.ones((1, 3), bool)),
     "query_mask of shape (1, 3) does not broadcast to (B, T) = (1, 2)"),
    (lambda: positional_encoding.sinusoidal_encoding(3, 5),
     "d_model must be an even integer >= 2 (pairs of sin and cos), got 5"),
    (lambda: normalization.layer_norm(np.ones((2, 3)), gamma=np.ones(2)),
     "gamma must have shape (3,) (the sizes of the normalised axes); got (2,)"),
    (lambda: normalization.batch_norm(np.ones((2, 3)), moving_mean=np.ones(3)),
     "pass both moving_mean and moving_variance (inference) or neither (training)"),
    (lambda: transformer.feed_forward(np.ones((2, 5)), transformer.FeedForwardWeights(
        np.ones((4, 6)), np.ones(6), np.ones((6, 4)), np.ones(4))),
     "x has 5 features but the feed-forward network expects 4"),
    (lambda: bert.mean_pool(np.ones((2, 3, 4)), np.zeros((2, 3), bool)),
     "every sequence needs at least one real token to be averaged"),
]


@pytest.mark.parametrize("call, message", MESSAGES, ids=range(len(MESSAGES)))
def test_bad_input_gets_the_same_clear_error(call, message):
    with pytest.raises(ValueError) as error:
        call()
    assert str(error.value) == message
