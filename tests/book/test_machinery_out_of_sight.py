"""The chapters' sources keep the book's machinery out of what a reader sees (issue 35).

The same rules as the test over the built site (``tests/site/test_site_machinery.py``),
applied to the MyST sources, so that a violation fails without building the book:
no visible code cell (one without a ``remove-cell`` or ``remove-input`` tag)
calls ``claim``, ``measure``, ``glue`` or ``notebook.setup`` or imports them, and
no prose outside a folded note talks of make targets, caches, oneDNN, graph
rewrites or claim thresholds (:mod:`machinery_rules`).
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

import machinery_rules

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book" / "chapters").glob("[0-9][0-9]_*.md"))
HIDDEN = {"remove-cell", "remove-input"}
TRAINS = re.compile(r"\bclaim\(")


def visible_code_cells(path: Path):
    for cell in jupytext.read(path).cells:
        if cell.cell_type == "code" and not HIDDEN & set(cell.metadata.get("tags", [])):
            yield cell.source


FOLDED = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?:admonition|dropdown)\}.*?$(?P<body>.*?)^(?P=fence)\s*$",
                    re.M | re.S)
ROLE = re.compile(r"\{(?:glue:text|doc|ref|numref|eq|cite|cite:p|cite:t)\}`[^`]*`")


def unfolded_prose(path: Path) -> str:
    """The Markdown cells of a chapter without its folded notes, and without roles' targets."""
    prose = "\n\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")

    def unfold(match):
        folded = match.group(0).split("\n", 2)
        is_dropdown = match.group(0).startswith(match.group("fence") + "{dropdown}") or \
            any(line.strip() == ":class: dropdown" for line in folded[1:3])
        return "" if is_dropdown else match.group("body")

    return ROLE.sub("", FOLDED.sub(unfold, prose))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_visible_code_cell_shows_the_machinery(path):
    problems = [(cell.splitlines()[0], found) for cell in visible_code_cells(path)
                if (found := machinery_rules.code_problems(cell))]
    assert not problems, (f"{path.name}: visible code cells with the book's machinery (move it into a cell "
                          f"tagged remove-cell): {problems}")


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_no_prose_outside_a_folded_note_talks_of_the_machinery(path):
    text = path.read_text(encoding="utf-8")
    found = machinery_rules.prose_problems(unfolded_prose(path), machinery_rules.teaches_a_cache(text))
    assert not found, (f"{path.name}: prose about the book's machinery outside a folded note "
                       f"(move it into the 'How much do these numbers vary?' note): {found}")


@pytest.mark.parametrize("path", [p for p in CHAPTERS if TRAINS.search(p.read_text(encoding="utf-8"))],
                         ids=lambda p: p.stem)
def test_a_chapter_that_trains_has_one_folded_note_on_how_much_its_numbers_vary(path):
    text = path.read_text(encoding="utf-8")
    notes = re.findall(r"^:::\{admonition\} How much do these numbers vary\?\n:class: dropdown\n(.*?)^:::$",
                       text, re.M | re.S)
    assert len(notes) == 1, f"{path.name}: {len(notes)} notes 'How much do these numbers vary?'"
    assert "status" in notes[0] and "seed" in notes[0] and "CPU" in notes[0]


def test_the_rules_catch_what_they_are_for():
    """A wrong rule would pass every page: the patterns flag the machinery and leave the lessons."""
    assert machinery_rules.code_problems('notebook.glue("ch1_x", 1)\nclaim("ch1_y", y, ">", 0, "y")')
    assert machinery_rules.code_problems("from attention_course.chapter_tools import explorer, notebook")
    assert machinery_rules.code_problems("x = 1   # checked under eight seeds by `make claims`")
    assert not machinery_rules.code_problems("from attention_course.training.cache import trained_model\n"
                                             "run = trained_model('ch5', build, fit)\nplotting.plot(x)")
    assert machinery_rules.prose_problems("asserted: at least 99 %", False)
    assert machinery_rules.prose_problems("the model is cached, keyed on its code", False)
    assert machinery_rules.prose_problems("TensorFlow's oneDNN kernels", True)
    assert not machinery_rules.prose_problems("A KV cache keeps the keys.", False)
    assert machinery_rules.prose_problems("Without the cache it is slower.", False)
    assert not machinery_rules.prose_problems("Without the cache it is slower.", True)
    prose = "Before.\n\n:::{admonition} How much do these numbers vary?\n:class: dropdown\n\n`make claims`\n:::\n"
    assert machinery_rules.PROSE.search(prose)
    folded = FOLDED.sub(lambda m: "", prose)
    assert not machinery_rules.PROSE.search(folded)
