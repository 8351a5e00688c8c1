"""What grading says about one notebook, written in one place.

The preprocessors record what happened to a submission in
``resources["grading"]`` (:func:`grading_report`): *events* (time limits,
kernel deaths, clean re-check results) and *flags* (reasons for an instructor
to look).  :class:`WriteGradingReport`, which runs after them in nbgrader's
pipeline, writes it out three ways:

* ``.grading-report-<notebook>.json`` beside the autograded notebook (the
  grading command reads it into its summary);
* a "Grading notes" cell at the top of the notebook (:func:`notes_cell`), so
  it shows in the formgrader and in the student's feedback;
* the gradebook's *flagged* mark on the submission, when there is a flag.
"""

from __future__ import annotations

import json
import re
import secrets
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from . import sandbox

NOTES_TITLE = "**Grading notes** (added by the autograder)"
#: Marks the notes cell; a submission's cells lose it.
NOTES_CELL_KEY = "grading_notes"
#: nbgrader's sanitizing pass and its autograding pass share no ``resources``, only the notebook:
#: the sanitizing steps' notes travel in its metadata under a key new in each process, which no
#: submission can know.  Whatever a submission writes there itself is never read.
_NOTES_KEY = f"grading_notes_{secrets.token_hex(8)}"


def grading_report(resources: dict) -> dict:
    """The notebook's report in nbgrader's ``resources``: ``{"events": [...], "flags": [...], ...}``."""
    return resources.setdefault("grading", {"events": [], "flags": [], "sandbox": sandbox.describe()})


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


def note_for_review(nb, text: str):
    """A flag from nbgrader's sanitizing pass, for :class:`WriteGradingReport` in the autograding pass."""
    nb.metadata.setdefault(_NOTES_KEY, []).append(text)


class WriteGradingReport(NbGraderPreprocessor):
    """Writes the report, the notes cell and the gradebook's flag (see the module's docstring).

    Notes of the sanitizing pass (:func:`note_for_review`) become flags here.
    Nothing of the submission's metadata does: its ``grading_notes``, at
    notebook or cell level, are dropped.
    """

    def preprocess(self, nb, resources):
        report = grading_report(resources)
        report["flags"] += nb.metadata.pop(_NOTES_KEY, [])
        nb.metadata.pop(NOTES_CELL_KEY, None)
        for cell in nb.cells:
            cell.metadata.pop(NOTES_CELL_KEY, None)
        self._fail_unsettled_hidden_tests(nb, report)
        path = resources.get("metadata", {}).get("path")
        if path:
            name = resources["nbgrader"]["notebook"]
            Path(path, f".grading-report-{name}.json").write_text(json.dumps(report, indent=1))
        lines = []
        for event in report["events"]:
            where = f"cell {event['grade_id']}" if event.get("grade_id") else (
                f"cell {event['cell']}" if event.get("cell") is not None else "the notebook")
            lines.append(f"{where}: {event['message']}")
        lines += [f"flagged for review: {flag}" for flag in report["flags"]]
        if lines:
            nb.cells.insert(0, notes_cell(lines, nb.get("nbformat_minor", 5)))
        if report["flags"]:
            self._flag(resources)
        return nb, resources

    @staticmethod
    def _fail_unsettled_hidden_tests(nb, report):
        """Hidden tests withheld from the kernel that no re-check ran score 0, never full marks."""
        pending = set(report.get("hidden_pending", []))
        if not pending:
            return
        for cell in nb.cells:
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") in pending:
                cell.outputs.insert(0, NotebookNode(
                    output_type="error", ename="HiddenTestsNotRun",
                    evalue="the hidden tests of this cell were not run (the grading pipeline has no "
                           "CleanRecheck), so it scores 0",
                    traceback=["HiddenTestsNotRun: the hidden tests of this cell were not run"]))
        report["events"].append({"cell": None, "grade_id": "", "kind": "hidden_not_run",
                                 "message": "hidden tests were withheld from the kernel but never run: "
                                            "add CleanRecheck to the autograde preprocessors"})
        report["hidden_pending"] = []

    @staticmethod
    def _flag(resources):
        names = resources["nbgrader"]
        try:
            with Gradebook(names["db_url"]) as gb:
                submission = gb.find_submission_notebook(names["notebook"], names["assignment"],
                                                         names["student"])
                submission.flagged = True
                gb.db.commit()
        except MissingEntry:
            pass
