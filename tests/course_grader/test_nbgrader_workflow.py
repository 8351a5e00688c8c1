"""One command, and nbgrader's own commands, on the same course directory.

Submissions arrive as a zip with Canvas-style names; grade.py grades them in
parallel; then plain ``nbgrader autograde`` (serial, nbgrader's own loop) grades
the same course again and must agree; ``generate_feedback``, ``export``,
``db student list`` and ``zip_collect`` work on it as on any nbgrader course.
"""

import csv
import os
import subprocess
import sys
import zipfile

from grading_support import ROOT, cell_scores, edited, solved_notebook, write

from course_grader import cli, nbgrader_patches

A = "a6_position_norm"
NAMES = {"smithjane": "smithjane_1234_5678_a6_position_norm.ipynb",
         "doejohn": "doejohn_2345_6789_a6_position_norm.ipynb"}


def _nbgrader(*args, course):
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "nbgrader"), *args,
                           f"--CourseDirectory.root={course}", "--GradingLimits.cell_timeout=20"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout + done.stderr


def _scores(course, student):
    return cell_scores({"course": course, "assignment": A}, student)


def test_grade_then_standard_nbgrader_commands(tmp_path):
    solved = solved_notebook(A)
    wrong = edited(solved, "layer_norm", "np.sqrt(variance + epsilon)", "np.sqrt(variance)")
    staging = tmp_path / "staging"
    write(solved, staging / NAMES["smithjane"])
    write(wrong, staging / NAMES["doejohn"])
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in staging.iterdir():
            z.write(path, f"submissions/{path.name}")
        z.writestr("__MACOSX/._junk.ipynb", "not a notebook")

    course = tmp_path / "course"
    code = cli.main([str(archive), "--assignment", A, "--course-dir", str(course),
                       "--student-regex", r"(?P<student>[a-z]+)_\d+_\d+_", "--quiet",
                       "--cell-timeout", "20"])
    assert code == 0
    with open(course / f"grades-{A}.csv") as f:
        parallel = {row["student_id"]: float(row["score"]) for row in csv.DictReader(f)}
    assert set(parallel) == set(NAMES) and parallel["smithjane"] == 10.0 and 0 < parallel["doejohn"] < 10
    before = {s: _scores(course, s) for s in NAMES}

    # nbgrader's own autograde, one submission after the other, on the same course directory.
    _nbgrader("autograde", A, "--force", course=course)
    assert {s: _scores(course, s) for s in NAMES} == before

    _nbgrader("generate_feedback", A, "--force", course=course)
    html = (course / "feedback" / "doejohn" / A / f"{A}.html").read_text()
    assert "BEGIN HIDDEN TESTS" not in html and "layer norm" in html

    _nbgrader("export", f"--to={course / 'export.csv'}", course=course)
    with open(course / "export.csv") as f:
        exported = {row["student_id"]: float(row["score"]) for row in csv.DictReader(f)}
    assert exported == parallel

    assert "smithjane" in _nbgrader("db", "student", "list", course=course)

    # zip_collect, nbgrader's importer for LMS downloads, fills submitted/ the usual way.
    downloaded = course / "downloaded" / A / "archive"
    downloaded.mkdir(parents=True)
    (downloaded / "export.zip").write_bytes(archive.read_bytes())
    _nbgrader("zip_collect", A, "--force",
              r"--FileNameCollector.named_regexp=.*/(?P<student_id>[a-z]+)_\d+_\d+_(?P<file_id>a6_position_norm\.ipynb)",
              course=course)
    assert (course / "submitted" / "smithjane" / A / f"{A}.ipynb").exists()


def test_the_gradebook_schema_version_read_in_process_is_nbgraders():
    assert nbgrader_patches.alembic_head() == nbgrader_patches.nbgraders_alembic_head()
