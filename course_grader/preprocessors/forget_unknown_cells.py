"""ForgetUnknownCells: cells with nbgrader ids the assignment does not have become the student's own."""

from __future__ import annotations

from nbgrader.api import Gradebook
from nbgrader.preprocessors import NbGraderPreprocessor

from ..report import note_for_review


class ForgetUnknownCells(NbGraderPreprocessor):
    """Cells whose nbgrader id is not the assignment's lose their nbgrader metadata.

    A submission may rename cell ids.  nbgrader then drops the id but keeps the
    rest of the metadata, and restoring deleted tests
    (``OverwriteCells.add_missing_cells``) trips over the id-less cell.  Here the
    cell simply becomes an ordinary cell of the student's (its code still runs),
    and the real test cells come back as missing ones.
    """

    def preprocess(self, nb, resources):
        names = resources["nbgrader"]
        with Gradebook(names["db_url"]) as gb:
            known = {c.name for c in gb.find_notebook(names["notebook"], names["assignment"]).source_cells}
        renamed = []
        for cell in nb.cells:
            info = cell.metadata.get("nbgrader")
            if info is not None and info.get("grade_id") not in known:
                renamed.append(str(info.get("grade_id")))
                del cell.metadata["nbgrader"]
        if renamed:
            note_for_review(nb, f"cells with unknown nbgrader ids were treated as the student's own: "
                                f"{', '.join(renamed[:8])}")
        return nb, resources
