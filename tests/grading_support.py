"""Helpers for the grading tests: build submissions, grade them once per test session.

Grading is the slow part (a sandboxed kernel per notebook), so each batch of
submissions is graded once by :func:`course_grader.grade.grade` and shared by all the
tests that look at it -- across pytest-xdist workers too: the first worker to
need a batch grades it under a file lock, the others read its report.
"""

from __future__ import annotations

import copy
import fcntl
import json
import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "book" / "exercises"   # the student notebooks are pages of the book
ASSIGNMENTS = sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir())

# Generous limits: the machine running the tests may be busy; no test depends on timing.
LIMITS = {"cell_timeout": 20, "notebook_timeout": 120, "memory_mb": 2048}


def source_notebook(assignment: str):
    return nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", as_version=4)


def student_notebook(assignment: str):
    """The released exercise, as a student downloads it."""
    return nbformat.read(EXERCISES / assignment / f"{assignment}.ipynb", as_version=4)


def grade_id(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def cell(nb, gid: str):
    return next(c for c in nb.cells if grade_id(c) == gid)


def solved_notebook(assignment: str):
    """The exercise with every solution cell filled in with the instructor's code: a correct submission."""
    nb = student_notebook(assignment)
    source = source_notebook(assignment)
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("solution"):
            code = cell(source, grade_id(c)).source
            c.source = "\n".join(line for line in code.split("\n")
                                 if "### BEGIN SOLUTION" not in line and "### END SOLUTION" not in line)
    return nb


def edited(nb, gid: str, old: str, new: str, count: int = 1):
    """A copy of ``nb`` whose cell ``gid`` has ``old`` replaced by ``new`` (which must be there)."""
    nb = copy.deepcopy(nb)
    target = cell(nb, gid)
    assert target.source.count(old) == count, f"{old!r} occurs {target.source.count(old)} times in {gid}"
    target.source = target.source.replace(old, new)
    return nb


# The catalogue of plausible wrong answers is the grader's own (solutions/<assignment>/mistakes.py):
# name: (edits [(cell, old, new[, count])], cells that must score 0, cells that must keep full marks)
WRONG_ANSWERS = {assignment: {name: (entry["edits"], entry["fails"], entry["passes"])
                              for name, entry in runpy.run_path(
                                  str(SOLUTIONS / assignment / "mistakes.py"))["MISTAKES"].items()}
                 for assignment in ASSIGNMENTS}


def wrong_answer(assignment: str, name: str):
    """The exercise solved with the catalogued mistake ``name`` made (its edits applied)."""
    nb = solved_notebook(assignment)
    for edit in WRONG_ANSWERS[assignment][name][0]:
        cell_id, old, new, *count = edit
        nb = edited(nb, cell_id, old, new, *(count or [1]))
    return nb


def write(nb, path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


def shared_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.getbasetemp()
    return root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root


def graded_batch(tmp_path_factory, name: str, assignment: str, submissions: dict, limits=None,
                 workers: int = 2, secret_seed: str | None = None) -> dict:
    """Grade ``{student: notebook or raw bytes}`` once per session; returns the run's report plus paths.
    ``secret_seed``: the hidden tests' secret (default: a new one in the batch's course directory)."""
    from course_grader import grade

    root = shared_root(tmp_path_factory)
    folder = root / f"grading-{name}"
    with open(root / f"grading-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        report_file = folder / "report.json"
        if not report_file.exists():
            inbox = folder / "inbox"
            for student, content in submissions.items():
                path = inbox / f"{student}.ipynb"
                if isinstance(content, (bytes, str)):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(content if isinstance(content, bytes) else content.encode())
                else:
                    write(content, path)
            report = grade.grade(inbox, assignment, course_dir=folder / "course", workers=workers,
                                 **dict(LIMITS, **(limits or {})), quiet=True,
                                 config_file=ROOT / "nbgrader_config.py", secret_seed=secret_seed)
            report_file.write_text(json.dumps(report))
        report = json.loads(report_file.read_text())
    report["by_student"] = {r["student"]: r for r in report["results"]}
    report["course"] = Path(report["course_dir"])
    return report


def cell_scores(report: dict, student: str) -> dict[str, float]:
    """Scores per graded cell, read from the course's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{report['course'] / 'gradebook.db'}") as gb:
        submission = gb.find_submission(report["assignment"], student)
        return {g.name: g.score for nb in submission.notebooks for g in nb.grades}


def max_scores(assignment: str) -> dict[str, float]:
    return {grade_id(c): float(c.metadata["nbgrader"]["points"]) for c in source_notebook(assignment).cells
            if c.metadata.get("nbgrader", {}).get("grade")}


def written_answers(assignment: str) -> dict[str, float]:
    """The answers graded by hand (nbgrader's manually graded Markdown cells): their points."""
    return {grade_id(c): float(c.metadata["nbgrader"]["points"]) for c in source_notebook(assignment).cells
            if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("grade")}


def autograded(report: dict, student: str):
    path = report["course"] / "autograded" / student / report["assignment"] / f"{report['assignment']}.ipynb"
    return nbformat.read(path, as_version=4)


def feedback_html(report: dict, student: str) -> str:
    path = report["course"] / "feedback" / student / report["assignment"] / f"{report['assignment']}.html"
    return path.read_text()


def outputs_text(nb, gid: str) -> str:
    parts = []
    for output in cell(nb, gid).get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type == "error":
            parts.append(f"{output.ename}: {output.evalue}")
        else:
            parts.append(str(output.get("data", {}).get("text/plain", "")))
    return "\n".join(parts)


HIDDEN_BLOCK = re.compile(r"decode_reference\(\s*\"[A-Za-z0-9+/=]{40,}")


def programs_start(how: str):
    """A module's sandboxed programs started ``"from scratch"`` (a new interpreter each) or ``"from a
    zygote"`` (forked from a warm one, as the grading workers start them): for a fixture that runs
    the module's tests both ways.  Where full isolation is unavailable there is no zygote to have."""
    from course_grader import sandbox

    zygote = sandbox.Zygote.start() if how == "from a zygote" else None
    assert zygote is not None or how != "from a zygote" or sandbox.missing_facilities(), \
        "full isolation is available, and the zygote did not start"
    try:
        yield zygote
    finally:
        if zygote is not None:
            zygote.close()


def without_the_environment() -> dict:
    """The environment of a shell where the grader's virtual environment is not activated."""
    bin_dir = os.path.dirname(sys.executable)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep) if p != bin_dir)
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return dict(env, PATH=path or "/usr/bin:/bin")


def run_as_printed(command: str, cwd) -> subprocess.CompletedProcess:
    """Run a command the grader printed, exactly as printed, in a plain shell in ``cwd``."""
    return subprocess.run(["sh", "-c", command], cwd=cwd, env=without_the_environment(), capture_output=True,
                          text=True, timeout=1800)
