"""Another CPU's numerics on this machine (``scripts/other_cpu.py``, ``make book CPU=avx2``)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from attention_course.cpu_code_paths import CODE_PATH_VARIABLES
from book_build import build as build_book
from book_build import other_cpu

AVX2 = other_cpu.PROFILES["avx2"]


def native() -> dict[str, str]:
    """This process's environment without any code-path setting: the tests may themselves run
    under a profile (``make test CPU=avx2``), whose variables the children would inherit."""
    return {name: value for name, value in os.environ.items() if name not in CODE_PATH_VARIABLES}


def has_avx512() -> bool:
    from numpy._core._multiarray_umath import __cpu_features__
    return bool(__cpu_features__.get("AVX512F"))   # the CPU's, whatever NumPy was told to use


@pytest.fixture(scope="module")
def avx2_report():
    return other_cpu.probe(AVX2["environment"])


def test_every_setting_takes_and_the_libraries_say_so(avx2_report):
    """NumPy dispatches to AVX2 at most, OpenBLAS uses its Haswell kernels, oneDNN AVX2,
    and TensorFlow (with XLA given its flag) still runs."""
    assert other_cpu.problems(avx2_report, AVX2["expect"]) == []
    assert avx2_report["numpy_exp"] in ("X86_V3", "baseline")
    assert avx2_report["openblas"] == ["Haswell"]
    assert "AVX2" in avx2_report["onednn"] and "512" not in avx2_report["onednn"]


@pytest.mark.skipif(not has_avx512(), reason="on a CPU without AVX-512 the two runs are alike")
def test_on_an_avx512_cpu_the_code_paths_really_change(avx2_report):
    report = other_cpu.probe({}, environment=native())
    assert report["numpy_exp"] == "X86_V4" != avx2_report["numpy_exp"]
    assert report["openblas"] != avx2_report["openblas"]
    assert "512" in report["onednn"]


@pytest.mark.skipif(not has_avx512(), reason="on a CPU without AVX-512 the two runs are alike")
def test_the_round_off_differs_as_on_an_avx2_cpu():
    """Chapter 2's figure: the largest weight of a softmax and of the same softmax over shuffled
    keys are equal with AVX-512 and one rounding apart with AVX2 (what broke the build there)."""
    script = ("import numpy as np\n"
              "from attention_course.attention import scaled_dot_product_attention as a\n"
              "rng = np.random.default_rng(2)\n"
              "q, k = rng.normal(size=(5, 4)), rng.normal(size=(6, 4)); rng.normal(size=(4, 8))\n"
              "p = rng.permutation(6)\n"
              "print(a(q, k, k)[1].max() == a(q, k[p], k[p])[1].max())")

    def run(environment):
        return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              check=True, env=native() | environment, cwd=ROOT).stdout.strip()

    assert run({}) == "True" and run(AVX2["environment"]) == "False"


def test_the_command_runs_with_the_settings_and_its_exit_code_is_returned(capfd):
    code = other_cpu.main(["avx2", "--", sys.executable, "-c",
                           "import os, sys; print(os.environ['OPENBLAS_CORETYPE']); sys.exit(3)"])
    out = capfd.readouterr().out
    assert code == 3 and "Haswell\n" in out and "oneDNN" in out


def test_a_setting_that_did_not_take_stops_the_run_before_the_command():
    report = {"numpy_exp": "X86_V4", "openblas": ["SkylakeX"], "onednn": "Intel AVX-512",
              "tensorflow_ok": True, "tensorflow_error": []}
    found = other_cpu.problems(report, AVX2["expect"])
    assert len(found) == 3 and "X86_V4" in found[0] and "SkylakeX" in found[1]
    broken = dict(report, tensorflow_ok=False, tensorflow_error=["Unknown flags in XLA_FLAGS"])
    assert any("Unknown flags" in p for p in other_cpu.problems(broken, AVX2["expect"]))


def test_nothing_made_without_the_settings_is_reused_with_them(monkeypatch, tmp_path, capfd):
    """Every variable a profile sets is in the chapters' keys, and the run caches its
    trained models in a folder of its own."""
    assert set(AVX2["environment"]) <= set(CODE_PATH_VARIABLES)
    for name in CODE_PATH_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    plain = build_book.keyed_environment()
    assert plain == {"ATTENTION_COURSE_SEED": plain["ATTENTION_COURSE_SEED"]}   # the keys of before
    for name, value in AVX2["environment"].items():
        monkeypatch.setenv(name, value)
        assert build_book.keyed_environment()[name] == value

    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "course_cache"))
    code = other_cpu.main(["avx2", "--", sys.executable, "-c",
                           "import os; print('cache:', os.environ['ATTENTION_COURSE_CACHE'])"])
    assert code == 0
    assert f"cache: {tmp_path / 'course_cache-avx2'}\n" in capfd.readouterr().out


def test_make_runs_the_build_and_the_tests_through_the_profile_only_when_asked():
    def planned(*args):   # the commands make would run, without running them
        # without the make that runs the tests (its CPU=... would reach this one through MAKEFLAGS)
        # nor a CPU=... of the environment (`CPU=avx2 make test` sets it there)
        environment = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CPU")}
        done = subprocess.run(["make", "-n", "-o", ".venv/.installed", *args], cwd=ROOT, env=environment,
                              capture_output=True, text=True, check=True)
        return [line for line in done.stdout.splitlines() if "build_book.py" in line or "pytest" in line]

    for target, tool in (("book", "scripts/build_book.py"), ("test", "-m pytest")):
        with_profile, without = planned(target, "CPU=avx2"), planned(target)
        assert any("scripts/other_cpu.py avx2 --" in line and tool in line for line in with_profile)
        assert any(tool in line for line in without) and not any("other_cpu" in l for l in without)
