"""An LMS export with several files from one student: the newest is graded, and the note says which and why.

The export's own timestamps decide (a zip's entries are extracted in the
order they are stored, not the order they were handed in), and the note
travels with the student's result into the summary and the JSON report.
"""

import zipfile
from pathlib import Path

import nbformat

from course_grader.intake import find_submissions


def _notebook(text: str) -> str:
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(text)]))


def _zip(path: Path, members: list[tuple[str, tuple, str]]):
    with zipfile.ZipFile(path, "w") as archive:
        for name, date_time, text in members:
            archive.writestr(zipfile.ZipInfo(name, date_time=date_time), text)


def test_of_two_files_in_a_zip_the_one_handed_in_last_is_graded_and_the_note_says_so(tmp_path):
    export = tmp_path / "export.zip"
    # Canvas names resubmissions with a new number; stored here newest first
    _zip(export, [("alice_2_hw.ipynb", (2026, 3, 2, 9, 30, 0), _notebook("second = 2")),
                  ("alice_1_hw.ipynb", (2026, 3, 1, 18, 0, 0), _notebook("first = 1")),
                  ("bob_1_hw.ipynb", (2026, 3, 1, 12, 0, 0), _notebook("bob = 1"))])
    submissions, warnings, _ = find_submissions(export, ["hw"], r"^(?P<student>[a-z]+)_", tmp_path / "scratch")
    alice, bob = submissions
    assert Path(alice.notebooks["hw"]).name == "alice_2_hw.ipynb"
    assert alice.notes == ["2 files for hw.ipynb: graded alice_2_hw.ipynb (2026-03-02 09:30), the one modified "
                           "last; not graded: alice_1_hw.ipynb (2026-03-01 18:00)"]
    assert bob.notes == [] and any(w.startswith("alice: 2 files for hw.ipynb") for w in warnings)


def test_a_file_named_as_the_notebook_is_graded_before_a_newer_other_and_the_note_says_why(tmp_path):
    export = tmp_path / "export.zip"
    _zip(export, [("carol/hw.ipynb", (2026, 3, 1, 10, 0, 0), _notebook("mine = 1")),
                  ("carol/hw-copy.ipynb", (2026, 3, 2, 10, 0, 0), _notebook("copy = 1"))])
    (carol,), _, _ = find_submissions(export, ["hw"], None, tmp_path / "scratch")
    assert Path(carol.notebooks["hw"]).name == "hw.ipynb"
    assert ("graded carol/hw.ipynb (2026-03-01 10:00), the one named as the assignment's notebook; "
            "not graded: carol/hw-copy.ipynb (2026-03-02 10:00)") in carol.notes[0]


def test_of_several_notebooks_each_names_its_newest_file(tmp_path):
    export = tmp_path / "export.zip"
    _zip(export, [("dan_p1_v2.ipynb", (2026, 3, 3, 8, 0, 0), _notebook("")),
                  ("dan_p2.ipynb", (2026, 3, 1, 8, 0, 0), _notebook("")),
                  ("dan_x_p2.ipynb", (2026, 3, 2, 8, 0, 0), _notebook("")),
                  ("dan_p1.ipynb", (2026, 3, 1, 8, 0, 0), _notebook(""))])
    (dan,), _, _ = find_submissions(export, ["p1", "p2"], r"^(?P<student>[a-z]+)_", tmp_path / "scratch")
    assert {name: Path(path).name for name, path in dan.notebooks.items()} == {"p1": "dan_p1.ipynb",
                                                                             "p2": "dan_x_p2.ipynb"}
    assert dan.notes == ["2 files for p2.ipynb: graded dan_x_p2.ipynb (2026-03-02 08:00), the one modified last; "
                         "not graded: dan_p2.ipynb (2026-03-01 08:00)"]
