"""One print is one output in the autograded notebook and the feedback, however the kernel's
flushes split it (a run of 40 submissions once gave one student's "visible tests passed" and its
newline as two outputs, and a page that differed from another run's)."""

import nbformat

from grading_support import ROOT


def test_consecutive_stream_outputs_are_merged_right_after_execution():
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor

    from course_grader.nbgrader_api import load_config
    from course_grader.preprocessors import BoundedExecute

    config = load_config(config_file=ROOT / "nbgrader_config.py")
    pipeline = list(config.Autograde.autograde_preprocessors)
    assert pipeline[pipeline.index(BoundedExecute) + 1] is CoalesceStreamsPreprocessor
    cell = nbformat.v4.new_code_cell("print('visible tests passed')", outputs=[
        nbformat.v4.new_output("stream", name="stdout", text="visible tests passed"),
        nbformat.v4.new_output("stream", name="stdout", text="\n"),
        nbformat.v4.new_output("stream", name="stderr", text="a warning\n"),
        nbformat.v4.new_output("stream", name="stdout", text="after the warning\n")])
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb, _ = CoalesceStreamsPreprocessor(config=config)(nb, {})     # enabled by the course's configuration
    assert [(o.name, o.text) for o in nb.cells[0].outputs] == [
        ("stdout", "visible tests passed\n"), ("stderr", "a warning\n"), ("stdout", "after the warning\n")]
