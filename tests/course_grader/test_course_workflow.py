"""An instructor grading another course (issue 54): its configuration's paths resolve as nbgrader resolves
them, a failure leaves nothing half-written, and every command the grader prints runs as printed.

The course here is a copy of the corpus's ``py_idioms/history`` in a folder of
its own, with its own ``nbgrader_config.py`` that adds a header notebook by a
relative path (``c.IncludeHeaderFooter.header = "source/header.ipynb"``, which
nbgrader reads relative to the course's root).  The printed commands are run by
``sh -c`` exactly as printed, from an unrelated folder, with a ``PATH`` that
does not hold the grader's environment.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from grading_support import ROOT, run_as_printed
from other_courses_support import COURSES, cell_scores, solution_text

ASSIGNMENT = "history"
#: Limits for honest work: a time limit catches a hang, never slowness (a busy machine is three times slower)
HONEST = ["--cell-timeout", "90", "--notebook-timeout", "600"]


def make_course(folder, header="source/header.ipynb"):
    """The course: its source folder, a header notebook, its own configuration naming the header."""
    shutil.copytree(COURSES / "py_idioms" / "source" / ASSIGNMENT, folder / "source" / ASSIGNMENT)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Course header: demo")]),
                   folder / "source" / "header.ipynb")
    (folder / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'demo'\n"
        f"c.IncludeHeaderFooter.header = {header!r}\n")
    return folder


def answered():
    """The instructor's answers, as a student hands them in."""
    nb = nbformat.read(COURSES / "py_idioms" / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = solution_text(cell.source)
    return nb


def grade_command(course, inbox, course_dir, *extra):
    return [sys.executable, "-m", "course_grader", str(inbox), "--assignment", ASSIGNMENT,
            "--config", str(ROOT / "nbgrader_config.py"), "--source-dir", str(course / "source"),
            "--course-id", "demo", "--course-config", str(course / "nbgrader_config.py"),
            "--course-dir", str(course_dir), "--workers", "2", *extra]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workflow")
    course = make_course(folder / "course")
    inbox = folder / "inbox"
    (inbox / "ada").mkdir(parents=True)
    nbformat.write(answered(), inbox / "ada" / f"{ASSIGNMENT}.ipynb")
    run = subprocess.run(grade_command(course, inbox, folder / "graded", *HONEST), capture_output=True,
                         text=True, timeout=1800)
    return {"folder": folder, "course": course, "run": run, "course_dir": folder / "graded"}


def test_a_relative_header_is_read_from_the_courses_root_as_nbgrader_reads_it(graded):
    assert graded["run"].returncode == 0, graded["run"].stderr[-3000:]
    released = nbformat.read(graded["course_dir"] / ".release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    assert released.cells[0].source == "# Course header: demo"      # nbgrader's generate_assignment added it


def test_it_grades_as_plain_nbgrader_run_in_the_course_grades(graded, tmp_path):
    """nbgrader itself, run in a copy of the course's folder with its own configuration."""
    plain = tmp_path / "plain"
    shutil.copytree(graded["course"], plain)
    nbformat.write(answered(), (plain / "submitted" / "ada" / ASSIGNMENT).mkdir(parents=True) or
                   plain / "submitted" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    for step in (["generate_assignment", ASSIGNMENT, "--force"], ["autograde", ASSIGNMENT, "--force"]):
        done = subprocess.run([sys.executable, "-m", "nbgrader", *step, "--Execute.kernel_name=python3"],
                              cwd=plain, capture_output=True, text=True, timeout=1800)
        assert done.returncode == 0, done.stderr[-3000:]
    ours = cell_scores(graded["course_dir"] / "gradebook.db", ASSIGNMENT, ["ada"])
    assert ours == cell_scores(plain / "gradebook.db", ASSIGNMENT, ["ada"]) and ours["ada"]


def test_the_printed_feedback_command_runs_as_printed_from_anywhere(graded, tmp_path):
    printed = re.search(r"then run `(.+)` \(instructors\.md\)", graded["run"].stdout)
    command = printed.group(1) if printed else None
    report = (graded["course_dir"] / f"grading-{ASSIGNMENT}.json").read_text()
    if command is None:      # nothing to grade by hand: the summary does not print it; the report has it
        import json

        command = json.loads(report)["feedback_command"]
    assert command.split(" && ")[1].startswith(sys.executable) and "nbgrader generate_feedback history" in command
    page = graded["course_dir"] / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    written = page.read_text()
    page.unlink()
    done = run_as_printed(command, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert page.read_text() == written      # the run's configuration: the course's feedback page, as graded
    assert reports_in_feedback(graded["course_dir"]) == []     # nbgrader's own command copies none either


def reports_in_feedback(course_dir) -> list:
    return sorted(p.name for p in (course_dir / "feedback").rglob("*") if p.suffix == ".json")


def test_the_grading_report_stays_the_instructors_and_is_not_in_the_feedback(graded):
    """The report beside each autograded notebook (events, flags, diagnoses) is for the instructor's
    tools; the student's feedback folder holds the page only."""
    assert list((graded["course_dir"] / "autograded" / "ada" / ASSIGNMENT).glob(".grading-report-*.json"))
    assert reports_in_feedback(graded["course_dir"]) == []
    assert (graded["course_dir"] / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()


def test_a_header_that_is_not_there_stops_the_run_before_anything_is_written(tmp_path):
    course = make_course(tmp_path / "course", header="source/no-such-header.ipynb")
    (tmp_path / "inbox").mkdir()
    nbformat.write(answered(), tmp_path / "inbox" / "ada.ipynb")
    done = subprocess.run(grade_command(course, tmp_path / "inbox", tmp_path / "graded"), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "c.IncludeHeaderFooter.header = 'source/no-such-header.ipynb'" in done.stderr
    assert not (tmp_path / "graded").exists()


def test_a_source_nbgrader_cannot_release_leaves_no_half_written_gradebook(tmp_path):
    """The course directory exists (an earlier term's files in it); the run fails as nbgrader prepares the
    assignment: no gradebook, secret or record of this run is left, and the earlier files are untouched."""
    course = make_course(tmp_path / "course")
    source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = nbformat.read(source, as_version=4)
    broken = copy.deepcopy(nb)
    solution = next(c for c in broken.cells if c.metadata.get("nbgrader", {}).get("solution"))
    solution.source = solution.source.replace("### END SOLUTION", "")      # a region never closed
    nbformat.write(broken, source)
    graded = tmp_path / "graded"
    graded.mkdir()
    (graded / "notes.txt").write_text("an earlier term's")
    (tmp_path / "inbox").mkdir()
    nbformat.write(answered(), tmp_path / "inbox" / "ada.ipynb")
    done = subprocess.run(grade_command(course, tmp_path / "inbox", graded), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode != 0
    assert sorted(p.name for p in graded.iterdir()) == ["notes.txt"]


def test_many_students_at_a_time_limit_are_said_first_with_a_command_that_grades_them_again(tmp_path):
    """Three of four students sleep 2 s in a cell of their own under a 1 s limit: the summary opens with
    that, and the command it prints, run as printed, grades them again with longer limits."""
    course = make_course(tmp_path / "course")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for student in ("ann", "bob", "cy", "dee"):
        nb = answered()
        if student != "dee":
            nb.cells.insert(1, nbformat.v4.new_code_cell("import time\ntime.sleep(2)"))
        nbformat.write(nb, inbox / f"{student}.ipynb")
    graded = tmp_path / "graded"
    done = subprocess.run(grade_command(course, inbox, graded, "--cell-timeout", "1", "--notebook-timeout", "200"),
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    opening = done.stdout.strip().split("\n")
    assert opening[0].startswith("3 of 4 students reached a time limit (1 s a cell, 200 s a notebook)"), opening[:3]
    command = opening[1].strip()
    assert "--cell-timeout 3" in command and "--notebook-timeout 600" in command
    again = run_as_printed(command, tmp_path / "inbox")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "reached a time limit" not in again.stdout
    scores = cell_scores(graded / "gradebook.db", ASSIGNMENT, ["ann", "dee"])
    assert scores["ann"] == scores["dee"] and sum(scores["dee"].values()) > 0
