"""Comparisons tuned alike: every arm of a comparison gets the same search for its setting.

A page that compares two things (a deep plain stack and a residual one,
scaled and unscaled scores, a ViT and a CNN) makes a claim about those
things, not about the learning rate it happened to use.  An arm left at a
setting that suits the other arm can lose for that reason alone.  So every
comparative experiment of the book is declared here as a :class:`Comparison`:
its arms, the setting that could decide it (a learning rate, a budget, a
regularisation), the values tried for every arm alike, and the metric on
held-out data that picks each arm's best value.

``make tune`` (``scripts/tune_comparisons.py``) runs every arm at every value
under the comparison's seeds, outside the book's build, and writes
:data:`TABLE`, which the package ships.  The chapter then runs each arm at its
own best value (:func:`best_setting`) and shows the search
(:func:`search_table`), so that a reader sees what was compared and how each
arm was tuned.  Tests check that the table was made by the code as it is
(:meth:`Comparison.key`), that every best value lies inside its grid rather
than at an edge (else the grid did not bracket it, and a larger or smaller
value might have changed the verdict; a grid that starts at 0, no dropout,
has no lower edge, for nothing smaller can be tried), and that each comparison's chapter
takes its settings from the table.

A comparison's ``run`` is a function of the package (not of a chapter), so
that the script can call it and its key covers its code: ``run(arm, value,
seed)`` trains that arm at that value and returns the metric on held-out data.
"""

from __future__ import annotations

import ast
import importlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

#: the searches of every comparison, as ``make tune`` measured them (shipped with the package)
TABLE = Path(__file__).with_name("tuned_settings.json")


@dataclass(frozen=True)
class Comparison:
    """One comparative experiment: its arms, and the setting tuned for each alike.

    ``values`` are tried for every arm, under every seed of ``seeds``; the best
    value of an arm is the one with the best mean of ``metric`` over the seeds
    (highest where ``higher_is_better``, lowest otherwise).
    """

    name: str                       # "ch8_plain_vs_residual": the chapter first, like a claim
    question: str                   # what the comparison decides, in a sentence
    arms: tuple[str, ...]
    setting: str                    # "Adam learning rate"
    values: tuple[float, ...]       # increasing
    metric: str                     # "held-out loss (nats)"
    higher_is_better: bool
    run: Callable[[str, float, int], float] = field(compare=False)
    seeds: tuple[int, ...] = (0, 1)

    def __post_init__(self):
        if not self.name.startswith("ch") or not self.name[2:].split("_")[0].isdigit():
            raise ValueError(f"a comparison's name starts with its chapter (ch8_...), got {self.name!r}")
        if len(self.arms) < 2 or len(set(self.arms)) != len(self.arms):
            raise ValueError(f"{self.name}: a comparison needs two or more distinct arms, got {self.arms}")
        if len(self.values) < 3 or list(self.values) != sorted(set(self.values)):
            raise ValueError(f"{self.name}: values must be three or more, increasing, distinct "
                             f"(a best value needs a neighbour on each side), got {self.values}")
        if not self.seeds:
            raise ValueError(f"{self.name}: at least one seed")

    @property
    def chapter(self) -> int:
        return int(self.name[2:].split("_")[0])

    def key(self) -> str:
        """A hash of what the table's numbers for this comparison depend on: the code of
        ``run`` (its module and what that imports, by syntax tree), the arms, values and seeds.

        Never of computed data: a key must be the same on every CPU.
        """
        from .cache import content_key

        module = importlib.import_module(self.run.__module__)
        return content_key(module, self.run.__qualname__, self.arms, self.values, self.seeds,
                           self.setting, self.metric, self.higher_is_better, versions=False)

    def best(self, results: dict[str, dict[str, list[float]]]) -> dict[str, float]:
        """``{arm: its best value}`` from ``{arm: {str(value): [metric under each seed]}}``."""
        sign = -1.0 if self.higher_is_better else 1.0
        best = {}
        for arm in self.arms:
            means = {value: _mean(results[arm][str(value)]) for value in self.values}
            best[arm] = min(self.values, key=lambda v: (sign * means[v], v))
        return best


def _mean(values: list[float]) -> float:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    return sum(finite) / len(finite) if len(finite) == len(values) else math.inf


def comparison_modules() -> list[str]:
    """The modules of this package that declare comparisons, each in a list ``COMPARISONS``.

    Found by reading the package's files, not listed here: a comparison's key covers this
    module's code (its ``run`` imports :class:`Comparison`), and a list that grew with every new
    comparison would change the key of every old one.
    """
    found = []
    for path in sorted(Path(__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(target, ast.Name) and target.id == "COMPARISONS"
               for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
               for target in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            found.append(f"{__package__}.{path.stem}")
    return found


def comparisons() -> dict[str, Comparison]:
    """Every comparison the modules of :func:`comparison_modules` declare, by name."""
    found = {}
    for name in comparison_modules():
        for comparison in importlib.import_module(name).COMPARISONS:
            if comparison.name in found:
                raise ValueError(f"two comparisons are called {comparison.name!r}")
            found[comparison.name] = comparison
    return found


def read_table(path: Path = TABLE) -> dict:
    """The table ``make tune`` wrote: ``{"measured": {...}, "comparisons": {name: entry}}``."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"measured": {}, "comparisons": {}}


def entry(name: str, path: Path = TABLE) -> dict:
    """The table's entry for the comparison ``name``; a clear error where there is none."""
    entries = read_table(path)["comparisons"]
    if name not in entries:
        raise KeyError(f"no search for the comparison {name!r} in {path.name}: run "
                       f"`python scripts/tune_comparisons.py --only {name}`")
    return entries[name]


def best_setting(name: str, arm: str, path: Path = TABLE) -> float:
    """The value of the comparison's setting that the search chose for ``arm``."""
    found = entry(name, path)
    if arm not in found["best"]:
        raise KeyError(f"{name} has no arm {arm!r}; its arms: {list(found['best'])}")
    return found["best"][arm]


def search_table(name: str, path: Path = TABLE, fmt: str = ".3f"):
    """The search as a table for a page: one row per arm, one column per value, each cell
    the mean over the seeds (and their range), each arm's best value marked with *."""
    import pandas as pd

    found = entry(name, path)
    rows = {}
    for arm, by_value in found["results"].items():
        row = {}
        for value in found["values"]:
            scores = by_value[str(value)]
            finite = [s for s in scores if s is not None and math.isfinite(s)]
            text = (f"{sum(finite) / len(finite):{fmt}}" if len(finite) == len(scores)
                    else "diverged")
            if len(finite) > 1 and len(finite) == len(scores):
                text += f" ({min(finite):{fmt}}-{max(finite):{fmt}})"
            row[f"{value:g}"] = text + (" *" if value == found["best"][arm] else "")
        rows[arm] = row
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "arm"
    frame.columns.name = found["setting"]
    return frame
