"""What hidden tests have and the student's code never sees: a secret, and the reference solution.

Hidden tests run only in the grader (:mod:`course_grader.recheck`).  Two names
are there for them, besides the setup cells' helpers and the student's
functions (stand-ins that call into the sandbox):

* ``reference`` -- everything the assignment's **source** notebook defines: its
  setup cells and its solution cells, run in the grader (it is the
  instructor's code).  A hidden test computes the expected values with it at
  grading time, instead of storing them in the notebook.
* ``grading_rng(*labels)`` -- a NumPy random generator seeded from the course's
  **secret**, the assignment, the notebook, the test cell, the student and the
  labels.  A hidden test draws its inputs from it, so they differ from course
  to course, term to term and student to student, and no data written down
  anywhere (a public repository, an earlier term's feedback) predicts them.
  The same student is given the same inputs when graded again.

The secret is ``c.HiddenTests.secret``, the grading command's ``--secret-seed``,
or the file ``c.HiddenTests.secret_file`` (default ``.hidden-tests-secret`` in the
course directory), created with a random value the first time it is needed.
Keep that file private, and keep it for re-grading.

The hidden regions of a test cell are marked as nbgrader marks them,
``### BEGIN HIDDEN TESTS`` ... ``### END HIDDEN TESTS`` unless the course's
configuration sets other markers (``c.ClearHiddenTests.begin_test_delimeter``
and ``end_test_delimeter``, in nbgrader's spelling).  This module is the one
place that reads them (:func:`delimiters`) and finds the regions
(:func:`hidden_regions`, :func:`withhold`); every part of the grader that
needs to know where a hidden test is asks it, so that a course's own markers
are used for withholding the tests from the student's kernel and for
recognising their failures in the re-check alike.

Every rule about hidden tests is here, in the order a submission meets them:

1. :func:`withhold_hidden_tests` cuts the hidden regions out of the test
   cells before the student's kernel starts, and records the cells as
   *pending* in the grading report;
2. the clean re-check (:class:`~course_grader.preprocessors.CleanRecheck`,
   :func:`course_grader.recheck.grader_loop.rerun`) runs the whole cells in the grader,
   with :func:`grader_names` (``reference``, ``grading_rng``);
3. a failure there is worded by :func:`hidden_failure_message`: the grader's
   words and the test's declared description, nothing the student returned;
4. :func:`fail_unsettled` scores 0 any pending cell that no re-check settled
   (a pipeline without CleanRecheck cannot award hidden points).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import io
import os
import secrets
import types
from dataclasses import dataclass
from pathlib import Path

from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from . import instructor_code
from .recheck import transport
from .cells import HIDDEN_NOT_RUN, fail, grade_id, is_skipped, is_test

SECRET_FILE = ".hidden-tests-secret"


# ---------------------------------------------------------------------------
# Where the hidden tests are
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Delimiters:
    """The markers that open and close a hidden-test region (a line that holds one is a marker line)."""

    begin: str
    end: str


def delimiters(config=None) -> Delimiters:
    """The course's markers, read from its nbgrader configuration (nbgrader's defaults if it sets none).

    They are ``ClearHiddenTests``' traits, read through nbgrader's own class,
    so that the grader and nbgrader (which cuts the hidden tests out of the
    released notebooks and the feedback) always agree.
    """
    from nbgrader.preprocessors import ClearHiddenTests

    clear = ClearHiddenTests(config=config)
    return Delimiters(clear.begin_test_delimeter, clear.end_test_delimeter)


class MalformedHiddenRegion(ValueError):
    """A cell's hidden-test markers do not pair up; the message says which line and which marker."""


def hidden_regions(source: str, marks: Delimiters) -> tuple:
    """``((first, last), ...)``: the 1-based line numbers of each hidden region of a cell, markers included.

    The rule is nbgrader's: a line holding ``marks.begin`` opens a region, the
    next line holding ``marks.end`` closes it.  Markers that do not pair up (a
    region opened inside another, one never closed, a close with nothing open)
    raise :class:`MalformedHiddenRegion`.
    """
    regions, start = [], None
    for number, line in enumerate(source.split("\n"), start=1):
        if marks.begin in line:
            if start is not None:
                raise MalformedHiddenRegion(
                    f"line {number} opens a hidden-test region ({marks.begin!r}) inside the one line "
                    f"{start} opened; close that one first ({marks.end!r})")
            start = number
        elif marks.end in line:
            if start is None:
                raise MalformedHiddenRegion(
                    f"line {number} closes a hidden-test region ({marks.end!r}) that no "
                    f"{marks.begin!r} line opened")
            regions.append((start, number))
            start = None
    if start is not None:
        raise MalformedHiddenRegion(f"the hidden-test region that line {start} opens ({marks.begin!r}) "
                                    f"is never closed (no {marks.end!r} line after it)")
    return tuple(regions)


def has_markers(source: str, marks: Delimiters) -> bool:
    """Whether a cell holds either marker (a hidden region, or markers that fail to make one)."""
    return marks.begin in source or marks.end in source


@dataclass(frozen=True)
class Withheld:
    """A test cell split for grading: what the student's kernel may run, and where the hidden tests are."""

    visible: str        # the source without its hidden regions ("" if the markers do not pair up)
    regions: tuple      # (first, last) line numbers of the hidden regions in the full source
    problem: str = ""   # why the whole cell is treated as hidden (markers that do not pair up)


def withhold(source: str, marks: Delimiters) -> Withheld:
    """The cell with its hidden regions cut out; markers that do not pair up hide the whole cell.

    Hiding too much is the safe mistake: the cell then runs only in the grader,
    and a failure in it is reported as a hidden test's, never with its source or data.
    """
    try:
        regions = hidden_regions(source, marks)
    except MalformedHiddenRegion as error:
        return Withheld("", ((1, source.count("\n") + 1),), str(error))
    lines = source.split("\n")
    hidden = {number for first, last in regions for number in range(first, last + 1)}
    return Withheld("\n".join(line for number, line in enumerate(lines, start=1) if number not in hidden),
                    regions)


# ---------------------------------------------------------------------------
# Withheld from the kernel, settled by the re-check
# ---------------------------------------------------------------------------

def withhold_hidden_tests(nb, report, config=None) -> dict[int, str]:
    """Cut every hidden-test region out of the test cells; returns ``{cell index: full source}``.

    Runs before the student's kernel starts, so that no hidden test, and none
    of its data, ever enters the student's process: the clean re-check runs
    the whole test cell later, in the grader, against the student's functions.
    The cells' ids go into ``report`` (a :class:`~course_grader.report.GradingReport`)
    as pending; the re-check settles them, and :func:`fail_unsettled` scores
    any it did not settle as failed.
    """
    marks = delimiters(config)
    withheld = {}
    for index, cell in enumerate(nb.cells):
        if not is_test(cell) or not has_markers(cell.source, marks):
            continue
        split = withhold(cell.source, marks)
        if split.problem:           # the whole cell is withheld: the instructor should fix the markers
            report.event("hidden_markers", f"the hidden-test markers do not pair up ({split.problem}), so "
                                           "the whole cell ran only in the grader", nb, index)
        withheld[index] = cell.source
        cell.source = split.visible
    report.hidden_pending = sorted(grade_id(nb.cells[i]) for i in withheld)
    return withheld


def fail_unsettled(nb, report) -> None:
    """Hidden tests withheld from the kernel that no re-check ran score 0, never full marks."""
    pending = set(report.hidden_pending)
    if not pending:
        return
    for cell in nb.cells:
        if grade_id(cell) in pending:
            fail(cell, HIDDEN_NOT_RUN, "the hidden tests of this cell were not run (the grading pipeline "
                                       "has no CleanRecheck), so it scores 0")
    report.event("hidden_not_run", "hidden tests were withheld from the kernel but never run: add "
                                   "CleanRecheck to the autograde preprocessors")
    report.hidden_pending = []


# ---------------------------------------------------------------------------
# What a failed hidden test may say
# ---------------------------------------------------------------------------

#: Where a failure happened whose message may only be the grader's words: a hidden test
IN_HIDDEN = "a hidden test"
#: ... or a visible test that ran after hidden ones (the student's process held hidden inputs)
AFTER_HIDDEN = "a test run after hidden tests"


def hidden_failure_message(error: BaseException, sources: dict, where: str = IN_HIDDEN) -> str:
    """What the feedback may say about a test that failed once the student's process held hidden inputs.

    ``where``: :data:`IN_HIDDEN` (a hidden test), or :data:`AFTER_HIDDEN` (a visible test the
    re-check ran after a hidden one).  Never anything the student's process returned, printed
    or raised (its text, the name of the exception it chose, the shape or value of a result: a
    student can make those encode the hidden inputs), and never anything computed from the
    hidden inputs.  What is said: what went wrong, in the grader's words (the student's code
    raised an exception, or NotImplementedError, the stub of an answer not written yet; the
    grader's own check failed; a refused reply; an object that is not plain data),
    and the test's declared description -- the literal text of the failing ``assert``'s message
    or of the check's description argument, read from the test's source (``sources``: file name
    -> source of the test and setup cells), with every ``{field}`` left out as "…".
    """
    if getattr(error, transport.FROM_STUDENT, None):
        # Not the type it was rebuilt as (the student picks it, and a name can be a code), only
        # whether it is the exercise's stub: NotImplementedError, what nbgrader leaves to replace.
        raised = "NotImplementedError" if isinstance(error, NotImplementedError) else "an exception"
        what = f"your code raised {raised} during {where}"
    elif isinstance(error, (transport.StudentProcessError, transport.NotPlainData)):   # messages made of the grader's words
        what = f"{error} (in {where})"
    else:
        what = f"{type(error).__name__} in {where}"
    said = []
    for filename, line in _trusted_lines(error, sources):
        text = declared_description(sources[filename], line)
        if text and text not in said:
            said.append(text)
    return what + (": " + "; ".join(said) if said else "")


def declared_description(source: str, line: int) -> str:
    """The literal text of the message the statement at ``line`` of ``source`` declares, fields as "…".

    The statement is the innermost one that holds the line; its message is an
    ``assert``'s, or else the last string argument of its outermost call that
    has one (``check_close(actual, expected, "what")``, ``raise AssertionError("...")``).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    holding = [node for node in ast.walk(tree) if isinstance(node, ast.stmt)
               and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if not holding:
        return ""
    statement = min(holding, key=lambda node: (node.end_lineno or node.lineno) - node.lineno)
    if isinstance(statement, ast.Assert):
        return _literal_text(statement.msg)
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            texts = [_literal_text(a) for a in [*node.args, *(k.value for k in node.keywords)]]
            texts = [t for t in texts if t]
            if texts:
                return texts[-1]
    return ""


def _literal_text(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(part.value if isinstance(part, ast.Constant) else "…" for part in node.values)
    else:
        return ""
    text = text.strip().split("\n")[0]
    return text if len(text) <= 300 else text[:299] + "…"


def _trusted_lines(error: BaseException, sources: dict) -> list:
    """(file, line) of the test cell's failing line, then of the innermost setup cell's, if any."""
    frames, tb = [], error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename in sources:
            frames.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    tests = [frame for frame in frames if frame[0].startswith("<test cell")]
    return ([tests[-1]] if tests else []) + ([frames[-1]] if frames and frames[-1] not in tests else [])


# ---------------------------------------------------------------------------
# What hidden tests get from the grader
# ---------------------------------------------------------------------------

def source_notebook(config, assignment: str, notebook: str) -> Path:
    """The instructor's source notebook of ``assignment`` (nbgrader's ``source`` folder)."""
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(config=config)
    return Path(coursedir.format_path(coursedir.source_directory, ".", assignment), f"{notebook}.ipynb")


def grader_names(config, assignment: str, notebook: str, student: str):
    """``cell -> {"reference": ..., "grading_rng": ...}``: the names a hidden test gets from the grader.

    The reference solution is built only for a test that uses it (a course
    whose tests never say ``reference`` never runs its source notebook here).
    """
    from nbgrader.coursedir import CourseDirectory

    source = source_notebook(config, assignment, notebook)
    secret = HiddenTests(config=config).course_secret(CourseDirectory(config=config).root)

    def names_for(cell) -> dict:
        names = {"grading_rng": rng_factory(secret, assignment, notebook, cell.label, student)}
        if "reference" in instructor_code.names_used(cell.source):
            names["reference"] = reference_solution(source)
        return names

    return names_for


class HiddenTests(LoggingConfigurable):
    """Where the course's secret comes from (``c.HiddenTests.*`` in the config)."""

    secret = Unicode("", help="The secret hidden tests draw their inputs from; empty: read secret_file.").tag(
        config=True)
    secret_file = Unicode("", help=f"File holding the secret (created if missing); default: "
                                   f"{SECRET_FILE} in the course directory.").tag(config=True)

    def secret_path(self, course_root) -> Path:
        return Path(self.secret_file or Path(course_root) / SECRET_FILE)

    def run_secret(self, course_root, given: str | None = None) -> tuple[str | None, Path]:
        """The secret a run grades with, by the one rule: the run's own (``--secret-seed``), else
        ``secret``, else the secret file's; None while that file is still to be made.  And the file."""
        path = self.secret_path(course_root)
        if given:
            return given, path
        if self.secret:
            return self.secret, path
        return (read_or_create_secret(path) if path.exists() else None), path

    def course_secret(self, course_root) -> str:
        """The secret, the file made now if it is the rule's answer and missing."""
        secret, path = self.run_secret(course_root)
        return secret if secret is not None else read_or_create_secret(path)


def read_or_create_secret(path: Path) -> str:
    """The secret in ``path``; a new random one (written owner-only, atomically) if there is none."""
    path = Path(path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:      # another worker made it first
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
    value = path.read_text().strip()
    if not value:
        raise SystemExit(f"the hidden tests' secret file {path} is empty: put a long random string in it")
    return value


def rng_factory(secret: str, *context: str):
    """``grading_rng(*labels)`` for one test cell: ``context`` is (assignment, notebook, cell, student)."""
    import numpy as np

    def grading_rng(*labels) -> "np.random.Generator":
        material = "\0".join([secret, *context, *map(str, labels)]).encode()
        return np.random.default_rng(int.from_bytes(hashlib.sha256(material).digest()[:16], "little"))

    return grading_rng


_REFERENCES: dict = {}


class ReferenceUnavailable(RuntimeError):
    """The reference solution could not be built: the grader's problem, never the student's."""


def reference_solution(source: Path):
    """The source notebook's setup and solution cells, run once per process: a namespace.

    Test cells (nbgrader grade cells that are not solution cells) are left
    out; so is whatever the cells print.  A notebook that cannot be run here
    gives a reference whose every use raises :class:`ReferenceUnavailable`,
    saying why: the tests that use it cannot be re-checked, and say so.
    """
    import nbformat

    source = Path(source)
    if not source.is_file():
        return _Missing(f"the assignment's source notebook {source} was not found, so the hidden "
                        "tests have no reference solution")
    stat = source.stat()
    key = (str(source.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _REFERENCES:
        try:
            namespace = run_solution(nbformat.read(source, as_version=4), "reference", source.parent)
        except Exception as error:  # noqa: BLE001 - the instructor's notebook: say why, grade on
            _REFERENCES[key] = _Missing(f"the reference solution (the source notebook {source.name}) "
                                        f"could not be run in the grader: {type(error).__name__}: {error}")
        else:
            _REFERENCES[key] = types.SimpleNamespace(
                **{name: value for name, value in namespace.items() if not name.startswith("_")})
    return _REFERENCES[key]


def run_solution(nb, label: str, folder=None) -> dict:
    """What a notebook's setup and solution cells define, run here (test cells and output left out).

    Used for the reference solution and for the catalogued wrong answers
    (:mod:`course_grader.mistakes`): both are the instructor's code, run as
    the notebook would run it (:mod:`course_grader.instructor_code`: IPython's
    syntax, the modules in the assignment's ``folder``).
    """
    namespace = instructor_code.namespace(label)
    with contextlib.redirect_stdout(io.StringIO()), instructor_code.importable_from(folder), \
            instructor_code.working_directory(folder):
        for cell in nb.cells:
            info = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or (info.get("grade") and not info.get("solution")) or is_skipped(cell):
                continue
            exec(compile(instructor_code.python_source(cell.source), f"<{label}: {info.get('grade_id', 'cell')}>",
                         "exec"), namespace)
    return namespace


class _Missing:
    """A reference that cannot be built: any use says why."""

    def __init__(self, why: str):
        self._why = why

    def __getattr__(self, name):
        raise ReferenceUnavailable(self._why)
