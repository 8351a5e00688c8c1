"""A slower, busier machine on demand (``scripts/slow_cpu.py``), to try the build there."""

import os
import sys
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import slow_cpu  # noqa: E402

#: one CPU-bound process per usable CPU, each until it has used CPU_SECONDS of CPU: the whole machine
CPU_SECONDS = 1.5
BURN = f"import time\nwhile time.process_time() < {CPU_SECONDS}: pass\n"


def fastest_possible(share: Fraction) -> float:
    """The least wall time the command can take with ``share`` of each CPU (a fifth of slack):
    a bound that other work on the machine can only make longer, never shorter."""
    return CPU_SECONDS / float(share) / 1.2


def whole_machine_command() -> list[str]:
    count = len(slow_cpu.usable_cpus())
    python = sys.executable
    return ["sh", "-c", " & ".join([f"'{python}' -c '{BURN}'"] * count) + "; wait"]


def test_busy_mode_cuts_each_cpu_to_the_share_asked_for():
    code, seconds = slow_cpu.run(whole_machine_command(), Fraction(1, 3), "busy")
    assert code == 0
    assert seconds >= fastest_possible(Fraction(1, 3)), seconds   # about three times as long


def test_busy_mode_leaves_no_process_behind():
    import psutil

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    slow_cpu.run([sys.executable, "-c", "pass"], Fraction(1, 2), "busy")
    assert {p.pid for p in psutil.Process().children(recursive=True)} == before


@pytest.mark.skipif(os.geteuid() != 0 or not (
    (slow_cpu.CGROUP / "cgroup.controllers").exists() or (slow_cpu.CGROUP / "cpu" / "cpu.cfs_quota_us").exists()),
    reason="a cgroup quota needs root and a cgroup CPU controller")
def test_quota_mode_throttles_the_command_and_removes_its_group():
    try:
        code, seconds = slow_cpu.run(whole_machine_command(), Fraction(1, 3), "quota")
    except RuntimeError as error:   # a read-only cgroup file system (a container)
        pytest.skip(str(error))
    assert code == 0 and seconds >= fastest_possible(Fraction(1, 3)), seconds
    leftovers = list(slow_cpu.CGROUP.glob("slow-cpu-*")) + list((slow_cpu.CGROUP / "cpu").glob("slow-cpu-*"))
    assert leftovers == []


def test_the_exit_code_of_the_command_is_returned_and_bad_shares_are_refused(capsys):
    assert slow_cpu.main(["--share", "1/2", "--", sys.executable, "-c", "raise SystemExit(4)"]) == 4
    assert "exit code 4" in capsys.readouterr().out
    assert slow_cpu.main(["--share", "2/3", "--", "true"]) == 2
    assert "1/n" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        slow_cpu.main(["--share", "0", "--", "true"])
