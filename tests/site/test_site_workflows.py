"""The GitHub Actions workflows, checked offline.

actionlint checks syntax, expressions, job and step wiring, and (with
shellcheck on the PATH) the shell of every ``run:`` step.  It knows the inputs
of the official actions only by their version tags, so it runs a second time
on a copy in which every pinned SHA is replaced by the major version of its
``# vX.Y.Z`` comment.  The remaining tests check what this project relies on.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from built_site import ROOT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
CONFIG = yaml.safe_load((ROOT / "book" / "_config.yml").read_text())
PINNED = re.compile(r"^(?P<action>[\w.-]+/[\w./-]+)@(?P<sha>[0-9a-f]{40}) # (?P<version>v\d+(\.\d+)*)$")


def load(path: Path) -> dict:
    # PyYAML reads the key `on` as True
    workflow = yaml.safe_load(path.read_text())
    workflow["on"] = workflow.pop(True, workflow.get("on"))
    return workflow


def steps(workflow: dict):
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_name, step


def actionlint(folder: Path) -> subprocess.CompletedProcess:
    tools = Path(sys.executable).parent  # the venv's bin: actionlint and shellcheck
    binary = shutil.which("actionlint", path=str(tools)) or shutil.which("actionlint")
    assert binary, "actionlint is not installed: `make .venv/.installed` installs it"
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([binary, "-no-color"], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)


def test_there_are_workflows():
    assert WORKFLOWS, "no workflow in .github/workflows"


def test_actionlint_passes():
    result = actionlint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_passes_with_action_inputs_checked(tmp_path):
    copy = tmp_path / ".github" / "workflows"
    copy.mkdir(parents=True)
    for path in WORKFLOWS:
        text = re.sub(r"@[0-9a-f]{40} # (v\d+)[.\d]*", r"@\1", path.read_text())
        (copy / path.name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)  # actionlint finds the repo root
    result = actionlint(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_mistake(tmp_path):
    """The linter is really running: an unknown input and a bad expression are errors."""
    copy = tmp_path / ".github" / "workflows"
    copy.mkdir(parents=True)
    (copy / "broken.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - uses: actions/checkout@v6\n        with:\n          fetch-depthh: 1\n"
        "      - run: echo ${{ github.nonexistent_context }}\n")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    result = actionlint(tmp_path)
    assert result.returncode != 0
    assert "fetch-depthh" in result.stdout and "nonexistent_context" in result.stdout


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_actions_are_pinned_to_a_commit(path):
    for line in path.read_text().splitlines():
        match = re.match(r"^\s*-?\s*uses:\s*(.+?)\s*$", line)
        if match and not match.group(1).startswith("./"):
            assert PINNED.match(match.group(1)), f"not pinned to a SHA with a # vX.Y.Z comment: {line}"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_run_steps_fail_on_the_first_error(path):
    for job, step in steps(load(path)):
        if "run" in step:
            first = step["run"].strip().splitlines()[0].strip()
            assert first == "set -eo pipefail", f"{job}: {step.get('name', step['run'][:40])}"


def _jobs_on(event: str) -> list[dict]:
    jobs = []
    for path in WORKFLOWS:
        workflow = load(path)
        if event in workflow["on"]:
            for job in workflow["jobs"].values():
                condition = str(job.get("if", ""))
                if event == "pull_request" and "!= 'pull_request'" in condition:
                    continue
                jobs.append(job)
    return jobs


def _run_lines(jobs) -> list[str]:
    return [line.strip() for job in jobs for step in job.get("steps", [])
            for line in step.get("run", "").splitlines()]


def test_pull_requests_run_the_readme_test_command_and_upload_the_site():
    readme = (ROOT / "README.md").read_text()
    test_command = re.search(r"^(make test)\b", readme, re.M).group(1)
    jobs = _jobs_on("pull_request")
    assert any(line.startswith(test_command) for line in _run_lines(jobs)), \
        f"no pull-request job runs {test_command!r}"
    uploads = [step for job in jobs for step in job["steps"]
               if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert any(step["with"]["path"] == "_build/html" for step in uploads)


def test_main_deploys_to_pages_and_publishes_the_notebooks_branch():
    workflow_steps = [step for path in WORKFLOWS for _, step in steps(load(path))]
    uses = [step.get("uses", "").split("@")[0] for step in workflow_steps]
    assert "actions/upload-pages-artifact" in uses and "actions/deploy-pages" in uses
    branch = CONFIG["sphinx"]["config"]["course_notebooks_branch"]
    jobs = [job for path in WORKFLOWS for job in load(path)["jobs"].values()]
    publishers = [job for job in jobs if job.get("env", {}).get("NOTEBOOKS_BRANCH")]
    assert [job["env"]["NOTEBOOKS_BRANCH"] for job in publishers] == [branch], \
        "the branch the launch buttons open must be the branch the workflow publishes"
    assert publishers[0]["permissions"] == {"contents": "write"}
    # the notebooks are laid next to their sources, in the book's folder (where the launch buttons look)
    book = CONFIG["repository"]["path_to_book"]
    assert any(f'notebooks/." {book}/' in step.get("run", "") for step in publishers[0]["steps"])
    assert "main" in str(publishers[0]["if"])


def test_execution_cache_key_covers_chapters_and_package():
    caches = [step for path in WORKFLOWS for _, step in steps(load(path))
              if step.get("uses", "").startswith("actions/cache@")]
    assert caches, "no cache step"
    for step in caches:
        assert "_build/.jupyter_cache" in step["with"]["path"]
        key = step["with"]["key"].replace("\n", " ")
        for part in ("hashFiles('attention_course/**')", "book/**", "hashFiles('requirements.txt')"):
            assert part in key, f"the cache key must change with {part}"
        for restore in filter(None, step["with"].get("restore-keys", "").splitlines()):
            # an older cache may be restored only for the same package and requirements
            assert "hashFiles('attention_course/**')" in restore
