"""ScoreWithoutStderr: stderr in a test cell is shown, not scored; an execute result is no partial score.

nbgrader scores a test cell with *any* stderr output as 0; a NumPy or
TensorFlow warning must not zero a correct answer.  And nbgrader reads a test
cell's last value as a partial score, which a submission could forge.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool

from ..cells import is_test


class ScoreWithoutStderr(NbGraderPreprocessor):
    """In test cells, stderr is shown but not counted as failure; execute results are not scores."""

    allow_partial_credit = Bool(
        False, help="Let a test cell's last value be read as a partial score (nbgrader's feature). "
                    "Off: a submission could forge it.").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if not is_test(cell):
            return cell, resources
        outputs = []
        for output in cell.outputs:
            if output.output_type == "stream" and output.name == "stderr":
                output = NotebookNode(output_type="stream", name="stdout",
                                      text="[stderr, not counted as a failure]\n" + output.text)
            elif output.output_type == "execute_result" and not self.allow_partial_credit:
                output = NotebookNode(output_type="display_data", data=output.get("data", {}),
                                      metadata=output.get("metadata", {}))
            outputs.append(output)
        cell.outputs = outputs
        return cell, resources
