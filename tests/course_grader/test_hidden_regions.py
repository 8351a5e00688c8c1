"""The hidden-test rules (course_grader.hidden_tests): the course's markers, and the regions they make.

Every part of the grader asks this module where a cell's hidden tests are;
these tests pin down its answers: the markers come from the course's nbgrader
configuration, a region is found under the course's markers and not under
nbgrader's default ones, and markers that do not pair up are reported with
the line and the marker, and hide the whole cell rather than too little.
"""

import nbformat
import pytest
from traitlets.config import Config

from course_grader import hidden_tests
from course_grader.hidden_tests import Delimiters, MalformedHiddenRegion, hidden_regions, withhold

DEFAULT = Delimiters("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
SECRET = Delimiters("BEGIN SECRET CHECKS", "END SECRET CHECKS")
CELL = ('assert double(2) == 4\n'           # 1
        '### BEGIN SECRET CHECKS\n'         # 2
        'x = grading_rng("x").integers(9)\n'  # 3
        'assert double(x) == 2 * x\n'       # 4
        '### END SECRET CHECKS\n'           # 5
        'assert double(0) == 0')            # 6


def _config(begin=None, end=None) -> Config:
    config = Config()
    if begin:
        config.ClearHiddenTests.begin_test_delimeter = begin
    if end:
        config.ClearHiddenTests.end_test_delimeter = end
    return config


def test_the_markers_are_the_courses_nbgrader_configuration():
    assert hidden_tests.delimiters(_config("BEGIN SECRET CHECKS", "END SECRET CHECKS")) == SECRET
    assert hidden_tests.delimiters(Config()) == DEFAULT == hidden_tests.delimiters()


def test_a_region_is_found_under_the_courses_markers():
    assert hidden_regions(CELL, SECRET) == ((2, 5),)
    two = CELL + "\n# BEGIN SECRET CHECKS\nassert double(7) == 14\n# END SECRET CHECKS"
    assert hidden_regions(two, SECRET) == ((2, 5), (7, 9))


def test_nothing_is_found_under_the_default_markers_when_the_course_has_its_own():
    assert hidden_regions(CELL, DEFAULT) == ()
    assert not hidden_tests.has_markers(CELL, DEFAULT)
    assert withhold(CELL, DEFAULT).visible == CELL        # nothing to cut under the wrong markers
    assert hidden_regions(CELL, hidden_tests.delimiters(_config("BEGIN SECRET CHECKS", "END SECRET CHECKS"))) \
        == ((2, 5),)


def test_withholding_cuts_exactly_the_regions_as_nbgrader_does():
    from nbgrader.preprocessors import ClearHiddenTests

    split = withhold(CELL, SECRET)
    assert split.visible == "assert double(2) == 4\nassert double(0) == 0"
    assert split.regions == ((2, 5),) and split.problem == ""
    cell = nbformat.v4.new_code_cell(CELL)
    ClearHiddenTests(config=_config("BEGIN SECRET CHECKS", "END SECRET CHECKS"))._remove_hidden_test_region(cell)
    assert cell.source == split.visible          # what the student was released, and what their kernel runs


@pytest.mark.parametrize("source, words", [
    ("a = 1\n### BEGIN SECRET CHECKS\nassert a == 1", ["line 2", "never closed", "'END SECRET CHECKS'"]),
    ("### BEGIN SECRET CHECKS\nx = 1\n### BEGIN SECRET CHECKS\ny = 2\n### END SECRET CHECKS",
     ["line 3", "inside the one line 1 opened", "'BEGIN SECRET CHECKS'"]),
    ("a = 1\n### END SECRET CHECKS\nassert a", ["line 2", "closes", "no 'BEGIN SECRET CHECKS' line opened"]),
])
def test_markers_that_do_not_pair_up_are_reported_and_hide_the_whole_cell(source, words):
    with pytest.raises(MalformedHiddenRegion) as raised:
        hidden_regions(source, SECRET)
    message = str(raised.value)
    assert all(word in message for word in words), message
    split = withhold(source, SECRET)
    assert split.visible == "" and split.problem == message
    assert split.regions == ((1, source.count("\n") + 1),)   # the whole cell is hidden


def test_withholding_in_the_pipeline_uses_the_courses_markers():
    """hidden_tests.withhold_hidden_tests, given the course's configuration, cuts its regions and
    records the cell as pending; a malformed cell is withheld whole, with an event that says why."""
    from course_grader.hidden_tests import withhold_hidden_tests
    from course_grader.report import GradingReport

    def test_cell(source, grade_id):
        return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
            "grade": True, "solution": False, "grade_id": grade_id, "points": 1, "locked": True}})

    broken = "assert True\n### BEGIN SECRET CHECKS\nassert secret"
    nb = nbformat.v4.new_notebook(cells=[test_cell(CELL, "good"), test_cell(broken, "broken"),
                                         test_cell("### BEGIN HIDDEN TESTS\nassert x", "default")])
    report = GradingReport()
    withheld = withhold_hidden_tests(nb, report, _config("BEGIN SECRET CHECKS", "END SECRET CHECKS"))
    assert withheld == {0: CELL, 1: broken}              # the default markers mean nothing to this course
    assert nb.cells[0].source == "assert double(2) == 4\nassert double(0) == 0"
    assert nb.cells[1].source == ""
    assert report.hidden_pending == ["broken", "good"]
    [event] = report.events
    assert event.grade_id == "broken" and event.kind == "hidden_markers" and "never closed" in event.message
