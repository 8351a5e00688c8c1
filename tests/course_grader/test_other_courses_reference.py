"""The reference of tests/course_grader/test_other_courses.py, plain ``nbgrader autograde``, is the
machine's to fail only where no cell ran: a kernel that died before it started is started again,
and one that never starts is reported with what it wrote on its way out."""

import json
import shutil
import sys

import pytest

from other_courses_support import ASSIGNMENTS, _plain_config, _plain_student, students, write_student

COURSE, ASSIGNMENT = "py_idioms", "objects"

#: a kernel that dies at its first start in a folder (or at every start), then starts as python3 does
DIES_FIRST = """
import os, sys
marker = os.environ["DYING_KERNEL_MARKER"]
if os.environ["DYING_KERNEL_ALWAYS"] == "1" or not os.path.exists(marker):
    open(marker, "w").close()
    sys.stderr.write("this kernel dies on purpose before it starts\\n")
    os._exit(1)
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""


@pytest.fixture
def dying_kernel(tmp_path, monkeypatch):
    spec = tmp_path / "jupyter" / "kernels" / "dies_first"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-c", DIES_FIRST, "-f", "{connection_file}"],
        "display_name": "dies first", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("DYING_KERNEL_MARKER", str(tmp_path / "died-once"))
    return tmp_path


def _course_with_the_correct_student(folder):
    from course_grader.nbgrader_api import make_api

    api = make_api(_plain_config(COURSE, ASSIGNMENT), folder)
    assert api.generate_assignment(ASSIGNMENT, force=True, create=True)["success"]
    correct = students(COURSE, ASSIGNMENT, folder / "release" / ASSIGNMENT)["correct"]
    write_student(folder / "submitted" / "correct" / ASSIGNMENT, correct)
    return folder


def test_a_kernel_that_died_before_it_started_is_started_again(dying_kernel, monkeypatch):
    assert (COURSE, ASSIGNMENT) in ASSIGNMENTS
    monkeypatch.setenv("DYING_KERNEL_ALWAYS", "0")
    course = _course_with_the_correct_student(dying_kernel / "course")
    outcome = _plain_student(COURSE, ASSIGNMENT, str(course), "correct", kernel_name="dies_first")
    assert outcome["success"] and outcome["attempts"] == 2, outcome["error"]


def test_a_kernel_that_never_starts_is_reported_with_its_own_words(dying_kernel, monkeypatch):
    monkeypatch.setenv("DYING_KERNEL_ALWAYS", "1")
    course = _course_with_the_correct_student(dying_kernel / "course")
    outcome = _plain_student(COURSE, ASSIGNMENT, str(course), "correct", tries=2, kernel_name="dies_first")
    assert not outcome["success"] and outcome["attempts"] == 2
    assert "Kernel died before replying to kernel_info" in outcome["error"]
    assert "this kernel dies on purpose before it starts" in outcome["error"]
    shutil.rmtree(course)
