"""Beyond one machine: ``--shard K/N`` slices the students, and ``merge`` refuses shards that
cannot be merged, naming them, before anything is written.  That the merged shards give exactly
a single run's gradebook, CSV and feedback is checked where shards run as they do on a cluster,
on a real Slurm (tests/deploy/test_slurm_grading.py)."""

import csv
import json
from collections import Counter
import subprocess
import sys

import pytest

from grading_support import LIMITS, ROOT, solved_notebook, student_notebook, write

from course_grader.grade import in_shard

A = "a1_softmax_additive"
SECRET = "one secret for every shard of the run"


def _csv(path):
    with open(path) as f:
        return sorted((row["student_id"], row["score"], row["max_score"]) for row in csv.DictReader(f))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The folder of two shards' course directories, ``1/`` and ``2/``: three students (grace in the
    first, the others in the second), each shard run as a cluster's array job runs it."""
    tmp = tmp_path_factory.mktemp("shards")
    inbox = tmp / "inbox"
    for student, nb in {"grace": solved_notebook(A), "ada": student_notebook(A), "broken": b'{"cells": ['}.items():
        if isinstance(nb, bytes):
            inbox.mkdir(exist_ok=True)
            (inbox / f"{student}.ipynb").write_bytes(nb)
        else:
            write(nb, inbox / f"{student}.ipynb")
    command = [sys.executable, "-m", "course_grader"]
    options = ["--assignment", A, "--config", str(ROOT / "nbgrader_config.py")]
    for k in (1, 2):
        done = subprocess.run(command + [str(inbox), *options, "--shard", f"{k}/2", "--workers", "1",
                                         "--course-dir", str(tmp / "shards" / str(k)), "--secret-seed", SECRET,
                                         "--cell-timeout", str(LIMITS["cell_timeout"]), "--quiet"],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
    return tmp / "shards"


def test_the_slices_are_disjoint_and_cover_everyone():
    students = [f"student{i:03d}" for i in range(60)] + ["ada", "grace", "s.o'neil", "élodie"]
    slices = [[s for s in students if in_shard(s, k, 3)] for k in (1, 2, 3)]
    assert Counter(sum(slices, [])) == Counter(students)    # each student in exactly one slice
    assert all(len(part) >= 10 for part in slices)          # a hash, not everyone in one slice


def test_shards_that_fit_together_merge(runs, tmp_path):
    from course_grader import grade

    shards = [runs / "1", runs / "2"]
    graded = [{r["student"] for r in json.loads((shard / f"grading-{A}.json").read_text())["results"]}
              for shard in shards]
    assert graded == [{"grace"}, {"ada", "broken"}]
    report = grade.merge(shards, A, tmp_path / "course", ROOT / "nbgrader_config.py")
    assert [row[0] for row in _csv(tmp_path / "course" / f"grades-{A}.csv")] == ["ada", "broken", "grace"]
    assert len(report["results"]) == 3


def test_overlapping_shards_are_refused_before_anything_is_written(runs, tmp_path):
    from course_grader import grade

    shard = runs / "1"
    with pytest.raises(SystemExit, match="in two shards"):
        grade.merge([shard, shard], A, tmp_path / "course", ROOT / "nbgrader_config.py")
    assert not (tmp_path / "course").exists()


def test_a_shard_graded_with_another_secret_is_refused_by_name(runs, tmp_path):
    from course_grader import grade

    write(student_notebook(A), tmp_path / "inbox" / "late.ipynb")
    other = tmp_path / "other-secret"
    grade.grade(tmp_path / "inbox", A, course_dir=other, **LIMITS, quiet=True, config_file=ROOT / "nbgrader_config.py",
                secret_seed="another secret")
    report = (other / f"grading-{A}.json").read_text()
    assert "another secret" not in report                   # a fingerprint, not the secret
    with pytest.raises(SystemExit, match="graded with another hidden-test secret") as refused:
        grade.merge([runs / "1", other], A, tmp_path / "course", ROOT / "nbgrader_config.py")
    assert str(other) in str(refused.value) and not (tmp_path / "course").exists()


@pytest.mark.parametrize("change", ["another version", "no fingerprint"])
def test_a_shard_of_another_version_of_the_assignment_is_refused_by_name(runs, tmp_path, change):
    import json
    import shutil

    from course_grader import grade

    shard = tmp_path / "shard-2"
    shutil.copytree(runs / "2", shard)
    path = shard / f"grading-{A}.json"
    report = json.loads(path.read_text())
    if change == "another version":
        report["fingerprints"]["source"] = "0" * 16      # graded from an edited source notebook
    else:
        del report["fingerprints"]
    path.write_text(json.dumps(report))
    match = "graded another version" if change == "another version" else "records no fingerprint"
    with pytest.raises(SystemExit, match=match) as refused:
        grade.merge([runs / "1", shard], A, tmp_path / "course", ROOT / "nbgrader_config.py")
    assert str(shard) in str(refused.value) and not (tmp_path / "course").exists()
