"""The exercises: generated from the solutions, complete, self-contained, and free of answers."""

import ast
import builtins
import json
import re

import nbformat
import pytest

from grading_support import (ASSIGNMENTS, EXERCISES, HIDDEN_BLOCK, ROOT, grade_id, source_notebook,
                             student_notebook)


def _meta(cell):
    return cell.metadata.get("nbgrader", {})


def _is_test(cell):
    return _meta(cell).get("grade") and not _meta(cell).get("solution")


def test_there_are_at_least_six_assignments():
    assert len(ASSIGNMENTS) >= 6
    assert sorted(p.name for p in EXERCISES.iterdir() if p.is_dir()) == ASSIGNMENTS


def test_exercises_are_exactly_what_nbgrader_generates_from_the_solutions(tmp_path):
    from course_authoring.exercises import generate

    generated = generate(tmp_path)
    assert [p.relative_to(tmp_path) for p in generated] == \
        sorted(p.relative_to(EXERCISES) for p in EXERCISES.glob("*/*.ipynb"))
    for path in generated:
        committed = EXERCISES / path.relative_to(tmp_path)
        assert json.loads(path.read_text()) == json.loads(committed.read_text()), (
            f"{committed.relative_to(ROOT)} is out of date: run `python -m course_authoring.exercises`")
    released = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert released == [p.relative_to(tmp_path) for p in generated]   # no catalogue of mistakes
    assert all((ROOT / "solutions" / a / "mistakes.py").is_file() for a in ASSIGNMENTS)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_assignment_is_complete(assignment):
    nb = source_notebook(assignment)
    intro = nb.cells[0].source
    assert intro.startswith("# Assignment") and "## Learning objectives" in intro
    points = {grade_id(c): float(_meta(c)["points"]) for c in nb.cells
              if _meta(c).get("grade") and c.cell_type == "code"}
    assert sum(points.values()) == 10 and all(p > 0 for p in points.values())
    assert str(int(sum(points.values()))) + " points" in intro
    # Written answers, graded by hand in the formgrader: a model answer and a rubric for the
    # instructor in the source (nbgrader removes the solution region from the student's copy).
    written = {grade_id(c): c for c in nb.cells if _meta(c).get("grade") and c.cell_type == "markdown"}
    for gid, c in written.items():
        n = int(_meta(c)["points"])
        assert _meta(c)["solution"] and n > 0, gid
        answer = c.source.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
        assert "**Model answer.**" in answer and f"**Rubric ({n} points" in answer, gid
    if written:
        assert f"**{sum(int(_meta(c)['points']) for c in written.values())} points** graded by hand" in intro
    # After every solution cell: visible tests, then hidden tests, each worth points.
    cells = [c for c in nb.cells if c.cell_type == "code"]
    for i, c in enumerate(cells):
        if _meta(c).get("solution"):
            following = []
            for later in cells[i + 1:]:
                if not _is_test(later):
                    break
                following.append(later)
            visible = [t for t in following if "BEGIN HIDDEN TESTS" not in t.source]
            hidden = [t for t in following if "BEGIN HIDDEN TESTS" in t.source]
            assert visible and hidden, f"{grade_id(c)} needs visible and hidden tests"
            for t in hidden:
                n = int(float(_meta(t)["points"]))
                assert t.source.startswith(f"# Hidden tests ({n} point"), "say what the hidden tests check"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_version_holds_no_answers_and_no_hidden_data(assignment):
    text = (EXERCISES / assignment / f"{assignment}.ipynb").read_text()
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    assert not HIDDEN_BLOCK.search(text)
    nb = student_notebook(assignment)
    stubs = [c for c in nb.cells if _meta(c).get("solution") and c.cell_type == "code"]
    assert stubs and all("raise NotImplementedError()" in c.source for c in stubs)
    answers = [c for c in nb.cells if _meta(c).get("solution") and c.cell_type == "markdown"]
    assert all(c.source == "YOUR ANSWER HERE" for c in answers)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_student_version_needs_only_numpy(assignment):
    """Doing the exercise needs NumPy alone (the last cell's practice call, which a graded run
    skips, needs the course's grader: tests/course_grader/test_practice.py)."""
    for c in student_notebook(assignment).cells:
        if c.cell_type == "code" and "skip-execution" not in c.metadata.get("tags", []):
            for node in ast.walk(ast.parse(c.source)):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
                    assert all(m.split(".")[0] in {"numpy", "base64", "json", "zlib", "signal"} for m in modules), modules


def _bound(tree):
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_test_cell_stands_on_its_own(assignment):
    """A test cell uses only the setup cell, the assignment's functions and its own names.

    The clean re-run skips tests that already failed in the notebook, so a test that
    relied on a name from another test cell would fail there for no fault of the student.
    Hidden tests also have the two names the grader gives them (``reference``,
    ``grading_rng``: course_grader.hidden_tests), and only hidden tests do.
    """
    nb = source_notebook(assignment)
    setup = set().union(*(_bound(ast.parse(c.source)) for c in nb.cells
                          if c.cell_type == "code" and _meta(c).get("locked") and not _meta(c).get("grade")))
    api = set().union(*(_bound(ast.parse(c.source)) for c in nb.cells
                        if _meta(c).get("solution") and c.cell_type == "code"))
    for c in nb.cells:
        if c.cell_type == "code" and _is_test(c):
            tree = ast.parse(c.source)
            used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            grader = {"reference", "grading_rng"} if "BEGIN HIDDEN TESTS" in c.source else set()
            unknown = used - _bound(tree) - setup - api - grader - set(dir(builtins))
            assert not unknown, f"{grade_id(c)} uses {sorted(unknown)} from elsewhere"
            if grader:   # ... and only inside the hidden region, which the kernel never sees
                visible = c.source.split("### BEGIN HIDDEN TESTS")[0] + c.source.split("### END HIDDEN TESTS")[-1]
                assert not grader & {n.id for n in ast.walk(ast.parse(visible)) if isinstance(n, ast.Name)}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_source_and_student_versions_share_their_cells(assignment):
    source, student = source_notebook(assignment), student_notebook(assignment)
    assert [grade_id(c) for c in source.cells] == [grade_id(c) for c in student.cells]
    assert source.metadata["kernelspec"]["name"] == "python3"
    assert re.fullmatch(r"a\d+_[a-z_]+", assignment)
    assert nbformat.validate(student) is None


def test_the_exercises_page_lists_every_assignment_with_its_chapter_and_points():
    """One row per assignment on the book's Exercises page, in step with the notebook's own header."""
    page = (ROOT / "book" / "exercises.md").read_text()
    rows = {m.group(1): m.group(2).split(" | ")
            for m in re.finditer(r"^\| \{doc\}`exercises/(\w+)/\1` \| (.*) \|$", page, re.M)}
    assert set(rows) == set(ASSIGNMENTS)
    total_auto = total_written = 0
    for assignment, (objectives, chapters, points) in rows.items():
        nb = source_notebook(assignment)
        header = next(line for line in nb.cells[0].source.splitlines() if "goes with" in line)
        named = set(re.findall(r"\b(\d+) \(", header.split("goes with")[1]))
        assert named and named <= set(re.findall(r"\d+", chapters)), (assignment, chapters, header)
        auto = sum(float(_meta(c)["points"]) for c in nb.cells if _meta(c).get("grade") and c.cell_type == "code")
        written = sum(float(_meta(c)["points"]) for c in nb.cells
                      if _meta(c).get("grade") and c.cell_type == "markdown")
        assert points == (f"{auto:g} + {written:g} written" if written else f"{auto:g}"), assignment
        assert objectives.strip(), assignment
        total_auto, total_written = total_auto + auto, total_written + written
    assert f"{total_auto:g} points graded\nautomatically, and {total_written:g} for written answers" in page
