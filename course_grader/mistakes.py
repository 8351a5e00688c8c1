"""Feedback that names the mistake: a catalogue of plausible wrong answers, matched on a failed test.

An assignment's source folder may hold ``mistakes.py`` with a dict ``MISTAKES``:

    MISTAKES = {
        "unscaled_scores": dict(
            explain="your scores are not divided by √d_k: ...",
            edits=[("scaled_dot_product_attention", "1.0 / np.sqrt(d_k)", "1.0")]),
    }

Each ``edits`` entry (solution cell id, text, replacement[, count]) turns the
source notebook's solution into that wrong answer (an entry may also list the
test cells it ``fails`` and ``passes``, for the course's own tests); the grader runs the edited
solution in its own process (it is the instructor's code, like the
``reference`` of :mod:`course_grader.hidden_tests`).

While a hidden test runs in the clean re-check (:mod:`course_grader.recheck`),
every call it makes to one of the student's functions is recorded with its
arguments and result, when all of them are plain data
(:mod:`course_grader.recheck.call_recording`).  If the test fails,
:func:`diagnose` calls each catalogued wrong answer on the same arguments: a
wrong answer whose results equal the student's on every recorded call (and
differ from the reference solution on at least one) is named in the feedback
by its ``explain`` (of two that match, one made of the other's edits and more
gives way to the smaller).  Nothing is named when no wrong answer matches, or when
the calls could not be recorded.
"""

from __future__ import annotations

import contextlib
import io
import runpy
from dataclasses import dataclass
from pathlib import Path

from . import hidden_tests
from .recheck.call_recording import MAX_CALLS, MAX_RECORDED_BYTES, Call, plain  # noqa: F401 (the catalogue's vocabulary)

CATALOGUE_FILE = "mistakes.py"


@dataclass(frozen=True)
class Mistake:
    name: str
    explain: str
    edits: tuple


def load_catalogue(folder: Path) -> list[Mistake]:
    """The mistakes of ``folder/mistakes.py`` (none if there is no such file)."""
    path = Path(folder) / CATALOGUE_FILE
    if not path.is_file():
        return []
    entries = runpy.run_path(str(path)).get("MISTAKES", {})
    return [Mistake(name, str(entry["explain"]), tuple(tuple(e) for e in entry["edits"]))
            for name, entry in entries.items()]


def apply_edits(nb, edits) -> object:
    """A copy of the notebook ``nb`` with ``edits`` made to its cells (found by nbgrader cell id)."""
    import copy

    nb = copy.deepcopy(nb)
    cells = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell for cell in nb.cells}
    for cell_id, old, new, *count in edits:
        cell = cells.get(cell_id)
        expected = count[0] if count else 1
        if cell is None or cell.source.count(old) != expected:
            raise ValueError(f"mistake edit {cell_id!r}: {old!r} is not in that cell "
                             f"{expected} time(s)")
        cell.source = cell.source.replace(old, new)
    return nb


class Diagnoser:
    """The wrong answers of one assignment, ready to compare with a failed test's calls."""

    def __init__(self, source_notebook: Path, mistakes: list[Mistake]):
        import nbformat

        nb = nbformat.read(source_notebook, as_version=4)
        folder = Path(source_notebook).parent
        self.reference = hidden_tests.run_solution(nb, "reference", folder)
        self.variants = [(m, hidden_tests.run_solution(apply_edits(nb, m.edits), f"mistake {m.name}", folder))
                         for m in mistakes]

    def diagnose(self, calls: list[Call]) -> list[Mistake]:
        """The catalogued mistakes whose results equal the student's on every recorded call."""
        calls = [c for c in calls if callable(self.reference.get(c.name))]
        if not calls:
            return []
        if all(_same(_call(self.reference, c), c.result) for c in calls):
            return []   # the recorded calls were right; the test failed on something else
        found = [mistake for mistake, namespace in self.variants
                 if all(_same(_call(namespace, c), c.result) for c in calls)]
        # A mistake made of another's edits and more (patchify *and* unpatchify wrong) explains
        # these calls no better than the smaller one: name the smaller.
        return [m for m in found
                if not any(set(other.edits) < set(m.edits) for other in found)]


def feedback(mistakes: list[Mistake]) -> str:
    """The line the feedback gets for these matches ('' for none)."""
    if not mistakes:
        return ""
    if len(mistakes) == 1:
        return f"What your code returned is what a common mistake gives: {mistakes[0].explain}."
    return ("What your code returned is what one of these common mistakes gives: "
            + "; or ".join(m.explain for m in mistakes) + ".")


_FAILED = object()


def _call(namespace: dict, call: Call):
    import copy

    import numpy as np

    try:
        with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
            return namespace[call.name](*copy.deepcopy(call.args), **copy.deepcopy(call.kwargs))
    except Exception:  # noqa: BLE001 - a wrong answer may fail where the student's did not
        return _FAILED


def _same(a, b) -> bool:
    import numpy as np

    if a is _FAILED or b is _FAILED:
        return False
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    try:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return bool(np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True))
        return bool(np.array_equal(a, b))
    except (TypeError, ValueError):
        return False
