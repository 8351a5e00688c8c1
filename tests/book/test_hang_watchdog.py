"""The build stops a hung cell and never a slow one (``book_build.watchdog.HangWatchdog``).

Slowness is not a failure: a CPU three times slower, or a machine busy with
other work, makes a cell take longer without making it wrong.  So no cell has
a time limit; a cell is stopped when its kernel has done nothing (no CPU, no
output) for a while, or has used far more CPU than any chapter needs.  These
tests run tiny chapters with small limits, so that each takes seconds.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from book_build import execution
from book_build.watchdog import CellLimits

ROOT = Path(__file__).resolve().parents[2]

HEADER = (ROOT / "book" / "chapters" / "09_encoder_block.md").read_text().split("---", 2)[1]
#: small limits: hung after 4 s without CPU or output
QUICK = CellLimits(idle_seconds=4, idle_cpu_seconds=0.5, cpu_seconds=600, grace_seconds=4,
                   poll_seconds=0.5)


def chapter(tmp_path, *cells: str) -> execution.Job:
    path = tmp_path / "tiny.md"
    body = "".join(f"```{{code-cell}} ipython3\n{cell}\n```\n\n" for cell in cells)
    path.write_text(f"---{HEADER}---\n\n# Tiny\n\n{body}")
    return execution.Job(path)


def run(job, limits=QUICK):
    started = time.monotonic()
    result = execution.execute(job, limits)
    return result, time.monotonic() - started


def test_a_hung_cell_is_stopped_and_named(tmp_path):
    job = chapter(tmp_path, "x = 1", "import time\ntime.sleep(3600)", "y = 2")
    result, seconds = run(job)
    assert result.error is not None and "hung" in result.error, result.error
    assert job.notebook.cells[result.failed_cell].source.endswith("time.sleep(3600)")
    assert seconds < 60
    assert "KeyboardInterrupt" in result.error          # the interrupt ended the cell
    assert "killed" not in result.error
    assert not job.notebook.cells[-1].get("outputs")    # the cell after it did not run


def test_a_cell_waiting_on_a_lock_is_stopped(tmp_path):
    job = chapter(tmp_path, "import threading\nlock = threading.Lock()\nlock.acquire()\nlock.acquire()")
    result, seconds = run(job)
    assert result.error is not None and "hung" in result.error, result.error
    assert seconds < 60


def test_a_cell_that_ignores_the_interrupt_is_killed(tmp_path):
    job = chapter(tmp_path, "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                            "time.sleep(3600)")
    result, seconds = run(job)
    assert result.error is not None and "hung" in result.error and "killed" in result.error, result.error
    assert job.notebook.cells[result.failed_cell].source.endswith("time.sleep(3600)")
    assert seconds < 60


def test_a_cell_that_runs_away_is_stopped_by_its_cpu_time(tmp_path):
    job = chapter(tmp_path, "while True:\n    pass")
    result, seconds = run(job, CellLimits(idle_seconds=600, cpu_seconds=3, grace_seconds=4,
                                          poll_seconds=0.5))
    assert result.error is not None and "ran away" in result.error, result.error
    assert seconds < 60


def test_a_slow_cell_that_computes_is_not_stopped(tmp_path):
    """Three times the hang limit of wall time, computing all along: it finishes."""
    job = chapter(tmp_path, "import time\nend = time.time() + 12\nn = 0\n"
                            "while time.time() < end:\n    n += sum(range(1000))\nprint('done')")
    result, seconds = run(job)
    assert result.error is None, result.error
    assert seconds >= 12 and "done" in job.notebook.cells[-1].outputs[0]["text"]


def test_a_cell_that_waits_on_a_computing_child_process_is_not_stopped(tmp_path):
    """The kernel waits; the process it started computes: the CPU of the whole family counts."""
    busy = "import time\\nend = time.time() + 10\\nwhile time.time() < end: pass"
    job = chapter(tmp_path, f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', '{busy}'], "
                            "check=True)\nprint('done')")
    result, _ = run(job)
    assert result.error is None, result.error


def test_a_cell_that_only_prints_progress_is_not_stopped(tmp_path):
    """A cell that waits but says it is alive (a progress line every second) is not hung."""
    job = chapter(tmp_path, "import time\nfor i in range(10):\n    print(i, flush=True)\n"
                            "    time.sleep(1)")
    result, _ = run(job)
    assert result.error is None, result.error


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux's affinity calls")
def test_a_slow_cell_on_a_busy_core_is_not_stopped(tmp_path):
    """The kernel shares one core with two CPU-bound processes: a third of a core, still working."""
    original = os.sched_getaffinity(0)
    cpu = min(original)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for burner in burners:
            os.sched_setaffinity(burner.pid, {cpu})
        job = chapter(tmp_path, "import time\nend = time.time() + 12\nn = 0\n"
                                "while time.time() < end:\n    n += sum(range(1000))\nprint(n > 0)")
        job.cpus = {cpu}
        limits = CellLimits(idle_seconds=6, idle_cpu_seconds=0.5, cpu_seconds=600, grace_seconds=4,
                            poll_seconds=0.5)
        try:
            result, _ = run(job, limits)
        finally:
            os.sched_setaffinity(0, original)
        assert result.error is None, result.error
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def test_the_default_limits_leave_a_slow_cpu_room():
    """The chapters' longest cell takes about a minute of CPU here: a CPU three times slower
    needs three, far under the runaway limit; a hang is a long silence, not a long cell."""
    limits = CellLimits()
    assert limits.cpu_seconds >= 10 * 3 * 60
    assert limits.idle_seconds >= 120 and limits.idle_cpu_seconds <= 0.01 * limits.idle_seconds
