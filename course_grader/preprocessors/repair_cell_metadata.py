"""RepairCellMetadata: nbgrader metadata that nbgrader cannot read is repaired or dropped (sanitizing pass)."""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from ..report import note_for_review


class RepairCellMetadata(NbGraderPreprocessor):
    """nbgrader metadata that nbgrader cannot read is repaired or dropped, so the notebook is graded.

    A student's editor (or the student) can leave a cell's nbgrader metadata
    malformed: not a mapping, points that are not a number, an id that is a
    list, a schema version nbgrader does not know.  nbgrader then refuses the
    whole notebook.  Here a cell whose id is one of the assignment's gets that
    cell's metadata as released (from the gradebook; nothing else of the
    student's is trusted anyway), and any other malformed metadata is dropped,
    which makes the cell the student's own.  Each repair is noted.
    """

    def preprocess(self, nb, resources):
        malformed = [(index, cell) for index, cell in enumerate(nb.cells)
                     if "nbgrader" in cell.metadata and not _well_formed(cell.metadata["nbgrader"])]
        if not malformed:         # nbgrader's own checks take it from here
            return nb, resources
        names = resources["nbgrader"]
        with Gradebook(names["db_url"]) as gb:
            notebook = gb.find_notebook(names["notebook"], names["assignment"])
            points = {c.name: c.max_score for c in notebook.grade_cells}
            solutions = {c.name for c in notebook.solution_cells}
            tasks = {c.name for c in notebook.task_cells}
            sources = {c.name: (c.cell_type, c.locked) for c in notebook.source_cells}
        repaired = []
        for index, cell in malformed:
            info = cell.metadata["nbgrader"]
            grade_id = info.get("grade_id") if isinstance(info, dict) else None
            if isinstance(grade_id, str) and sources.get(grade_id, (None,))[0] == cell.cell_type:
                released = {"grade": grade_id in points, "grade_id": grade_id,
                            "locked": bool(sources[grade_id][1]), "schema_version": 3,
                            "solution": grade_id in solutions, "task": grade_id in tasks}
                if grade_id in points:
                    released["points"] = points[grade_id]
                cell.metadata["nbgrader"] = NotebookNode(released)
                repaired.append(f"{grade_id} (restored as released)")
            else:
                del cell.metadata["nbgrader"]
                repaired.append(f"cell {index} (dropped: now the student's own)")
        if repaired:
            note_for_review(nb, "malformed nbgrader metadata was repaired: " + ", ".join(repaired[:8]))
        return nb, resources


def _well_formed(info) -> bool:
    """nbgrader metadata with the types nbgrader reads (schema 3)."""
    if not isinstance(info, dict) or info.get("schema_version", 3) != 3:
        return False
    if any(not isinstance(info.get(k, False), bool) for k in ("grade", "solution", "locked", "task")):
        return False
    if not isinstance(info.get("grade_id", ""), str):
        return False
    if info.get("grade") and not isinstance(info.get("points"), (int, float)):
        return False
    return True
