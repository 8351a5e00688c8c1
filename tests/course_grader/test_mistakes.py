"""The catalogue of mistakes: a failed test's calls are matched with the wrong answers, and only with them."""

import numpy as np
import pytest

from course_grader import mistakes
from grading_support import ROOT

SOURCE = ROOT / "solutions" / "a1_softmax_additive" / "a1_softmax_additive.ipynb"


@pytest.fixture(scope="module")
def diagnoser():
    return mistakes.Diagnoser(SOURCE, mistakes.load_catalogue(SOURCE.parent))


def softmax_calls(rng):
    x = rng.normal(size=(3, 5)) * 300       # large scores: the unstable softmax overflows
    mask = rng.random((3, 5)) < 0.7
    mask[:, 0] = True
    return [mistakes.Call("softmax", (x,), {"axis": 0}, None),
            mistakes.Call("softmax", (x[:2] / 300,), {"mask": mask[:2]}, None)]


def answered(calls, namespace):
    return [mistakes.Call(c.name, c.args, c.kwargs, mistakes._call(namespace, c)) for c in calls]


def test_every_catalogued_softmax_mistake_is_named_and_no_other(diagnoser, rng):
    for mistake, namespace in diagnoser.variants:
        if not any(cell == "softmax" for cell, *_ in mistake.edits):
            continue
        found = diagnoser.diagnose(answered(softmax_calls(rng), namespace))
        assert [m.name for m in found] == [mistake.name]
        assert mistake.explain in mistakes.feedback(found)


def test_a_right_answer_and_an_unrelated_wrong_one_get_no_diagnosis(diagnoser, rng):
    calls = softmax_calls(rng)
    assert diagnoser.diagnose(answered(calls, diagnoser.reference)) == []
    off = {"softmax": lambda x, **kw: diagnoser.reference["softmax"](x, **kw) * 1.01}
    assert diagnoser.diagnose(answered(calls, off)) == []
    assert diagnoser.diagnose([]) == []
    assert mistakes.feedback([]) == ""


def test_only_plain_data_is_recorded():
    budget = [10_000]
    assert mistakes.plain((np.zeros(10), {"axis": -1, "mask": None}, [1, 2.0, "x"]), budget)
    assert budget == [10_000 - 80]
    assert not mistakes.plain((lambda: 0,), [10_000])          # a callback is not data
    assert not mistakes.plain(np.zeros(10, dtype=object), [10_000])
    assert not mistakes.plain(np.zeros(2_000), [10_000])       # over the recording budget


def test_an_edit_that_no_longer_fits_the_solution_is_an_error(diagnoser):
    import nbformat

    nb = nbformat.read(SOURCE, as_version=4)
    with pytest.raises(ValueError, match="not in that cell"):
        mistakes.apply_edits(nb, [("softmax", "this text is not there", "x")])


def test_a_catalogue_that_no_longer_fits_is_left_out_with_a_warning(tmp_path, caplog):
    """An edit that does not fit the solution any more: grading goes on, without diagnoses."""
    import shutil

    from traitlets.config import Config

    from course_grader.preprocessors import CleanRecheck

    folder = tmp_path / "source" / "a1"
    folder.mkdir(parents=True)
    shutil.copy(SOURCE, folder / "a1.ipynb")
    (folder / "mistakes.py").write_text(
        'MISTAKES = {"gone": dict(explain="x", edits=[("softmax", "no such text", "y")])}\n')
    config = Config()
    config.CourseDirectory.root = str(tmp_path)
    config.CourseDirectory.source_directory = "source"
    recheck = CleanRecheck(config=config)
    with caplog.at_level("WARNING"):
        assert recheck._diagnoser({"assignment": "a1", "notebook": "a1"}) is None
    assert "mistakes.py: not used to name mistakes" in caplog.text and "no such text" in caplog.text
