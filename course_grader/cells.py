"""What the grader reads from a notebook cell, and the one way it writes a failure into one.

A test cell scores 0 in nbgrader when it has an error output.  Every part of
the pipeline that fails a cell (a time limit, a dead kernel, a test that fails
only in the clean re-check, a hidden test that was never run) builds that
output with :func:`error_output`, under one of the names below, so that the
feedback and the formgrader show every failure the same way and a test can
find them by name.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode
from nbgrader import utils

#: the cell ran past its time limit, or the submission's budget ran out before its re-check
TIME_LIMIT = "TimeLimitError"
#: the kernel died while running the cell
KERNEL_DIED = "KernelDied"
#: the cell never ran (the notebook's time or restarts were used up)
NOT_RUN = "NotRun"
#: the test passed inside the notebook and failed with the student's code in a clean process
CLEAN_RERUN_FAILED = "CleanRerunFailed"
#: a hidden test failed, or could not be run, in the clean re-check
HIDDEN_FAILED = "HiddenTestFailed"
#: hidden tests were withheld from the kernel and nothing ran them (a pipeline without CleanRecheck)
HIDDEN_NOT_RUN = "HiddenTestsNotRun"

FAILURES = (TIME_LIMIT, KERNEL_DIED, NOT_RUN, CLEAN_RERUN_FAILED, HIDDEN_FAILED, HIDDEN_NOT_RUN)


def error_output(ename: str, evalue: str) -> NotebookNode:
    """The error output that fails a cell: ``ename`` is one of :data:`FAILURES`, ``evalue`` says why."""
    if ename not in FAILURES:
        raise ValueError(f"{ename!r} is not one of the grader's failures {FAILURES}")
    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"\x1b[0;31m{ename}\x1b[0m: {evalue}"])


def fail(cell, ename: str, evalue: str) -> None:
    """Put the failure first in the cell's outputs (nbgrader scores any cell with an error 0)."""
    cell.outputs.insert(0, error_output(ename, evalue))


def has_error(cell, ename: str) -> bool:
    return any(o.get("output_type") == "error" and o.get("ename") == ename for o in cell.get("outputs", []))


def grade_id(cell) -> str:
    """The cell's nbgrader id ("" for a cell without nbgrader metadata)."""
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def is_test(cell) -> bool:
    """An autograded test cell: a graded code cell that is not a solution."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


#: nbclient's tag for a cell it does not execute (this course's practice call has it): the grader
#: skips it too, wherever it runs a notebook's code (the re-check, the reference solution).
SKIP_TAG = "skip-execution"


def is_skipped(cell) -> bool:
    return SKIP_TAG in cell.get("metadata", {}).get("tags", [])
