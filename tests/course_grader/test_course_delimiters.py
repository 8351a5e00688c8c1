"""A course that marks its hidden tests with its own delimiters is graded as this course is.

nbgrader lets a course choose the markers of its hidden tests
(``c.ClearHiddenTests.begin_test_delimeter`` and ``end_test_delimeter``, in
nbgrader's spelling).  Here a course sets ``### BEGIN SECRET CHECKS`` /
``### END SECRET CHECKS`` in its own ``nbgrader_config.py`` and grades one
assignment whose test cell has a visible check that a wrong answer passes and
a hidden check that it fails.  The hidden check must be withheld from the
student's kernel AND recognised as hidden in the grader's re-check: the wrong
answer loses the cell's points with a message in the grader's words, is not
flagged as tampering, and its feedback shows nothing of the hidden check (its
source, or the secret input it drew).
"""

import re
from pathlib import Path

import nbformat
import pytest

from grading_support import LIMITS, ROOT

ASSIGNMENT = "secret"
BEGIN, END = "BEGIN SECRET CHECKS", "END SECRET CHECKS"
SOLUTION = "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\n"
VISIBLE = 'assert double(2) == 4, "double(2) should be 4"\n'
HIDDEN = (f"### {BEGIN}\n"
          'x = int(grading_rng("x").integers(10**5, 10**6))\n'
          'assert double(x) == reference.double(x), f"double is wrong on the hidden input {x}"\n'
          f"### {END}\n")
#: text that exists only in the hidden check
HIDDEN_MARKERS = [BEGIN, END, "grading_rng", "reference.double", "{x}"]
STUDENTS = {"honest": "def double(x):\n    return 2 * x\n",
            "wrong": "def double(x):\n    return x + 2\n"}     # right for 2, wrong for any other input


def _notebook(folder: Path, answer: str, test: str):
    cells = [nbformat.v4.new_code_cell(answer, metadata={"nbgrader": {
                 "grade": False, "grade_id": "double", "locked": False, "schema_version": 3,
                 "solution": True, "task": False}}),
             nbformat.v4.new_code_cell(test, metadata={"nbgrader": {
                 "grade": True, "grade_id": "double_test", "locked": True, "points": 2,
                 "schema_version": 3, "solution": False, "task": False}})]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from course_grader import grade

    tmp = tmp_path_factory.mktemp("delimiters")
    # The other course's configuration: this course's pipeline, its own hidden-test markers.
    config_file = tmp / "config" / "nbgrader_config.py"
    config_file.parent.mkdir()
    config_file.write_text((ROOT / "nbgrader_config.py").read_text() +
                           f"\nc.ClearHiddenTests.begin_test_delimeter = {BEGIN!r}\n"
                           f"c.ClearHiddenTests.end_test_delimeter = {END!r}\n")
    source = tmp / "source"
    _notebook(source / ASSIGNMENT, SOLUTION, VISIBLE + HIDDEN)
    inbox = tmp / "inbox"
    for student, answer in STUDENTS.items():
        _notebook(inbox / student, answer, VISIBLE)      # the released test cell: visible part only
    report = grade.grade(inbox, ASSIGNMENT, course_dir=tmp / "course", workers=1, **LIMITS, quiet=True,
                         config_file=config_file, secret_seed="a secret of the other course",
                         source_dir=source, course_id="secret-checks")
    return report, tmp / "course"


def _result(report, student):
    return {r["student"]: r for r in report["results"]}[student]


def _test_cell(course: Path, student: str):
    nb = nbformat.read(course / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "double_test")


def test_the_released_notebook_has_no_hidden_check(graded):
    _, course = graded
    released = (course / ".release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    assert "double(2) == 4" in released
    assert not [marker for marker in HIDDEN_MARKERS if marker in released]


def test_the_honest_student_gets_full_marks_without_a_flag(graded):
    report, _ = graded
    honest = _result(report, "honest")
    assert report["failed"] == 0 and report["graded"] == 2
    assert honest["score"] == honest["max_score"] == 2
    assert honest["flags"] == []


def test_a_wrong_answer_fails_the_hidden_check_in_the_graders_words_and_is_not_flagged(graded):
    report, course = graded
    wrong = _result(report, "wrong")
    assert wrong["score"] == 0
    assert wrong["flags"] == []                     # a wrong answer, not tampering
    errors = [o for o in _test_cell(course, "wrong").outputs if o.output_type == "error"]
    assert [e.ename for e in errors][:1] == ["HiddenTestFailed"]
    # the test's declared description, its field left out; not the raw message with the input in it
    assert "double is wrong on the hidden input …" in errors[0].evalue
    assert not re.search(r"hidden input \d", errors[0].evalue)
    assert "CleanRerunFailed" not in [e.ename for e in errors]


def test_the_feedback_shows_nothing_of_the_hidden_check(graded):
    _, course = graded
    for student in STUDENTS:
        html = (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
        assert "double(2) == 4" in html or "double(2) should be 4" in html   # the visible check is there
        assert not [marker for marker in HIDDEN_MARKERS if marker in html], student
        assert not re.search(r"hidden input \d", html), student
