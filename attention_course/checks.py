"""Argument checks, and where they live: beside the code a chapter prints, not inside it.

Bad input gets a clear error: a wrong shape raises a ``ValueError`` that
names the argument, the expected shape and the shape received, instead of a
broadcasting error deep inside NumPy (or, worse, a silently wrong result).
But a reader who opens a chapter to see how additive attention works should
see six lines of attention, not thirty of argument checking.  So every
reference function that checks its arguments is written in two parts:

* a **check**, ``check_<name>``, beside the function: it takes some or all
  of the function's arguments, under the same names, raises the
  ``ValueError`` s, and returns a ``dict`` of the arguments it converted
  (lists to float arrays, a numeric mask to booleans, a default filled in);
* the **function itself**, decorated with ``@checked(check_<name>)``: plain
  NumPy with its shapes in short comments and no ``raise``, run on
  arguments the check has vetted.  This is the code a chapter prints
  (:func:`attention_course.chapter_tools.display.show_source`)::

      def check_additive_attention(query, key, value, mask, v, W_query, W_key):
          query, key, value, scores_shape = check_qkv(query, key, value, same_width=False)
          ...                                  # raise ValueError(...) for what does not fit
          return dict(query=query, key=key, value=value, mask=mask, v=v, ...)


      @checked(check_additive_attention)
      def additive_attention(query, key, value, mask=None, *,
                             v=None, W_query=None, W_key=None):
          \"\"\"Bahdanau's additive attention: ...\"\"\"
          ...
          hidden = np.tanh(query[..., :, None, :] + key[..., None, :, :])
          scores = hidden @ v                                     # (..., T_q, T_k)
          return attend(scores, value, mask)

Why a decorator.  The alternatives were a public function that checks and
then calls a private core (the chapter would print ``_additive_attention``,
a name the reader never calls, or ``show_source`` would need to know which
core belongs to which function), and a check called on the function's first
line (``query, key, value, mask, v = check_additive_attention(query, key,
...)``: two lines of argument shuffling on top of every function).  With the
decorator, the printed function is the public one, with its real name,
signature and defaults; its body is the algorithm and nothing else; and the
one ``@checked(...)`` line above it tells the reader that the checks exist
and what they are called.  For a maintainer, each function's error messages
sit in one function next to it, and the tests can tell that a printed
function holds no ``raise``.  ``help()``, ``inspect.signature`` and the
docstring are the function's own (:func:`functools.wraps`); the unchecked
function is ``function.__wrapped__``.  The wrapper costs about 2 microseconds
a call.

Rules for a check: keep the computation in the function (a check may look
at shapes and dtypes, and convert, but what the function computes, and in
which order, is the function's); check the arguments in the order they
are named; and never drop a message a test or a student relies on.

The helpers below (:func:`as_float_array`, :func:`require_ndim`,
:func:`as_mask`) are what the checks are made of.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np


def checked(check):
    """Decorate a function so that ``check`` vets its arguments before it runs.

    ``check`` names some or all of the function's parameters (the same names;
    every one it names is passed, defaults filled in), raises ``ValueError``
    for arguments that do not fit, and returns a ``dict`` of the arguments it
    converted, which replace the caller's (or None, if it converted none).
    """
    def decorate(function):
        parameters = inspect.signature(function).parameters
        plain = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        if any(p.kind not in plain for p in parameters.values()):
            raise TypeError(f"@checked: {function.__name__} may have only named parameters "
                            "(no *args, **kwargs or positional-only ones)")
        wanted = tuple(inspect.signature(check).parameters)
        unknown = [name for name in wanted if name not in parameters]
        if unknown:
            raise TypeError(f"@checked: {check.__name__} takes {unknown}, which "
                            f"{function.__name__} has no parameter of that name for")
        names = set(parameters)
        positional = tuple(name for name, p in parameters.items() if p.kind == p.POSITIONAL_OR_KEYWORD)
        defaults = {name: p.default for name, p in parameters.items() if p.default is not p.empty}

        @functools.wraps(function)
        def with_checks(*args, **kwargs):
            arguments = dict(defaults)
            arguments.update(zip(positional, args))
            if kwargs:
                if any(name in kwargs for name in positional[:len(args)]):
                    _bind_error(function, args, kwargs)
                arguments.update(kwargs)
            if len(args) > len(positional) or arguments.keys() != names:
                _bind_error(function, args, kwargs)   # raises the TypeError Python would
            converted = check(*[arguments[name] for name in wanted])
            if converted:
                arguments.update(converted)
            return function(**arguments)

        with_checks.check = check
        return with_checks

    return decorate


def _bind_error(function, args, kwargs):
    """Raise the ``TypeError`` of a call that does not fit ``function``'s signature."""
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{function.__name__}(): {error}") from None
    raise TypeError(f"{function.__name__}(): unexpected arguments {sorted(kwargs)}")


def as_float_array(x, name: str) -> np.ndarray:
    """``x`` as a floating-point array; integers become float64, floats keep their dtype."""
    try:
        array = np.asarray(x)
    except Exception as error:  # pragma: no cover - numpy's own message is kept
        raise ValueError(f"{name} must be array-like: {error}") from error
    if array.dtype == object:
        raise ValueError(f"{name} must be a numeric array, got dtype object")
    if not np.issubdtype(array.dtype, np.floating):
        array = array.astype(np.float64)
    return array


def require_ndim(x: np.ndarray, name: str, min_ndim: int, layout: str) -> None:
    if x.ndim < min_ndim:
        raise ValueError(
            f"{name} must have shape {layout} (at least {min_ndim} dimensions); "
            f"got shape {x.shape}")


def as_mask(mask, name: str, target_shape: tuple[int, ...], layout: str) -> np.ndarray:
    """A boolean mask (True = keep) that broadcasts to ``target_shape``."""
    mask = np.asarray(mask)
    if mask.dtype != bool:
        if not (np.issubdtype(mask.dtype, np.integer) or np.issubdtype(mask.dtype, np.floating)):
            raise ValueError(f"{name} must be boolean (True = attend), got dtype {mask.dtype}")
        mask = mask > 0.5  # Keras' convention for numeric masks
    try:
        broadcast = np.broadcast_shapes(mask.shape, target_shape)
    except ValueError:
        broadcast = None
    if broadcast != tuple(target_shape):
        raise ValueError(
            f"{name} of shape {mask.shape} does not broadcast to {layout} = {tuple(target_shape)}")
    return mask
