"""Run a command with the numerics of another CPU: the code paths of a CPU without AVX-512.

    python -m book_build.other_cpu avx2 -- make book      (or: make book CPU=avx2)

A seeded run gives the same numbers every time on one CPU and slightly other
ones on the next, because NumPy, OpenBLAS, oneDNN (TensorFlow's CPU kernels)
and XLA each pick the widest instructions the CPU has when they load.  Most
students' laptops, and some of the machines that build the course, have AVX2
but not AVX-512; a check that holds only with one CPU's round-off fails there.
Each library can be told to take an older CPU's code paths:

========================== ====================================================
``NPY_DISABLE_CPU_FEATURES`` NumPy 2.4 stops dispatching its SIMD loops to the
                             AVX-512 targets (``X86_V4``, ``AVX512_ICL``,
                             ``AVX512_SPR``): ``X86_V3`` (AVX2) at most
``OPENBLAS_CORETYPE``        OpenBLAS (NumPy's and SciPy's) uses its Haswell
                             kernels (AVX2, FMA)
``ONEDNN_MAX_CPU_ISA``       oneDNN, under TensorFlow's CPU ops, at most AVX2
``XLA_FLAGS``                XLA (chapters that ``jit_compile``) compiles for
                             AVX2 at most (``--xla_cpu_max_isa``)
========================== ====================================================

TensorFlow's own (Eigen) kernels are compiled for one instruction set and do
not dispatch, so they already run as on any CPU the wheel supports.

Before it runs the command, this script starts a probe with those variables
and prints what each library reports (NumPy's dispatch for ``exp``, the
OpenBLAS core, oneDNN's instruction set); it stops with an error if one of
them did not take, rather than let a run pass for another CPU's that was not.
The variables are part of the chapters' keys, and the run gets a model cache
of its own beside the usual one (``attention_course.cpu_code_paths``), so
nothing made without them is reused.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from attention_course.cpu_code_paths import cache_for

ROOT = Path(__file__).resolve().parents[1]

#: the settings of each CPU kind this script can stand in for
PROFILES = {
    "avx2": {
        "description": "an x86-64 CPU with AVX2 and FMA but no AVX-512 (Intel Haswell to "
                       "Alder Lake, AMD Zen 1-3): most laptops",
        "environment": {
            "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
            "OPENBLAS_CORETYPE": "Haswell",
            "ONEDNN_MAX_CPU_ISA": "AVX2",
            "XLA_FLAGS": "--xla_cpu_max_isa=AVX2",
        },
        # what the probe must report for the profile to have taken
        "expect": {"numpy_exp": {"X86_V3", "baseline"}, "openblas": {"Haswell"},
                   "onednn": "AVX2"},
    },
}

#: run with the profile's environment; prints one JSON line of what the libraries report
PROBE = r"""
import json, os, re, subprocess, sys
import numpy as np
from numpy.lib import introspect
from threadpoolctl import threadpool_info
import scipy.linalg  # noqa: F401  (loads SciPy's OpenBLAS too)

exp = introspect.opt_func_info(func_name="^exp$", signature="float64")["exp"]["dd"]["current"]
report = {"numpy_exp": exp,
          "openblas": sorted({pool.get("architecture") or "?" for pool in threadpool_info()
                              if pool.get("internal_api") == "openblas"})}
# oneDNN says which instruction set it uses when told to be verbose, on its first op
tf_check = ("import tensorflow as tf\n"
            "@tf.function(jit_compile=True)\n"
            "def f(x): return tf.nn.softmax(x @ x)\n"
            "x = tf.ones((64, 64)); print(float(tf.reduce_sum(tf.matmul(x, x))), float(tf.reduce_sum(f(x))))")
run = subprocess.run([sys.executable, "-c", tf_check], capture_output=True, text=True,
                     env=os.environ | {"ONEDNN_VERBOSE": "1", "TF_CPP_MIN_LOG_LEVEL": "3"})
isa = re.search(r"onednn_verbose,(?:v\d+,)?info,cpu,isa:(.*)", run.stdout)
report["onednn"] = isa.group(1).strip() if isa else None
report["tensorflow_ok"] = run.returncode == 0
report["tensorflow_error"] = run.stderr.strip().splitlines()[-1:] if run.returncode else []
print(json.dumps(report))
"""


def probe(settings: dict[str, str], environment: dict[str, str] | None = None) -> dict:
    """What NumPy, OpenBLAS and oneDNN report in a process started with ``settings`` added
    to ``environment`` (default: this process's)."""
    base = os.environ if environment is None else environment
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          env=base | settings, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"the probe of the CPU code paths failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def problems(report: dict, expect: dict) -> list[str]:
    """What in ``report`` shows that a setting did not take (empty: every one did)."""
    found = []
    if report["numpy_exp"] not in expect["numpy_exp"]:
        found.append(f"NumPy still dispatches exp to {report['numpy_exp']}")
    if not report["openblas"] or set(report["openblas"]) - expect["openblas"]:
        found.append(f"OpenBLAS reports the cores {report['openblas']}")
    if not report["tensorflow_ok"]:
        found.append(f"TensorFlow did not run with these settings: {report['tensorflow_error']}")
    elif not report["onednn"] or expect["onednn"] not in report["onednn"]:
        found.append(f"oneDNN reports the instruction set {report['onednn']!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", choices=sorted(PROFILES), help="the kind of CPU to stand in for")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command to run (after --), e.g. -- make book")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --, e.g. -- make book")
    profile = PROFILES[args.profile]
    environment = profile["environment"]
    report = probe(environment)
    print(f"[other_cpu] standing in for {profile['description']}:")
    for name, value in environment.items():
        print(f"[other_cpu]   {name}={value}")
    print(f"[other_cpu] the libraries report: NumPy's exp dispatched to {report['numpy_exp']}, "
          f"OpenBLAS cores {', '.join(report['openblas'])}, oneDNN {report['onednn']}")
    found = problems(report, profile["expect"])
    if found:
        print("[other_cpu] these settings did not take on this machine, so a run would not show "
              "another CPU's numerics:\n  - " + "\n  - ".join(found), file=sys.stderr)
        return 2
    cache = cache_for(args.profile, os.environ.get("ATTENTION_COURSE_CACHE"))
    print(f"[other_cpu] trained models are cached apart, in {cache}", flush=True)
    return subprocess.call(command, env=os.environ | environment | {"ATTENTION_COURSE_CACHE": cache})


if __name__ == "__main__":
    sys.exit(main())
