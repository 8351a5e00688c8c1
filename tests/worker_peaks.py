"""The peak resident memory of a grading run's workers, each process on its own.

The grading command starts one worker per core (``course_grader.workers``,
forked by multiprocessing's ``forkserver``, a child of the grading process); each worker starts the
notebook's kernel and the re-check's student process, which are sandboxed and
bounded by their own address-space limit.  What is measured here is the
worker's own process, without its children: the kernel's high-water mark of
its resident set (``VmHWM`` in ``/proc/<pid>/status``, and ``VmPeak`` for its
address space), read every few milliseconds while the worker lives.  The kernel keeps that mark itself, so a
peak between two readings is not missed; only growth in the last interval
before a worker exits could be, and a worker's last moments are spent idle.
"""

from __future__ import annotations

import threading
from pathlib import Path

import psutil

#: On the command line of multiprocessing's forkserver (and of the workers it forks, which keep it)
FORK_SERVER = "from multiprocessing.forkserver import main"


def grading_workers(parent: int) -> list[psutil.Process]:
    """The grading workers of the grading process ``parent``: the children of its forkserver."""
    found = []
    try:
        children = psutil.Process(parent).children()
    except psutil.Error:
        return []
    for child in children:
        try:
            if any(FORK_SERVER in part for part in child.cmdline()):
                found += child.children()
        except psutil.Error:
            pass
    return found


def high_water_marks(pid: int) -> tuple[int, int] | None:
    """Process ``pid``'s peak resident memory and peak address space so far, bytes (``None`` once it is gone)."""
    marks = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(("VmHWM:", "VmPeak:")):
                name, value = line.split(":")
                marks[name] = int(value.split()[0]) * 1024      # the kernel writes kB
    except (OSError, ValueError, IndexError):
        return None
    return (marks["VmHWM"], marks["VmPeak"]) if len(marks) == 2 else None


class WorkerPeaks:
    """Watch the workers that process ``parent`` starts; :meth:`stop` gives ``{pid: peak bytes}``.

    ``peaks`` is resident memory, ``address_peaks`` address space (what ``RLIMIT_AS``
    would limit).  A worker replaced after a crash is a new process with peaks of its own.
    """

    def __init__(self, parent: int, interval: float = 0.02):
        self.parent, self.interval = parent, interval
        self.peaks: dict[int, int] = {}
        self.address_peaks: dict[int, int] = {}
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> "WorkerPeaks":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> dict[int, int]:
        self._stopping.set()
        self._thread.join()
        return self.peaks

    def _workers(self) -> list[int]:
        return [worker.pid for worker in grading_workers(self.parent)]

    def _watch(self) -> None:
        known: list[int] = []
        rescan = 0
        while not self._stopping.wait(self.interval):
            if rescan <= 0:                  # listing processes costs more than reading a file
                known, rescan = self._workers(), 10
            rescan -= 1
            for pid in known:
                marks = high_water_marks(pid)
                if marks is not None:
                    self.peaks[pid] = max(self.peaks.get(pid, 0), marks[0])
                    self.address_peaks[pid] = max(self.address_peaks.get(pid, 0), marks[1])
