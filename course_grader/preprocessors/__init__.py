"""The nbgrader preprocessors that make autograding bounded, fair and hard to fool, one per module.

The course's ``nbgrader_config.py`` puts them into nbgrader's own pipeline, so
plain ``nbgrader autograde`` and ``nbgrader generate_feedback`` use them too.
In the order a submission meets them:

Sanitizing (``c.Autograde.sanitize_preprocessors``, among nbgrader's own):

* :class:`RepairCellMetadata` -- nbgrader metadata nbgrader cannot read is
  restored as released, or dropped (the cell becomes the student's own);
* :class:`ForgetUnknownCells` -- cells with ids the assignment does not have
  become the student's own, so that the real tests come back as missing cells.

Autograding (``c.Autograde.autograde_preprocessors``):

* :class:`BoundedExecute` (replaces nbgrader's ``Execute``) -- the sandboxed
  kernel, limits for the whole notebook, kernel deaths survived; hidden tests
  withheld from the kernel;
* :class:`ScoreWithoutStderr` -- warnings on stderr do not zero a test; no
  forged partial credit;
* :class:`CleanRecheck` -- every test that passed is confirmed with the
  student's code in a separate, clean process; hidden tests run only there;
* :class:`WriteGradingReport` -- what happened, written once: a JSON report, a
  "Grading notes" cell, the gradebook's flag.

They share one typed :class:`course_grader.report.GradingReport` in nbgrader's
``resources``; their settings are read in :mod:`.config`; every rule about
hidden tests is :mod:`course_grader.hidden_tests`; every failure they write
into a cell is built by :func:`course_grader.cells.error_output`.
"""

from .bounded_execute import BoundedExecute
from .clean_recheck import TAMPERING_PATTERNS, CleanRecheck
from .config import GradingLimits, GradingPolicy
from .forget_unknown_cells import ForgetUnknownCells
from .repair_cell_metadata import RepairCellMetadata
from .score_without_stderr import ScoreWithoutStderr
from .write_grading_report import WriteGradingReport

__all__ = ["BoundedExecute", "CleanRecheck", "ForgetUnknownCells", "GradingLimits", "GradingPolicy",
           "RepairCellMetadata", "ScoreWithoutStderr", "TAMPERING_PATTERNS", "WriteGradingReport"]
