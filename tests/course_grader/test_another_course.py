"""Another course's assignment: nbgrader's own documentation example, ``ps1``, graded by the command.

``ps1`` ships with the pinned nbgrader (``nbgrader/docs/source/user_guide``,
BSD-3-Clause, see nbgrader's LICENSE): two notebooks and an image, autograded
tests (one deletes a name the student defined), and cells graded by hand.  It is
graded here as one assignment from its own source folder (``--source-dir``),
and every cell's score is compared with plain ``nbgrader autograde`` under
nbgrader's own default configuration: for the instructor's solution, the
released (blank) notebooks, and the two students of nbgrader's documentation.
"""

import shutil
from pathlib import Path

import nbgrader
import pytest

from grading_support import LIMITS, ROOT

DOCS = Path(nbgrader.__file__).parent / "docs" / "source" / "user_guide"
STUDENTS = {"solution": DOCS / "source" / "ps1", "blank": DOCS / "release" / "ps1",
            "bitdiddle": DOCS / "submitted" / "bitdiddle" / "ps1", "hacker": DOCS / "submitted" / "hacker" / "ps1"}


def _scores(db: Path) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db}") as gb:
        return {student: {(nb.name, g.name): g.score for nb in gb.find_submission("ps1", student).notebooks
                          for g in nb.grades}
                for student in STUDENTS}


def _plain_nbgrader(tmp: Path, source: Path) -> dict:
    """nbgrader's own autograde, default configuration, the notebooks' own kernel."""
    from traitlets.config import Config

    from course_grader.nbgrader_api import make_api

    root = tmp / "plain"
    config = Config()
    config.CourseDirectory.source_directory = str(source)
    config.CourseDirectory.course_id = "example"
    api = make_api(config, root)          # nbgrader's API, nothing of this course's configuration
    outcome = api.generate_assignment("ps1", force=True, create=True)
    assert outcome["success"], outcome["log"] + str(outcome.get("error"))
    for student, folder in STUDENTS.items():
        shutil.copytree(folder, root / "submitted" / student / "ps1", ignore=shutil.ignore_patterns("timestamp.txt"))
        assert api.autograde("ps1", student, force=True, create=True)["success"], student
    return _scores(root / "gradebook.db")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from course_grader import grade

    tmp = tmp_path_factory.mktemp("ps1")
    source = tmp / "source"
    shutil.copytree(DOCS / "source" / "ps1", source / "ps1")
    inbox = tmp / "inbox"
    for student, folder in STUDENTS.items():
        shutil.copytree(folder, inbox / student, ignore=shutil.ignore_patterns("timestamp.txt"))
    report = grade.grade(inbox, "ps1", course_dir=tmp / "course", workers=2, **LIMITS, quiet=True,
                         config_file=ROOT / "nbgrader_config.py",
                         source_dir=source, course_id="example")
    return report, _scores(tmp / "course" / "gradebook.db"), _plain_nbgrader(tmp, source)


def test_every_cell_scores_as_plain_nbgrader_scores_it(graded):
    report, ours, plain = graded
    assert report["failed"] == 0 and report["graded"] == len(STUDENTS)
    for student in STUDENTS:
        assert ours[student] == plain[student], student
    assert {notebook for notebook, _ in ours["solution"]} == {"problem1", "problem2"}


def test_the_correct_submission_is_not_flagged_and_keeps_every_autograded_point(graded):
    report, ours, _ = graded
    by_student = {r["student"]: r for r in report["results"]}
    assert by_student["solution"]["flags"] == []
    assert ours["solution"][("problem1", "sum_of_squares_uses_squares")] == 0.5   # `del squares` in the test
    assert by_student["solution"]["score"] == by_student["solution"]["max_score"] - by_student["solution"]["manual_points"]
    assert by_student["solution"]["manual_points"] > 0                           # cells graded by hand


def test_each_notebook_gets_its_feedback_and_the_image_travels_with_them(graded):
    report, _, _ = graded
    course = Path(report["course_dir"])
    for student in STUDENTS:
        for name in ("problem1", "problem2"):
            assert (course / "feedback" / student / "ps1" / f"{name}.html").exists()
        assert (course / "submitted" / student / "ps1" / "jupyter.png").exists()


def test_a_flat_export_of_several_notebooks_per_student(tmp_path, graded):
    """``alice_problem1.ipynb``, ``alice_problem2.ipynb`` in one folder, read with --student-regex:
    each file is the notebook its name ends with, and the scores are those of the folder layout."""
    from course_grader import grade

    _, ours, _ = graded
    source = tmp_path / "source"
    shutil.copytree(DOCS / "source" / "ps1", source / "ps1")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for student in ("solution", "bitdiddle"):
        for name in ("problem1", "problem2"):
            shutil.copy(STUDENTS[student] / f"{name}.ipynb", inbox / f"{student}_{name}.ipynb")
    report = grade.grade(inbox, "ps1", course_dir=tmp_path / "course", workers=2, **LIMITS, quiet=True,
                         student_regex=r"^(?P<student>[^_]+)_", config_file=ROOT / "nbgrader_config.py",
                         source_dir=source, course_id="example")
    assert sorted(r["student"] for r in report["results"]) == ["bitdiddle", "solution"]
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{tmp_path / 'course' / 'gradebook.db'}") as gb:
        for student in ("solution", "bitdiddle"):
            scores = {(nb.name, g.name): g.score for nb in gb.find_submission("ps1", student).notebooks
                      for g in nb.grades}
            assert scores == ours[student], student


def _style_assignment(folder: Path, which: int):
    """An nbgrader source notebook with one solution cell and one test cell per ordinary test style
    (test_recheck.STYLES); ``which`` 0 writes the correct answers, 1 the wrong ones."""
    import nbformat

    from test_recheck import STYLES

    cells = []
    for style, (correct, wrong, test, _) in sorted(STYLES.items()):
        cells.append(nbformat.v4.new_code_cell((correct, wrong)[which], metadata={"nbgrader": {
            "grade": False, "grade_id": f"{style}_answer", "locked": False, "schema_version": 3,
            "solution": True, "task": False}}))
        cells.append(nbformat.v4.new_code_cell(test, metadata={"nbgrader": {
            "grade": True, "grade_id": f"{style}_test", "locked": True, "points": 1, "schema_version": 3,
            "solution": False, "task": False}}))
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "styles.ipynb")


def test_ordinary_test_styles_score_as_plain_nbgrader_and_flag_no_one_honest(tmp_path):
    """The style suite as an assignment: correct answers keep every point without a flag, wrong
    answers score what plain nbgrader gives them."""
    from nbgrader.api import Gradebook
    from traitlets.config import Config

    from course_grader import grade
    from course_grader.nbgrader_api import make_api

    source = tmp_path / "source"
    _style_assignment(source / "styles", 0)
    inbox = tmp_path / "inbox"
    _style_assignment(inbox / "honest", 0)
    _style_assignment(inbox / "wrong", 1)
    report = grade.grade(inbox, "styles", course_dir=tmp_path / "course", workers=2, **LIMITS, quiet=True,
                         config_file=ROOT / "nbgrader_config.py", source_dir=source)
    config = Config()
    config.CourseDirectory.source_directory = str(source)
    plain = make_api(config, tmp_path / "plain")
    assert plain.generate_assignment("styles", force=True, create=True)["success"]
    scores = {}
    for student in ("honest", "wrong"):
        shutil.copytree(inbox / student, tmp_path / "plain" / "submitted" / student / "styles")
        assert plain.autograde("styles", student, force=True, create=True)["success"]
    for name, db in (("ours", tmp_path / "course" / "gradebook.db"), ("plain", tmp_path / "plain" / "gradebook.db")):
        with Gradebook(f"sqlite:///{db}") as gb:
            scores[name] = {s: {g.name: g.score for nb in gb.find_submission("styles", s).notebooks
                                for g in nb.grades} for s in ("honest", "wrong")}
    assert scores["ours"] == scores["plain"]
    assert set(scores["ours"]["honest"].values()) == {1.0} and set(scores["ours"]["wrong"].values()) == {0.0}
    by_student = {r["student"]: r for r in report["results"]}
    assert by_student["honest"]["flags"] == [] and by_student["honest"]["events"] == []
