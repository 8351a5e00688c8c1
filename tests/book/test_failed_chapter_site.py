"""A chapter that fails still leaves a site: every page written, the failed one saying why.

``scripts/build_book.py`` on a book of three tiny chapters, one of which fails
in its second code cell: the build exits non-zero and names the cell, the
other pages are written as usual, and the failed page shows, under its title,
which cell failed and the error, with the outputs of the cells before it.
Fixed, the chapter is executed again and its page loses the notice.
"""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
from book_build import build as build_book  # noqa: E402

HEADER = (ROOT / "book" / "chapters" / "09_encoder_block.md").read_text().split("---", 2)[1]


def page(title: str, *cells: str) -> str:
    body = "".join(f"Some prose.\n\n```{{code-cell}} ipython3\n{cell}\n```\n\n" for cell in cells)
    return f"---{HEADER}---\n\n# {title}\n\n{body}"


@pytest.fixture
def tiny_book(tmp_path, monkeypatch):
    """A book folder with its own configuration, using the course's Sphinx extension."""
    book = tmp_path / "book"
    (book / "chapters").mkdir(parents=True)
    (book / "_config.yml").write_text(f"""
title: Tiny
only_build_toc_files: true
exclude_patterns: [_build, ".*"]
execute:
  execute_notebooks: cache
  allow_errors: false
bibtex_bibfiles: [references.bib]
repository:
  url: https://github.com/example/tiny
  path_to_book: book
  branch: main
launch_buttons:
  notebook_interface: jupyterlab
  colab_url: "https://colab.research.google.com"
sphinx:
  local_extensions:
    course_sphinx: {ROOT / "book" / "_ext"}
  config:
    nb_execution_raise_on_error: true
""")
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n"
                                   "- file: chapters/01_fine\n- file: chapters/02_broken\n"
                                   "- file: chapters/03_also_fine\n")
    (book / "intro.md").write_text("# Tiny book\n\nThree chapters.\n")
    (book / "references.bib").write_text("@misc{tiny, title={Tiny}, year={2026}}\n")
    (book / "chapters" / "01_fine.md").write_text(page("Fine", "print('one plus one is', 1 + 1)"))
    (book / "chapters" / "02_broken.md").write_text(page(
        "Broken", "print('before the failure')",
        "raise ValueError('the claim about the model does not hold')", "print('never run')"))
    (book / "chapters" / "03_also_fine.md").write_text(page("Also fine", "print('three')"))
    build = tmp_path / "_build"
    for name, value in {"ROOT": tmp_path, "BOOK": book, "BUILD": build,
                        "EXECUTION_CACHE": build / ".jupyter_cache", "DOCTREES": build / ".doctrees",
                        "KEYS": build / ".chapter-keys.json", "CLAIMS": build / "claims",
                        "TOC_BUILT": build / ".toc-built.yml",
                        "FAILED_PAGES": build / "failed-pages.json"}.items():
        monkeypatch.setattr(build_book, name, value)
    monkeypatch.setenv("BOOK_JOBS", "2")
    # the build points its chapters at a model cache: the tiny book's own, never the book's
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(build / "course_cache"))
    return tmp_path


def test_a_failed_chapter_fails_the_build_but_every_page_is_written(tiny_book, capsys):
    html = tiny_book / "_build" / "html"
    assert build_book.main() == 1
    err = capsys.readouterr().err
    assert "book build FAILED: 1 chapter(s) failed to execute" in err
    assert "book/chapters/02_broken.md, the code cell of line" in err
    assert "ValueError: the claim about the model does not hold" in err

    for name in ("intro", "chapters/01_fine", "chapters/03_also_fine"):
        text = (html / f"{name}.html").read_text()
        assert "This page did not build" not in text, name
    assert "one plus one is 2" in (html / "chapters/01_fine.html").read_text()

    broken = (html / "chapters/02_broken.html").read_text()
    assert "This page did not build" in broken
    assert broken.index("This page did not build") < broken.index("before the failure")
    assert "the claim about the model does not hold" in broken
    assert "before the failure" in broken          # the outputs of the cells that ran
    record = json.loads((tiny_book / "_build" / "failed-pages.json").read_text())
    assert list(record) == ["chapters/02_broken"]
    lines = (tiny_book / "book/chapters/02_broken.md").read_text().splitlines()
    assert lines[record["chapters/02_broken"]["line"] - 1].startswith("raise ValueError")  # its first line
    assert "raise ValueError" in record["chapters/02_broken"]["source"]

    # fixed: executed again (its key was not kept), and the notice is gone
    chapter = tiny_book / "book" / "chapters" / "02_broken.md"
    chapter.write_text(chapter.read_text().replace(
        "raise ValueError('the claim about the model does not hold')", "print('fixed')"))
    assert build_book.main() == 0
    fixed = (html / "chapters/02_broken.html").read_text()
    assert "This page did not build" not in fixed and "fixed" in fixed and "never run" in fixed
    assert json.loads((tiny_book / "_build" / "failed-pages.json").read_text()) == {}
