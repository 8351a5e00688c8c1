"""The install cell that the build puts first in every chapter's notebook (``book/_ext/install_cell.py``).

A reader who downloads a chapter, or opens it in Colab or Binder, runs it first:
where the course package is missing it installs the package at the commit the
notebook was built from (with pip's progress), then the data packages; offline it
stops with one sentence saying what to do.  These tests export the notebooks as the
build does (``course_notebooks.write_notebooks``, without Sphinx) and run the cell.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from unittest import mock

import jupytext
import nbformat
import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
sys.path.insert(0, str(BOOK / "_ext"))
import course_notebooks  # noqa: E402

REPOSITORY, _ = course_notebooks.repository()
HEAD = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                      check=True).stdout.strip()
CHAPTERS = [d for d in course_notebooks.notebook_docnames() if d.startswith("chapters/")]
UNREACHABLE = "http://127.0.0.1:9/attention-transformers"   # the discard port: refused at once


def code_cells(notebook) -> list:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def constant(source: str, name: str):
    """The value of ``name = <literal>`` in a cell."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == [name]:
            return ast.literal_eval(node.value)
    raise KeyError(name)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """The notebooks, as the build writes them (its MyST left as it is: no Sphinx here)."""
    folder = tmp_path_factory.mktemp("notebooks")
    course_notebooks.write_notebooks(folder)
    return folder


def test_an_exported_chapter_installs_the_commit_it_was_built_from(exported):
    """The notebook's own version: the commit checked out where it was built, which git knows."""
    for docname in CHAPTERS:
        first = code_cells(nbformat.read(exported / f"{docname}.ipynb", as_version=4))[0]
        assert constant(first.source, "VERSION") == course_notebooks.pinned_version(first.source) == HEAD
        assert constant(first.source, "REPOSITORY") == REPOSITORY
        assert first.source == course_notebooks.install_cell(REPOSITORY, HEAD), docname
    kind = subprocess.run(["git", "cat-file", "-t", HEAD], cwd=ROOT, capture_output=True, text=True)
    assert kind.stdout.strip() == "commit"


def test_an_exported_chapter_is_its_source_after_the_install_cell(exported):
    for docname in CHAPTERS:
        notebook = nbformat.read(exported / f"{docname}.ipynb", as_version=4)
        source = jupytext.read(course_notebooks.source_path(docname))
        assert [c.source for c in code_cells(notebook)[1:]] == [c.source for c in code_cells(source)]


def test_a_notebook_built_outside_git_installs_the_branch(tmp_path):
    """A source archive has no commit: its notebooks install _config.yml's branch."""
    (tmp_path / "_config.yml").write_text((BOOK / "_config.yml").read_text())
    assert course_notebooks.built_from(tmp_path) == course_notebooks.repository()[1] == "main"
    assert course_notebooks.built_from(BOOK) == HEAD


@pytest.mark.parametrize("docname", CHAPTERS)
def test_every_chapter_starts_with_chapter_ones_first_cell(docname):
    """The chapters' sources share their first cell (TensorFlow's quiet import), verbatim."""
    first = code_cells(jupytext.read(course_notebooks.source_path(docname)))[0]
    exemplar = code_cells(jupytext.read(course_notebooks.source_path(CHAPTERS[0])))[0]
    assert first.source == exemplar.source, f"{docname}: the first code cell must be chapter 1's, verbatim"
    assert "remove-cell" in first.metadata.get("tags", []), f"{docname}: tag it remove-cell"
    assert "pip" not in first.source   # the build adds the install cell; the source has none


def test_the_install_cell_names_this_package_and_the_pinned_data():
    cell = course_notebooks.install_cell(REPOSITORY, HEAD)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    calls = run_cell_with_pip(cell, installed=False)
    assert len(calls) == 2
    course, data = calls
    requirement = Requirement(course[-1])
    assert requirement.name == project["name"]
    assert requirement.extras <= set(project["optional-dependencies"])
    assert requirement.url == f"git+{REPOSITORY}@{HEAD}"
    assert "--quiet" not in course + data and "-q" not in course + data
    assert "--no-deps" in data
    pinned = [line.split("#")[0].strip() for line in (ROOT / "requirements-nodeps.txt").read_text().splitlines()]
    assert sorted(a for a in data if "==" in a) == sorted(p for p in pinned if p)


def test_the_install_cell_shows_pips_progress(capsys):
    run_cell_with_pip(course_notebooks.install_cell(REPOSITORY, HEAD), installed=False,
                      output=["Collecting attention-course\n", "Successfully installed attention-course\n"])
    assert "Collecting attention-course\nSuccessfully installed" in capsys.readouterr().out


def test_the_install_cell_does_nothing_when_the_package_is_installed():
    assert run_cell_with_pip(course_notebooks.install_cell(REPOSITORY, HEAD), installed=True) == []


def run_cell_with_pip(cell: str, installed: bool, output=()) -> list[list[str]]:
    """Run ``cell`` with pip replaced by a stand-in that succeeds; the pip commands it ran."""
    calls = []

    def fake_pip(command, **options):
        assert command[:4] == [sys.executable, "-m", "pip", "install"]
        calls.append(command[4:])
        process = mock.Mock()
        process.stdout = iter(output)
        process.wait.return_value = 0
        return process

    found = mock.Mock() if installed else None
    with mock.patch("importlib.util.find_spec", return_value=found), \
         mock.patch("subprocess.Popen", side_effect=fake_pip):
        exec(compile(cell, "install-cell", "exec"), {})
    return calls


def test_offline_the_install_cell_says_what_to_do_in_one_sentence(tmp_path):
    """In a real kernel, with no package index and a repository that cannot be reached (and the
    package hidden, as in a fresh environment), pip fails: the cell shows its progress and then
    one sentence, no traceback, and stops *Run all* (the cell ends in an error)."""
    from nbclient import NotebookClient

    cell = course_notebooks.install_cell(UNREACHABLE, HEAD)
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import sys\nsys.modules['attention_course'] = None   # missing"),
        nbformat.v4.new_code_cell(cell),
        nbformat.v4.new_code_cell("print('after')")])
    environment = {"PIP_NO_INDEX": "1", "PIP_TARGET": str(tmp_path / "target"),
                   "PIP_DISABLE_PIP_VERSION_CHECK": "1", "GIT_TERMINAL_PROMPT": "0",
                   "PIP_CONFIG_FILE": "/dev/null"}
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=os.environ | environment)
    outputs = notebook.cells[1].outputs
    errors = [o for o in outputs if o.output_type == "error"]
    streams = "".join(o.text for o in outputs if o.output_type == "stream")
    assert len(errors) == 1 and errors[0].ename == "CourseNotInstalled"
    (sentence,) = errors[0].traceback
    assert sentence.startswith("Could not install the course") and sentence.count(". ") == 0
    assert "connect to the internet" in sentence and "pip install" in sentence and HEAD[:12] in sentence
    assert "Traceback" not in streams + sentence and "error:" not in streams.lower()
    assert f"{UNREACHABLE}@{HEAD}" in streams   # pip's progress: what it is collecting
    assert not (tmp_path / "target").exists()   # nothing was installed


def test_an_exercises_practice_call_installs_the_grader_of_its_commit_and_no_data():
    cell = course_notebooks.practice_install_cell(REPOSITORY, HEAD)
    [course] = run_cell_with_pip(cell, installed=False)
    requirement = Requirement(course[-1])
    assert requirement.extras == {"practice"} and requirement.url == f"git+{REPOSITORY}@{HEAD}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "practice" in project["optional-dependencies"]
    assert run_cell_with_pip(cell, installed=True) == []


def test_the_published_practice_cell_installs_then_checks():
    exercise = sorted((ROOT / "book" / "exercises").glob("*/*.ipynb"))[0]
    published = course_notebooks.with_practice_install(exercise.read_text(), "INSTALL LINES")
    last = nbformat.reads(published, as_version=4).cells[-1]
    assert last.source.startswith("INSTALL LINES\n\n") and last.source.endswith("check()")


def test_the_install_cell_is_short_titled_and_folded(exported):
    """A student scrolls past it: one title line saying what it does, at most 35 lines of code,
    none wider than the notebook's code box, and folded (Colab shows its title as a form,
    JupyterLab and Notebook 7 hide its input); its output, pip's progress, still shows."""
    cell = course_notebooks.install_cell(REPOSITORY, HEAD)
    lines = cell.splitlines()
    assert lines[0].startswith("# @title Install the course")
    assert len(lines) <= 35, f"{len(lines)} lines"
    assert max(map(len, lines)) <= 100
    for docname in CHAPTERS:
        first = code_cells(nbformat.read(exported / f"{docname}.ipynb", as_version=4))[0]
        assert first.metadata.get("cellView") == "form", docname
        assert first.metadata.get("jupyter", {}).get("source_hidden") is True, docname
        later = code_cells(nbformat.read(exported / f"{docname}.ipynb", as_version=4))[1:]
        assert not any(c.metadata.get("jupyter", {}).get("source_hidden") for c in later), docname


def test_the_practice_cells_install_lines_have_no_title_of_their_own():
    lines = course_notebooks.practice_install_cell(REPOSITORY, HEAD).splitlines()
    assert not any("@title" in line for line in lines)
    assert lines[0].startswith("REPOSITORY = ")
