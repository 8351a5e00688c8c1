"""Practice feedback for a student on their own (issue 38): the call in the last cell of every assignment.

Through the same call a student makes, ``course_grader.practice.check``: every
catalogued mistake of every assignment is named, a correct notebook gets full
marks, a blank one 0 and what to do; and, in a real kernel, the notebook's own
last cell does it on the notebook as saved (Jupyter tells the kernel its path).
"""

import os
import re

import nbformat
import pytest
from nbclient import NotebookClient

from course_grader import practice
from grading_support import (ASSIGNMENTS, WRONG_ANSWERS, solved_notebook, source_notebook, student_notebook,
                             write, wrong_answer)

MISTAKES = [(assignment, name) for assignment in ASSIGNMENTS for name in WRONG_ANSWERS[assignment]]


def _explanations(assignment):
    import runpy

    from grading_support import SOLUTIONS

    return {name: entry["explain"] for name, entry in
            runpy.run_path(str(SOLUTIONS / assignment / "mistakes.py"))["MISTAKES"].items()}


def _hidden_lines(assignment) -> list[str]:
    """The hidden tests' code lines (long enough to be telling), which no feedback may show."""
    from course_grader import hidden_tests

    lines = []
    for cell in source_notebook(assignment).cells:
        if cell.cell_type == "code" and "BEGIN HIDDEN TESTS" in cell.source:
            body = cell.source.split("### BEGIN HIDDEN TESTS", 1)[1].split("### END HIDDEN TESTS", 1)[0]
            lines += [line.strip() for line in body.split("\n") if len(line.strip()) > 25]
    assert lines and hidden_tests    # every assignment has hidden tests
    return lines


def _checked(tmp_path, nb, capsys):
    path = tmp_path / "my work" / "assignment.ipynb"    # any name, any folder: found by its test cells
    write(nb, path)
    result = practice.check(path)
    return result, capsys.readouterr().out


@pytest.mark.parametrize("assignment, mistake", MISTAKES, ids=[f"{a}-{m}" for a, m in MISTAKES])
def test_each_catalogued_mistake_is_explained_and_costs_points(tmp_path, capsys, assignment, mistake):
    result, printed = _checked(tmp_path, wrong_answer(assignment, mistake), capsys)
    explanation = _explanations(assignment)[mistake]
    assert explanation in result.mistakes and explanation in printed
    _, loses, _ = WRONG_ANSWERS[assignment][mistake]
    assert {p.name: p.points for p in result.parts if p.name in loses} == {name: 0.0 for name in loses}
    assert result.points < result.max_points
    assert "not a grade" in printed and not any(line in printed for line in _hidden_lines(assignment))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_correct_notebook_gets_every_point_and_no_mistake(tmp_path, capsys, assignment):
    result, printed = _checked(tmp_path, solved_notebook(assignment), capsys)
    assert result.points == result.max_points == 10 and result.mistakes == []
    assert "10 / 10 points" in printed and "FAIL" not in printed


def test_the_cell_ending_with_check_shows_one_line_after_the_report(tmp_path, capsys):
    """The practice cell ends with ``check()``: Jupyter shows the returned result after the printed
    report, as one line (not the dataclass's repr of every part)."""
    from IPython.lib.pretty import pretty

    result, printed = _checked(tmp_path, solved_notebook("a1_softmax_additive"), capsys)
    shown = pretty(result)
    assert "\n" not in shown and len(shown) < 120 and "10 / 10 points" in shown
    assert len(repr(result)) > 500                  # what a notebook showed before


def test_a_blank_notebook_gets_zero_what_to_do_and_nothing_of_the_hidden_tests(tmp_path, capsys):
    result, printed = _checked(tmp_path, student_notebook("a2_dot_product"), capsys)
    assert result.points == 0 and result.max_points == 10
    assert "0 / 10 points" in printed and "# YOUR CODE HERE" in printed and "not written yet" in printed
    assert not any(line in printed for line in _hidden_lines("a2_dot_product"))
    assert "written answers" in printed       # what practice does not check, said


def test_hidden_tests_draw_from_the_practice_secret(tmp_path, monkeypatch, capsys):
    from course_grader import hidden_tests

    secrets = []
    original = hidden_tests.rng_factory
    monkeypatch.setattr(hidden_tests, "rng_factory", lambda secret, *a: secrets.append(secret) or original(secret, *a))
    _checked(tmp_path, solved_notebook("a1_softmax_additive"), capsys)
    assert secrets and set(secrets) == {practice.PRACTICE_SECRET}


def test_a_fork_turns_it_off_in_one_setting(tmp_path, monkeypatch):
    assert practice.enabled("[project]\nname = 'x'\n") is True
    assert practice.enabled("[tool.course-grader]\npractice-feedback = false\n") is False
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\n")
    (tmp_path / "pyproject.toml").write_text("[tool.course-grader]\npractice-feedback = false\n")
    monkeypatch.setattr(practice, "CHECKOUT", tmp_path)
    monkeypatch.setattr(practice, "SHIPPED", tmp_path / "not installed")
    with pytest.raises(practice.PracticeUnavailable, match="practice feedback is off"):
        practice.check(tmp_path / "any.ipynb")


def test_while_a_notebook_is_graded_the_call_does_nothing(monkeypatch, capsys):
    monkeypatch.setenv(practice.INSIDE_GRADING, "1")
    assert practice.check() is None and "not run while the notebook is graded" in capsys.readouterr().out


def test_a_notebook_that_is_no_assignment_is_told_so(tmp_path):
    path = tmp_path / "mine.ipynb"
    write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]), path)
    with pytest.raises(practice.PracticeUnavailable, match="none of the course's assignments"):
        practice.check(path)


# -- through a real kernel, as the student runs it ----------------------------------------------

@pytest.mark.parametrize("submission", ["correct", "blank", "query_mask_ignored"])
def test_the_notebooks_last_cell_gives_practice_feedback_in_a_kernel(tmp_path, submission):
    assignment = "a1_softmax_additive"
    nb = {"correct": solved_notebook, "blank": student_notebook}.get(
        submission, lambda a: wrong_answer(a, submission))(assignment)
    path = tmp_path / f"{assignment}.ipynb"
    write(nb, path)
    # Jupyter tells the kernel which notebook it runs (JPY_SESSION_NAME); the student runs every cell,
    # the practice call included (nbclient skips cells tagged skip-execution: here, none is skipped).
    client = NotebookClient(nb, kernel_name="python3", timeout=300, allow_errors=True,
                            skip_cells_with_tag="none-here", resources={"metadata": {"path": str(tmp_path)}})
    with client.setup_kernel(env={**os.environ, "JPY_SESSION_NAME": str(path)}):
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    last = nb.cells[-1]
    assert "course_grader.practice" in last.source
    printed = "".join(out.get("text", "") for out in last.outputs if out.output_type == "stream")
    if submission == "correct":
        assert "10 / 10 points" in printed
    elif submission == "blank":
        assert "0 / 10 points" in printed and "# YOUR CODE HERE" in printed
    else:
        assert _explanations(assignment)[submission] in printed
        assert re.search(r"\b[0-9.]+ / 10 points", printed) and "10 / 10 points" not in printed


# -- what the package installs for it (setup.py) -------------------------------------------------

def _setup_module():
    import runpy

    from grading_support import ROOT

    return runpy.run_path(str(ROOT / "setup.py"), run_name="setup_for_test"), ROOT


def test_the_package_carries_the_course_practice_needs_unless_the_setting_is_off(tmp_path):
    import shutil

    setup, root = _setup_module()
    shipped = {str(inside) for _, inside in setup["practice_files"](root)}
    bundle = "course_grader/practice_course"
    assert f"{bundle}/nbgrader_config.py" in shipped
    for assignment in ASSIGNMENTS:
        assert {f"{bundle}/solutions/{assignment}/{assignment}.ipynb",
                f"{bundle}/solutions/{assignment}/mistakes.py"} <= shipped
    fork = tmp_path / "fork"
    shutil.copytree(root / "solutions", fork / "solutions")
    shutil.copy(root / "nbgrader_config.py", fork)
    (fork / "pyproject.toml").write_text((root / "pyproject.toml").read_text().replace(
        "practice-feedback = true", "practice-feedback = false"))
    assert setup["practice_files"](fork) == []


@pytest.mark.parametrize("text, on", [("[project]\nname = 'x'\n", True),
                                      ("[tool.course-grader]\npractice-feedback = true\n", True),
                                      ("[tool.course-grader]\npractice-feedback = false\n", False),
                                      ("[tool.other]\npractice-feedback = false\n[tool.course-grader]\n", True)])
def test_the_build_reads_the_setting_by_practices_own_rule(text, on):
    """One home for the rule: setup.py runs course_grader/practice.py's ``enabled``, not a copy of it."""
    setup, _ = _setup_module()
    assert setup["practice_enabled"].__code__.co_filename == practice.enabled.__code__.co_filename
    assert setup["practice_enabled"](text) is practice.enabled(text) is on


def test_installed_practice_uses_the_bundle_it_was_given(tmp_path, monkeypatch, capsys):
    """In a wheel, practice reads course_grader/practice_course/ (what setup.py copied), not a checkout."""
    import shutil

    setup, root = _setup_module()
    bundle = tmp_path / "course_grader" / "practice_course"
    for source, inside in setup["practice_files"](root):
        (tmp_path / inside).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, tmp_path / inside)
    monkeypatch.setattr(practice, "SHIPPED", bundle)
    monkeypatch.setattr(practice, "CHECKOUT", tmp_path / "no checkout")
    assert practice.course_folder() == bundle
    result, _ = _checked(tmp_path, solved_notebook("a12_vit_patches"), capsys)
    assert result.points == result.max_points == 10


# -- where the machine allows no sandbox (a notebook service) -----------------------------------

@pytest.mark.parametrize("why", ["not allowed here", "switched off"])
def test_without_the_sandbox_it_still_checks_and_says_what_it_could_not(tmp_path, capsys, monkeypatch, why):
    from course_grader import sandbox

    if why == "not allowed here":     # as on a service that allows no namespaces
        monkeypatch.setattr(sandbox, "missing_facilities", lambda: ["not running as root: cannot create namespaces"])
    else:
        monkeypatch.setenv(sandbox.ENV_PREFIX, "off")
    assignment = "a1_softmax_additive"
    mistake = sorted(WRONG_ANSWERS[assignment])[0]
    result, printed = _checked(tmp_path, wrong_answer(assignment, mistake), capsys)
    reason = "not running as root" if why == "not allowed here" else f"{sandbox.ENV_PREFIX}=off"
    assert f"with resource limits only: this machine does not allow the grading sandbox ({reason}" in printed
    assert _explanations(assignment)[mistake] in result.mistakes and result.points < result.max_points
    result, printed = _checked(tmp_path, solved_notebook(assignment), capsys)
    assert result.points == result.max_points and "in the grading sandbox" not in printed
