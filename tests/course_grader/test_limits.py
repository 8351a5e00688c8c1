"""course_grader/limits.py is the one home of grading's defaults, and the grading sandbox page says the same."""

import re

from grading_support import ROOT

from course_grader import limits, preprocessors, sandbox
from course_grader.nbgrader_api import load_config


def test_the_course_configuration_runs_with_the_defaults(tmp_path):
    configured = preprocessors.GradingLimits(config=load_config(tmp_path, {}, ROOT / "nbgrader_config.py"))
    assert (configured.cell_timeout, configured.notebook_timeout, configured.memory_mb) == \
        (limits.CELL_SECONDS, limits.NOTEBOOK_SECONDS, limits.MEMORY_MB)
    assert (configured.max_output_bytes, configured.flood_bytes, configured.max_restarts) == \
        (limits.MAX_OUTPUT_BYTES, limits.FLOOD_BYTES, limits.MAX_RESTARTS)
    overridden = preprocessors.GradingLimits(config=load_config(tmp_path, {"cell_timeout": 7}, ROOT / "nbgrader_config.py"))
    assert overridden.cell_timeout == 7


def test_the_sandbox_starts_from_the_defaults_and_takes_overrides(monkeypatch):
    assert sandbox.limits_from_env() == limits.SANDBOX
    monkeypatch.setenv(f"{sandbox.ENV_PREFIX}_PROCESSES", "12")
    assert sandbox.limits_from_env({"tmp_mb": 9}) == {**limits.SANDBOX, "processes": 12, "tmp_mb": 9}
    assert limits.SANDBOX["processes"] != 12   # the defaults themselves are untouched


def test_the_sandbox_page_gives_the_defaults():
    table = (ROOT / "book" / "grading_sandbox.md").read_text().split("## What every submission runs under")[1]
    table = table.split("\n## ")[0]
    for expected in (f"{limits.CELL_SECONDS} s (`--cell-timeout`)",
                     f"{limits.NOTEBOOK_SECONDS} s (`--notebook-timeout`)",
                     f"{limits.MEMORY_MB} MiB (`--memory-mb`)",
                     f"{limits.MAX_OUTPUT_BYTES // 10**6} MB kept per notebook",
                     f"more than {limits.FLOOD_BYTES // 10**6} MB is interrupted",
                     f"at most {limits.MAX_RESTARTS} restarts"):
        assert expected in table, expected
    assert re.search(r"`course_grader/limits\.py`", table)


def test_one_time_budget_covers_the_notebook_and_its_re_check(tmp_path_factory):
    """A notebook that spends most of its budget leaves the re-check only the rest (with a budget of its
    own, the re-check would replay the 12 s and pass every test): the tests it could not re-check score 0,
    unflagged, and the report says the budget ran out."""
    import json

    import nbformat

    from grading_support import cell_scores, graded_batch, solved_notebook

    A = "a1_softmax_additive"
    slow = solved_notebook(A)
    slow.cells.insert(1, nbformat.v4.new_code_cell("import time\ntime.sleep(12)"))
    budget = 24
    report = graded_batch(tmp_path_factory, "budget", A, {"slow": slow},
                          limits={"notebook_timeout": budget, "cell_timeout": 20})
    result = report["by_student"]["slow"]
    assert result["flags"] == []
    assert set(cell_scores(report, "slow").values()) == {0.0}
    events = json.loads((report["course"] / "autograded" / "slow" / A / f".grading-report-{A}.json")
                        .read_text())["events"]
    assert "budget" in [e["kind"] for e in events]
