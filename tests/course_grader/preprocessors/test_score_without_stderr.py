"""ScoreWithoutStderr: stderr in a test cell does not zero it; its last value is no partial score."""

import nbformat
from conftest import released

from course_grader.preprocessors import ScoreWithoutStderr


def _outputs():
    return [nbformat.v4.new_output("stream", name="stderr", text="RuntimeWarning: overflow\n"),
            nbformat.v4.new_output("execute_result", data={"text/plain": "2.0"}, execution_count=1)]


def test_in_a_test_cell_stderr_is_shown_as_stdout_and_a_value_is_only_displayed():
    nb = released()
    nb.cells[2].outputs = _outputs()
    nb, _ = ScoreWithoutStderr().preprocess(nb, {})
    stream, value = nb.cells[2].outputs
    assert stream.name == "stdout" and stream.text.startswith("[stderr, not counted as a failure]")
    assert "RuntimeWarning: overflow" in stream.text
    assert value.output_type == "display_data" and value.data == {"text/plain": "2.0"}


def test_other_cells_and_nbgraders_partial_credit_when_the_course_asks_for_it():
    nb = released()
    nb.cells[1].outputs = _outputs()            # the student's solution cell: not a test
    nb.cells[2].outputs = _outputs()
    nb, _ = ScoreWithoutStderr(allow_partial_credit=True).preprocess(nb, {})
    assert [o.get("name") for o in nb.cells[1].outputs] == ["stderr", None]
    assert nb.cells[1].outputs[1].output_type == "execute_result"
    assert nb.cells[2].outputs[0].name == "stdout" and nb.cells[2].outputs[1].output_type == "execute_result"
