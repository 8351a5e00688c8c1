"""Two grading runs on one machine never share a sandbox user id.

Each sandbox runs as an unprivileged user, one per worker.  RLIMIT_NPROC is
counted per real user id across the machine, and a uid is what one process
may signal: two runs sharing ``64000 + slot`` would share one process limit
(one run's fork bomb starves the other's kernels).  So each run reserves a
block of ids of its own for as long as it lives.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from grading_support import ROOT

from course_grader import sandbox

HOLD = textwrap.dedent("""
    import sys
    from course_grader import sandbox
    block = sandbox.UidBlock.reserve()
    print(block.base, flush=True)
    sys.stdin.read()          # held until the test closes our stdin
""")


def _holder():
    process = subprocess.Popen([sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True, cwd=ROOT)
    return process, int(process.stdout.readline())


def test_processes_alive_at_once_hold_different_blocks_and_a_block_is_free_again_after():
    first, first_base = _holder()
    second, second_base = _holder()
    try:
        assert first_base != second_base
        assert {first_base % sandbox.UIDS_PER_BLOCK, second_base % sandbox.UIDS_PER_BLOCK} == {
            sandbox.BASE_UID % sandbox.UIDS_PER_BLOCK}
        first.stdin.close()
        first.wait(timeout=30)
        third, third_base = _holder()       # the first's block, or another free one: never the second's
        third.stdin.close()
        third.wait(timeout=30)
        assert third_base != second_base
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.stdin.close()
                process.wait(timeout=30)


def test_a_run_s_block_is_its_own_and_is_handed_to_what_it_starts(monkeypatch):
    monkeypatch.delenv(sandbox.UID_BASE_ENV, raising=False)
    outside = sandbox.uid_base()                 # this process's own, reserved as it first needs one
    with sandbox.UidBlock.reserve() as run:
        assert run.base != outside
        assert sandbox.sandbox_uid(2) == run.base + 2            # what the run's workers and kernels get
    assert sandbox.uid_base() == outside
    with pytest.raises(ValueError, match="at most"):
        sandbox.sandbox_uid(sandbox.UIDS_PER_BLOCK)


def _course(folder: Path):
    """One assignment whose only cell prints the user the notebook's kernel runs as."""
    cells = [nbformat.v4.new_code_cell("import os\nprint('uid', os.getuid())", metadata={"nbgrader": {
        "grade": False, "grade_id": "who", "locked": False, "schema_version": 3, "solution": True,
        "task": False}})]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    for where in (folder / "source" / "uids", folder / "inbox" / "ada"):
        where.mkdir(parents=True)
        nbformat.write(nb, where / "uids.ipynb")


@pytest.mark.skipif(bool(sandbox.missing_facilities()), reason="user ids are switched only with full isolation")
def test_two_grading_runs_at_once_run_their_students_as_different_users(tmp_path):
    _course(tmp_path)
    runs = [subprocess.Popen(
        [sys.executable, "-m", "course_grader", str(tmp_path / "inbox"), "--assignment", "uids", "--quiet",
         "--workers", "1", "--config", str(ROOT / "nbgrader_config.py"), "--source-dir", str(tmp_path / "source"),
         "--course-id", "uids", "--course-dir", str(tmp_path / f"course{k}")], cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for k in (1, 2)]
    for run in runs:
        out, _ = run.communicate(timeout=600)
        assert run.returncode == 0, out
    users = []
    for k in (1, 2):
        nb = nbformat.read(tmp_path / f"course{k}" / "autograded" / "ada" / "uids" / "uids.ipynb", as_version=4)
        text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []))
        users.append(int(text.split("uid", 1)[1].split()[0]))
    assert users[0] != users[1]
    assert all(sandbox.BASE_UID <= user < sandbox.BASE_UID + sandbox.UID_BLOCKS * sandbox.UIDS_PER_BLOCK
               for user in users)
