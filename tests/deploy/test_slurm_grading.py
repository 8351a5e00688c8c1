"""deploy/slurm-grade.sh on a real Slurm (issue 39): the array job grades 4 shards of 40
submissions, each in a process of its own, as separate machines would; the merge job waits for
them, and the merged gradebook, grades CSV and feedback pages are exactly a single run's.
(tests/course_grader/test_shards.py checks what ``merge`` refuses.)

The cluster is this machine, started by the test (``local_slurm``); ``make test`` installs
Debian's Slurm and munge where it may (``scripts/ensure_slurm.sh``), as it does Chromium."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grading_support import ROOT, WRONG_ANSWERS, solved_notebook, student_notebook, wrong_answer, write
from local_slurm import local_slurm, missing, wait_for

A = "a1_softmax_additive"
SHARDS = 4
STUDENTS = 40
SECRET = "the course's secret for this term"


def _submissions() -> dict:
    """40 students: each catalogued mistake once, an unreadable file, and correct and blank notebooks."""
    kinds = [wrong_answer(A, name) for name in WRONG_ANSWERS[A]] + [b'{"cells": [']
    solved, blank = solved_notebook(A), student_notebook(A)
    kinds += [blank if i % 3 == 0 else solved for i in range(STUDENTS - len(kinds))]
    return {f"student{i:02d}": kind for i, kind in enumerate(kinds)}


def _gradebook(db: Path) -> dict:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db}") as gb:
        return {(s.student.id, nb.name, g.name): (g.auto_score, g.manual_score, g.max_score, nb.flagged)
                for s in gb.assignment_submissions(A) for nb in s.notebooks for g in nb.grades}


def _csv(path: Path) -> list:
    with open(path) as f:
        return sorted(tuple(sorted(row.items())) for row in csv.DictReader(f))


def _feedback(course: Path) -> dict:
    return {p.relative_to(course).as_posix(): p.read_bytes() for p in (course / "feedback").rglob("*.html")}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    if missing():
        pytest.fail("the Slurm test needs Debian's slurmctld, slurmd, slurm-client and munge "
                    f"(missing: {', '.join(missing())}); `make test` installs them as root "
                    "(scripts/ensure_slurm.sh)")
    if os.geteuid() != 0:
        pytest.skip("slurmd runs jobs as root only; CI runs as root")
    tmp = tmp_path_factory.mktemp("slurm")
    inbox = tmp / "inbox"
    for student, nb in _submissions().items():
        if isinstance(nb, bytes):
            inbox.mkdir(exist_ok=True)
            (inbox / f"{student}.ipynb").write_bytes(nb)
        else:
            write(nb, inbox / f"{student}.ipynb")
    secret = tmp / "hidden-tests-secret"
    secret.write_text(SECRET)
    with local_slurm(tmp / "cluster") as env:
        submitted = subprocess.run(["bash", str(ROOT / "deploy" / "slurm-grade.sh"), str(inbox), A, str(SHARDS),
                                    str(secret), str(tmp / "out")],
                                   cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert submitted.returncode == 0, submitted.stderr
        merge_job = submitted.stdout.split()[-1]
        states = wait_for(merge_job, env, timeout=900)
        logs = "".join(f"--- {p.name}\n{p.read_text()}" for p in sorted((tmp / "out" / "logs").glob("*.log")))
        assert states == ["COMPLETED"], f"merge job {states}:\n{logs[-3000:]}"
    single = subprocess.run([sys.executable, "-m", "course_grader", str(inbox), "--assignment", A,
                             "--course-dir", str(tmp / "single"), "--secret-seed", SECRET, "--quiet"],
                            cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert single.returncode == 0, single.stderr[-3000:]
    return {"out": tmp / "out", "single": tmp / "single", "logs": logs}


def _graded_students(course: Path) -> list[str]:
    return [r["student"] for r in json.loads((course / f"grading-{A}.json").read_text())["results"]]


def test_the_array_job_graded_every_shard_in_a_job_of_its_own(graded):
    shards = sorted((graded["out"] / "shards").iterdir(), key=lambda p: int(p.name))
    assert [p.name for p in shards] == [str(k) for k in range(1, SHARDS + 1)]
    students = [_graded_students(shard) for shard in shards]
    assert all(students) and sorted(sum(students, [])) == sorted(_submissions())
    assert f"merged {STUDENTS} students from {SHARDS} shards" in graded["logs"]


def test_the_merged_gradebook_csv_and_feedback_equal_a_single_runs(graded):
    merged, single = graded["out"] / "merged", graded["single"]
    scores = _gradebook(merged / "gradebook.db")
    assert scores == _gradebook(single / "gradebook.db")
    in_gradebook = {student for student, _, _ in scores}
    assert in_gradebook >= {student for student, nb in _submissions().items() if not isinstance(nb, bytes)}
    assert _csv(merged / f"grades-{A}.csv") == _csv(single / f"grades-{A}.csv")
    feedback = _feedback(merged)
    assert feedback == _feedback(single)
    assert {path.split("/")[1] for path in feedback} == in_gradebook
