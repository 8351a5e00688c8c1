"""Hangs, not slowness: the build's watch over a kernel's running cell.

No cell of a chapter has a time limit: a CPU three times slower than ours, or
a machine busy with other work, only makes a cell take longer.  A
:class:`HangWatchdog` watches the kernel instead and stops a cell that is
*hung* (its kernel, with everything it started, has used almost no CPU and
sent no output for :attr:`CellLimits.idle_seconds`) or *runs away* (it has
used more CPU than :attr:`CellLimits.cpu_seconds`, far beyond any chapter's
longest cell on a slow CPU): it interrupts the kernel, and kills it if the
interrupt does not end the cell.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class CellLimits:
    """When a running cell counts as hung or runaway (see :class:`HangWatchdog`).

    The chapters' longest cell uses about a minute of CPU on our machine, three
    on a CPU three times slower; a machine busy with other work stretches the
    wall time, not the CPU time.  So the limits are on CPU, never on wall time:
    a cell that computes, however slowly, is never stopped.
    """

    idle_seconds: float = 300.0   # this long with (almost) no CPU used: hung
    idle_cpu_seconds: float = 1.0  # "almost no CPU": under a third of a percent of a core
    cpu_seconds: float = 3600.0   # CPU one cell may use: a loop that never ends
    grace_seconds: float = 30.0   # after the interrupt, before the kernel is killed
    poll_seconds: float = 2.0


def cpu_seconds_of(pid: int) -> float:
    """CPU time (user + system, s) used by process ``pid`` and every process it started."""
    import psutil

    total = 0.0
    try:
        process = psutil.Process(pid)
        family = [process, *process.children(recursive=True)]
    except psutil.Error:
        return total
    for member in family:
        try:
            times = member.cpu_times()
            # children that have exited were counted by their parent's children_* times
            total += times.user + times.system + times.children_user + times.children_system
        except psutil.Error:
            pass
    return total


class HangWatchdog:
    """Stops a kernel's cell that is hung or runs away; lets a slow one finish.

    nbclient calls :meth:`cell_started` and :meth:`cell_finished` (its
    ``on_cell_execute`` and ``on_cell_executed`` hooks); a thread samples the
    kernel's CPU time every ``limits.poll_seconds``.  A cell whose kernel used
    under ``idle_cpu_seconds`` and sent no output in the last ``idle_seconds``
    is hung (waiting on something that never comes: a lock, a sleep, input);
    one that used more
    than ``cpu_seconds`` in all runs away.  Either way the kernel is sent
    SIGINT (the cell ends with ``KeyboardInterrupt``) and, if it is still in
    the cell ``grace_seconds`` later, SIGKILL (nbclient then reports a dead
    kernel).  :attr:`verdict` says which and why, for the build's error message.
    """

    def __init__(self, kernel_pid, limits: CellLimits = CellLimits()):
        self._kernel_pid = kernel_pid   # a callable: the kernel starts after the watchdog
        self.limits = limits
        self.verdict: str | None = None
        self._cell = None         # (index, start time, CPU at start, samples) of the running cell
        self._last_output = 0.0   # when the kernel last sent output (monotonic)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="hang-watchdog", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def cell_started(self, cell=None, cell_index=None, **_):
        pid = self._kernel_pid()
        cpu = cpu_seconds_of(pid) if pid else 0.0
        with self._lock:
            self._cell = (cell_index, time.monotonic(), cpu, [(time.monotonic(), cpu)])

    def cell_finished(self, **_):
        with self._lock:
            self._cell = None

    def output_seen(self):
        """The kernel sent output (a progress line, a figure): it is not hung."""
        self._last_output = time.monotonic()

    def _watch(self):
        while not self._stop.wait(self.limits.poll_seconds):
            with self._lock:
                running = self._cell
            pid = self._kernel_pid()
            if running is None or not pid:
                continue
            index, started, cpu_at_start, samples = running
            now, cpu = time.monotonic(), cpu_seconds_of(pid)
            samples.append((now, cpu))
            while len(samples) > 1 and samples[1][0] <= now - self.limits.idle_seconds:
                samples.pop(0)    # keep the newest sample at least idle_seconds old
            window_start, window_cpu = samples[0]
            if now - window_start >= self.limits.idle_seconds and \
                    cpu - window_cpu < self.limits.idle_cpu_seconds and \
                    now - self._last_output >= self.limits.idle_seconds:
                self._stop_cell(pid, index, f"hung: its kernel used {cpu - window_cpu:.1f} s of CPU "
                                            f"in the last {now - window_start:.0f} s")
            elif cpu - cpu_at_start > self.limits.cpu_seconds:
                self._stop_cell(pid, index, f"ran away: it used {cpu - cpu_at_start:.0f} s of CPU, "
                                            f"more than the {self.limits.cpu_seconds:.0f} s a cell may use")

    def _stop_cell(self, pid: int, index, why: str):
        self.verdict = (f"cell {index} {why}; stopped by the build's watchdog (a cell that computes, "
                        f"however slowly, is never stopped)")
        with self._lock:
            running = self._cell
        try:
            os.kill(pid, signal.SIGINT)
            if not self._stop.wait(self.limits.grace_seconds):
                with self._lock:
                    still = self._cell is running
                if still:
                    os.kill(pid, signal.SIGKILL)
                    self.verdict += "; the interrupt did not end it, so the kernel was killed"
        except ProcessLookupError:
            pass
        with self._lock:
            if self._cell is running:   # one verdict per cell
                self._cell = None


def kernel_pid(client) -> int | None:
    """The process id of ``client``'s kernel, once it has started (None before)."""
    manager = getattr(client, "km", None)
    provisioner = getattr(manager, "provisioner", None) if manager is not None else None
    process = getattr(provisioner, "process", None)
    return getattr(process, "pid", None)


