"""The progress line on stderr while workers grade: a bar on a terminal, every tenth in a log."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, total: int, quiet: bool):
        self.total, self.done, self.failed, self.flagged = total, 0, 0, 0
        self.started = time.monotonic()
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._last_line = -1

    def update(self, result: dict):
        self.done += 1
        self.failed += result["status"] != "graded"
        self.flagged += bool(result["flags"])
        self.show()

    def show(self, final: bool = False):
        if self.quiet:
            return
        elapsed = time.monotonic() - self.started
        width = 30
        filled = int(width * self.done / max(1, self.total))
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} graded"
                f"  {self.failed} failed  {self.flagged} flagged  {elapsed:5.0f} s")
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if final else ""))
            sys.stderr.flush()
        else:
            step = max(1, self.total // 10)
            if final or self.done == self.total or self.done // step != self._last_line:
                self._last_line = self.done // step
                print(line, file=sys.stderr, flush=True)
