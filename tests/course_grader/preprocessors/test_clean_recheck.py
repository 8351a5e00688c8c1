"""CleanRecheck, part by part: which cells are whose, what the assignment's names are, what flags a
submission, and how each verdict of the re-check is written.  (Whole submissions through the real
re-check: tests/course_grader/test_recheck.py, test_grading*.py, test_reply_attacks.py.)"""

from types import SimpleNamespace

import pytest
from conftest import SETUP, SOLUTION, TEST, released

from course_grader import cells
from course_grader.hidden_tests import Delimiters, delimiters
from course_grader.preprocessors import TAMPERING_PATTERNS, CleanRecheck
from course_grader.preprocessors.clean_recheck import assignment_names, classify
from course_grader.recheck.grader_loop import Verdicts
from course_grader.report import GradingReport

SOURCES = {"setup": SimpleNamespace(source=SETUP, locked=True, cell_type="code"),
           "answer": SimpleNamespace(source=SOLUTION, locked=False, cell_type="code"),
           "test": SimpleNamespace(source=TEST, locked=True, cell_type="code")}


def test_instructor_cells_are_trusted_only_as_the_gradebook_has_them():
    nb = released()
    nb.cells[1].source = SOLUTION
    nb.cells[2].source = "assert True"          # an edited test: the gradebook's source is what runs
    kinds = classify(nb, SOURCES, {"test"}, delimiters())
    assert [(c.index, c.kind, c.label) for c in kinds] == [(0, "setup", "setup"), (1, "student", "answer"),
                                                           (2, "test", "test")]
    assert kinds[2].source == TEST and kinds[2].hidden == ((2, 4),)
    nb.cells[0].source = SETUP + "\nimport numpy"   # an edited setup cell is the student's code
    assert classify(nb, SOURCES, {"test"}, delimiters())[0].kind == "student"


def test_hidden_regions_are_found_under_the_courses_own_markers():
    source = "assert double(2) == 4\n# <secret>\nassert double(5) == 10\n# </secret>"
    sources = dict(SOURCES, test=SimpleNamespace(source=source, locked=True, cell_type="code"))
    nb = released()
    [test] = [c for c in classify(nb, sources, {"test"}, Delimiters("<secret>", "</secret>")) if c.kind == "test"]
    assert test.hidden == ((2, 4),)
    [test] = [c for c in classify(nb, sources, {"test"}, delimiters()) if c.kind == "test"]
    assert test.hidden == ()                    # nbgrader's default markers are not this course's


def test_the_assignments_names_are_what_the_solution_and_given_cells_define_at_top_level():
    names, imports = assignment_names(
        ["def f(x):\n    y = 1\n    return y", "class Model:\n    pass",
         "SCALE, (a, b) = 2, (3, 4)\nlimit: int = 3\n__all__ = ['f']", "import numpy as np\nfrom math import sqrt",
         "if True:\n    hidden = 1", "this is not Python ("],
        given=["%matplotlib inline\nimport pandas as pd\ndef load():\n    return [1, 2]\ncheck = None"],
        setup={"check", "pd"})
    assert names == ["Model", "SCALE", "a", "b", "f", "limit", "load"]   # not the setup cell's `check`
    assert imports == {"np": ("numpy", None), "sqrt": ("math", "sqrt")}   # the grader imports these itself


def test_what_a_solution_cell_imports_from_the_assignments_own_module_is_the_students(tmp_path):
    """The module's state is what the student's code made of it (cs1302's ``markposition``);
    a library, or the assignment's module imported by a given cell, stays the grader's."""
    from course_grader.instructor_code import local_modules

    (tmp_path / "markposition.py").write_text("_counted = 0\n")
    (tmp_path / "helpers").mkdir()
    (tmp_path / "helpers" / "__init__.py").write_text("")
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "utilities.py").write_text("")
    assert local_modules(tmp_path) == {"markposition", "helpers", "utilities"}
    names, imports = assignment_names(
        ["from markposition import mark_as_counted, check_if_counted\nimport numpy as np", "import helpers.io"],
        given=["from utilities import bounding_box"], local=local_modules(tmp_path))
    assert names == ["check_if_counted", "helpers", "mark_as_counted"]
    assert imports == {"np": ("numpy", None), "bounding_box": ("utilities", "bounding_box")}


TAMPERING = ["np.testing.assert_allclose = lambda *a, **k: None", "numpy.allclose = lambda *a: True",
             "import builtins", "get_ipython().events.register('pre_run_cell', f)", "AssertionError = Exception",
             "os._exit(0)", "open('../../gradebook.db')"]


def test_every_tampering_pattern_is_exercised_here():
    import re
    assert all(any(re.search(pattern, code) for code in TAMPERING) for pattern, _ in TAMPERING_PATTERNS)


@pytest.mark.parametrize("code", TAMPERING)
def test_code_a_solution_has_no_business_holding_flags_the_submission(code):
    report = GradingReport()
    student = [SimpleNamespace(kind="student", source=f"def double(x):\n    return 2 * x\n{code}")]
    CleanRecheck()._flag_tampering(student, report)
    assert report.flags and all(flag.startswith("the code ") for flag in report.flags)


def test_an_honest_solution_is_not_flagged():
    report = GradingReport()
    honest = "import numpy as np\n\ndef double(x):\n    assert np.all(np.isfinite(x))\n    return 2 * np.asarray(x)"
    CleanRecheck()._flag_tampering([SimpleNamespace(kind="student", source=honest)], report)
    assert report.flags == []


def _record(verdicts, hidden=()):
    nb = released()
    test_cells = [SimpleNamespace(index=2, hidden=hidden)]
    recheck = CleanRecheck()
    recheck.limits = SimpleNamespace(notebook_timeout=120)
    report = GradingReport()
    recheck._record(nb, test_cells, verdicts, report)
    return nb.cells[2], report


def _error(cell):
    errors = [o for o in cell.outputs if o.output_type == "error"]
    return (errors[0].ename, errors[0].evalue) if errors else None


def test_a_visible_test_that_fails_only_in_the_recheck_scores_0_and_is_flagged():
    cell, report = _record(Verdicts({2: "AssertionError: 3 != 4"}, []))
    ename, evalue = _error(cell)
    assert ename == cells.CLEAN_RERUN_FAILED and "AssertionError: 3 != 4" in evalue
    assert report.flags == ["test 'test' passes only inside the notebook: AssertionError: 3 != 4"]


def test_a_hidden_failure_is_an_honest_wrong_answer_not_tampering():
    cell, report = _record(Verdicts({2: "AssertionError in a hidden test"}, [], hidden={2}), hidden=((2, 4),))
    assert _error(cell) == (cells.HIDDEN_FAILED, "AssertionError in a hidden test")
    assert report.flags == [] and report.events == []


def test_running_out_of_time_scores_0_without_a_flag():
    cell, report = _record(Verdicts({2: "the budget was spent"}, [], out_of_time={2}))
    ename, evalue = _error(cell)
    assert ename == cells.TIME_LIMIT and "120 s" in evalue
    assert report.flags == [] and [e.kind for e in report.events] == ["budget"]


def test_a_test_the_recheck_cannot_reproduce_keeps_its_notebook_result_unless_it_is_hidden():
    cell, report = _record(Verdicts({}, [], unverifiable={2: "cannot send a socket"}))
    assert _error(cell) is None and report.flags == []
    [event] = report.events
    assert (event.kind, event.grade_id) == ("not_rechecked", "test") and "the result in the notebook stands" in event.message
    cell, report = _record(Verdicts({}, [], unverifiable={2: "cannot send a socket"}), hidden=((2, 4),))
    assert _error(cell)[0] == cells.HIDDEN_FAILED
    assert report.flags == ["hidden test 'test' could not be re-checked: cannot send a socket"]


def test_diagnoses_process_events_and_time_go_into_the_report():
    verdicts = Verdicts({2: "wrong"}, [(1, "died: the process exited")], seconds=1.234, hidden={2},
                        diagnoses={2: ["forgot the scale"]})
    _, report = _record(verdicts, hidden=((2, 4),))
    assert [(d.grade_id, d.mistakes) for d in report.diagnoses] == [("test", ["forgot the scale"])]
    assert [(e.kind, e.grade_id, e.message) for e in report.events] == [
        ("clean_rerun", "answer", "died: the process exited")]
    assert report.recheck_seconds == 1.23


def test_the_setup_cells_names_are_what_they_define_and_import():
    from course_grader.recheck import grader_loop as recheck
    from course_grader.preprocessors.clean_recheck import setup_names

    cells = [recheck.Cell(0, "setup", "import numpy as np\nfrom math import sqrt as root\nX = 1\n"
                                      "def helper():\n    inner = 2\n", "setup"),
             recheck.Cell(1, "student", "def mine(): pass\nY = 2\n", "answer"),
             recheck.Cell(2, "setup", "class Shape: pass\nimport os.path\n", "more setup")]
    assert setup_names(cells) == {"np", "root", "X", "helper", "Shape", "os"}
