"""Every file or folder of the repository that the book and the docs name in code font exists."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("*.md"), *(ROOT / "book").glob("*.md"), *(ROOT / "book" / "chapters").glob("*.md")])
#: made by a build, by grading or by set-up, not kept in the repository
GENERATED = ("_build/", ".venv/", "grading/", "submissions", "exercises/<", "solutions/<", "feedback/",
             "submitted/", "autograded/", "logs/", "COURSE_DIR")
PATH = re.compile(r"`([A-Za-z_.][\w.-]*/[\w./<>-]*)`")


def named_paths(page: Path):
    for match in PATH.finditer(page.read_text()):
        path = match.group(1)
        if path.startswith(GENERATED) or any(mark in path for mark in ("<", "*", "://", "NN_")):
            continue
        if re.search(r"\.(py|md|json|bib|yml|toml|txt|ipynb|npz)$", path) or path.endswith("/"):
            yield path


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_named_paths_exist(page):
    missing = [path for path in named_paths(page) if not (ROOT / path.split(" ")[0]).exists()]
    assert not missing, f"{page.name} names paths that do not exist: {missing}"
