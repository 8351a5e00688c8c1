"""Practice feedback for a student on their own: the hidden tests and the catalogue of mistakes, on their notebook.

Most readers of an open course have no instructor.  The last cell of every
assignment notebook calls :func:`check`, which runs, on the notebook as last
saved:

* the assignment's tests, visible and hidden, with the student's functions in
  a separate, clean process (the grading's clean re-check,
  :mod:`course_grader.recheck`, in the grading sandbox where the machine
  allows it), with hidden-test inputs drawn from a **practice secret**
  (:data:`PRACTICE_SECRET`, public: not the instructor's, so practice says
  nothing of the inputs a graded run draws);
* the catalogue of mistakes (:mod:`course_grader.mistakes`) on every hidden
  test that fails,

and prints the points of each part, the mistake named, and what it checked
and could not.  Nothing of a hidden test's source is printed: a failed hidden
test says what the grader's feedback says.  It is practice, not a grade.

From a terminal: ``python -m course_grader practice NOTEBOOK.ipynb``.

A course that keeps its solutions private (a fork) turns it off with one
setting, ``practice-feedback = false`` under ``[tool.course-grader]`` in
``pyproject.toml``: the package then installs nothing of ``solutions/`` and
:func:`check` says practice feedback is off.  When it is on, the installed
package holds the source notebooks (the reference solutions and the hidden
tests) and the catalogues of mistakes, which a student could read; they are
in the open repository anyway.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

#: Where hidden tests draw their inputs from in practice: public by design, never an instructor's secret.
PRACTICE_SECRET = "practice feedback: public, not any instructor's secret"
#: The environment variable the grading sandbox sets: inside it, practice does nothing.
INSIDE_GRADING = "ATTENTION_SANDBOX_INSIDE"
SHIPPED = Path(__file__).resolve().parent / "practice_course"   # what the wheel installs (setup.py)
CHECKOUT = Path(__file__).resolve().parents[1]


class PracticeUnavailable(Exception):
    """Practice feedback cannot run here; the message says why and what to do."""

    def _render_traceback_(self):   # what Jupyter shows instead of a traceback
        return [f"Practice feedback: {self}"]


@dataclass
class Part:
    name: str            # the test cell's grade id
    points: float
    max_points: float
    message: str = ""    # why it lost its points, in the grader's words (a hidden test: never its source)


@dataclass
class PracticeResult:
    assignment: str
    parts: list[Part]
    mistakes: list[str] = field(default_factory=list)   # explanations of the catalogued mistakes named
    checked: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)

    @property
    def points(self) -> float:
        return sum(part.points for part in self.parts)

    @property
    def max_points(self) -> float:
        return sum(part.max_points for part in self.parts)

    def _repr_pretty_(self, printer, cycle) -> None:
        """How a notebook shows the result a cell ends with: one line, since :func:`check` has just
        printed the report (the dataclass's repr, ~1,000 characters, stays for debugging)."""
        printer.text(f"<practice feedback for {self.assignment}: {self.points:g} / {self.max_points:g} "
                     "points; the report is above, and in .text()>")

    def text(self) -> str:
        lines = [f"Practice feedback for {self.assignment} (not a grade): "
                 f"{self.points:g} / {self.max_points:g} points from the tests"]
        for part in self.parts:
            mark = "ok  " if part.points == part.max_points else "FAIL"
            lines.append(f"  {mark} {part.name}: {part.points:g} / {part.max_points:g}"
                         + (f"\n       {part.message}" if part.message else ""))
        if self.points == 0:
            lines.append("Nothing scored yet: write each function where it says `# YOUR CODE HERE` (replacing "
                         "`raise NotImplementedError()`), run the visible tests after it, save the notebook, "
                         "and check again.")
        for explanation in self.mistakes:
            lines.append(f"A common mistake: {explanation}")
        lines.append("Checked: " + "; ".join(self.checked))
        if self.not_checked:
            lines.append("Not checked: " + "; ".join(self.not_checked))
        return "\n".join(lines)


def course_folder() -> Path:
    """The course's grading configuration and source notebooks: installed with the package, or this checkout's."""
    if (SHIPPED / "nbgrader_config.py").is_file():
        return SHIPPED
    pyproject = CHECKOUT / "pyproject.toml"
    if (CHECKOUT / "nbgrader_config.py").is_file() and pyproject.is_file():
        if not enabled(pyproject.read_text()):
            raise PracticeUnavailable("practice feedback is off in this course (pyproject.toml: "
                                      "practice-feedback = false); your instructor's grading is the feedback")
        return CHECKOUT
    raise PracticeUnavailable("practice feedback is off in this course, or the course is not installed here "
                              "(see the course's Exercises page)")


def enabled(pyproject_text: str) -> bool:
    """The ``[tool.course-grader] practice-feedback`` setting (on unless it says false)."""
    try:
        import tomllib
    except ModuleNotFoundError:       # Python 3.10
        match = re.search(r"^practice-feedback\s*=\s*(\w+)", pyproject_text, re.M)
        return not (match and match.group(1) == "false")
    return tomllib.loads(pyproject_text).get("tool", {}).get("course-grader", {}).get("practice-feedback", True)


def running_notebook() -> Path:
    """The notebook this kernel runs, as last saved: Colab's, Jupyter's (``JPY_SESSION_NAME``) or VS Code's."""
    try:
        from google.colab import _message   # Colab: the notebook lives in Drive, not on this disk
    except ImportError:
        _message = None
    if _message is not None:
        import nbformat

        nb = nbformat.from_dict(_message.blocking_request("get_ipynb", timeout_sec=30)["ipynb"])
        path = Path(tempfile.mkdtemp(prefix="practice-")) / "notebook.ipynb"
        nbformat.write(nb, path)
        return path
    candidates = [os.environ.get("JPY_SESSION_NAME", "")]
    try:
        candidates.append(get_ipython().user_ns.get("__vsc_ipynb_file__", ""))   # noqa: F821
    except NameError:
        pass
    for candidate in candidates:
        if candidate and candidate.endswith(".ipynb") and Path(candidate).is_file():
            return Path(candidate)
    raise PracticeUnavailable("could not tell which notebook this is: give its path, "
                              "check('a1_softmax_additive.ipynb')")


def check(notebook: str | Path | None = None, *, quiet: bool = False) -> PracticeResult | None:
    """Practice feedback on ``notebook`` (default: the one running this), printed and returned."""
    if os.environ.get(INSIDE_GRADING):
        if not quiet:
            print("Practice feedback is not run while the notebook is graded.")
        return None
    course_folder()        # a course with practice off says so first
    path = Path(notebook) if notebook is not None else running_notebook()
    result = practice(path)
    if not quiet:
        print(result.text())
    return result


#: Whose hidden-test inputs practice draws (with :data:`PRACTICE_SECRET`): practice's own
PRACTICE_STUDENT = "practice"


def practice(path: Path, *, student: str = PRACTICE_STUDENT) -> PracticeResult:
    """Run the assignment's tests and catalogue on the notebook at ``path`` (see the module's docstring).

    The notebook goes the way grading takes it, step for step, but for the kernel: read as
    grading reads it (:func:`course_grader.intake.read_submission`: what grading cannot read
    scores 0 here too), through the grading pipeline's sanitizing pass (nbgrader's and the
    course's, on a gradebook of the assignment made for practice), its instructor's cells
    restored (:mod:`course_grader.instructor_cells`), and every test re-checked as grading
    re-checks it.  So each part gets the points grading would give it, hidden-test inputs aside
    (drawn from the practice secret for ``student``).
    """
    from . import sandbox
    from .intake import MAX_FILES_BYTES, UnreadableNotebook, read_submission

    path = Path(path)
    if not path.is_file():
        raise PracticeUnavailable(f"{path}: no such notebook (save it first)")
    course = _course()
    try:
        nb, _, _ = read_submission(path)
    except UnreadableNotebook as error:
        nb, unreadable = None, str(error)
    else:
        unreadable = ""
    assignment, source_path = _assignment_of(nb, course.config, path, unreadable)
    run = _run_tests(nb, path, course, assignment, source_path, student, unreadable)
    parts, named = _parts(run)
    explanations = {m.name: m.explain for m in run.catalogue}
    missing = sandbox.missing_facilities()
    isolation = ("in the grading sandbox" if not missing and sandbox.mode() != "off" else
                 "with resource limits only: this machine does not allow the grading sandbox ("
                 + "; ".join(missing or [f"{sandbox.ENV_PREFIX}=off"]) + ")")
    return PracticeResult(
        assignment, parts, [explanations[name] for name in named],
        checked=["every test, visible and hidden, with your functions in a separate, clean process "
                 f"({isolation})", "hidden-test inputs drawn from the practice secret, not your instructor's",
                 "the catalogue of common mistakes, on every hidden test that failed"],
        not_checked=["the notebook run from top to bottom in a kernel (run Kernel → Restart & Run All)",
                     "written answers, which your instructor grades by hand"]
        + ([f"files beside the notebook beyond {MAX_FILES_BYTES >> 20} MB ({', '.join(run.left_out[:3])})"]
           if run.left_out else []))


@dataclass
class _Course:
    """The course's grading configuration, and a scratch course directory holding practice's gradebook."""

    config: object
    scratch: tempfile.TemporaryDirectory     # the folder, removed with the process
    gradebooks: dict = field(default_factory=dict)   # (assignment, source's mtime) -> gradebook URL

    @property
    def folder(self) -> Path:
        return Path(self.scratch.name)


_COURSES: dict = {}


def _course() -> _Course:
    """The course practice runs for, set up once per process (reading the configuration takes seconds)."""
    from .nbgrader_api import load_config
    from .nbgrader_patches import use_fast_alembic_head

    folder = course_folder()
    if folder not in _COURSES:
        scratch = tempfile.TemporaryDirectory(prefix="practice-course-")
        config = load_config(Path(scratch.name), config_file=folder / "nbgrader_config.py")
        config.HiddenTests.secret = PRACTICE_SECRET
        use_fast_alembic_head()
        _COURSES[folder] = _Course(config, scratch)
    return _COURSES[folder]


def _gradebook(course: _Course, assignment: str, source_path: Path) -> str:
    """The URL of a gradebook holding ``assignment``, as grading prepares it (once per version of it)."""
    from .nbgrader_api import prepare_assignment

    key = (assignment, source_path.stat().st_mtime_ns)
    if key not in course.gradebooks:
        prepare_assignment(course.config, course.folder, assignment)
        course.gradebooks[key] = f"sqlite:///{course.folder / 'gradebook.db'}"
    return course.gradebooks[key]


def _run_tests(nb, path: Path, course: _Course, assignment: str, source_path: Path, student: str,
               unreadable: str) -> SimpleNamespace:
    """Every test cell of ``nb`` re-run as grading re-runs it, with the practice secret.

    Returns the test cells (``index: cell``), their points, the re-check's verdicts, the
    catalogue of mistakes, the files left out of the copy, and why the notebook scores 0 as a
    whole (``zero``: unreadable, or refused by the grading pipeline), if it does."""
    from . import instructor_cells, mistakes
    from .cells import grade_id, is_test
    from .intake import copy_student_files
    from .nbgrader_api import sanitized
    from .preprocessors import CleanRecheck
    from .preprocessors.config import GradingLimits
    from .recheck.grader_loop import Verdicts

    config = course.config
    names = {"db_url": _gradebook(course, assignment, source_path), "assignment": assignment,
             "notebook": source_path.stem, "student": student}
    released = instructor_cells.from_gradebook(names["db_url"], names["notebook"], assignment)
    points = {gid: float(info["nbgrader"]["points"]) for gid, info in released.items()
              if info["cell_type"] == "code" and info["nbgrader"]["grade"] and not info["nbgrader"]["solution"]}
    catalogue = mistakes.load_catalogue(source_path.parent)
    run = SimpleNamespace(assignment=assignment, tests={}, points=points, catalogue=catalogue, left_out=[],
                          verdicts=Verdicts({}, []), zero=unreadable and (
                              f"your notebook could not be read as a Jupyter notebook ({unreadable}): "
                              "grading scores it as the unchanged exercise, 0 points"))
    if run.zero:
        return run
    try:
        nb = sanitized(nb, config, names, log=_quiet_log())
    except Exception as error:  # noqa: BLE001 - what grading's nbgrader would refuse too
        run.zero = (f"grading could not process your notebook ({type(error).__name__}: "
                    f"{str(error).strip().splitlines()[-1][:200] if str(error).strip() else ''}): "
                    "it would be graded as the unchanged exercise, 0 points")
        return run
    instructor_cells.restore(nb, released, instructor_cells.read_source(source_path))
    checker = CleanRecheck(config=config)
    checker.limits = GradingLimits(config=config)
    cells, api, imports = checker._cells_and_api(nb, names)
    run.tests = {c.index: c for c in cells if c.kind == "test"}
    run.not_run = {grade_id(cell) for cell in nb.cells if is_test(cell) and cell.source.strip()} \
        - {c.label for c in run.tests.values()}
    with tempfile.TemporaryDirectory(prefix="practice-work-") as scratch:
        work = Path(scratch) / "work"      # the files beside the notebook, as a graded run gets them
        work.mkdir()
        run.left_out = copy_student_files(path.parent, work)
        run.verdicts = checker._rerun(cells, api, imports, str(work), set(run.tests), names,
                                      float(checker.limits.notebook_timeout))
    return run


def _quiet_log():
    """A logger that keeps nbgrader's warnings (a test cell's checksum "has changed!": it always has,
    its hidden tests were cut out) out of the student's notebook."""
    import logging

    log = logging.getLogger("course_grader.practice.sanitizing")
    if not log.handlers:
        log.addHandler(logging.NullHandler())
        log.propagate = False
    return log


def _parts(run) -> tuple[list[Part], list[str]]:
    """Each test cell's points and message, and the catalogued mistakes named, in order, each once.

    As grading scores them: a test that failed, or that the notebook does not run, scores 0; a
    hidden test the re-check cannot run scores 0; a visible one keeps the result the notebook's
    own run gives it (here: its points, with a note)."""
    if run.zero:
        return [Part(name, 0.0, points, run.zero) for name, points in run.points.items()], []
    verdicts, parts, named = run.verdicts, [], []
    for index, cell in run.tests.items():
        message = verdicts.failures.get(index, "")
        if index in verdicts.diagnoses:   # the explanation is printed once, below the parts
            message = message.split("\n", 1)[0]
            named += [m for m in verdicts.diagnoses[index] if m not in named]
        if message.startswith("NotImplementedError"):
            message = "not written yet: the function still raises NotImplementedError"
        scored = not message
        if index in verdicts.unverifiable:
            if cell.hidden:
                message, scored = f"could not be checked here ({verdicts.unverifiable[index]})", False
            else:
                message = (f"checked only by running the notebook (Kernel → Restart & Run All): "
                           f"{verdicts.unverifiable[index]}")
        parts.append(Part(cell.label, run.points[cell.label] if scored else 0.0, run.points[cell.label], message))
    present = {cell.label for cell in run.tests.values()}
    for name in run.points:
        if name in present:
            continue
        why = ("the assignment's notebook does not run this test, so it scores 0" if name in run.not_run
               else "this test cell is not in your notebook")
        parts.append(Part(name, 0.0, run.points[name], why))
    return parts, named


def _assignment_of(nb, config, path: Path, unreadable: str = "") -> tuple[str, Path]:
    """The assignment whose source notebook shares the most test cells with ``nb`` (its file name may
    differ); for a notebook that cannot be read (``nb`` None), the one its file is named after."""
    import nbformat

    source_directory = Path(config.CourseDirectory.source_directory)
    if nb is None:
        named = source_directory / path.stem / f"{path.stem}.ipynb"
        if named.is_file():
            return path.stem, named
        raise PracticeUnavailable(f"{path.name} could not be read as a Jupyter notebook ({unreadable}); "
                                  "grading would score it as the unchanged exercise, 0 points")
    ids = {cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells
           if isinstance(cell.metadata.get("nbgrader"), dict)} - {None}
    best, best_shared = None, 0
    for source in sorted(source_directory.glob("*/*.ipynb")):
        source_ids = {cell.metadata.get("nbgrader", {}).get("grade_id")
                      for cell in nbformat.read(source, as_version=4).cells} - {None}
        shared = len(ids & source_ids)
        if shared > best_shared:
            best, best_shared = source, shared
    if best is None:
        raise PracticeUnavailable("this notebook is none of the course's assignments (no test cell of theirs "
                                  "is in it)")
    return best.parent.name, best


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog=f"{Path(sys.executable).name} -m course_grader practice",
                                     description="Practice feedback on an assignment notebook (not a grade).")
    parser.add_argument("notebook", type=Path, help="your assignment notebook (.ipynb), saved")
    args = parser.parse_args(argv)
    try:
        result = check(args.notebook)
    except PracticeUnavailable as error:
        raise SystemExit(f"practice feedback: {error}") from None
    return 0 if result is None or result.points == result.max_points else 1
