"""Which CPU code paths the numerical libraries take: the settings that change a run's round-off.

NumPy, OpenBLAS, oneDNN (TensorFlow's CPU kernels) and XLA each choose, when
they start, the fastest instructions the CPU has: AVX-512 on one machine, AVX2
on the next.  The results agree to round-off, not to the last bit, so a
seeded run gives slightly other numbers on another kind of CPU.  Each library
can be told to use an older CPU's code paths through an environment variable
(``scripts/other_cpu.py`` sets them all, to run the book as on a CPU without
AVX-512); :func:`code_path_settings` is what is set of them.  It is part of a
chapter's key in the build, and ``other_cpu.py`` gives such a run a model
cache of its own (:func:`cache_for`), so that a run with other code paths
never reuses outputs or models made without them.  (The models' keys do not
hold the settings: a key covers the code of ``training/cache.py``, and a change
there would stale the shipped GPT of chapter 13.)
"""

from __future__ import annotations

import os

#: the variables, each read by its library when it loads: NumPy's dispatch of its SIMD
#: loops, OpenBLAS's choice of kernels, oneDNN's instruction set, XLA's compiler flags
CODE_PATH_VARIABLES = ("NPY_DISABLE_CPU_FEATURES", "OPENBLAS_CORETYPE", "ONEDNN_MAX_CPU_ISA",
                       "XLA_FLAGS")


def code_path_settings() -> dict[str, str]:
    """``{variable: value}`` of the :data:`CODE_PATH_VARIABLES` that are set (and not empty)."""
    return {name: os.environ[name] for name in CODE_PATH_VARIABLES if os.environ.get(name)}


def cache_for(profile: str, cache: str | None) -> str:
    """The model cache of a run with the code paths of ``profile``: a folder beside ``cache``
    (``$ATTENTION_COURSE_CACHE``, or the default ``~/.cache/attention-course``)."""
    base = cache or os.path.join(os.path.expanduser("~"), ".cache", "attention-course")
    return f"{base.rstrip(os.sep)}-{profile}"
