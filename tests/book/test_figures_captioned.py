"""Every figure a chapter's code cell draws is numbered and captioned (issue 35).

The site numbers a code cell's figure ("Fig. 2.3") and captions it only when
the cell's metadata says so (``mystnb: figure: {name: ..., caption: ...}``);
without it the picture floats unnumbered, and "Fig. 2.3 shows..." points at
nothing, on the site and in the downloaded notebook.  This test reads each
page's MyST source (no execution) and fails for a cell whose figure a reader
sees (a code cell not tagged ``remove-cell`` or ``remove-output``) that draws
but has no figure name and caption.

What counts as drawing is read from the cell's code, simply (:func:`draws`):
a call of a pyplot function other than the few that draw nothing
(``plt.subplots(...)``, ``plt.plot(...)``; not ``plt.close()``), a call of
the course's plotting helpers (``plotting.plot_attention(...)``) or of any
function named ``plot_...`` (the package's name for a function that draws),
a method call on a figure or axes variable (``fig.colorbar(...)``,
``axes[0].plot(...)``, named ``fig``, ``fig_*``, ``ax``, ``ax_*``, ``axN``,
``axes``, ``axs``), or ``fig`` or ``figure`` as the cell's last line (a figure
returned to Jupyter).  A cell that only computes (``np.einsum``,
``x.max(axis=0)``, a ``plot``-free call) does not draw.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book" / "chapters").glob("[0-9][0-9]_*.md"))
#: tags under which a cell's output (its figure) is not on the page
NOT_SHOWN = {"remove-cell", "remove-output"}
#: pyplot functions that draw nothing a reader sees
PYPLOT_QUIET = {"close", "rc", "rc_context", "rcParams", "style", "get_cmap", "colormaps",
                "get_fignums", "fignum_exists", "ioff", "ion", "isinteractive", "switch_backend"}
#: names of variables that hold a figure or its axes
FIGURE_OR_AXES = re.compile(r"^(?:fig|fig_\w+|ax|ax_\w+|ax\d+|axes|axs)$")


def _root_name(node: ast.AST) -> str | None:
    """The variable a chain of attributes, subscripts and calls starts from (``axes[0].plot`` -> axes)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _called_name(func: ast.AST) -> str | None:
    """The name a call calls: ``plot_attention`` for ``plotting.plot_attention(...)`` or ``plot_attention(...)``."""
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def draws(source: str) -> bool:
    """Whether a code cell's source draws a figure (see the module's docstring for the rules)."""
    # IPython's magics and shell escapes are not Python; they draw nothing
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        root, name = _root_name(node.func), _called_name(node.func) or ""
        if root == "plt" and isinstance(node.func, ast.Attribute) and name not in PYPLOT_QUIET:
            return True
        if root == "plotting" or name.startswith("plot_") or name == "show_image":
            return True
        if root is not None and FIGURE_OR_AXES.match(root) and isinstance(node.func, ast.Attribute):
            return True
    last = tree.body[-1] if tree.body else None
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Name) and last.value.id in {"fig", "figure"}


def figure_cells(path: Path) -> list[tuple[int, dict, str]]:
    """(number, figure metadata, source) of each code cell of a page whose figure a reader sees."""
    found = []
    for number, cell in enumerate(jupytext.read(path).cells):
        if cell.cell_type != "code" or NOT_SHOWN & set(cell.metadata.get("tags", [])):
            continue
        if draws(cell.source):
            found.append((number, cell.metadata.get("mystnb", {}).get("figure", {}), cell.source))
    return found


def uncaptioned(path: Path) -> list[str]:
    """The figure cells of a page without a name ``fig-chN-...`` and a caption, each described."""
    chapter = int(path.name[:2])
    problems = []
    for number, figure, source in figure_cells(path):
        name, caption = str(figure.get("name", "")), str(figure.get("caption", ""))
        if not name.startswith(f"fig-ch{chapter}-") or len(caption.split()) < 8:
            first_line = source.strip().splitlines()[0][:70]
            problems.append(f"cell {number} ({first_line!r}): name {name!r}, "
                            f"caption of {len(caption.split())} words")
    return problems


# --- the rules, on small cells -------------------------------------------------------------------

@pytest.mark.parametrize("source", [
    "fig, ax = plt.subplots()\nax.plot([1, 2])",
    "plotting.plot_attention(weights, annotate=True)",
    "ax = plot_attention(w)",
    "plt.imshow(x)",
    "axes[0, 1].bar(names, heights)",
    "ax_keys.scatter(*k)",
    "timing.plot_speed(results)",
    "fig = timing.speed_figure(results)\nfig",
    "%matplotlib inline\nplt.plot([0, 1])",
])
def test_a_cell_that_draws_is_seen_to_draw(source):
    assert draws(source)


@pytest.mark.parametrize("source", [
    "dot = np.einsum('nd,nd->n', q, k)",
    "weights = softmax(scores, axis=-1)\nweights.max(axis=0)",
    "plt.close('all')",
    "axis = 2\nx.sum(axis=axis)",
    "table = pd.DataFrame({'a': [1]})\ntable.style.format(precision=3)",
    "print(layer.axes_order, fig_count)",
    "fig_count = len(figures)\nfig_count",
    "explained = plotting_notes",
])
def test_a_cell_that_only_computes_is_not(source):
    assert not draws(source)


def test_a_page_with_an_uncaptioned_figure_fails(tmp_path):
    page = tmp_path / "07_example.md"
    page.write_text(
        "---\njupytext:\n  text_representation:\n    extension: .md\n    format_name: myst\n"
        "kernelspec:\n  display_name: Python 3\n  language: python\n  name: python3\n---\n\n# Title\n\n"
        "```{code-cell} ipython3\nfig, ax = plt.subplots()\nax.plot([1, 2])\n```\n\n"
        "```{code-cell} ipython3\n---\nmystnb:\n  figure:\n    name: fig-ch7-line\n"
        "    caption: A straight line from one to two, drawn to show a caption.\n---\n"
        "plt.plot([1, 2])\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\nplt.plot([3])\n```\n")
    problems = uncaptioned(page)
    assert len(problems) == 1 and problems[0].startswith("cell 1 ('fig, ax = plt.subplots()')")
    assert [number for number, _, _ in figure_cells(page)] == [1, 2]


# --- the chapters ------------------------------------------------------------------------------------

def test_there_are_chapters_with_figures():
    assert sum(len(figure_cells(path)) for path in CHAPTERS) >= 40


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_figure_a_page_draws_is_numbered_and_captioned(path):
    problems = uncaptioned(path)
    assert not problems, f"{path.name}: figures without a name fig-ch{int(path.name[:2])}-... " \
                         f"and a caption (cell metadata mystnb: figure:):\n  " + "\n  ".join(problems)


def test_figure_names_are_unique_in_the_book():
    names = [figure["name"] for path in CHAPTERS for _, figure, _ in figure_cells(path) if figure.get("name")]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
