"""The grader's settings that nbgrader's configuration can change, read in one place.

``c.GradingLimits.*`` and ``c.GradingPolicy.*`` in ``nbgrader_config.py`` (or
the grading command's options, which set them); the defaults are
:mod:`course_grader.limits`.  The hidden tests' settings are nbgrader's own
``c.ClearHiddenTests`` markers and ``c.HiddenTests.*``
(:mod:`course_grader.hidden_tests`).
"""

from __future__ import annotations

from traitlets import Dict, Integer
from traitlets.config import LoggingConfigurable

from .. import limits as default_limits

#: nbgrader's resources key for the submission's deadline (time.monotonic(), this process): the
#: notebook's run and the clean re-check share one budget
DEADLINE = "grading_deadline"


class GradingLimits(LoggingConfigurable):
    """The limits every submission runs under (``c.GradingLimits.*`` in the config)."""

    cell_timeout = Integer(default_limits.CELL_SECONDS, help="Seconds one cell may run.").tag(config=True)
    notebook_timeout = Integer(default_limits.NOTEBOOK_SECONDS,
                               help="Seconds the whole notebook may run.").tag(config=True)
    memory_mb = Integer(default_limits.MEMORY_MB, help="Address space of the student's processes, MiB.").tag(config=True)
    max_output_bytes = Integer(default_limits.MAX_OUTPUT_BYTES, help="Output kept per notebook.").tag(config=True)
    flood_bytes = Integer(default_limits.FLOOD_BYTES,
                          help="Output after which a cell is interrupted.").tag(config=True)
    max_restarts = Integer(default_limits.MAX_RESTARTS, help="Kernel restarts per notebook.").tag(config=True)

    def sandbox_limits(self, wall_seconds: float) -> dict:
        """The sandbox's limits for a kernel that may run ``wall_seconds`` more (see :mod:`course_grader.sandbox`)."""
        return {"memory_mb": self.memory_mb,
                "cpu_seconds": self.notebook_timeout + default_limits.KERNEL_CPU_SLACK_SECONDS,
                "wall_seconds": int(wall_seconds) + default_limits.KERNEL_WALL_SLACK_SECONDS}


class GradingPolicy(LoggingConfigurable):
    """What a submission may use (``c.GradingPolicy.*`` in the config)."""

    forbidden_modules = Dict(
        {}, help="Modules a submission may not import, per assignment id; the key '*' applies to every "
                 "assignment without its own entry.  Enforced by the sandbox's view of the Python "
                 "installation (sandbox.command(forbid=...)), in the notebook and in the re-check.",
    ).tag(config=True)

    def forbidden(self, assignment: str) -> list[str]:
        modules = self.forbidden_modules
        return list(modules.get(assignment, modules.get("*", [])))
