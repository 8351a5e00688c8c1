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
from pathlib import Path

import nbformat
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from . import sandbox

NOTES_TITLE = "**Grading notes** (added by the autograder)"


def grading_report(resources: dict) -> dict:
    """The notebook's report in nbgrader's ``resources``: ``{"events": [...], "flags": [...], ...}``."""
    return resources.setdefault("grading", {"events": [], "flags": [], "sandbox": sandbox.describe()})


def notes_cell(lines: list[str], nbformat_minor: int = 5) -> NotebookNode:
    """The Markdown cell that opens a notebook with the grading notes, one bullet per line.

    Cells have ids from nbformat 4.5 on; an older notebook's cells must not.
    """
    cell = nbformat.v4.new_markdown_cell(NOTES_TITLE + "\n\n" + "\n".join(f"- {line}" for line in lines),
                                         metadata={"grading_notes": True})
    if nbformat_minor < 5:
        del cell["id"]
    return cell


class WriteGradingReport(NbGraderPreprocessor):
    """Writes the report, the notes cell and the gradebook's flag (see the module's docstring).

    Notes that the sanitizing step left in ``nb.metadata["grading_notes"]``
    become flags here.
    """

    def preprocess(self, nb, resources):
        report = grading_report(resources)
        report["flags"] += nb.metadata.pop("grading_notes", [])
        path = resources.get("metadata", {}).get("path")
        if path:
            name = resources["nbgrader"]["notebook"]
            Path(path, f".grading-report-{name}.json").write_text(json.dumps(report, indent=1))
        lines = []
        for event in report["events"]:
            where = f"cell `{event['grade_id']}`" if event.get("grade_id") else (
                f"cell {event['cell']}" if event.get("cell") is not None else "the notebook")
            lines.append(f"{where}: {event['message']}")
        lines += [f"flagged for review: {flag}" for flag in report["flags"]]
        if lines:
            nb.cells.insert(0, notes_cell(lines, nb.get("nbformat_minor", 5)))
        if report["flags"]:
            self._flag(resources)
        return nb, resources

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
