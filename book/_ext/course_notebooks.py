"""The book's pages as Jupyter notebooks, for Colab, Binder and the download button.

The chapters are MyST-Markdown notebooks (``book/chapters/NN_topic.md``), but Colab
and Binder open ``.ipynb`` files only, and a reader who downloads a chapter
wants a notebook.  So every build writes a clean ``.ipynb`` (no outputs) for
every notebook page of the table of contents, into ``_build/html/notebooks/``
under the page's own path, e.g. ``notebooks/chapters/01_seq2seq_rnn.ipynb``,
with its MyST Markdown converted to what a notebook renders
(:mod:`notebook_markdown`: the glued numbers, links and numbers of the site),
and below every code cell that draws a numbered figure, that figure's number
and caption (which the site keeps in the cell's metadata).
Before its first code cell, every chapter's notebook gets the install cell
(``install_cell.py``, here): where the course package is missing (Colab, Binder,
a fresh environment) it installs the package from the repository at the commit
the notebook was built from (:func:`built_from`), showing pip's progress, and,
offline, stops with one sentence saying what to do.  The chapters' sources do
not carry it: in the repository the package is installed.
The student notebooks of the exercises (``book/exercises/**/*.ipynb``) are copied
there as they are, but for their last cell, the practice call: it first installs,
where it is missing, the grader at the same commit (``[practice]``, no data).

The Sphinx extension ``course_sphinx`` calls :func:`write_notebooks` at the
end of every build and points the download and launch buttons at the files.
The workflow that deploys the site also publishes this folder, laid over the
repository, as the branch that the Colab and Binder buttons open.

Standalone (the same files, without building the book, so with their MyST
Markdown unconverted: the conversion needs the numbers and anchors of a build)::

    python book/_ext/course_notebooks.py OUTDIR
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

from book_build import chapters   # the table of contents, read as the build reads it

BOOK = Path(__file__).resolve().parents[1]
#: the first code cell of every chapter's notebook, as a template (REPOSITORY and VERSION filled in)
INSTALL_TEMPLATE = Path(__file__).resolve().with_name("install_cell.py")
#: the install cell's metadata: its code folded (Colab: a form showing its title; Jupyter: hidden input)
FOLDED = {"cellView": "form", "jupyter": {"source_hidden": True}}
#: the install cell's first line: what it does, the title Colab shows in place of its code
TITLE = re.compile(r"^# @title .*\n")

# Student notebooks published as they are (nbgrader metadata must survive).
EXTRA_NOTEBOOKS = ("exercises/**/*.ipynb",)


def toc_docnames(root: Path = BOOK) -> list[str]:
    """Every page of ``_toc.yml`` in reading order (depth first), root page first."""
    return chapters.toc_docnames(root)


def source_path(docname: str, root: Path = BOOK) -> Path:
    """The source file of a page (``.md`` or ``.ipynb``)."""
    return chapters.source_path(docname, root)


def read_notebook(path: Path):
    """The page as a notebook (jupytext), or None for a plain Markdown page."""
    import jupytext

    notebook = jupytext.read(path)
    return notebook if "kernelspec" in notebook.metadata else None


def notebook_docnames(root: Path = BOOK) -> list[str]:
    """The pages of the table of contents that are notebooks, in reading order."""
    return [d for d in toc_docnames(root) if read_notebook(source_path(d, root)) is not None]


def repository(root: Path = BOOK) -> tuple[str, str]:
    """The repository's URL and branch, as ``_config.yml`` names them."""
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text())["repository"]
    return config["url"].rstrip("/"), config.get("branch", "main")


def built_from(root: Path = BOOK) -> str:
    """The version a notebook built from ``root`` installs: the commit checked out there.

    Outside a git checkout (a source archive) there is none, and the notebooks
    install the repository's branch.
    """
    try:
        found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                               text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return repository(root)[1]
    return found.stdout.strip()


def install_cell(repository_url: str, version: str, **settings: str) -> str:
    """The install cell's source, installing ``version`` (a commit, tag or branch) of the repository.

    ``settings`` replace the template's other ``NAME = "..."`` lines (``EXTRAS``, ``NEEDS``).
    """
    source = INSTALL_TEMPLATE.read_text()
    for name, value in (("REPOSITORY", repository_url), ("VERSION", version), *settings.items()):
        pattern = re.compile(rf'^{name} = "[^"\n]*"', re.MULTILINE)
        source, count = pattern.subn(lambda _: f'{name} = "{value}"', source)
        if count != 1:
            raise ValueError(f"{INSTALL_TEMPLATE.name}: expected one line `{name} = \"...\"`")
    return source.rstrip("\n")


def practice_install_cell(repository_url: str, version: str) -> str:
    """The install lines an exercise's practice call gets: the grader (``[practice]``), no data."""
    source = install_cell(repository_url, version, EXTRAS="practice", NEEDS="nbgrader")
    source = TITLE.sub("", source, count=1)   # inside the practice cell, not a cell of its own
    source, count = re.subn(r"^DATA = \[.*$", "DATA = []", source, flags=re.MULTILINE)
    if count != 1:
        raise ValueError(f"{INSTALL_TEMPLATE.name}: expected one line `DATA = [...]`")
    return source


#: The last cell of every exercise (course_authoring/assignment_header.py's PRACTICE)
PRACTICE_CALL = "from course_grader.practice import check"


def with_practice_install(notebook_text: str, install: str) -> str:
    """An exercise notebook whose practice cell first installs what it needs (Colab has none of it)."""
    import nbformat

    notebook = nbformat.reads(notebook_text, as_version=nbformat.NO_CONVERT)
    for cell in notebook.cells:
        if cell.cell_type == "code" and PRACTICE_CALL in cell.source:
            cell.source = install + "\n\n" + cell.source
    return nbformat.writes(notebook) + "\n"


def pinned_version(cell_source: str) -> str:
    """The version an install cell installs (its ``VERSION = "..."`` line)."""
    return re.search(r'^VERSION = "([^"\n]*)"', cell_source, re.MULTILINE).group(1)


def clean_notebook(path: Path, references=None, docname: str | None = None,
                   install: str | None = None) -> str:
    """The page as ``.ipynb`` text: no outputs, stable cell ids, no jupytext pairing.

    With ``references`` (a :class:`notebook_markdown.References`), the Markdown
    cells are converted from MyST to what a notebook renders, and a first cell
    says where the page comes from and whose numbers the text shows.  With
    ``install`` (see :func:`install_cell`), that code cell comes before the
    page's first code cell.
    """
    import jupytext
    import nbformat

    notebook = read_notebook(path)
    notebook.metadata.pop("jupytext", None)  # a plain notebook, not paired with the .md
    if references is not None:
        from notebook_markdown import code_figure_caption, convert_markdown

        cells = []
        for cell in notebook.cells:
            cells.append(cell)
            if cell.cell_type == "markdown":
                # page_dir: the images of the page's figures, embedded in the notebook
                cell.source = convert_markdown(cell.source, references, docname, path.parent)
            elif cell.cell_type == "code":
                # the figure's number and caption, kept by the site in the cell's metadata,
                # shown below the cell, where the figure appears when it runs
                caption = code_figure_caption(cell.metadata, references, docname, path.parent)
                if caption is not None:
                    cells.append(nbformat.v4.new_markdown_cell(caption))
        notebook.cells = cells
        note = [f"This notebook is a page of the course [Attention & Transformers]"
                f"({references.url(docname + '.html')}), as a notebook."]
        if references.glue:
            note.append("The numbers in its text are those of the book's own run; when you run "
                        "it, yours may differ slightly (the book's [status page]"
                        f"({references.url('status.html')}) says what varies).")
        notebook.cells.insert(0, nbformat.v4.new_markdown_cell("*" + " ".join(note) + "*"))
    if install is not None:
        first_code = next((i for i, c in enumerate(notebook.cells) if c.cell_type == "code"),
                          len(notebook.cells))
        cell = nbformat.v4.new_code_cell(install)
        # folded out of the reader's way: Colab shows the cell's "# @title" line (a form),
        # JupyterLab and Notebook 7 a collapsed input; the outputs (pip's progress) still show
        cell.metadata.update(FOLDED)
        notebook.cells.insert(first_code, cell)
    for index, cell in enumerate(notebook.cells):
        # jupytext draws random ids; stable ones keep rebuilds byte-identical.
        digest = hashlib.sha1(f"{index}\n{cell.source}".encode()).hexdigest()[:8]
        cell["id"] = f"cell-{index}-{digest}"
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return jupytext.writes(notebook, fmt="ipynb")


def _write_if_changed(target: Path, data: bytes) -> None:
    if target.exists() and target.read_bytes() == data:
        return  # keep the timestamp: nothing to upload again
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def write_notebooks(outdir: Path, root: Path = BOOK, references=None,
                    version: str | None = None) -> list[Path]:
    """Write every notebook page and exercise notebook under ``outdir``; return the paths.

    ``references(docname)``, if given, returns the page's
    :class:`notebook_markdown.References`: the chapters' MyST Markdown is then
    converted (the exercise notebooks are plain Markdown, copied byte for byte).
    The chapters' install cells install ``version`` (default: :func:`built_from`).
    """
    install = install_cell(repository(root)[0], version or built_from(root))
    practice_install = practice_install_cell(repository(root)[0], version or built_from(root))
    written = []
    for docname in notebook_docnames(root):
        target = outdir / f"{docname}.ipynb"
        path = source_path(docname, root)
        page_references = references(docname) if references and path.suffix == ".md" else None
        page_install = install if path.suffix == ".md" else None
        _write_if_changed(target, clean_notebook(path, page_references, docname, page_install).encode())
        written.append(target)
    for pattern in EXTRA_NOTEBOOKS:
        for path in sorted(root.glob(pattern)):
            if ".ipynb_checkpoints" in path.parts:
                continue
            target = outdir / path.relative_to(root)
            _write_if_changed(target, with_practice_install(path.read_text(), practice_install).encode())
            written.append(target)
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("Standalone", 1)[1].strip(), file=sys.stderr)
        return 2
    outdir = Path(argv[0])
    for path in write_notebooks(outdir):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
