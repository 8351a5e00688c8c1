"""Honest notebooks with a slip Jupyter opens without a word are graded, repaired, and the repair is said.

A UTF-8 byte-order mark (Windows editors), a cell id nbformat 4.5 does not
allow, a lone surrogate character in a string: each scored 0 before (the file
"unreadable", or nbgrader unable to write the notebook again).  Each is
repaired as Jupyter would open it, graded like the same notebook without the
slip, and the instructor's summary and report say what was repaired.
"""

import json
from pathlib import Path

import nbformat
import pytest

from grading_support import LIMITS, ROOT

SOLUTION = "def double(x):\n    return 2 * x"


def _assignment(folder: Path):
    """A one-notebook nbgrader assignment: a written note, a solution cell, a test cell (2 points)."""
    def meta(**nbgrader):
        return {"nbgrader": {"schema_version": 3, "locked": False, "solution": False, "grade": False,
                             "task": False, **nbgrader}}

    cells = [
        nbformat.v4.new_markdown_cell("Write `double`.", metadata=meta(grade_id="intro", locked=True)),
        nbformat.v4.new_code_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
                                  metadata=meta(grade_id="answer", solution=True)),
        nbformat.v4.new_code_cell("assert double(2) == 4\nassert double(-1) == -2",
                                  metadata=meta(grade_id="test_double", grade=True, locked=True, points=2)),
    ]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "hw.ipynb")


def _honest(source: Path) -> str:
    """The assignment's notebook answered correctly, with a note of the student's, as JSON text."""
    nb = nbformat.read(source, as_version=4)
    nb.cells[1].source = SOLUTION
    nb.cells.insert(2, nbformat.v4.new_markdown_cell("My answer: SLIP"))
    return nbformat.writes(nb)


def _slips(text: str) -> dict[str, bytes]:
    nb = json.loads(text)
    nb["cells"][0]["id"] = "my first cell!"          # a space and a '!': not an nbformat 4.5 id
    return {
        "clean": text.encode(),
        "bom": b"\xef\xbb\xbf" + text.encode(),
        "bad_id": json.dumps(nb, indent=1).encode(),
        "surrogate": text.replace("SLIP", "\\ud83d").encode(),   # half of an emoji: valid JSON, not UTF-8
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from course_grader import grade

    tmp = tmp_path_factory.mktemp("malformed")
    _assignment(tmp / "source" / "hw")
    inbox = tmp / "inbox"
    for student, data in _slips(_honest(tmp / "source" / "hw" / "hw.ipynb")).items():
        (inbox / student).mkdir(parents=True)
        (inbox / student / "hw.ipynb").write_bytes(data)
    report = grade.grade(inbox, "hw", course_dir=tmp / "course", workers=2, **LIMITS, quiet=True,
                         config_file=ROOT / "nbgrader_config.py",
                         source_dir=tmp / "source", course_id="malformed")
    return {r["student"]: r for r in report["results"]}


@pytest.mark.parametrize("slip, said", [("bom", "byte-order mark"), ("bad_id", "cell id"),
                                        ("surrogate", "surrogate")])
def test_a_slip_jupyter_opens_is_repaired_graded_and_said(graded, slip, said):
    clean, result = graded["clean"], graded[slip]
    assert clean["status"] == "graded" and clean["score"] == clean["max_score"] == 2.0
    assert result["status"] == "graded" and result["score"] == clean["score"], result
    assert result["flags"] == []
    repaired = [note for note in result["notes"] if "repaired" in note]
    assert len(repaired) == 1 and said in repaired[0], result["notes"]
    assert not any("repaired" in note for note in clean["notes"])


def test_an_ordinary_notebook_is_staged_byte_for_byte(tmp_path):
    """Only a notebook that needed a repair is written again; any other is graded as handed in."""
    from course_grader.intake import Submission, stage_submission

    _assignment(tmp_path / "source" / "hw")
    release = tmp_path / "source" / "hw" / "hw.ipynb"
    handed_in = tmp_path / "alice.ipynb"
    handed_in.write_text(_honest(release).replace('"nbformat_minor": 5', '"nbformat_minor": 5 '))
    sub = Submission("alice", {"hw": str(handed_in)})
    assert stage_submission(sub, tmp_path / "course", "hw", {"hw": release}) == "graded"
    staged = tmp_path / "course" / "submitted" / "alice" / "hw" / "hw.ipynb"
    assert staged.read_bytes() == handed_in.read_bytes() and sub.notes == []


def test_what_cannot_be_repaired_is_still_graded_as_the_blank_with_a_note(tmp_path):
    from course_grader.intake import Submission, stage_submission

    _assignment(tmp_path / "source" / "hw")
    release = tmp_path / "source" / "hw" / "hw.ipynb"
    handed_in = tmp_path / "alice.ipynb"
    handed_in.write_bytes(b"\xef\xbb\xbf" + _honest(release).encode()[:-40])   # cut short as well
    sub = Submission("alice", {"hw": str(handed_in)})
    assert stage_submission(sub, tmp_path / "course", "hw", {"hw": release}) == "unreadable"
    assert any(note.startswith("unreadable notebook hw.ipynb") for note in sub.notes)
    assert (tmp_path / "course" / "submitted" / "alice" / "hw" / ".unreadable-hw.ipynb").is_file()
