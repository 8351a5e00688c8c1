"""CleanRecheck: tests that pass inside the notebook must also pass with the student's code in a clean process.

Every test that passed inside the notebook is run again, with the student's
code in a separate sandboxed process and the test code in the grader
(:mod:`course_grader.recheck.grader_loop`); hidden tests, withheld from the notebook, run
only here.  What comes of it is written into the notebook (a failed cell's
error, :mod:`course_grader.cells`) and into the grading report:

* a visible test that fails only here scores 0 and flags the submission, the
  flag saying which error, in which process;
* a hidden test that fails scores 0 with a message in the grader's words
  (:func:`course_grader.hidden_tests.hidden_failure_message`) and, when the
  assignment has a catalogue of mistakes, the mistake its calls match; when
  something says the failure may be the re-check's rather than the student's
  (a name the grader did not lend, a student's cell that failed here and not
  in the notebook, an object asked to judge itself), the submission is flagged
  for review with that reason; the cell keeps its 0 (a disagreement is
  reviewed, never rewarded);
* a test the time budget left no time for scores 0 without a flag (slow is not tampering);
* a test the re-check cannot reproduce keeps its notebook result, with an
  event saying so (a hidden one, with no notebook result, scores 0 and is flagged).

Its solution cells are also searched for code a solution has no business
containing (:data:`TAMPERING_PATTERNS`), which flags the submission (no points change).
"""

from __future__ import annotations

import os
import re
from time import monotonic

import nbformat
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import List, default

from .. import hidden_tests, instructor_code, mistakes, sandbox
from ..recheck import grader_loop
from ..cells import CLEAN_RERUN_FAILED, HIDDEN_FAILED, TIME_LIMIT, fail, grade_id, is_skipped, is_test
from ..report import Diagnosis, GradingReport
from .config import DEADLINE, GradingLimits, GradingPolicy

#: Catalogues of mistakes, built once per process: (source notebook, its mtime) -> Diagnoser
_DIAGNOSERS: dict = {}

# Things a solution has no business doing: replacing test helpers, hooking IPython,
# leaving the process.  Matching one flags the submission for review (no points change).
TAMPERING_PATTERNS = [
    (r"\b(np|numpy)\s*\.\s*testing\s*\.\s*\w+\s*=(?!=)", "replaces a numpy.testing function"),
    (r"\b(np|numpy)\s*\.\s*(allclose|isclose|array_equal|all|any|abs|max)\s*=(?!=)", "replaces a NumPy function"),
    (r"\bbuiltins\b|__builtins__", "touches Python's builtins"),
    (r"\.events\s*\.\s*register|input_transformers|ast_transformers|set_custom_exc|showtraceback"
     r"|\brun_cell\s*=|\.displayhook|sys\s*\.\s*(excepthook|settrace|setprofile|modules)",
     "hooks into IPython or the interpreter"),
    (r"\bAssertionError\s*=(?!=)|\bassert_\w+\s*=(?!=)|\bcheck_\w+\s*=(?!=)", "replaces a test helper"),
    (r"\bos\s*\.\s*(_exit|kill|fork|setsid)\b|\bsignal\s*\.\s*(signal|alarm|setitimer)\b|\bctypes\b",
     "controls processes or signals"),
    (r"gradebook|\.\./\.\.|/submitted/|/autograded/|/solutions/", "refers to grading files"),
]


class CleanRecheck(NbGraderPreprocessor):
    """Tests that pass inside the notebook must also pass with the student's code in a clean process."""

    patterns = List(help="(regex, reason) pairs that flag a submission for review.").tag(config=True)

    @default("patterns")
    def _patterns_default(self):
        return TAMPERING_PATTERNS

    def preprocess(self, nb, resources):
        report = GradingReport.of(resources)
        self.limits = GradingLimits(parent=self)
        names = resources["nbgrader"]
        cells, api, imports = self._cells_and_api(nb, names)
        self._flag_tampering(cells, report)
        passed = {c.index for c in cells if c.kind == "test" and not utils.has_failed(nb.cells[c.index])}
        if passed:
            budget = resources.get(DEADLINE, monotonic() + self.limits.notebook_timeout) - monotonic()
            workdir = resources.get("metadata", {}).get("path") or os.getcwd()
            verdicts = self._rerun(cells, api, imports, workdir, passed, names, max(0.0, budget))
            self._record(nb, cells, verdicts, report)
        # Every withheld hidden test has now run here, or its cell failed in the notebook already.
        report.hidden_pending = []
        return nb, resources

    # -- what runs where ------------------------------------------------------

    def _cells_and_api(self, nb, names: dict):
        """The notebook's cells as the re-check sees them, and what a test gets of the assignment's names.

        The assignment's names are what the instructor's solution cells and
        given cells (ordinary cells, without nbgrader metadata) define: the
        student's values of those reach the tests.  What those cells import
        is imported by the grader itself (a test's ``np`` is never the
        student's).  The gradebook keeps the released version of the
        solution cells, which for a whole-cell solution (no BEGIN SOLUTION
        markers) is only ``raise NotImplementedError()``; the source notebook
        has the real ones, and the given cells, which the gradebook does not keep.
        """
        with Gradebook(names["db_url"]) as gb:
            source_nb = gb.find_notebook(names["notebook"], names["assignment"])
            sources = {cell.name: cell for cell in source_nb.source_cells}
            tests = {cell.name for cell in source_nb.grade_cells} - {c.name for c in source_nb.solution_cells}
            solutions = [sources[c.name].source for c in source_nb.solution_cells
                         if c.name in sources and sources[c.name].cell_type == "code"]
            cells = classify(nb, sources, tests, hidden_tests.delimiters(self.config))
        solutions_here, given = self._source_code_cells(names)
        setup = setup_names(cells)
        folder = hidden_tests.source_notebook(self.config, names["assignment"], names["notebook"]).parent
        api, imports = assignment_names(solutions + solutions_here, given, setup,
                                        instructor_code.local_modules(folder))
        return cells, api, imports

    def _flag_tampering(self, cells, report: GradingReport) -> None:
        student_code = "\n".join(c.source for c in cells if c.kind == "student")
        for pattern, reason in self.patterns:
            match = re.search(pattern, student_code)
            if match:
                report.flag(f"the code {reason} ({match.group(0).strip()!r})")

    def _rerun(self, cells, api, imports, workdir, passed, names: dict, budget: float) -> grader_loop.Verdicts:
        slot = os.environ.get(f"{sandbox.ENV_PREFIX}_SLOT")
        hidden = any(c.hidden for c in cells)
        source = hidden_tests.source_notebook(self.config, names["assignment"], names["notebook"])
        return grader_loop.rerun(
            cells, api, workdir, passed, limits={"memory_mb": self.limits.memory_mb},
            slot=int(slot) if slot else None, cell_timeout=self.limits.cell_timeout,
            notebook_timeout=budget, forbid=GradingPolicy(parent=self).forbidden(names["assignment"]),
            grader_names=hidden_tests.grader_names(self.config, names["assignment"], names["notebook"],
                                                   names.get("student", "")) if hidden else None,
            diagnoser=self._diagnoser(names) if hidden else None,
            given_imports=imports, source_folder=source.parent)

    # -- what it found --------------------------------------------------------

    def _record(self, nb, cells, verdicts: grader_loop.Verdicts, report: GradingReport) -> None:
        """Each verdict as the cell's failure, an event or a flag (see the module's docstring)."""
        hidden_cells = {c.index for c in cells if c.hidden}
        for index, found in sorted(verdicts.diagnoses.items()):
            report.diagnoses.append(Diagnosis(index, grade_id(nb.cells[index]), found))
        for index, reason in sorted(verdicts.failures.items()):
            cell = nb.cells[index]
            if index in verdicts.out_of_time:   # slow, not tampering
                fail(cell, TIME_LIMIT, f"the submission's time budget of {self.limits.notebook_timeout} s (for "
                                       "running the notebook and re-checking its tests) ran out before this "
                                       f"test was re-checked, so it scores 0 ({reason})")
                report.event("budget", "the time budget ran out in the clean re-check", nb, index)
            elif index in verdicts.hidden:      # an honest wrong answer, unless something says otherwise
                fail(cell, HIDDEN_FAILED, reason)
                if index in verdicts.review:
                    report.flag(f"hidden test {grade_id(cell)!r} scored 0 in the re-check, for review: "
                                f"{verdicts.review[index]}")
            else:
                fail(cell, CLEAN_RERUN_FAILED, "this test passed inside the notebook but FAILED when re-run "
                                               f"with your code in a separate, clean process, so it scores 0 ({reason})")
                report.flag(f"test {grade_id(cell)!r} passes only inside the notebook: {reason}"
                            + (f"; {verdicts.review[index]}" if index in verdicts.review else ""))
        for index, why in sorted(verdicts.unverifiable.items()):
            cell = nb.cells[index]
            if index in hidden_cells:   # no result from the notebook to fall back on: zero, and a human looks
                fail(cell, HIDDEN_FAILED, f"the grader could not run this hidden test against your code ({why})")
                report.flag(f"hidden test {grade_id(cell)!r} could not be re-checked: {why}")
            else:                       # the in-notebook result stands; the instructor's report says so
                report.event("not_rechecked", f"not re-checked ({why}); the result in the notebook stands",
                             nb, index)
        report.recheck_seconds = round(verdicts.seconds, 2)
        for index, what in verdicts.events:
            report.event("clean_rerun", what, nb, index)

    # -- the instructor's files -----------------------------------------------

    def _source_code_cells(self, names: dict) -> tuple[list[str], list[str]]:
        """The source notebook's solution cells and given cells (the instructor's code), if it can be read."""
        try:
            nb = nbformat.read(hidden_tests.source_notebook(self.config, names["assignment"], names["notebook"]),
                               as_version=4)
        except (OSError, ValueError):
            return [], []
        code = [cell for cell in nb.cells if cell.cell_type == "code" and not is_skipped(cell)]
        roles = [cell.metadata.get("nbgrader", {}) for cell in code]
        return ([cell.source for cell, info in zip(code, roles) if info.get("solution")],
                [cell.source for cell, info in zip(code, roles)
                 if not any(info.get(role) for role in ("solution", "grade", "locked", "task"))])

    def _diagnoser(self, names: dict):
        """The assignment's catalogue of mistakes (:mod:`course_grader.mistakes`), or None if it has none.

        A catalogue that cannot be used (an edit that no longer fits the solution)
        is logged and left out: a diagnosis is a hint, and never stops grading.
        """
        source = hidden_tests.source_notebook(self.config, names["assignment"], names["notebook"])
        catalogue_file = source.parent / mistakes.CATALOGUE_FILE
        key = tuple((str(path), path.stat().st_mtime_ns if path.is_file() else None)
                    for path in (source, catalogue_file))
        if key not in _DIAGNOSERS:
            try:
                catalogue = mistakes.load_catalogue(source.parent) if source.is_file() else []
                _DIAGNOSERS[key] = mistakes.Diagnoser(source, catalogue) if catalogue else None
            except Exception as error:  # noqa: BLE001 - the instructor's file, not the student's
                self.log.warning(f"{catalogue_file}: not used to name mistakes in the feedback ({error})")
                _DIAGNOSERS[key] = None
        return _DIAGNOSERS[key]


def classify(nb, sources: dict, tests: set, marks: hidden_tests.Delimiters) -> list:
    """The notebook's code cells as :class:`course_grader.recheck.grader_loop.Cell`: test, setup or the student's.

    A cell tagged ``skip-execution`` is left out, as nbclient leaves it out of the notebook's run.

    Instructor cells are trusted only if their source is exactly the
    gradebook's (``sources``: grade id -> the gradebook's source cell).  A test
    cell's hidden regions are found under the course's markers (``marks``),
    the ones it was withheld under.
    """
    cells = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.strip() or is_skipped(cell):
            continue      # a cell the notebook's run skips (nbclient's tag; this course's practice call)
        gid = grade_id(cell)
        source_cell = sources.get(gid)
        if gid in tests and is_test(cell) and source_cell is not None:
            cells.append(grader_loop.Cell(index, "test", source_cell.source, gid,
                                      hidden_tests.withhold(source_cell.source, marks).regions))
        elif (source_cell is not None and source_cell.locked and not utils.is_solution(cell)
              and not utils.is_grade(cell) and cell.source == source_cell.source):
            cells.append(grader_loop.Cell(index, "setup", source_cell.source, gid))
        else:
            failed = any(output.get("output_type") == "error" for output in cell.get("outputs", []))
            cells.append(grader_loop.Cell(index, "student", cell.source, gid or f"cell {index}",
                                          failed_in_notebook=failed))
    return cells


def setup_names(cells) -> set[str]:
    """Every name the setup cells (``grader_loop.Cell`` of kind "setup") bind: defined or imported."""
    names: set[str] = set()
    for cell in cells:
        if cell.kind == "setup":
            defined, imports = instructor_code.top_level_names(cell.source)
            names |= defined | set(imports)
    return names


def assignment_names(solutions, given=(), setup=frozenset(), local=frozenset()) -> tuple[list[str], dict]:
    """``(names, imports)`` of the instructor's solution cells and given cells (ordinary cells).

    ``names``: what they define at top level (functions, classes,
    assignments), whose student's values a test gets; ``imports``: ``{name:
    (module, attribute)}`` of what they import, which the grader imports
    itself.  A name both defined and imported is the student's; so is what a
    solution cell imports from one of the assignment's own modules (``local``,
    :func:`course_grader.instructor_code.local_modules`): the module's state
    is what the student's code made of it (``mark_as_counted(2)``, then a test
    asks ``check_if_counted(2)``).  A name a given cell shares with a setup
    cell (``setup``: names the setup cells define, which run in the grader
    too) stays the setup cell's.
    """
    defined: set[str] = set()
    imports: dict = {}
    for source in solutions:
        cell_defined, cell_imports = instructor_code.top_level_names(source)
        defined |= cell_defined | {name for name, (module, _) in cell_imports.items()
                                   if module.split(".")[0] in local}
        imports.update(cell_imports)
    for source in given:
        cell_defined, cell_imports = instructor_code.top_level_names(source)
        defined |= cell_defined - set(setup)
        imports.update({k: v for k, v in cell_imports.items() if k not in setup})
    return sorted(defined), {name: where for name, where in imports.items() if name not in defined}
