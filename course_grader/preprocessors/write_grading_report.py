"""WriteGradingReport: the grading report written out, after every preprocessor that records into it.

See :mod:`course_grader.report`: the JSON report beside the autograded
notebook, a "Grading notes" cell at its top, the gradebook's flag.  Notes of
the sanitizing pass (:func:`course_grader.report.note_for_review`) become flags
here; nothing of the submission's metadata does.  Hidden tests still pending
score 0 (:func:`course_grader.hidden_tests.fail_unsettled`).
"""

from __future__ import annotations


from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import NbGraderPreprocessor

from .. import hidden_tests
from ..report import GradingReport, notes_cell, report_file, take_notes_for_review


class WriteGradingReport(NbGraderPreprocessor):
    """Writes the report, the notes cell and the gradebook's flag (see the module's docstring)."""

    def preprocess(self, nb, resources):
        report = GradingReport.of(resources)
        report.flags += take_notes_for_review(nb)
        hidden_tests.fail_unsettled(nb, report)
        path = resources.get("metadata", {}).get("path")
        if path:
            report.write(report_file(path, resources["nbgrader"]["notebook"]))
        lines = report.notes()
        if lines:
            nb.cells.insert(0, notes_cell(lines, nb.get("nbformat_minor", 5)))
        if report.flags:
            self._flag(resources["nbgrader"])
        return nb, resources

    @staticmethod
    def _flag(names: dict) -> None:
        try:
            with Gradebook(names["db_url"]) as gb:
                submission = gb.find_submission_notebook(names["notebook"], names["assignment"],
                                                         names["student"])
                submission.flagged = True
                gb.db.commit()
        except MissingEntry:
            pass
