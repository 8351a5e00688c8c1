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
controls is what its functions return, which is exactly what is being graded.
This module is the test loop (:func:`rerun`); the transport is
:mod:`~course_grader.recheck.transport`, and what a failed hidden test may say
is :func:`course_grader.hidden_tests.hidden_failure_message`.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import re
import time
import warnings
from dataclasses import dataclass, field

from .. import instructor_code, mistakes
from .. import limits as default_limits
from ..hidden_tests import AFTER_HIDDEN, ReferenceUnavailable, hidden_failure_message
from .transport import StudentProcess, StudentProcessError, StudentTimeout, TransportError
from .written_files import WrittenFiles


@dataclass
class Cell:
    index: int
    kind: str          # "setup" (instructor code, runs on both sides), "student" or "test"
    source: str
    label: str = ""
    hidden: tuple = ()  # (first, last) line numbers of its hidden-test regions (hidden_tests.withhold)

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



def rerun(cells: list[Cell], api_names: list[str], workdir: str, tests_to_check: set[int], *,
          limits: dict | None = None, slot: int | None = None,
          cell_timeout: float = default_limits.CELL_SECONDS,
          notebook_timeout: float = default_limits.NOTEBOOK_SECONDS, forbid=(),
          grader_names=None, diagnoser: "mistakes.Diagnoser | None" = None,
          given_imports: dict | None = None, source_folder=None) -> Verdicts:
    """Re-run ``cells``: setup cells on both sides, student cells in the sandbox, tests here.

    Only the test cells in ``tests_to_check`` are run (the others have already
    failed in the notebook, and a clean re-run can only take points away).
    A test gets the setup cells' names, the student's values of ``api_names``
    (stand-ins in the student's process), the names the instructor's
    solution and given cells import (``given_imports``, ``{name: (module,
    attribute)}``: imported here, so that a test's ``np`` is never the
    student's), and, if it reads them, IPython's ``In``, ``Out`` and ``_``
    from the student's shell, which numbers the cells as the notebook did.
    ``grader_names(cell)``, if given, returns names a test cell gets from the
    grader (``reference``, ``grading_rng``: :mod:`course_grader.hidden_tests`);
    they are set last, so no student name can shadow them.  The instructor's
    modules in ``source_folder`` can be imported by setup and test cells.
    With a ``diagnoser`` (:mod:`course_grader.mistakes`), a failed hidden test's
    calls of the student's functions are compared with the catalogued mistakes,
    and the one they match is named in the failure's message.
    """
    started = time.monotonic()
    deadline = started + notebook_timeout
    limits = dict(limits or {})
    limits.setdefault("wall_seconds", int(notebook_timeout) + default_limits.RECHECK_WALL_SLACK_SECONDS)
    process = StudentProcess(workdir, limits, slot, list(forbid))
    process.budget_end = deadline       # an interrupted call gets no grace beyond the budget
    namespace: dict = dict(instructor_code.namespace("__main__"), __builtins__=builtins)
    failures: dict[int, str] = {}
    hidden_failures: set[int] = set()
    out_of_time: set[int] = set()
    unverifiable: dict[int, str] = {}
    diagnoses: dict[int, list[str]] = {}
    last_test = max(tests_to_check, default=-1)
    sources = {f"<setup cell {c.label}>": c.source for c in cells if c.kind == "setup"}
    # a test may call a helper a setup cell or an earlier test defined, which reads the student's names
    instructor_sources = [c.source for c in cells if c.kind in ("setup", "test")]
    imported: dict | None = None
    quiet = io.StringIO()
    written = WrittenFiles(workdir)
    tainted = False      # whether the student's process has been sent a hidden test's inputs
    try:
        with instructor_code.working_directory(workdir), contextlib.redirect_stdout(quiet), \
                contextlib.redirect_stderr(quiet), warnings.catch_warnings(), \
                instructor_code.importable_from(source_folder):
            warnings.simplefilter("ignore")
            for cell in cells:
                if cell.index > last_test:
                    break
                remaining = deadline - time.monotonic()
                if cell.kind in ("setup", "student"):
                    if cell.kind == "setup":
                        with contextlib.suppress(Exception):
                            exec(compile(instructor_code.python_source(cell.source), f"<setup cell {cell.label}>",
                                         "exec"), namespace)
                    if remaining <= 0:
                        continue
                    process.run_cell(cell.source, cell.index, min(cell_timeout, remaining), deadline)
                    continue
                if remaining > 0:
                    with contextlib.suppress(StudentProcessError):   # numbered as in the notebook
                        process.advance(cell.visible_source(), min(deadline, time.monotonic() + cell_timeout))
                if cell.index not in tests_to_check:
                    continue
                # From the first hidden test on, the student's process holds hidden inputs: nothing it
                # says (messages, file names, printed text) reaches a failure's message verbatim.
                tainted = tainted or bool(cell.hidden)
                if remaining <= 0:
                    failures[cell.index] = "the budget was spent before this test could run"
                    out_of_time.add(cell.index)
                    continue
                if imported is None:   # an import the grader cannot do (a path the notebook set): the student's
                    imported = _import_given(given_imports or {})
                    student_names = set(api_names) | (set(given_imports or {}) - set(imported))
                filename = f"<test cell {cell.label}>"
                try:
                    cell_deadline = min(deadline, time.monotonic() + cell_timeout)
                    wanted = names_wanted(instructor_sources, student_names)
                    defined = process.describe(wanted, cell_deadline)
                    _bring_written_files(process, written, cell.index, cell_deadline)
                    for name in wanted:   # the student's answers, and nothing else of theirs
                        if name in defined:
                            namespace[name] = defined[name]
                        else:
                            namespace.pop(name, None)
                    namespace.update(imported)
                    if grader_names is not None:
                        namespace.update(grader_names(cell))
                    process.call_deadline = cell_deadline
                    names = _TestNames(namespace, student_names, process, cell_deadline)
                    process.start_recording()
                    exec(compile(instructor_code.python_source(cell.source), filename, "exec"), namespace, names)
                except Exception as error:  # noqa: BLE001 - any failure fails the test
                    if isinstance(error, (TransportError, ReferenceUnavailable)):
                        # the grader, not the student, is the limit
                        unverifiable[cell.index] = str(error)
                    elif isinstance(error, StudentTimeout) and time.monotonic() >= deadline - 1:
                        out_of_time.add(cell.index)
                        failures[cell.index] = str(error)
                    elif cell.hidden:   # any failure of a cell with hidden tests: their data may be in it
                        hidden_failures.add(cell.index)
                        failures[cell.index] = hidden_failure_message(error, dict(sources, **{filename: cell.source}))
                        found = _diagnose(diagnoser, process.recorder.calls or [])
                        if found:
                            diagnoses[cell.index] = [m.name for m in found]
                            failures[cell.index] += "\n" + mistakes.feedback(found)
                    elif tainted:       # a visible test after hidden ones: the grader's words only
                        failures[cell.index] = hidden_failure_message(
                            error, dict(sources, **{filename: cell.source}), AFTER_HIDDEN)
                    else:
                        failures[cell.index] = f"{type(error).__name__}: {error}"[:1000]
                    if isinstance(error, StudentProcessError):
                        process.events.append((cell.index, str(error)))
                finally:
                    process.recorder.stop()
    finally:
        process.close()
        written.close()
    return Verdicts(failures, process.events, time.monotonic() - started, hidden_failures, out_of_time,
                    unverifiable, diagnoses)


#: IPython's names for a shell's history (``_3``, ``_i3`` too): a test that reads one gets the student's shell's
IPYTHON_NAMES = re.compile(r"In|Out|_{1,3}|_i{1,3}|_ih|_oh|_dh|_\d+|_i\d+")


#: What reads a namespace by name as the test runs: a test that uses one gets every name of the student's
DYNAMIC_LOOKUPS = frozenset({"dir", "globals", "locals", "vars", "eval", "exec"})


def names_wanted(sources: list[str], student_names: set[str]) -> list[str]:
    """The student's names the instructor's setup and test cells use (all of them if one looks names
    up as it runs), and the IPython history names they read: only these are asked of the student's
    process (a value no test uses, however large, stays there)."""
    used = set().union(*(instructor_code.names_used(source) for source in sources))
    wanted = set(student_names) if used & DYNAMIC_LOOKUPS else used & set(student_names)
    return sorted(wanted | {name for name in used if IPYTHON_NAMES.fullmatch(name)})


def ipython_names(source: str) -> set[str]:
    """The IPython history names a test cell reads (:data:`IPYTHON_NAMES`)."""
    return {name for name in instructor_code.names_used(source) if IPYTHON_NAMES.fullmatch(name)}


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


class _TestNames(dict):
    """A test cell's top-level names, which are the grader's namespace (reads, writes and ``del``).

    Assigning or deleting one of the student's names does the same in the
    student's process, as it would in the notebook: a test may check that a
    function fails without a helper it relies on (``del squares``), or
    replace the helper with a stand-in, and put it back.  (The dictionary
    itself stays empty: exec goes through these methods for a mapping that
    is not exactly a dict.)
    """

    def __init__(self, namespace: dict, students: set, process: "StudentProcess", deadline: float):
        super().__init__()
        self._namespace, self._students = namespace, students
        self._process, self._deadline = process, deadline

    def __getitem__(self, key):
        return self._namespace[key]

    def __contains__(self, key):
        return key in self._namespace

    def keys(self):         # what ``dir()`` lists, as the notebook's shell would
        return self._namespace.keys()

    def __iter__(self):
        return iter(self._namespace)

    def __setitem__(self, key, value):
        self._namespace[key] = value
        if key in self._students:         # e.g. a helper replaced by a stand-in, or restored after del
            self._process.assign(key, value, self._deadline)

    def __delitem__(self, key):
        del self._namespace[key]
        if key in self._students:
            self._process.forget([key], self._deadline)
