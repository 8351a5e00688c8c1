"""Claims about trained or sampled results: asserted where they are made, recorded per seed.

A chapter that says "the model with attention is right on 99 % of long
sentences" asserts it, so that the strict build fails when it stops being
true.  A trained result, though, depends on the seed and on the CPU: a
seeded run gives the same numbers every time on one machine and different
ones on the next.  So every such assertion goes through :func:`claim`, which

* checks ``value <op> threshold``: in the strict build
  (``$ATTENTION_COURSE_CLAIMS_MODE=assert``) a claim that does not hold raises
  an ``AssertionError`` naming the claim, its value and its threshold; in a
  student's notebook (no mode set) it prints one line instead (the claim, this
  run's value and the range the book measured over its seeds, from
  :data:`TABLE`) and the chapter goes on: another CPU is like another seed;
* when ``$ATTENTION_COURSE_CLAIMS`` names a folder, records the claim there,
  under the course seed (:mod:`attention_course.seeding`).

What the prose says *varies* from run to run ("which map does better
changes from run to run") goes through :func:`measure` instead: recorded in
the same way, asserted never, so that the table shows the values that the
statement is about side by side with the claims.

``make claims`` (``scripts/check_claims.py``) executes the chapters that
train under seeds 0-7, with ``$ATTENTION_COURSE_CLAIMS_MODE=record``
so that a failing claim is recorded rather than raised, and prints one table:
every claim, its threshold, its value under each seed and its smallest margin.
It writes that table to :data:`TABLE`, shipped with the package so that a
student's notebook can say what the book measured.

Names start with the chapter (``ch8_...``), like glue names.  A chapter may
span several pages (chapter 11 has two); each record also names the page that
made it (``$ATTENTION_COURSE_PAGE``, set by the build for every page it
executes), so that re-executing one page replaces that page's records only.
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from ..seeding import course_seed

FOLDER_VARIABLE = "ATTENTION_COURSE_CLAIMS"
MODE_VARIABLE = "ATTENTION_COURSE_CLAIMS_MODE"
PAGE_VARIABLE = "ATTENTION_COURSE_PAGE"

OPERATORS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
MODES = ("assert", "record", "inform")   # raise / record only / print one line (the default)
MEASURED = "~"   # the ``op`` of a measurement (:func:`measure`): recorded, never asserted
#: every claim's values under the seeds the book was measured with (``make claims`` writes it)
TABLE = Path(__file__).with_name("claims_by_seed.json")
NAME = re.compile(r"ch(\d+)_[a-z0-9_]+")


@dataclass(frozen=True)
class Claim:
    """One checked claim: ``value <op> threshold`` under ``seed``; or, with ``op`` ``"~"``, a measurement."""

    name: str
    about: str
    value: float
    op: str
    threshold: float | None   # None for a measurement
    seed: int
    fmt: str = ".3g"
    page: str = ""    # the page (file name without .md) that made the claim

    @property
    def asserted(self) -> bool:
        return self.op != MEASURED

    @property
    def margin(self) -> float:
        """How far inside its threshold the value is (negative when the claim fails; NaN for a measurement)."""
        if not self.asserted:
            return math.nan
        if math.isnan(self.value):
            return -math.inf
        return self.value - self.threshold if self.op in (">", ">=") else self.threshold - self.value

    @property
    def holds(self) -> bool:
        """A measurement always holds: it asserts nothing."""
        if not self.asserted:
            return True
        return not math.isnan(self.value) and OPERATORS[self.op](self.value, self.threshold)

    @property
    def chapter(self) -> int:
        return int(NAME.fullmatch(self.name).group(1))

    def describe(self) -> str:
        if not self.asserted:
            return f"{self.name} ({self.about}): {self.value:{self.fmt}}, measured (seed {self.seed})"
        return (f"{self.name} ({self.about}): {self.value:{self.fmt}} {self.op} "
                f"{self.threshold:{self.fmt}} (seed {self.seed})")


def claim(name: str, value, op: str, threshold, about: str, fmt: str = ".3g") -> None:
    """Check ``value <op> threshold`` and record it.

    What a claim that does not hold does depends on ``$ATTENTION_COURSE_CLAIMS_MODE``:
    ``assert`` (the strict build) raises ``AssertionError``; ``record``
    (``make claims``) only records it; unset (``inform``: a student's
    notebook) prints :func:`informed` and the chapter goes on.

    Returns nothing, so that a claim at the end of a cell adds no output to
    the page (a second output would also duplicate a figure's label).

    ``about`` says in a few words what the value is ("exact match, lengths
    22-29"); ``fmt`` is how the table formats the value and the threshold
    (``".1%"`` for a share).  A claim about two quantities is a claim about
    their difference or ratio: ``claim("ch1_gap", short - long, ">=", 0.4, ...)``.
    """
    if op not in OPERATORS:
        raise ValueError(f"op must be one of {sorted(OPERATORS)}, got {op!r}")
    mode = _mode()
    checked = _recorded(name, about, value, op, float(threshold), fmt)
    if checked.holds:
        return
    if mode == "assert":
        raise AssertionError(f"claim does not hold: {checked.describe()}")
    if mode == "inform":
        print(informed(checked))


def informed(checked: Claim) -> str:
    """One line for a claim that does not hold in a student's run: the claim, this run's value, the book's range."""
    line = (f"Not as in the book: {checked.about} is {checked.value:{checked.fmt}} in this run; "
            f"the book claims {checked.op} {checked.threshold:{checked.fmt}}")
    measured = book_range(checked.name)
    if measured is None:
        return line + " (this claim is not in the book's table). The chapter goes on."
    seeds, low, high = measured
    return (line + f" and measured {low:{checked.fmt}} to {high:{checked.fmt}} over seeds "
            f"{seeds[0]}-{seeds[-1]} on its CPU. Another CPU or seed changes trained numbers; "
            f"the chapter goes on.")


@lru_cache(maxsize=None)
def _table() -> dict:
    try:
        return json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def book_range(name: str) -> tuple[list[int], float, float] | None:
    """``(seeds, smallest, largest)`` of the claim ``name`` in :data:`TABLE`; None if it is not there."""
    table = _table()
    for row in table.get("claims", []):
        if row["name"] == name:
            values = [v for v in row["values"].values() if v is not None]
            if values:
                return table["seeds"], min(values), max(values)
    return None


def book_values(name: str) -> dict[int, float]:
    """``{seed: value}`` of the claim or measurement ``name`` in :data:`TABLE`; empty if it is not there."""
    for row in _table().get("claims", []):
        if row["name"] == name:
            return {int(seed): value for seed, value in row["values"].items() if value is not None}
    return {}


def measure(name: str, value, about: str, fmt: str = ".3g") -> None:
    """Record ``value`` for the multi-seed table without asserting anything about it.

    For a quantity the prose says varies from run to run (the sign of a small
    difference, which of two maps does better): the table then shows its
    values under seeds 0-7 next to the claims.  Same ``name``,
    ``about`` and ``fmt`` as :func:`claim`; returns nothing.
    """
    _mode()
    _recorded(name, about, value, MEASURED, None, fmt)


def _mode() -> str:
    mode = os.environ.get(MODE_VARIABLE, "inform")
    if mode not in MODES:
        raise ValueError(f"{MODE_VARIABLE} must be one of {MODES}, got {mode!r}")
    return mode


def _recorded(name: str, about: str, value, op: str, threshold: float | None, fmt: str) -> Claim:
    """A :class:`Claim` under the course seed, written to ``$ATTENTION_COURSE_CLAIMS`` if set."""
    if not NAME.fullmatch(name):
        raise ValueError(f"a claim's name is the chapter and a word or two, like 'ch8_warmup_gain'; "
                         f"got {name!r}")
    checked = Claim(name, about, float(value), op, threshold, course_seed(), fmt,
                    os.environ.get(PAGE_VARIABLE, ""))
    folder = os.environ.get(FOLDER_VARIABLE)
    if folder:
        record(checked, Path(folder))
    return checked


def record(checked: Claim, folder: Path) -> Path:
    """Write ``checked`` to ``folder/seed-<seed>/<name>.json`` (atomically)."""
    path = folder / f"seed-{checked.seed}" / f"{checked.name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(asdict(checked), indent=1))
    tmp.replace(path)
    return path


def load(folder: Path) -> dict[int, dict[str, Claim]]:
    """Every recorded claim under ``folder``: ``{seed: {name: Claim}}``."""
    recorded: dict[int, dict[str, Claim]] = {}
    for path in sorted(Path(folder).glob("seed-*/*.json")):
        checked = Claim(**json.loads(path.read_text()))
        recorded.setdefault(checked.seed, {})[checked.name] = checked
    return recorded


def forget_page(folder: Path, page: str, seed: int) -> None:
    """Remove the records that the page ``page`` made under one seed (before it executes again)."""
    for path in Path(folder).glob(f"seed-{seed}/*.json"):
        if json.loads(path.read_text()).get("page") == page:
            path.unlink()
