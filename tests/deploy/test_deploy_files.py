"""The job definitions in deploy/ (issue 39), checked as far as a machine without a container
engine or a cluster allows: the image is set up as the Makefile sets up the repository, and every
command the Kubernetes Job and the Slurm script run is one the grading command accepts."""

import os
import re
import shlex
import subprocess
from pathlib import Path
from unittest import mock

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def _makefile_variable(name: str) -> str:
    return re.search(rf"^{name}\s*[:?]?=\s*(\S+)", (ROOT / "Makefile").read_text(), re.M).group(1)


def test_the_image_is_set_up_by_the_repositorys_own_install_step_and_python():
    containerfile = (DEPLOY / "Containerfile").read_text()
    python = _makefile_variable("PYTHON")                      # python3.11
    version = python.removeprefix("python")
    assert re.search(rf"^FROM python:{re.escape(version)}-", containerfile, re.M)
    stamp = _makefile_variable("STAMP").replace("$(VENV)", _makefile_variable("VENV"))
    assert re.search(rf"^RUN make {re.escape(stamp)} PYTHON={re.escape(python)}$", containerfile, re.M)
    rule = re.search(r"^\$\(STAMP\):(.*)\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M)
    assert {"requirements.txt", "requirements-nodeps.txt", "pyproject.toml"} <= set(rule.group(1).split())
    assert "-r requirements.txt" in rule.group(2) and "-r requirements-nodeps.txt" in rule.group(2)
    assert "util-linux" in containerfile                     # unshare, for the sandbox
    assert '".venv/bin/python", "-m", "course_grader"' in containerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "_build", "grading"} <= set(ignored)


def _accepted(argv: list[str]) -> dict:
    """What the grading command makes of ``argv`` (its own argument parser), without grading."""
    from course_grader import cli

    seen = {}

    def grade(source, assignment, options):      # the command passes one GradingOptions
        seen["grade"] = (source, assignment, options)
        return {"results": [], "not_graded": 0, "failed": 0}

    def merge(*args, **kwargs):
        seen["merge"] = args
        return {"results": [], "graded": 0, "unreadable": 0, "failed": 0, "flagged": 0, "grades_csv": "g.csv"}

    with mock.patch("course_grader.grade.grade", grade), mock.patch("course_grader.grade.merge", merge):
        assert cli.main(argv) == 0
    return seen


def test_the_kubernetes_job_runs_privileged_shards_the_grading_command_accepts():
    job = yaml.safe_load((DEPLOY / "kubernetes-job.yaml").read_text())
    spec = job["spec"]
    shards = spec["completions"]
    assert spec["completionMode"] == "Indexed" and spec["parallelism"] == shards
    [container] = spec["template"]["spec"]["containers"]
    assert container["securityContext"]["privileged"] is True
    assert container["command"] == ["sh", "-c"]
    [script] = container["args"]
    for index in range(shards):         # what sh makes of it in each pod
        line = script.replace("$((JOB_COMPLETION_INDEX + 1))", str(index + 1))
        line = line.replace("$JOB_COMPLETION_INDEX", str(index)).replace('"$(cat /data/hidden-tests-secret)"', "s")
        words = shlex.split(line)
        assert words[:3] == [".venv/bin/python", "-m", "course_grader"]
        seen = _accepted(words[3:])
        assert seen["grade"][0] == Path("/data/a1-submissions.zip") and seen["grade"][2].shard == (index + 1, shards)


def test_the_slurm_script_submits_an_array_of_shards_and_a_merge_that_waits_for_it(tmp_path):
    script = DEPLOY / "slurm-grade.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "sbatch-calls"
    # a stand-in sbatch: records its arguments (NUL-separated, one call per line) and answers a job id
    (bin_dir / "sbatch").write_text('#!/usr/bin/env bash\nprintf "%s\\0" "$@" >> "$CALLS"\necho >> "$CALLS"\n'
                                    'echo 4242\n')
    (bin_dir / "sbatch").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(calls)}
    out = tmp_path / "a1 run"
    subprocess.run([str(script), "subs.zip", "a1_softmax_additive", "4", "secret.txt", str(out)],
                   check=True, env=env, cwd=tmp_path)
    array, merge = [line.strip("\0").split("\0") for line in calls.read_text().strip("\n").split("\n")]
    assert "--array=1-4" in array and "--dependency=afterok:4242" in merge
    [wrapped] = [a.split("=", 1)[1] for a in array if a.startswith("--wrap=")]
    for task in range(1, 5):            # what Slurm's shell makes of it in each task
        line = wrapped.replace("$SLURM_ARRAY_TASK_ID", str(task)).replace('"$(cat \'secret.txt\')"', "s")
        words = shlex.split(line)
        assert words[:3] == [".venv/bin/python", "-m", "course_grader"]
        assert _accepted(words[3:])["grade"][2].shard == (task, 4)
    [wrapped] = [a.split("=", 1)[1] for a in merge if a.startswith("--wrap=")]
    words = shlex.split(wrapped.replace(f"'{out}'/shards/[0-9]*", f"'{out}/shards/1' '{out}/shards/2'"))
    assert words[3] == "merge" and _accepted(words[3:])["merge"][0] == [out / "shards" / "1", out / "shards" / "2"]


def test_the_instructors_page_includes_the_files_rather_than_copies():
    page = (ROOT / "book" / "instructors.md").read_text()
    for name in ("kubernetes-job.yaml", "slurm-grade.sh", "Containerfile"):
        assert f"```{{literalinclude}} ../deploy/{name}" in page
    assert "apiVersion: batch/v1" not in page


@pytest.mark.parametrize("name", ["Containerfile", "kubernetes-job.yaml", "slurm-grade.sh"])
def test_the_files_name_no_path_of_a_machine(name):
    assert not re.search(r"/(home|work|root)/\w", (DEPLOY / name).read_text())
