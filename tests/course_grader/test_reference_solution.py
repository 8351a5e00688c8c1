"""The hidden tests' ``reference``: the source notebook run as a notebook runs, built only when a test uses it,
and a notebook that cannot be run here makes its tests "not re-checked", never a student's zero."""

import nbformat
import pytest

from course_grader import hidden_tests
from course_grader.hidden_tests import ReferenceUnavailable, reference_solution
from course_grader.recheck.grader_loop import Cell, rerun


def _source(tmp_path, *cells):
    folder = tmp_path / "source" / "hw"
    folder.mkdir(parents=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src, metadata={"nbgrader": info})
                                         for src, info in cells])
    path = folder / "hw.ipynb"
    nbformat.write(nb, path)
    return path


def test_the_reference_runs_magics_and_the_assignments_own_modules(tmp_path):
    path = _source(tmp_path,
                   ("%%html\n<iframe src='https://example.org/lecture'></iframe>", {}),
                   ("%matplotlib inline\nfrom hw_helpers_for_test import scale", {"locked": True, "grade_id": "s"}),
                   ("def double(x):\n    return scale * x", {"solution": True, "grade_id": "a"}),
                   ("assert double(1) == 2", {"grade": True, "grade_id": "t", "points": 1}))
    (path.parent / "hw_helpers_for_test.py").write_text("scale = 2\n")
    assert reference_solution(path).double(21) == 42


def test_a_source_notebook_that_cannot_run_here_says_why_when_used(tmp_path):
    path = _source(tmp_path, ("import module_that_is_nowhere", {"locked": True, "grade_id": "s"}))
    reference = reference_solution(path)
    with pytest.raises(ReferenceUnavailable, match="could not be run in the grader: ModuleNotFoundError"):
        reference.double


def test_the_reference_is_built_only_for_a_test_that_uses_it(tmp_path, monkeypatch):
    built = []
    monkeypatch.setattr(hidden_tests, "reference_solution", lambda source: built.append(source) or "ref")
    monkeypatch.setattr(hidden_tests.HiddenTests, "course_secret", lambda self, root: "secret")
    names_for = hidden_tests.grader_names(None, "hw", "hw", "alice")
    assert set(names_for(Cell(0, "test", "assert f(grading_rng().integers(5)) >= 0", "t"))) == {"grading_rng"}
    assert built == []
    assert names_for(Cell(1, "test", "assert f(2) == reference.f(2)", "u"))["reference"] == "ref"
    assert len(built) == 1


def test_a_hidden_test_whose_reference_is_unavailable_is_not_rechecked_rather_than_failed(tmp_path):
    missing = reference_solution(tmp_path / "nowhere.ipynb")
    cells = [Cell(0, "student", "def f(x):\n    return x"),
             Cell(1, "test", "### BEGIN HIDDEN TESTS\nassert f(2) == reference.f(2)\n### END HIDDEN TESTS", "t",
                  hidden=((1, 3),))]
    result = rerun(cells, ["f"], str(tmp_path), {1}, cell_timeout=10, notebook_timeout=60,
                   grader_names=lambda cell: {"reference": missing})
    assert 1 in result.unverifiable and "source notebook" in result.unverifiable[1]
    assert result.failures == {}
