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
The student notebooks of the exercises (``book/exercises/**/*.ipynb``) are copied
there unchanged.

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
import sys
from pathlib import Path

BOOK = Path(__file__).resolve().parents[1]

# Student notebooks published as they are (nbgrader metadata must survive).
EXTRA_NOTEBOOKS = ("exercises/**/*.ipynb",)


def toc_docnames(root: Path = BOOK) -> list[str]:
    """Every page of ``_toc.yml`` in reading order (depth first), root page first."""
    from sphinx_external_toc.parsing import parse_toc_yaml

    site_map = parse_toc_yaml(root / "_toc.yml")
    order: list[str] = []

    def visit(docname: str) -> None:
        order.append(docname)
        for subtree in site_map[docname].subtrees:
            for item in subtree.items:
                if isinstance(item, str):  # not a URL or a glob
                    visit(item)

    visit(site_map.root.docname)
    return order


def source_path(docname: str, root: Path = BOOK) -> Path:
    """The source file of a page (``.md`` or ``.ipynb``)."""
    for suffix in (".md", ".ipynb"):
        path = root / f"{docname}{suffix}"
        if path.exists():
            return path
    raise FileNotFoundError(f"no source file for the page {docname!r} in _toc.yml")


def read_notebook(path: Path):
    """The page as a notebook (jupytext), or None for a plain Markdown page."""
    import jupytext

    notebook = jupytext.read(path)
    return notebook if "kernelspec" in notebook.metadata else None


def notebook_docnames(root: Path = BOOK) -> list[str]:
    """The pages of the table of contents that are notebooks, in reading order."""
    return [d for d in toc_docnames(root) if read_notebook(source_path(d, root)) is not None]


def clean_notebook(path: Path, references=None, docname: str | None = None) -> str:
    """The page as ``.ipynb`` text: no outputs, stable cell ids, no jupytext pairing.

    With ``references`` (a :class:`notebook_markdown.References`), the Markdown
    cells are converted from MyST to what a notebook renders, and a first cell
    says where the page comes from and whose numbers the text shows.
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


def write_notebooks(outdir: Path, root: Path = BOOK, references=None) -> list[Path]:
    """Write every notebook page and exercise notebook under ``outdir``; return the paths.

    ``references(docname)``, if given, returns the page's
    :class:`notebook_markdown.References`: the chapters' MyST Markdown is then
    converted (the exercise notebooks are plain Markdown, copied byte for byte).
    """
    written = []
    for docname in notebook_docnames(root):
        target = outdir / f"{docname}.ipynb"
        path = source_path(docname, root)
        page_references = references(docname) if references and path.suffix == ".md" else None
        _write_if_changed(target, clean_notebook(path, page_references, docname).encode())
        written.append(target)
    for pattern in EXTRA_NOTEBOOKS:
        for path in sorted(root.glob(pattern)):
            if ".ipynb_checkpoints" in path.parts:
                continue
            target = outdir / path.relative_to(root)
            _write_if_changed(target, path.read_bytes())
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
