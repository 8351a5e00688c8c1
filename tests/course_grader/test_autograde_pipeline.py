"""The course's autograde pipeline around nbgrader's own steps.

One print is one output in the autograded notebook and the feedback, however the kernel's
flushes split it (a run of 40 submissions once gave one student's "visible tests passed" and its
newline as two outputs, and a page that differed from another run's); and nbgrader's default
steps stay, in nbgrader's order, for a course's configuration to switch on."""

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


def test_nbgrader_s_own_autograde_steps_stay_in_its_order_for_a_course_to_switch_on(tmp_path):
    """The course's pipeline adds steps around nbgrader's default ones and drops none of them, so a
    course's own configuration (``--course-config``) switches them on as it would in plain nbgrader:
    ``ClearMetadataPreprocessor`` is off unless a course enables it, as in nbgrader."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.converters import Autograde

    from course_grader.nbgrader_api import load_config

    defaults = Autograde().autograde_preprocessors[1:]   # nbgrader's defaults, after its Execute
    config = load_config(config_file=ROOT / "nbgrader_config.py")
    ours = [step for step in config.Autograde.autograde_preprocessors if step in defaults]
    assert ours == defaults
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "x = 1", metadata={"nbgrader": {"grade": False, "solution": True, "grade_id": "x"}, "tags": ["mine"]})])
    nb.metadata["widgets"] = {"state": {}}
    kept, _ = ClearMetadataPreprocessor(config=config)(nbformat.from_dict(nb), {})
    assert kept.metadata == nb.metadata and kept.cells[0].metadata == nb.cells[0].metadata   # off

    theirs = tmp_path / "nbgrader_config.py"
    theirs.write_text("c = get_config()\nc.ClearMetadataPreprocessor.enabled = True\n"
                      "c.ClearMetadataPreprocessor.preserve_cell_metadata_mask = [('nbgrader')]\n")
    config = load_config(config_file=ROOT / "nbgrader_config.py", course_config=theirs)
    cleared, _ = ClearMetadataPreprocessor(config=config)(nbformat.from_dict(nb), {})
    assert cleared.cells[0].metadata == {"nbgrader": nb.cells[0].metadata["nbgrader"]}
    assert "widgets" not in cleared.metadata
