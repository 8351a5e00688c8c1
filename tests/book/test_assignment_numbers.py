"""The assignments are numbered in the order a student meets them, and every reference uses that number.

The table of contents lists the exercises in the order of the chapters that
link to them; their numbers (the ``aN_`` of the folder, which is also
nbgrader's assignment id) read 1, 2, ..., N down that list.  A chapter's
"Assignment N" link and admonition, a notebook's title and the overview
table on the exercises page all use the number of the folder they point to,
and an assignment's locked cells give only the answers of assignments
released before it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
CHAPTERS = sorted((BOOK / "chapters").glob("[0-9][0-9]_*.md"))
FOLDER = re.compile(r"a(\d+)_\w+")
#: ``{doc}`Assignment 3 <../exercises/a3_local_attention/a3_local_attention>```
LINK = re.compile(r"\{doc\}`Assignment\s+(\d+)\s+<\.\./exercises/(a(\d+)_\w+)/(\w+)>`")
ADMONITION = re.compile(r"^:::\{admonition\} Assignment (\d+):.*?^:::$", re.M | re.S)


def number(folder: str) -> int:
    return int(FOLDER.fullmatch(folder).group(1))


def toc_exercises() -> list[str]:
    """The assignment folders in the order the table of contents lists them."""
    toc = yaml.safe_load((BOOK / "_toc.yml").read_text())
    part = next(p for p in toc["parts"] if p["caption"] == "Exercises")
    page = next(c for c in part["chapters"] if c["file"] == "exercises")
    folders = []
    for section in page["sections"]:
        _, folder, stem = section["file"].split("/")
        assert stem == folder, f"{section['file']}: the notebook is named after its folder"
        folders.append(folder)
    return folders


def test_the_table_of_contents_numbers_the_assignments_1_to_n():
    folders = toc_exercises()
    assert [number(f) for f in folders] == list(range(1, len(folders) + 1))
    assert sorted(folders) == sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
    assert sorted(folders) == sorted(p.name for p in (BOOK / "exercises").iterdir() if p.is_dir())


def test_the_exercises_page_lists_them_in_the_same_order():
    listed = re.findall(r"^\| \{doc\}`exercises/(\w+)/\1`", (BOOK / "exercises.md").read_text(), re.M)
    assert listed == toc_exercises()


def home_chapters() -> dict[str, int]:
    """``{folder: index in CHAPTERS}``: the chapter that sets the assignment in an "Assignment N"
    admonition, else the first chapter that links to it (a look-ahead such as chapter 11's
    mention of chapter 13's cache does not move an assignment)."""
    set_in, first = {}, {}
    for index, chapter in enumerate(CHAPTERS):
        text = chapter.read_text()
        for block in ADMONITION.finditer(text):
            for match in LINK.finditer(block.group(0)):
                set_in.setdefault(match.group(2), index)
        for match in LINK.finditer(text):
            first.setdefault(match.group(2), index)
    return {**first, **set_in}


def test_the_order_follows_the_chapters():
    homes = home_chapters()
    folders = toc_exercises()
    assert set(homes) == set(folders), "every assignment is linked from a chapter"
    chapters = [homes[f] for f in folders]
    assert chapters == sorted(chapters), {f: CHAPTERS[homes[f]].stem for f in folders}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_links_to_an_assignment_by_its_own_number(chapter):
    text = chapter.read_text()
    for match in LINK.finditer(text):
        said, folder, in_folder, stem = match.groups()
        assert said == in_folder and stem == folder, match.group(0)
        assert (BOOK / "exercises" / folder / f"{folder}.ipynb").is_file(), match.group(0)
    for block in ADMONITION.finditer(text):
        linked = {m.group(3) for m in LINK.finditer(block.group(0))}
        assert linked <= {block.group(1)}, f"{chapter.stem}: {block.group(0)[:60]!r} links to {linked}"
    assert "{doc}`Assignment" not in LINK.sub("", text), f"{chapter.stem}: an assignment link in another form"


@pytest.mark.parametrize("folder", toc_exercises())
def test_a_notebook_carries_its_folders_number(folder):
    for notebook in (ROOT / "solutions" / folder / f"{folder}.ipynb",
                     BOOK / "exercises" / folder / f"{folder}.ipynb"):
        cells = json.loads(notebook.read_text())["cells"]
        title = "".join(cells[0]["source"]).splitlines()[0]
        assert title.startswith(f"# Assignment {number(folder)}: "), f"{notebook.name}: {title!r}"
        assert all(c["id"].startswith(f"a{number(folder)}-") for c in cells), notebook.name


def test_an_assignment_gives_only_earlier_answers():
    """Locked cells may hold an earlier assignment's answer (released before), never a later one's."""
    graded, given = {}, {}
    for folder in toc_exercises():
        cells = json.loads((ROOT / "solutions" / folder / f"{folder}.ipynb").read_text())["cells"]
        for cell in cells:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            if cell["metadata"].get("nbgrader", {}).get("solution"):
                graded.update(dict.fromkeys(re.findall(r"^def (\w+)\(", source, re.M), folder))
            else:
                given.setdefault(folder, set()).update(re.findall(r"^\s*def (\w+)\(", source, re.M))
    assert {"softmax", "layer_norm", "multi_head_attention"} <= set(graded)
    later = {folder: sorted(n for n in names if n in graded and number(graded[n]) > number(folder))
             for folder, names in given.items()}
    assert not any(later.values()), later
