"""Every cell the instructor wrote runs as the instructor wrote it; only the answers are the student's.

A submission holds all of its cells' metadata.  Whatever of it decides whether
or how a cell runs, or how it is scored (nbclient's ``skip-execution`` and
``raises-exception`` tags, nbgrader's ``grade``/``solution``/``task`` flags, the
cell's type, the notebook's kernel), comes from the instructor's source
notebook and the gradebook; a tag is honoured exactly where the instructor put
it (this course's own practice cell is tagged ``skip-execution``); and a test
cell that did not run scores 0, never its points.

The same rules on whole submissions of assignment 1 (a blank notebook whose
tests are tagged ``skip-execution`` scored 10/10) are graded, with practice
feedback beside them, in ``test_practice_agrees_with_grading.py``.
"""

import copy
from pathlib import Path

import nbformat
import pytest

from grading_support import LIMITS, ROOT

from course_grader import instructor_cells
from course_grader.cells import NOT_RUN, SKIP_TAG, has_error

RELEASED = {
    "setup": {"cell_type": "code", "nbgrader": {"grade": False, "grade_id": "setup", "locked": True,
                                                 "schema_version": 3, "solution": False, "task": False}},
    "answer": {"cell_type": "code", "nbgrader": {"grade": False, "grade_id": "answer", "locked": False,
                                                  "schema_version": 3, "solution": True, "task": False}},
    "test": {"cell_type": "code", "nbgrader": {"grade": True, "grade_id": "test", "locked": True, "points": 2,
                                                "schema_version": 3, "solution": False, "task": False}},
}


def _cell(grade_id, source="x = 1", cell_type="code", **metadata):
    info = dict(RELEASED[grade_id]["nbgrader"]) if grade_id in RELEASED else None
    make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
    return make(source, metadata={**({"nbgrader": info} if info else {}), **metadata})


def _source():
    nb = nbformat.v4.new_notebook(cells=[
        _cell("setup", "import math"), _cell("answer", "def f():\n    return 1", tags=["mine-to-keep"]),
        _cell("test", "assert f() == 1", tags=["instructors-tag"])],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                  "celltoolbar": "Create Assignment"})
    return nb


def test_tags_types_and_flags_come_from_the_instructor_and_the_answer_from_the_student():
    nb = _source()
    nb.cells[1].source = "def f():\n    return 42"               # the student's answer
    nb.cells[1].metadata["tags"] = [SKIP_TAG]
    nb.cells[2].metadata["tags"] = [SKIP_TAG, "raises-exception"]
    nb.cells[2].metadata["nbgrader"]["solution"] = True           # a test that claims to be an answer
    nb.cells[2].metadata["execution"] = {"iopub.status.busy": "2026-01-01"}
    nb.cells.append(nbformat.v4.new_code_cell("print('mine')", metadata={"tags": [SKIP_TAG]}))   # the student's own
    done = instructor_cells.restore(nb, RELEASED, _source())
    answer, test, own = nb.cells[1], nb.cells[2], nb.cells[3]
    assert answer.source == "def f():\n    return 42" and answer.metadata["tags"] == ["mine-to-keep"]
    assert test.metadata["tags"] == ["instructors-tag"] and "execution" not in test.metadata
    assert test.metadata["nbgrader"] == RELEASED["test"]["nbgrader"]
    assert own.metadata["tags"] == [SKIP_TAG]                     # not the instructor's: as handed in
    flag = done.flag()
    for said in ("answer: tag 'skip-execution' added", "test: tag 'raises-exception' added",
                 "test: nbgrader 'solution' set to True"):
        assert said in flag, flag
    assert "metadata 'execution'" not in flag                      # editors write timings: no flag


def test_what_editors_change_is_restored_without_a_flag():
    nb = _source()
    for cell in nb.cells:
        cell.metadata["execution"] = {"iopub.execute_input": "2026-01-01T10:00:00"}
        cell.metadata["collapsed"] = True
    done = instructor_cells.restore(nb, RELEASED, _source())
    assert done.changed == ["setup", "answer", "test"] and done.flag() == ""
    assert all("execution" not in cell.metadata and "collapsed" not in cell.metadata for cell in nb.cells)


def test_a_test_s_cell_type_is_the_instructors():
    nb = _source()
    nb.cells[2].cell_type = "markdown"
    del nb.cells[2]["outputs"], nb.cells[2]["execution_count"]
    instructor_cells.restore(nb, RELEASED, _source())
    assert nb.cells[2].cell_type == "code" and nb.cells[2].outputs == [] and nb.cells[2].execution_count is None


def test_of_two_copies_of_a_test_the_first_is_the_instructors():
    nb = _source()
    nb.cells.insert(1, copy.deepcopy(_source().cells[2]))       # the test twice (nbgrader adds one back)
    instructor_cells.restore(nb, RELEASED, _source())
    ids = [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells]
    assert ids == ["setup", "test", "answer", None]                # one test; the other copy is the student's


def test_the_notebook_s_metadata_is_the_source_s_with_the_graders_own_kept():
    from course_grader import report

    nb = _source()
    nb.metadata = {"kernelspec": {"name": "ir", "display_name": "R", "language": "R"},
                   "language_info": {"name": "R"}, "widgets": {"state": {"x": 1}}}
    report.note_for_review(nb, "a note of the sanitizing pass")
    instructor_cells.restore(nb, RELEASED, _source())
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert "widgets" not in nb.metadata and "language_info" not in nb.metadata and "celltoolbar" not in nb.metadata
    assert report.take_notes_for_review(nb) == ["a note of the sanitizing pass"]


def test_without_the_source_notebook_an_instructor_cell_loses_what_decides_execution():
    nb = _source()
    nb.cells[2].metadata["tags"] = [SKIP_TAG, "raises-exception", "kept"]
    nb.cells[2].metadata["nbgrader"]["grade"] = False
    instructor_cells.restore(nb, RELEASED, None)
    assert nb.cells[2].metadata["tags"] == ["kept"] and nb.cells[2].metadata["nbgrader"]["grade"] is True


def test_a_test_that_nothing_runs_fails_and_one_that_ran_or_failed_keeps_its_result():
    nb = _source()
    nb.cells[2].metadata["tags"] = [SKIP_TAG]                       # the instructor's tag: nothing runs it
    nb.cells.append(_cell("test", "assert True", tags=[SKIP_TAG]))
    nb.cells[3].outputs = [nbformat.v4.new_output("error", ename="AssertionError", evalue="", traceback=[])]
    nb.cells.append(_cell("test", "### BEGIN HIDDEN TESTS\nassert f() == 1\n### END HIDDEN TESTS"))
    nb.cells[1].metadata["tags"] = [SKIP_TAG]                       # an answer: not a test
    assert instructor_cells.tests_not_run(nb) == [2, 3]             # an all-hidden test runs in the re-check
    failed = instructor_cells.fail_tests_not_run(nb, [2, 3], why_not="not run")
    assert failed == [2] and has_error(nb.cells[2], NOT_RUN) and not has_error(nb.cells[3], NOT_RUN)
    assert not has_error(nb.cells[4], NOT_RUN) and not has_error(nb.cells[1], NOT_RUN)


# -- a whole course: the instructor tags a test cell skip-execution ------------------------------

def _course_notebook(folder: Path, answer: str, *, skip_by_instructor: bool, skip_by_student: bool = False):
    def meta(grade_id, tags=(), **flags):
        info = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": False,
                "task": False, **flags}
        return {"nbgrader": info, **({"tags": list(tags)} if tags else {})}

    cells = [nbformat.v4.new_code_cell(answer, metadata=meta("answer", solution=True)),
             nbformat.v4.new_code_cell("assert double(2) == 4", metadata=meta(
                 "runs", tags=[SKIP_TAG] if skip_by_student else [], grade=True, locked=True, points=1)),
             nbformat.v4.new_code_cell("assert double(3) == 6", metadata=meta(
                 "skipped", tags=[SKIP_TAG] if skip_by_instructor else [], grade=True, locked=True, points=1))]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "tagged.ipynb")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from course_grader import grade

    tmp = tmp_path_factory.mktemp("tagged")
    _course_notebook(tmp / "source" / "tagged", "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
                                                "    ### END SOLUTION\n", skip_by_instructor=True)
    _course_notebook(tmp / "inbox" / "honest", "def double(x):\n    return 2 * x\n", skip_by_instructor=True)
    _course_notebook(tmp / "inbox" / "untagger", "def double(x):\n    return 2 * x\n", skip_by_instructor=False)
    _course_notebook(tmp / "inbox" / "tagger", "def double(x):\n    return 3 * x\n", skip_by_instructor=True,
                     skip_by_student=True)
    report = grade.grade(tmp / "inbox", "tagged", course_dir=tmp / "course", workers=2, **LIMITS, quiet=True,
                         config_file=ROOT / "nbgrader_config.py",
                         source_dir=tmp / "source", course_id="tagged")
    return {r["student"]: r for r in report["results"]}, tmp / "course"


def _scores(course: Path, student: str) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {g.name: g.score for nb in gb.find_submission("tagged", student).notebooks for g in nb.grades}


def test_a_test_the_instructor_tagged_does_not_run_and_scores_zero(graded):
    results, course = graded
    for student in ("honest", "untagger"):     # removing the instructor's tag changes nothing
        assert _scores(course, student) == {"runs": 1.0, "skipped": 0.0}, student
    nb = nbformat.read(course / "autograded" / "honest" / "tagged" / "tagged.ipynb", as_version=4)
    skipped = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "skipped")
    assert has_error(skipped, NOT_RUN) and "does not run never passes" in skipped.outputs[0].evalue
    assert results["honest"]["flags"] == []
    assert any("skipped: tag 'skip-execution' removed" in flag for flag in results["untagger"]["flags"])


def test_a_test_the_student_tagged_runs_and_the_submission_is_flagged(graded):
    results, course = graded
    assert _scores(course, "tagger") == {"runs": 0.0, "skipped": 0.0}     # it ran, and 3 * 2 is not 4
    assert any("runs: tag 'skip-execution' added" in flag for flag in results["tagger"]["flags"])
