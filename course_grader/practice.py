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


def practice(path: Path) -> PracticeResult:
    """Run the assignment's tests and catalogue on the notebook at ``path`` (see the module's docstring)."""
    from . import sandbox
    from .intake import MAX_FILES_BYTES, read_repaired

    if not Path(path).is_file():
        raise PracticeUnavailable(f"{path}: no such notebook (save it first)")
    nb, _ = read_repaired(Path(path))
    run = _run_tests(nb, Path(path))
    parts, named = _parts(run.tests, run.points, run.verdicts)
    explanations = {m.name: m.explain for m in run.catalogue}
    missing = sandbox.missing_facilities()
    isolation = ("in the grading sandbox" if not missing and sandbox.mode() != "off" else
                 "with resource limits only: this machine does not allow the grading sandbox ("
                 + "; ".join(missing or [f"{sandbox.ENV_PREFIX}=off"]) + ")")
    return PracticeResult(
        run.assignment, parts, [explanations[name] for name in named],
        checked=["every test, visible and hidden, with your functions in a separate, clean process "
                 f"({isolation})", "hidden-test inputs drawn from the practice secret, not your instructor's",
                 "the catalogue of common mistakes, on every hidden test that failed"],
        not_checked=["the notebook run from top to bottom in a kernel (run Kernel → Restart & Run All)",
                     "written answers, which your instructor grades by hand"]
        + ([f"files beside the notebook beyond {MAX_FILES_BYTES >> 20} MB ({', '.join(run.left_out[:3])})"]
           if run.left_out else []))


def _run_tests(nb, path: Path) -> SimpleNamespace:
    """Every test cell of ``nb`` re-run as grading re-runs it, with the practice secret.

    Returns the assignment's name, its test cells (``index: cell``), their points, the
    re-check's verdicts, its catalogue of mistakes and the files left out of the copy."""
    from . import hidden_tests, instructor_code, mistakes, recheck
    from .cells import is_skipped
    from .intake import copy_student_files, read_repaired
    from .nbgrader_api import load_config
    from .preprocessors.clean_recheck import assignment_names, classify, setup_names
    from .preprocessors.config import GradingLimits, GradingPolicy

    with tempfile.TemporaryDirectory(prefix="practice-course-") as scratch:
        config = load_config(Path(scratch), config_file=course_folder() / "nbgrader_config.py")
        config.HiddenTests.secret = PRACTICE_SECRET
        assignment, source_path = _assignment_of(nb, config)
        source_nb = read_repaired(source_path)[0]
        meta = [(cell, cell.metadata.get("nbgrader", {})) for cell in source_nb.cells]
        sources = {info["grade_id"]: SimpleNamespace(source=cell.source, locked=info.get("locked", False),
                                                     cell_type=cell.cell_type)
                   for cell, info in meta if info.get("grade_id")}
        points = {info["grade_id"]: float(info.get("points", 0)) for cell, info in meta
                  if info.get("grade") and not info.get("solution") and cell.cell_type == "code"}
        cells = classify(nb, sources, set(points), hidden_tests.delimiters(config))
        code = [(cell, info) for cell, info in meta if cell.cell_type == "code" and not is_skipped(cell)]
        api, imports = assignment_names([cell.source for cell, info in code if info.get("solution")],
                                        [cell.source for cell, info in code if not info], setup_names(cells),
                                        instructor_code.local_modules(source_path.parent))
        catalogue = mistakes.load_catalogue(source_path.parent)
        limits = GradingLimits(config=config)
        tests = {c.index: c for c in cells if c.kind == "test"}
        work = Path(scratch) / "work"      # the files beside the notebook, as a graded run gets them
        work.mkdir()
        left_out = copy_student_files(path.parent, work)
        verdicts = recheck.rerun(
            cells, api, str(work), set(tests), limits={"memory_mb": limits.memory_mb},
            cell_timeout=limits.cell_timeout, notebook_timeout=limits.notebook_timeout,
            forbid=GradingPolicy(config=config).forbidden(assignment),
            grader_names=hidden_tests.grader_names(config, assignment, source_path.stem, "practice"),
            diagnoser=mistakes.Diagnoser(source_path, catalogue) if catalogue else None,
            given_imports=imports, source_folder=source_path.parent)
    return SimpleNamespace(assignment=assignment, tests=tests, points=points, verdicts=verdicts,
                           catalogue=catalogue, left_out=left_out)


def _parts(tests: dict, points: dict, verdicts) -> tuple[list[Part], list[str]]:
    """Each test cell's points and message (a test cell missing from the notebook scores 0), and the
    catalogued mistakes named, in order, each once."""
    parts, named = [], []
    for index, cell in tests.items():
        message = verdicts.failures.get(index) or (
            f"could not be checked here ({verdicts.unverifiable[index]})" if index in verdicts.unverifiable else "")
        if message and index in verdicts.diagnoses:   # the explanation is printed once, below the parts
            message = message.split("\n", 1)[0]
            named += [m for m in verdicts.diagnoses[index] if m not in named]
        if message and message.startswith("NotImplementedError"):
            message = "not written yet: the function still raises NotImplementedError"
        parts.append(Part(cell.label, 0.0 if message else points[cell.label], points[cell.label], message or ""))
    absent = sorted(set(points) - {cell.label for cell in tests.values()})
    parts += [Part(name, 0.0, points[name], "this test cell is not in your notebook") for name in absent]
    return parts, named


def _assignment_of(nb, config) -> tuple[str, Path]:
    """The assignment whose source notebook shares the most test cells with ``nb`` (its file name may differ)."""
    import nbformat

    source_directory = Path(config.CourseDirectory.source_directory)
    ids = {cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells} - {None}
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
