"""The notebooks a reader downloads or opens in Colab / Binder.

The build publishes a clean ``.ipynb`` of every chapter, and every exercise
notebook, under ``_build/html/notebooks/``; every chapter's starts with the
install cell (so a chapter opened in Colab installs what it needs: the course
at the commit the site was built from).
"""

from __future__ import annotations

import html
import os
import re

import jupytext
import nbformat
import pytest

from built_site import BOOK, NOTEBOOKS, SITE, course_notebooks
from notebook_markdown import MYST_SYNTAX
from built_site import site  # noqa: F401  (fixture)

PUBLISHED = SITE / "notebooks"
EXERCISE_NOTEBOOKS = sorted(p for pattern in course_notebooks.EXTRA_NOTEBOOKS
                            for p in BOOK.glob(pattern) if ".ipynb_checkpoints" not in p.parts)


def code_cells(notebook) -> list:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def source(docname: str):
    return jupytext.read(course_notebooks.source_path(docname))


CHAPTERS = [d for d in NOTEBOOKS if d.startswith("chapters/")]
# What the site was built from: the commit checked out here (tests/book/test_install_cell.py
# tests the install cell itself, and its first-cell rule for the chapters' sources).
BUILT_FROM = course_notebooks.built_from(BOOK)
INSTALL_CELL = course_notebooks.install_cell(course_notebooks.repository(BOOK)[0], BUILT_FROM)
PRACTICE_INSTALL = course_notebooks.practice_install_cell(course_notebooks.repository(BOOK)[0], BUILT_FROM)


@pytest.mark.parametrize("docname", CHAPTERS)
def test_published_chapter_installs_the_version_it_was_built_from(site, docname):
    """The first cell of a chapter's published notebook, what Colab runs first, installs the
    course at the commit the site was built from: the commit checked out here."""
    notebook = nbformat.read(PUBLISHED / f"{docname}.ipynb", as_version=4)
    first = code_cells(notebook)[0]
    pinned = course_notebooks.pinned_version(first.source)
    assert pinned == BUILT_FROM, (f"{docname}: its notebook installs {pinned}, but this checkout is "
                                  f"{BUILT_FROM}: run `make book` again since the last commit")
    assert first.source == INSTALL_CELL


@pytest.mark.parametrize("docname", NOTEBOOKS)
def test_published_notebook(site, docname):
    path = PUBLISHED / f"{docname}.ipynb"
    assert path.is_file(), f"the build did not publish {path.relative_to(SITE)}"
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata["kernelspec"]["language"] == "python"
    assert "jupytext" not in notebook.metadata  # a plain notebook, not paired with a .md
    published, original = code_cells(notebook), code_cells(source(docname))
    if docname in CHAPTERS:  # what Colab runs first, then the chapter
        assert published[0].source == INSTALL_CELL
        published = published[1:]
    elif docname.startswith("exercises/"):   # its practice call first installs the grader, where missing
        assert published[-1].source == PRACTICE_INSTALL + "\n\n" + original[-1].source
        published, original = published[:-1], original[:-1]
    assert [c.source for c in published] == [c.source for c in original]
    assert all(c.outputs == [] and c.execution_count is None for c in published)


def test_exercise_notebooks_are_published_unchanged_but_for_the_practice_call(site):
    """The student notebooks (nbgrader metadata and all) are downloadable from the site as they are,
    but for their last cell, the practice call, which first installs the grader of the built commit."""
    for path in EXERCISE_NOTEBOOKS:
        published, original = nbformat.read(PUBLISHED / path.relative_to(BOOK), 4), nbformat.read(path, 4)
        *cells, last = published.cells
        assert cells == original.cells[:-1] and published.metadata == original.metadata, path
        assert last.source == PRACTICE_INSTALL + "\n\n" + original.cells[-1].source, path
        assert last.metadata == original.cells[-1].metadata == {"tags": ["skip-execution"]}, path
        assert course_notebooks.pinned_version(last.source) == BUILT_FROM
    published = sorted((PUBLISHED / "exercises").rglob("*.ipynb")) if (PUBLISHED / "exercises").exists() else []
    assert [p.relative_to(PUBLISHED) for p in published] == [p.relative_to(BOOK) for p in EXERCISE_NOTEBOOKS]


def test_standalone_script_writes_the_same_code_and_exercises(site, tmp_path):
    """`python book/_ext/course_notebooks.py OUTDIR` (no build: MyST left as it is) gives the
    same code cells and, byte for byte, the same exercise notebooks as the build published."""
    written = course_notebooks.write_notebooks(tmp_path)
    assert written
    for path in written:
        relative = path.relative_to(tmp_path)
        if relative.parts[0] == "exercises":
            assert path.read_bytes() == (PUBLISHED / relative).read_bytes(), relative
        else:
            standalone, published = nbformat.read(path, 4), nbformat.read(PUBLISHED / relative, 4)
            assert [c.source for c in code_cells(standalone)] == [c.source for c in code_cells(published)]


@pytest.mark.parametrize("docname", CHAPTERS)
def test_published_chapter_reads_without_myst(site, docname):
    """A chapter in Colab or Jupyter shows what the site shows: no role, fence or label left."""
    notebook = nbformat.read(PUBLISHED / f"{docname}.ipynb", as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            found = MYST_SYNTAX.search(cell.source)
            assert found is None, f"{docname}: MyST left in a Markdown cell: {found[0]!r}"
    note = notebook.cells[0]
    assert note.cell_type == "markdown" and f"{docname}.html" in note.source


@pytest.mark.parametrize("docname", CHAPTERS)
def test_published_chapter_shows_the_sites_numbers(site, docname):
    """Every glued number of the notebook is the one the site's page shows, in the same order."""
    notebook = nbformat.read(PUBLISHED / f"{docname}.ipynb", as_version=4)
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    in_notebook = re.findall(r'<span title="[^"]*book\'s own run[^"]*">(.*?)</span>', markdown)
    page = (SITE / f"{docname}.html").read_text()
    on_site = [html.unescape(v) for v in re.findall(r'<span class="pasted-text">(.*?)</span>', page)]
    straight = str.maketrans("“”‘’", "\"\"''")   # Sphinx's smart quotes; a notebook keeps them straight
    assert in_notebook == [value.translate(straight) for value in on_site]
    assert len(in_notebook) == len(re.findall(r"\{glue:text\}`", course_notebooks.source_path(docname).read_text()))


def test_a_published_chapter_runs_in_a_fresh_kernel_and_gives_the_sites_numbers(site, tmp_path):
    """Chapter 2's published notebook, run top to bottom as a student would (install cell
    first, in a new kernel, outside the repository): every glued number equals the site's."""
    from myst_nb.core.variables import format_plain_text
    from nbclient import NotebookClient

    docname = "chapters/02_attention_as_lookup"
    notebook = nbformat.read(PUBLISHED / f"{docname}.ipynb", as_version=4)
    environment = {"ATTENTION_COURSE_CACHE": str(tmp_path / "cache")}
    NotebookClient(notebook, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(env=os.environ | environment)
    glued = {}   # glue's outputs: {mime_prefix + "text/plain": ...} under the name it was glued as
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            record = output.get("metadata", {}).get("scrapbook")
            if record:
                glued[record["name"]] = output.data[record.get("mime_prefix", "") + "text/plain"]
    roles = re.findall(r"\{glue:text\}`([^`:]+):?([^`]*)`", course_notebooks.source_path(docname).read_text())
    ran = [format_plain_text(glued[key], fmt or "s") for key, fmt in roles]
    page = (SITE / f"{docname}.html").read_text()
    on_site = [html.unescape(v) for v in re.findall(r'<span class="pasted-text">(.*?)</span>', page)]
    assert len(ran) == len(on_site) >= 10
    assert ran == on_site
