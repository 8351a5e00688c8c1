"""course_grader is a package of its own: installed, independent of the course's code, one command."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import course_grader
from grading_support import ROOT

PACKAGE = Path(course_grader.__file__).resolve().parent


def _imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_grader_imports_neither_the_course_package_nor_the_authoring_tools():
    for path in PACKAGE.rglob("*.py"):
        assert not _imported_modules(path) & {"attention_course", "course_authoring"}, path.name
    # ... and needs no path tricks to be found (the folders it puts on sys.path are an assignment's)
    for path in PACKAGE.rglob("*.py"):
        assert not re.search(r"sys\.path\.(insert|append)\([^)]*__file__", path.read_text()), path.name


def test_the_sandboxed_program_is_the_protocol_then_the_child():
    from course_grader.recheck import transport as student_process

    source = student_process.child_source()
    ast.parse(source)   # one program: the protocol's __future__ import comes first
    assert source.index("def pack(") < source.index("def serve(")


def test_the_command_runs_from_the_course_folder_and_says_what_is_missing_elsewhere(tmp_path):
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-m", "course_grader", "--help"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "--assignment" in done.stdout and "--course-dir" in done.stdout
    (tmp_path / "inbox").mkdir()
    done = subprocess.run([sys.executable, "-m", "course_grader", str(tmp_path / "inbox"),
                           "--assignment", "a1_softmax_additive"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "no nbgrader configuration" in done.stderr and "--config" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["inbox"]   # nothing written before the configuration is found


def test_strict_mode_and_an_unknown_assignment_are_one_line_not_a_traceback(tmp_path):
    """The command's refusals say what is missing, and how to fix it, without a traceback."""
    (tmp_path / "inbox").mkdir()
    command = [sys.executable, "-m", "course_grader", str(tmp_path / "inbox"),
               "--config", str(ROOT / "nbgrader_config.py"), "--course-dir", str(tmp_path / "course")]
    done = subprocess.run(command + ["--assignment", "a1"], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "no assignment 'a1'" in done.stderr and "a1_softmax_additive" in done.stderr
    # Strict mode where isolation is impossible (here: a sandbox that cannot find `unshare`).
    env = dict(os.environ, ATTENTION_SANDBOX="strict", PATH=os.path.dirname(sys.executable))
    done = subprocess.run(command + ["--assignment", "a1_softmax_additive"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "not grading: ATTENTION_SANDBOX=strict" in done.stderr and "unshare" in done.stderr


def test_the_summary_says_which_points_are_still_to_grade_by_hand(capsys):
    from course_grader.cli import print_summary

    result = {"student": "ada", "score": 2.5, "max_score": 13.0, "manual_points": 10.0, "to_grade_by_hand": 10.0,
              "status": "graded", "notes": [], "flags": [], "events": []}
    print_summary({"assignment": "ps1", "graded": 1, "unreadable": 0, "failed": 0, "flagged": 0,
                   "seconds": 1.0, "submissions_per_minute": 60.0, "results": [result],
                   "phases_seconds": {}, "grades_csv": "grades.csv", "course_dir": "course",
                   "feedback_command": "nbgrader generate_feedback ps1 --force --course-dir=course"})
    out = capsys.readouterr().out
    assert "2.5 / 13.0  graded  (10 of the points still to grade by hand)" in out
    assert "`nbgrader generate_feedback ps1 --force --course-dir=course`" in out
