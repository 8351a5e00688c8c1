"""A figure's drawing code is folded when it is long, and never removed.

One rule for every page (the reviewers found drawing code shown on five pages and
removed on a sixth): a figure cell, a code cell whose metadata names and captions
its figure (``mystnb: figure: {name: ..., caption: ...}``), keeps its code on the
page, so no ``remove-input``; when that code is longer than :data:`FOLD_ABOVE`
lines (not counting blank lines and lines that are only a comment) the cell is
tagged ``hide-input``, which folds the code under a "Show code" toggle above the
figure.  What the prose teaches (the attention, the mask, the measurement) belongs
in a visible cell before the figure cell, so that only drawing is folded; that
needs a reader, not this test.  Short figure cells stay as they are.
"""

from __future__ import annotations

from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book" / "chapters").glob("[0-9][0-9]_*.md"))
#: a figure cell with more counted lines than this is folded
FOLD_ABOVE = 8


def counted_lines(source: str) -> int:
    """The lines of code a reader has to read past: not blank, not only a comment."""
    return sum(1 for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def figure_cells(path: Path) -> list[tuple[int, str, list[str], str]]:
    """(number, figure name, tags, source) of each code cell of a page that has figure metadata."""
    found = []
    for number, cell in enumerate(jupytext.read(path).cells):
        figure = cell.metadata.get("mystnb", {}).get("figure") if cell.cell_type == "code" else None
        if figure:
            found.append((number, str(figure.get("name", "")), list(cell.metadata.get("tags", [])),
                          cell.source))
    return found


def unfolded(path: Path) -> list[str]:
    """The figure cells of a page that break the rule, each described."""
    problems = []
    for number, name, tags, source in figure_cells(path):
        if "remove-input" in tags:
            problems.append(f"cell {number} ({name}): remove-input hides its code for good; "
                            f"fold it with hide-input")
        elif counted_lines(source) > FOLD_ABOVE and "hide-input" not in tags:
            problems.append(f"cell {number} ({name}): {counted_lines(source)} lines of code, "
                            f"not tagged hide-input")
    return problems


# --- the rule, on a small page -------------------------------------------------------------------

def figure_cell(name: str, code: str, tags: str = "") -> str:
    header = f"tags: [{tags}]\n" if tags else ""
    return (f"```{{code-cell}} ipython3\n---\n{header}mystnb:\n  figure:\n    name: {name}\n"
            f"    caption: A figure drawn to test the rule for its code.\n---\n{code}\n```\n\n")


LONG = "\n".join(f"ax.plot([{i}, {i + 1}])" for i in range(9))   # 9 lines


def test_comments_and_blank_lines_do_not_count():
    assert counted_lines("# a comment\n\nx = 1   # and one after code\n    # indented\ny = 2\n") == 2
    assert counted_lines(LONG) == FOLD_ABOVE + 1


def test_a_long_unfolded_or_a_removed_figure_cell_fails(tmp_path):
    page = tmp_path / "07_example.md"
    page.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n# Title\n\n"
        + figure_cell("fig-ch7-short", "# eight lines and a comment\n" + "\n\n".join(LONG.splitlines()[:8]))
        + figure_cell("fig-ch7-long", LONG)
        + figure_cell("fig-ch7-folded", LONG, tags="hide-input")
        + figure_cell("fig-ch7-removed", "plt.plot([1, 2])", tags="remove-input")
        + f"```{{code-cell}} ipython3\n{LONG}\n```\n")          # long, but not a figure cell
    assert [name for _, name, _, _ in figure_cells(page)] == [
        "fig-ch7-short", "fig-ch7-long", "fig-ch7-folded", "fig-ch7-removed"]
    problems = unfolded(page)
    assert len(problems) == 2
    assert problems[0].startswith("cell 2 (fig-ch7-long): 9 lines of code, not tagged hide-input")
    assert problems[1].startswith("cell 4 (fig-ch7-removed): remove-input")


# --- the chapters ------------------------------------------------------------------------------------

def test_the_chapters_have_figure_cells_and_fold_some():
    cells = [cell for path in CHAPTERS for cell in figure_cells(path)]
    assert len(cells) >= 40
    assert sum("hide-input" in tags for _, _, tags, _ in cells) >= 20


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_long_figure_cell_is_folded_and_none_is_removed(path):
    problems = unfolded(path)
    assert not problems, (f"{path.name}: figure cells whose code is removed, or longer than "
                          f"{FOLD_ABOVE} lines and not folded (tags: [hide-input]; move what the "
                          f"prose teaches into a visible cell before it):\n  " + "\n  ".join(problems))
