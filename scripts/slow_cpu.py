"""Run a command on a slower, busier machine: each CPU's share cut to a fraction.

    python3 scripts/slow_cpu.py --share 1/3 -- make book

(It needs nothing but Python's standard library, so that it can run before
``make book`` has made the virtual environment.)

Students build the book on older laptops that are doing other things; CI
runners share their cores.  A build that passes only on a quiet, fast machine
fails there, so the build is tried here the way it would run there.  Two ways
to cut the share, both for the command and everything it starts:

``--mode busy`` (the default; needs nothing special)
    starts CPU-bound processes beside the command, as many per CPU as make
    the command's share of each CPU the fraction asked for (two for a third:
    the scheduler gives three equal processes a third each), each pinned to
    its CPU where the OS allows.  This is a machine busy with other work, and,
    for a command that keeps every CPU busy, a CPU that many times slower.
``--mode quota`` (needs root and a writable cgroup file system)
    puts the command in a control group whose CPU quota is that fraction of
    the machine's CPUs (cgroup v2's ``cpu.max``, or v1's ``cpu.cfs_quota_us``):
    the kernel throttles it, and no other process runs.

At the end it prints the command's wall time and its exit code, and returns
that exit code.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

PERIOD_US = 100_000   # the scheduler period the quota is a share of (the kernel's default)
CGROUP = Path("/sys/fs/cgroup")


def usable_cpus() -> list[int]:
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def burners_per_cpu(share: Fraction) -> int:
    """How many CPU-bound processes beside the command leave it ``share`` of a CPU."""
    if share.numerator != 1:
        raise ValueError(f"--mode busy takes a share of the form 1/n (1/2, 1/3...), got {share}")
    return share.denominator - 1


def start_burners(share: Fraction) -> list[subprocess.Popen]:
    """CPU-bound processes, ``burners_per_cpu(share)`` on each usable CPU."""
    burners = []
    for cpu in usable_cpus():
        for _ in range(burners_per_cpu(share)):
            burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            if hasattr(os, "sched_setaffinity"):
                os.sched_setaffinity(burner.pid, {cpu})
            burners.append(burner)
    return burners


def make_quota_group(share: Fraction) -> Path:
    """A new control group limited to ``share`` of the machine's CPUs; its folder."""
    quota = int(share * len(usable_cpus()) * PERIOD_US)
    name = f"slow-cpu-{os.getpid()}"
    if (CGROUP / "cgroup.controllers").exists():                 # cgroup v2
        group = CGROUP / name
        group.mkdir()
        (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
    elif (CGROUP / "cpu" / "cpu.cfs_quota_us").exists():          # cgroup v1
        group = CGROUP / "cpu" / name
        group.mkdir()
        (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
        (group / "cpu.cfs_quota_us").write_text(str(quota))
    else:
        raise RuntimeError(f"no cgroup CPU controller under {CGROUP}: use --mode busy")
    return group


def remove_group(group: Path) -> None:
    """Remove the control group once its processes have ended (a group must be empty)."""
    for _ in range(50):
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)


def run(command: list[str], share: Fraction, mode: str) -> tuple[int, float]:
    """Run ``command`` with ``share`` of each CPU; returns (exit code, wall seconds)."""
    burners, group = [], None
    if mode == "quota":
        try:
            group = make_quota_group(share)
        except OSError as error:
            raise RuntimeError(f"cannot make a control group ({error}): --mode quota needs root "
                               "and a writable cgroup file system; use --mode busy") from None
        procs = group / "cgroup.procs"
        preexec = lambda: procs.write_text(str(os.getpid()))  # noqa: E731  (before the command starts)
    else:
        burners = start_burners(share)
        preexec = None
    started = time.monotonic()
    try:
        code = subprocess.call(command, preexec_fn=preexec)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
        if group is not None:
            remove_group(group)
    return code, time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--share", type=Fraction, default=Fraction(1, 3),
                        help="the command's share of each CPU (default 1/3)")
    parser.add_argument("--mode", choices=("busy", "quota"), default="busy",
                        help="CPU-bound processes beside it (default), or a cgroup CPU quota")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --, e.g. -- make book")
    if not 0 < args.share <= 1:
        parser.error(f"--share must be in (0, 1], got {args.share}")
    print(f"[slow_cpu] running {' '.join(command)!r} with {args.share} of each of "
          f"{len(usable_cpus())} CPU(s) ({args.mode})", flush=True)
    try:
        code, seconds = run(command, args.share, args.mode)
    except (RuntimeError, ValueError) as error:
        print(f"[slow_cpu] {error}", file=sys.stderr)
        return 2
    print(f"[slow_cpu] exit code {code} after {seconds:.0f} s of wall time", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
