"""What the instructor reads after a run: the summary, the grades CSV, the command to run next.

nbgrader's documentation example ``ps1`` has 3 autograded points and 10 points
graded by hand (written answers, a coding free-response, a task).  Until
someone grades those by hand, ``score`` counts them as 0: the summary and the
CSV say how many points still await a hand grade, the same way for every
student (blank, waiting, hand-graded), and the summary prints the
``generate_feedback`` command that works for this course directory.
A mistyped assignment or submissions path stops the command before it writes
anything.
"""

import contextlib
import csv
import io
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import nbgrader
import pytest

from grading_support import LIMITS, ROOT, run_as_printed

DOCS = Path(nbgrader.__file__).parent / "docs" / "source" / "user_guide"
HAND_GRADED = 10.0          # ps1: 1 + 2 + 4 (problem1) + 1 + 2 (problem2)
AUTOGRADED = 3.0
TASK = 4.0                  # problem1's task cell: nbgrader never autogrades one


def _run(tmp: Path, inbox: Path) -> tuple[int, str]:
    """The command on ``inbox`` into ``tmp/course``, as an instructor types it; its exit code and summary."""
    from course_grader import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main([str(inbox), "--assignment", "ps1", "--course-dir", str(tmp / "course"),
                         "--config", str(ROOT / "nbgrader_config.py"), "--source-dir", str(tmp / "source"),
                         "--course-id", "example", "--workers", "2",
                         "--cell-timeout", str(LIMITS["cell_timeout"])])
    return code, out.getvalue()


def _csv(tmp: Path) -> list[dict]:
    with open(tmp / "course" / "grades-ps1.csv", newline="") as f:
        return list(csv.DictReader(f))


def _line(out: str, student: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(f"  {student} "))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ps1-hand")
    shutil.copytree(DOCS / "source" / "ps1", tmp / "source" / "ps1")
    inbox = tmp / "inbox"
    # "zed" before "blank" in the gradebook's own order of creation: the CSV is sorted anyway
    for student, folder in (("zed", DOCS / "source" / "ps1"), ("blank", DOCS / "release" / "ps1")):
        shutil.copytree(folder, inbox / student, ignore=shutil.ignore_patterns("timestamp.txt"))
    return tmp, inbox


@pytest.fixture(scope="module")
def first_run(course):
    tmp, inbox = course
    code, out = _run(tmp, inbox)
    return code, out, _csv(tmp)


def test_the_summary_and_csv_say_which_points_await_a_hand_grade(first_run):
    code, out, rows = first_run
    assert code == 0
    # every point in max_score; the ones awaiting a hand grade said beside it, in one format for all
    assert f"{AUTOGRADED:5.1f} / {AUTOGRADED + HAND_GRADED:4.1f}  graded  ({HAND_GRADED:g} of the points still " \
           "to grade by hand)" in _line(out, "zed")
    # nbgrader scores unchanged written answers 0 itself; its task cell (4 points) awaits a hand grade
    blank, graded_from = _line(out, "blank").split("  from ")
    assert blank.split() == ["blank", "0.0", "/", "13.0", "graded", "(4", "of", "the", "points",
                             "still", "to", "grade", "by", "hand)"]
    assert graded_from.split("; ") == ["blank/problem1.ipynb", "blank/problem2.ipynb"]   # by their paths
    assert "autograded" not in out.split("time:")[0]
    assert [row["student_id"] for row in rows] == ["blank", "zed"]                  # sorted by student
    by_student = {row["student_id"]: row for row in rows}
    assert float(by_student["zed"]["to_grade_by_hand"]) == HAND_GRADED
    assert float(by_student["zed"]["score"]) == AUTOGRADED and float(by_student["zed"]["max_score"]) == 13.0
    assert float(by_student["blank"]["to_grade_by_hand"]) == TASK


def test_the_printed_feedback_command_works_after_a_course_dir_run(course, first_run, tmp_path):
    """The summary's ``nbgrader generate_feedback`` command, run exactly as printed from another folder
    with no environment activated, regenerates the feedback of this run's course directory."""
    tmp, _ = course
    _, out, _ = first_run
    printed = next(line for line in out.splitlines() if "nbgrader generate_feedback" in line)
    command = printed.split("`")[1]
    assert shlex.split(command)[-4:] == ["nbgrader", "generate_feedback", "ps1", "--force"]
    page = tmp / "course" / "feedback" / "zed" / "ps1" / "problem1.html"
    page.unlink()
    done = run_as_printed(command, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert page.is_file()


def test_the_summary_stays_right_once_hand_grades_exist(course, first_run):
    """Hand grades entered (as the formgrader does), then the command run again: every point is
    in the score, nothing is left to grade by hand, and the format is the same."""
    from nbgrader.api import Gradebook

    tmp, inbox = course
    with Gradebook(f"sqlite:///{tmp / 'course' / 'gradebook.db'}", "example") as gb:
        for nb in gb.find_submission("ps1", "zed").notebooks:
            for grade in nb.grades:
                if grade.auto_score is None:
                    grade.manual_score, grade.needs_manual_grade = grade.max_score, False
        gb.db.commit()
    code, out = _run(tmp, inbox)
    assert code == 0
    assert _line(out, "zed").split("  from ")[0].split() == ["zed", "13.0", "/", "13.0", "graded"]
    assert f"{TASK:g} points in all are still to grade by hand" in out          # the blank's task, no more
    rows = {row["student_id"]: row for row in _csv(tmp)}
    assert float(rows["zed"]["score"]) == 13.0 and float(rows["zed"]["to_grade_by_hand"]) == 0.0


# A wrong command line changes nothing: no course directory, no secret.

def _files(folder: Path) -> list:
    return sorted(p.relative_to(folder) for p in folder.rglob("*")) if folder.exists() else []


@pytest.mark.parametrize("mistake", ["assignment", "missing zip", "not a zip", "no notebooks",
                                     "no student matches"])
def test_a_wrong_assignment_or_folder_writes_nothing(tmp_path, mistake):
    from course_grader import cli

    shutil.copytree(DOCS / "source" / "ps1", tmp_path / "source" / "ps1")
    inbox = tmp_path / "inbox"
    shutil.copytree(DOCS / "submitted" / "bitdiddle" / "ps1", inbox / "bitdiddle")
    assignment, extra = "ps1", []
    if mistake == "assignment":
        assignment = "ps2"
    elif mistake == "missing zip":
        inbox = tmp_path / "export.zip"
    elif mistake == "not a zip":
        inbox = tmp_path / "export.zip"
        inbox.write_text("not a zip")
    elif mistake == "no notebooks":
        inbox = tmp_path / "empty"
        (inbox / "alice").mkdir(parents=True)
        (inbox / "alice" / "notes.txt").write_text("no notebook here")
    else:
        extra = ["--student-regex", r"^(?P<student>\d+)_"]
    course = tmp_path / "courses" / "course"
    for existing in (False, True):
        if existing:
            course.mkdir(parents=True)
        before = _files(tmp_path)
        with pytest.raises(SystemExit) as stopped:
            cli.main([str(inbox), "--assignment", assignment, "--course-dir", str(course),
                      "--config", str(ROOT / "nbgrader_config.py"), "--source-dir", str(tmp_path / "source"),
                      "--quiet", *extra])
        assert stopped.value.code not in (0, None)
        assert _files(tmp_path) == before, mistake
        assert (tmp_path / "courses").exists() == existing


# `python -m course_grader --help` answers at once, under its own name.

def test_help_names_the_command_and_imports_nothing_heavy():
    program = ("import sys\nfrom course_grader import cli\ntry:\n    cli.main(['--help'])\nexcept SystemExit:\n"
               "    pass\nprint('HEAVY', sorted(m for m in ('nbformat', 'nbgrader', 'nbconvert', 'jsonschema', "
               "'psutil', 'traitlets', 'jupyter_client') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m course_grader ")
    assert "HEAVY []" in done.stdout
    done = subprocess.run([sys.executable, "-m", "course_grader", "merge", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m course_grader merge ")
