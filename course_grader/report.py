"""What grading says about one notebook: a typed report, and how it is shown.

Each preprocessor of the pipeline records what happened to a submission in
one :class:`GradingReport` (``GradingReport.of(resources)``): *events* (time
limits, kernel deaths, clean re-check results), *flags* (reasons for an
instructor to look), the catalogued mistakes a failed hidden test matched,
and the hidden tests still waiting for the re-check.
:class:`~course_grader.preprocessors.WriteGradingReport` writes it out:

* ``.grading-report-<notebook>.json`` beside the autograded notebook
  (:meth:`GradingReport.write`; the grading command reads it back with
  :meth:`GradingReport.read`);
* a "Grading notes" cell at the top of the notebook (:func:`notes_cell`), so
  it shows in the formgrader and in the student's feedback;
* the gradebook's *flagged* mark on the submission, when there is a flag.

Nothing of the submission writes the report: nbgrader's sanitizing pass, which
shares only the notebook with the autograding pass, hands its notes over under
a metadata key new in each process (:func:`note_for_review`), and whatever a
submission writes there itself is dropped.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: The file beside each autograded notebook, for the instructor's tools only: nbgrader's commands do
#: not copy it into a student's feedback folder (CourseDirectory.ignore, set by nbgrader_api.load_config)
REPORT_FILES = ".grading-report-*.json"


def report_file(folder, notebook: str) -> Path:
    """Where the report of ``notebook`` (its name without ``.ipynb``) is written in ``folder``."""
    return Path(folder, REPORT_FILES.replace("*", notebook))

import nbformat
from nbformat.notebooknode import NotebookNode

from . import sandbox
from .cells import grade_id

NOTES_TITLE = "**Grading notes** (added by the autograder)"
#: Marks the notes cell; a submission's cells lose it.
NOTES_CELL_KEY = "grading_notes"
#: The sanitizing pass's notes travel to the autograding pass under this key (see the module docstring).
_NOTES_KEY = f"grading_notes_{secrets.token_hex(8)}"

#: What an event can be: each is recorded by one part of the pipeline.
EVENT_KINDS = {
    "files_left_out": "handed-in files beyond the sandbox's budget (BoundedExecute)",
    "output_flood": "a cell's output passed the flood limit and it was interrupted (BoundedExecute)",
    "cell_timeout": "a cell reached its time limit (BoundedExecute)",
    "kernel_unresponsive": "the kernel did not answer after an interrupt and was restarted (BoundedExecute)",
    "kernel_died": "the kernel died and was restarted (BoundedExecute)",
    "not_run": "cells that could not run (BoundedExecute)",
    "hidden_markers": "a test cell's hidden-test markers do not pair up (hidden_tests)",
    "budget": "the time budget ran out in the clean re-check (CleanRecheck)",
    "not_rechecked": "a test the re-check could not reproduce keeps its notebook result (CleanRecheck)",
    "clean_rerun": "the student's process died, hung or broke the protocol in the re-check (CleanRecheck)",
    "hidden_not_run": "hidden tests were withheld and no re-check ran them (WriteGradingReport)",
}


@dataclass
class Event:
    """Something that happened to the submission, where: a cell (its index and nbgrader id) or the notebook."""

    kind: str
    message: str
    cell: int | None = None
    grade_id: str = ""

    def __post_init__(self):
        if self.kind not in EVENT_KINDS:
            raise ValueError(f"unknown grading event {self.kind!r}; one of {sorted(EVENT_KINDS)}")

    @property
    def where(self) -> str:
        if self.grade_id:
            return f"cell {self.grade_id}"
        return f"cell {self.cell}" if self.cell is not None else "the notebook"


@dataclass
class Diagnosis:
    """The catalogued mistakes (:mod:`course_grader.mistakes`) a failed hidden test's calls matched."""

    cell: int
    grade_id: str
    mistakes: list[str]


@dataclass
class GradingReport:
    """Everything grading found out about one notebook (see the module's docstring)."""

    #: the sandbox the notebook ran in (:func:`course_grader.sandbox.describe`)
    sandbox: dict = field(default_factory=sandbox.describe)
    events: list[Event] = field(default_factory=list)
    #: reasons for an instructor to look; a flag marks the submission in the gradebook
    flags: list[str] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    #: nbgrader ids of test cells whose hidden tests were withheld from the kernel and not yet run
    hidden_pending: list[str] = field(default_factory=list)
    #: seconds the clean re-check took (None: it did not run)
    recheck_seconds: float | None = None

    RESOURCES_KEY = "grading"

    @classmethod
    def of(cls, resources: dict) -> "GradingReport":
        """The notebook's report in nbgrader's ``resources`` (created by the first part that asks)."""
        report = resources.get(cls.RESOURCES_KEY)
        if report is None:
            report = resources[cls.RESOURCES_KEY] = cls()
        if not isinstance(report, cls):
            raise TypeError(f"resources[{cls.RESOURCES_KEY!r}] is a {type(report).__name__}, not a GradingReport")
        return report

    def event(self, kind: str, message: str, nb=None, index: int | None = None) -> None:
        """Record an event at cell ``index`` of ``nb`` (or of the whole notebook when ``index`` is None)."""
        gid = grade_id(nb.cells[index]) if nb is not None and index is not None else ""
        self.events.append(Event(kind, message, index, gid))

    def flag(self, reason: str) -> None:
        self.flags.append(reason)

    def notes(self) -> list[str]:
        """The notes cell's lines: each event where it happened, then each flag."""
        return ([f"{event.where}: {event.message}" for event in self.events]
                + [f"flagged for review: {flag}" for flag in self.flags])

    def write(self, path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=1))

    @classmethod
    def read(cls, path) -> "GradingReport":
        data = json.loads(Path(path).read_text())
        return cls(sandbox=data.get("sandbox", {}),
                   events=[Event(**e) for e in data.get("events", [])],
                   flags=list(data.get("flags", [])),
                   diagnoses=[Diagnosis(**d) for d in data.get("diagnoses", [])],
                   hidden_pending=list(data.get("hidden_pending", [])),
                   recheck_seconds=data.get("recheck_seconds"))


def notes_cell(lines: list[str], nbformat_minor: int = 5) -> NotebookNode:
    """The Markdown cell that opens a notebook with the grading notes, one bullet per line.

    The lines quote the submission (cell ids, exception messages, code that
    was flagged), so each is made inert text first (:func:`inert_markdown`).
    Cells have ids from nbformat 4.5 on; an older notebook's cells must not.
    """
    body = "\n".join(f"- {inert_markdown(line)}" for line in lines)
    cell = nbformat.v4.new_markdown_cell(NOTES_TITLE + "\n\n" + body, metadata={NOTES_CELL_KEY: True})
    if nbformat_minor < 5:
        del cell["id"]
    return cell


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>&])")


def inert_markdown(text: str) -> str:
    """``text`` as Markdown that renders as exactly that text: no HTML, links, emphasis or new lines."""
    text = " ".join(str(text).split())          # one line: no new bullet, no heading
    text = "".join(ch for ch in text if ch.isprintable())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)   # CommonMark: a backslash makes punctuation literal


def terminal_text(text) -> str:
    """``text`` safe to print on a terminal: control characters (escape codes, new lines) shown as escapes.

    Student ids, notes and flags quote the submission; printed raw, they
    could move the cursor or add a forged line to the summary.
    """
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(text))


def note_for_review(nb, text: str) -> None:
    """A flag from nbgrader's sanitizing pass, for WriteGradingReport in the autograding pass."""
    nb.metadata.setdefault(_NOTES_KEY, []).append(text)


def grader_metadata(nb) -> dict:
    """The notebook metadata the grader itself put there (the sanitizing pass's notes), to be kept
    when the rest of the notebook's metadata is replaced by the instructor's."""
    return {_NOTES_KEY: nb.metadata[_NOTES_KEY]} if _NOTES_KEY in nb.metadata else {}


def take_notes_for_review(nb) -> list[str]:
    """The sanitizing pass's flags (:func:`note_for_review`); every grading note the submission wrote is dropped."""
    notes = nb.metadata.pop(_NOTES_KEY, [])
    nb.metadata.pop(NOTES_CELL_KEY, None)
    for cell in nb.cells:
        cell.metadata.pop(NOTES_CELL_KEY, None)
    return list(notes)
