"""The clean re-run: the tests run in the grader, the student's code in a sandbox.

Inside a notebook, the student's code and the tests share one Python process,
so the student's code can switch the tests off: replace
``np.testing.assert_allclose``, register an IPython hook that rewrites the next
cell, make ``run_cell`` report success.  No test written *inside* that process
can be trusted.

The clean re-run splits the two apart:

* the student's cells run in a fresh, sandboxed Python process
  (:class:`~course_grader.recheck.transport.StudentProcess`), which only ever
  *answers calls*;
* the setup and test cells run here, in the grader, against
  :class:`~course_grader.recheck.transport.Remote` stand-ins for the functions
  the assignment asks for.  A call sends the arguments (plain data) over a
  pipe and brings back the result (plain data); the assertions that judge it
  never leave the grader.

So whatever the student's code does to its own process, the only thing it
controls is what its functions return (and do to what they are given), which is
exactly what is being graded.  For an honest notebook the split must change
nothing: the two processes keep one namespace between them
(:mod:`~course_grader.recheck.test_namespace`), and values both hold stay in
step (:mod:`~course_grader.recheck.mirroring`).  Where the re-check still scores
a test lower than the notebook could, the verdict says why, for an instructor to
review (:attr:`Verdicts.review`); the points are not given back on the
student's word.
This module is the test loop (:func:`rerun`); the transport is
:mod:`~course_grader.recheck.transport`, and what a failed hidden test may say
is :func:`course_grader.hidden_tests.hidden_failure_message`.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import time
import warnings
from dataclasses import dataclass, field

from .. import instructor_code, mistakes
from .. import limits as default_limits
from ..hidden_tests import AFTER_HIDDEN, ReferenceUnavailable, hidden_failure_message
from .mirroring import random_state, set_random_state
from .test_namespace import TestNames, TestNamespace, bound_names, tainted_names
from .transport import (FROM_STUDENT, NotPlainData, StudentProcess, StudentProcessError, StudentTimeout,
                        TooManyQuestions, TransportError)
from .written_files import WrittenFiles


@dataclass
class Cell:
    index: int
    kind: str          # "setup" (instructor code, runs on both sides), "student" or "test"
    source: str
    label: str = ""
    hidden: tuple = ()  # (first, last) line numbers of its hidden-test regions (hidden_tests.withhold)
    failed_in_notebook: bool | None = None   # a student cell: whether it raised in the notebook's run

    def visible_source(self) -> str:
        """The source without its hidden regions: what the student's kernel ran of this cell."""
        hidden = {number for first, last in self.hidden for number in range(first, last + 1)}
        return "\n".join(line for number, line in enumerate(self.source.split("\n"), start=1)
                         if number not in hidden)


@dataclass
class Verdicts:
    failures: dict            # cell index -> reason the test fails in the clean re-run
    events: list              # (cell index, what happened in the student's process)
    seconds: float = 0.0
    hidden: set = field(default_factory=set)   # failures inside a hidden-test region
    out_of_time: set = field(default_factory=set)  # failures because the time budget ran out
    unverifiable: dict = field(default_factory=dict)  # index -> why the re-check cannot reproduce the test
    diagnoses: dict = field(default_factory=dict)  # index -> names of the catalogued mistakes it matched
    #: index -> why a failure may be the re-check's and not the student's: which test, which error, in
    #: which process (for an instructor to review; the cell keeps the re-check's 0)
    review: dict = field(default_factory=dict)


def rerun(cells: list[Cell], api_names: list[str], workdir: str, tests_to_check: set[int], *,
          limits: dict | None = None, slot: int | None = None,
          cell_timeout: float = default_limits.CELL_SECONDS,
          notebook_timeout: float = default_limits.NOTEBOOK_SECONDS, forbid=(),
          grader_names=None, diagnoser: "mistakes.Diagnoser | None" = None,
          given_imports: dict | None = None, source_folder=None) -> Verdicts:
    """Re-run ``cells``: setup cells on both sides, student cells in the sandbox, tests here.

    Only the test cells in ``tests_to_check`` are judged (the others have
    already failed in the notebook, and a clean re-run can only take points
    away); another test cell runs too, unjudged, when a later cell uses a name
    it binds, as the notebook ran it.  A test sees the notebook's one
    namespace (:mod:`~course_grader.recheck.test_namespace`): the setup cells'
    names, the names the instructor's solution and given cells import
    (``given_imports``, ``{name: (module, attribute)}``: imported here, so that
    a test's ``np`` is never the student's), every name the student's process
    holds, read when the test reads it (``api_names`` are read ahead, in one
    request), and IPython's ``In``, ``Out`` and ``_`` from the student's shell,
    which numbers the cells as the notebook did.  ``grader_names(cell)``, if
    given, returns names a test cell gets from the grader (``reference``,
    ``grading_rng``: :mod:`course_grader.hidden_tests`); no student name
    shadows them.  The instructor's modules in ``source_folder`` can be
    imported by setup and test cells.  With a ``diagnoser``
    (:mod:`course_grader.mistakes`), a failed hidden test's calls of the
    student's functions are compared with the catalogued mistakes, and the one
    they match is named in the failure's message.
    """
    return _Rerun(cells, api_names, workdir, tests_to_check, limits=limits, slot=slot, cell_timeout=cell_timeout,
                  notebook_timeout=notebook_timeout, forbid=forbid, grader_names=grader_names,
                  diagnoser=diagnoser, given_imports=given_imports, source_folder=source_folder).run()


class _Rerun:
    """One re-check of one notebook: :meth:`run` goes through the cells and returns the verdicts."""

    def __init__(self, cells, api_names, workdir, tests_to_check, *, limits, slot, cell_timeout, notebook_timeout,
                 forbid, grader_names, diagnoser, given_imports, source_folder):
        self.started = time.monotonic()
        self.deadline = self.started + notebook_timeout
        self.cells, self.api_names, self.workdir = cells, list(api_names), workdir
        self.to_check, self.cell_timeout = set(tests_to_check), cell_timeout
        self.grader_names, self.diagnoser = grader_names, diagnoser
        self.given_imports, self.source_folder = given_imports or {}, source_folder
        limits = dict(limits or {})
        limits.setdefault("wall_seconds", int(notebook_timeout) + default_limits.RECHECK_WALL_SLACK_SECONDS)
        self.process = StudentProcess(workdir, limits, slot, list(forbid))
        self.process.budget_end = self.deadline     # an interrupted call gets no grace beyond the budget
        self.names = TestNamespace(self.process, dict(instructor_code.namespace("__main__"),
                                                      __builtins__=builtins))
        self.process.may_change = lambda value: not any(value is held for held in
                                                        self.names.values_of_tainted_names())
        self.verdicts = Verdicts({}, self.process.events)
        self.last_test = max(self.to_check, default=-1)
        self.to_run = self.to_check | _tests_needed_later(cells, self.to_check, self.last_test)
        self.sources = {f"<setup cell {c.label}>": c.source for c in cells if c.kind == "setup"}
        self.imported: dict | None = None
        self.written = WrittenFiles(workdir)
        self.tainted = False     # whether the student's process has been sent a hidden test's inputs
        self.diverged: list[str] = []   # the student's cells that failed here and not in the notebook

    def run(self) -> Verdicts:
        saved_random = random_state()      # the tests and the student's code share one; the grader's own is kept
        quiet = io.StringIO()
        try:
            with instructor_code.working_directory(self.workdir), contextlib.redirect_stdout(quiet), \
                    contextlib.redirect_stderr(quiet), warnings.catch_warnings(), \
                    instructor_code.importable_from(self.source_folder):
                warnings.simplefilter("ignore")
                for cell in self.cells:
                    if cell.index > self.last_test:
                        break
                    if cell.kind == "test":
                        self._test_cell(cell)
                    else:
                        self._code_cell(cell)
        finally:
            self.process.close()
            self.written.close()
            set_random_state(saved_random)
        self.verdicts.seconds = time.monotonic() - self.started
        return self.verdicts

    # -- the cells ---------------------------------------------------------------------------------------

    def _code_cell(self, cell: Cell) -> None:
        """A setup cell (run here too, its names the instructor's) or a student's cell, in the student's process."""
        if cell.kind == "setup":
            with contextlib.suppress(Exception):
                self.names.run_instructor_code(compile(instructor_code.python_source(cell.source),
                                                       f"<setup cell {cell.label}>", "exec"), protect=True)
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return
        reply = self.process.run_cell(cell.source, cell.index, min(self.cell_timeout, remaining), self.deadline)
        if cell.kind == "student" and not reply.get("ok") and cell.failed_in_notebook is False:
            error = reply.get("error") if type(reply.get("error")) is dict else {}
            what = ("stopped (its process timed out or died)" if not error else "raised an exception"
                    if self.tainted else f"raised {str(error.get('type'))[:100]}")
            self.diverged.append(f"the student's cell {cell.label or cell.index} {what} in the re-check's "
                                 "student process, and not in the notebook")

    def _test_cell(self, cell: Cell) -> None:
        remaining = self.deadline - time.monotonic()
        if remaining > 0:
            with contextlib.suppress(StudentProcessError):   # numbered as in the notebook
                self.process.advance(cell.visible_source(), min(self.deadline, time.monotonic() + self.cell_timeout))
        if cell.index not in self.to_run:
            return
        judged = cell.index in self.to_check
        # From the first hidden test on, the student's process holds hidden inputs: nothing it
        # says (messages, file names, printed text) reaches a failure's message verbatim.
        self.tainted = self.tainted or bool(cell.hidden)
        if remaining <= 0:
            if judged:
                self.verdicts.failures[cell.index] = "the budget was spent before this test could run"
                self.verdicts.out_of_time.add(cell.index)
            return
        if self.imported is None:   # an import the grader cannot do (a path the notebook set): the student's
            self.imported = _import_given(self.given_imports)
            self.names.give(self.imported)
        refusals, not_mirrored = len(self.process.refusals), len(self.process.sharing.not_mirrored)
        try:
            self._execute_test(cell)
        except Exception as error:  # noqa: BLE001 - any failure fails the test
            if judged:
                self._judge(cell, error, self.process.refusals[refusals:],
                            self.process.sharing.not_mirrored[not_mirrored:])
        finally:
            self.process.recorder.stop()
            self.names.reading = False

    def _execute_test(self, cell: Cell) -> None:
        # A process replaced after an earlier test killed it starts and replays the student's cells
        # first: that is the grader's time, not this test's (the notebook's budget bounds it), so a
        # slow machine does not take it out of the test's own budget.
        self.process.ensure(self.deadline)
        cell_deadline = min(self.deadline, time.monotonic() + self.cell_timeout)
        names = self.names
        names.deadline = self.process.call_deadline = cell_deadline
        names.forget_read_values()
        names.tainted = tainted_names(cell.source, names.tainted)
        if self.grader_names is not None:
            names.give(self.grader_names(cell), grader_only=True)
        _bring_written_files(self.process, self.written, cell.index, cell_deadline)
        self.process.ensure(self.deadline)
        names.reading = True
        # the names the test (and the assignment) will read, in one request rather than one each
        names.read_from_student(set(self.api_names) | instructor_code.names_used(cell.source))
        self.process.start_recording()
        exec(compile(instructor_code.python_source(cell.source), f"<test cell {cell.label}>", "exec"),
             names.globals, TestNames(names))

    # -- the verdict -------------------------------------------------------------------------------------

    def _judge(self, cell: Cell, error: BaseException, refusals: list, not_mirrored: list) -> None:
        verdicts, index = self.verdicts, cell.index
        sources = dict(self.sources, **{f"<test cell {cell.label}>": cell.source})
        if isinstance(error, (TransportError, ReferenceUnavailable)):
            # the grader, not the student, is the limit (the test sent something the wire cannot carry)
            verdicts.unverifiable[index] = str(error)
            return
        if isinstance(error, StudentTimeout) and time.monotonic() >= self.deadline - 1:
            verdicts.out_of_time.add(index)
            verdicts.failures[index] = str(error)
            return
        if cell.hidden:   # any failure of a cell with hidden tests: their data may be in it
            verdicts.hidden.add(index)
            verdicts.failures[index] = hidden_failure_message(error, sources)
            found = _diagnose(self.diagnoser, self.process.recorder.calls or [])
            if found:
                verdicts.diagnoses[index] = [m.name for m in found]
                verdicts.failures[index] += "\n" + mistakes.feedback(found)
        elif self.tainted:       # a visible test after hidden ones: the grader's words only
            verdicts.failures[index] = hidden_failure_message(error, sources, AFTER_HIDDEN)
        else:
            verdicts.failures[index] = f"{type(error).__name__}: {error}"[:1000]
        if isinstance(error, StudentProcessError):
            self.process.events.append((index, str(error)))
        why = self._review(error, refusals, not_mirrored)
        if why or not cell.hidden:    # a visible test passed in the notebook: its failure here is always reviewed
            verdicts.review[index] = why or self._where(error)

    def _review(self, error: BaseException, refusals: list, not_mirrored: list) -> str:
        """Why this failure may be the re-check's rather than the student's ("" if nothing says so)."""
        reasons = [f"the student's code read {name!r}, {why}" for name, why in refusals]
        reasons += list(dict.fromkeys(not_mirrored))
        reasons += self.diverged
        if isinstance(error, NotPlainData):
            reasons.append("the test asked an object of the student's to judge itself (==, <, truth), which the "
                           "re-check does not let it do")
        elif isinstance(error, TooManyQuestions):
            reasons.append("the test asked the student's objects more questions than one test may")
        elif isinstance(error, StudentProcessError):
            reasons.append(f"the re-check's student process: {error}")
        return "; ".join(reasons) + f" ({self._where(error)})" if reasons else ""

    def _where(self, error: BaseException) -> str:
        """Which error, in which process, in the grader's words."""
        if isinstance(error, StudentProcessError):
            return "in the re-check's student process"
        if getattr(error, FROM_STUDENT, False):
            kind = "an exception" if self.tainted else type(error).__name__
            return f"{kind} raised by the student's code, in the re-check's student process"
        return f"{type(error).__name__} raised in the grader's process, by the test's code"


def _tests_needed_later(cells: list[Cell], to_check: set[int], last_test: int) -> set[int]:
    """Test cells not judged that bind a name a later cell (the student's or a test) uses: they run
    too, as they ran in the notebook, so that the later cell finds the name (the notebook's namespace)."""
    needed = set()
    for position, cell in enumerate(cells):
        if cell.kind != "test" or cell.index in to_check or cell.index > last_test:
            continue
        bound = bound_names(cell.source)
        later = [c for c in cells[position + 1:] if c.index <= last_test]
        if bound and any(bound & instructor_code.names_used(c.source) for c in later):
            needed.add(cell.index)
    return needed


def _bring_written_files(process: StudentProcess, written: WrittenFiles, index: int, deadline: float) -> None:
    """The files the student's code has written so far, beside the tests (as in the notebook).

    What goes wrong is said in the grader's words only: a file's name, and the student's process's
    own account of a failure, are the student's text (they can carry a hidden test's inputs)."""
    try:
        refused = written.apply(*process.changed_files(deadline))
    except StudentProcessError:
        raise
    except Exception:  # noqa: BLE001 - e.g. too large: a test that reads them fails, as it would
        process.events.append((index, "the files the student's code wrote were not brought over beside the "
                                      "tests (its process did not send them, or they could not be written)"))
        return
    if refused:
        process.events.append((index, f"{len(refused)} file{'s' if len(refused) > 1 else ''} the student's code "
                                      "wrote were not brought over beside the tests (outside its folder)"))


def _import_given(given_imports: dict) -> dict:
    """The instructor's imports, done here: ``{name: module or attribute}`` (one that fails is left out)."""
    imported = {}
    for name, (module, attribute) in given_imports.items():
        with contextlib.suppress(Exception):
            value = importlib.import_module(module)
            imported[name] = getattr(value, attribute) if attribute else value
    return imported


def _diagnose(diagnoser, calls) -> list:
    """The catalogued mistakes the calls match; none if there is no catalogue or it cannot say."""
    if diagnoser is None or not calls:
        return []
    try:
        return diagnoser.diagnose(calls)
    except Exception:  # noqa: BLE001 - a diagnosis is a hint; it never changes a grade
        return []


