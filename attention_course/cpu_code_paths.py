"""Which CPU code paths the numerical libraries take: the settings that change a run's round-off.

NumPy, OpenBLAS, oneDNN (TensorFlow's CPU kernels) and XLA each choose, when
they start, the fastest instructions the CPU has: AVX-512 on one machine, AVX2
on the next.  The results agree to round-off, not to the last bit, so a
seeded run gives slightly other numbers on another kind of CPU.  Each library
can be told to use an older CPU's code paths through an environment variable
(``scripts/other_cpu.py`` sets them all, to run the book as on a CPU without
AVX-512); :func:`code_path_settings` is what is set of them, which is part of
a trained model's key (``training/cache.py``) and of a chapter's key in the
build, so that a run with other code paths never reuses one made without them.
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
