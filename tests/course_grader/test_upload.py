"""Every file and folder an instructor uploads is accounted for: graded as whose, or not graded and why.

Students vanished without a word: a notebook whose extension is in capitals,
zips inside the zip, ``NAME.ipynb.zip``, a folder named ``...``, and any hand-in
that is not a notebook (a PDF, a text, a notebook saved as ``.py``).  A student
with several notebooks of one name in different folders was graded from the
blank one, and the note named the files by base name only.  Here:

* every entry of an upload (files, folders, zips and what is in them) has a
  verdict in the run's account, by its path in the upload;
* a student who handed in nothing gradable is still a student: graded as the
  blank exercise, with a CSV row and a note that say what they handed in;
* the shapes learning-management systems export are read where they differ
  from a folder per student (Moodle, Canvas, Blackboard, nbgrader's exchange);
* a regrade with another hidden-test secret than the gradebook's stops before
  it writes anything, unless told to grade anew.
"""

import csv
import io
import json
import zipfile
from pathlib import Path

import nbformat
import pytest

from grading_support import LIMITS, ROOT

from course_grader.intake import find_submissions, student_id

BLANK = "def double(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
ANSWER = "def double(x):\n    return 2 * x"


def _notebook(answer: str = ANSWER, name: str = "hw") -> str:
    meta = {"nbgrader": {"grade": False, "grade_id": "answer", "locked": False, "schema_version": 3,
                         "solution": True, "task": False}}
    test = {"nbgrader": {"grade": True, "grade_id": "test_double", "locked": True, "points": 2,
                         "schema_version": 3, "solution": False, "task": False}}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(answer, metadata=meta),
                                         nbformat.v4.new_code_cell("assert double(2) == 4", metadata=test)],
                                  metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    return nbformat.writes(nb)


def _zip_bytes(members: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(2026, 3, 1, 10, 0, 0)), data)
    return buffer.getvalue()


def _worked(path, name):
    """As the grading command tells a notebook with answers from the blank exercise."""
    cells = nbformat.read(path, as_version=4).cells
    return any("YOUR CODE HERE" not in cell.source for cell in cells if cell.metadata["nbgrader"]["solution"])


def _messy_upload(path: Path) -> dict[str, bytes]:
    """One zip with each way a student used to vanish, and the things around them."""
    deepest = _zip_bytes({"hw.ipynb": _notebook()})
    for _ in range(4):
        deepest = _zip_bytes({"inner.zip": deepest})
    members = {
        "alice/hw.ipynb": _notebook(),
        "alice/data.csv": b"1,2\n",
        "carol/A1_HW.IPYNB": _notebook(),                               # capitals
        "dave.zip": _zip_bytes({"hw.ipynb": _notebook(), "notes.txt": b"mine"}),    # a zip in the zip
        "erin.ipynb.zip": _zip_bytes({"erin.ipynb": _notebook()}),        # NAME.ipynb.zip
        ".../hw.ipynb": _notebook(),                                     # a folder named ...
        "frank/report.pdf": b"%PDF-1.4",                                 # not a notebook
        "hank/hw.py": b"def double(x):\n    return 2 * x\n",             # a notebook saved as .py
        "ivan/hw.ipynb": _notebook(BLANK),                               # the blank, handed in last
        "ivan/old/hw.ipynb": _notebook(),                                # the work, in another folder
        "judy/hw.ipynb": b'{"cells": [',                                 # not JSON
        "kim/nested.zip": deepest,                                       # zips five deep
        "__MACOSX/alice/._hw.ipynb": b"\x00\x05",
        "alice/.ipynb_checkpoints/hw-checkpoint.ipynb": _notebook(),
        "alice/.DS_Store": b"\x00",
        "../escape.ipynb": _notebook(),                                  # outside the archive
        "zoe.ipynb": _notebook(),                                        # one notebook at the top
        "gina.txt": b"I could not do it",                                # and a text at the top
    }
    path.write_bytes(_zip_bytes(members))
    return members


def test_every_entry_of_a_messy_upload_has_a_verdict_and_every_student_is_found(tmp_path):
    members = _messy_upload(tmp_path / "upload.zip")
    submissions, _, account = find_submissions(tmp_path / "upload.zip", ["hw"], None, tmp_path / "scratch",
                                               worked=_worked)
    verdicts = account.verdicts
    folders = {"/".join(Path(name).parts[:cut]) for name in members for cut in range(1, len(Path(name).parts))}
    missing = [entry for entry in [*members, *folders] if entry not in verdicts and ".." not in entry]
    assert missing == [] and "../escape.ipynb" in verdicts
    by_student = {sub.given_id or sub.student: sub for sub in submissions}
    assert set(by_student) == {"alice", "carol", "dave", "erin", "...", "frank", "hank", "ivan", "judy", "kim",
                               "zoe", "gina"}
    graded = {student: sub.shown.get("hw") for student, sub in by_student.items()}
    assert graded["carol"] == "carol/A1_HW.IPYNB" and graded["dave"] == "dave.zip/hw.ipynb"
    assert graded["erin"] == "erin.ipynb.zip/erin.ipynb" and graded["..."] == ".../hw.ipynb"
    assert graded["ivan"] == "ivan/old/hw.ipynb"                  # the one with answers, not the blank
    assert "ivan/hw.ipynb" in by_student["ivan"].notes[0] and "ivan/old/hw.ipynb" in by_student["ivan"].notes[0]
    assert by_student["..."].student == student_id("...") != "..."
    for student, said in [("frank", "not a notebook (a .pdf file)"), ("hank", "a Python file, not a notebook"),
                          ("kim", "levels of zips"), ("gina", "not a notebook (a .txt file)")]:
        assert by_student[student].notebooks == {} and said in by_student[student].nothing_gradable, student
    assert graded["judy"] == "judy/hw.ipynb"           # read at staging: graded as the blank, with a note
    assert by_student["alice"].files == [("data.csv", by_student["alice"].files[0][1])]
    for entry, said in [("__MACOSX/alice/._hw.ipynb", "macOS"), ("alice/.DS_Store", "macOS"),
                        ("alice/.ipynb_checkpoints/hw-checkpoint.ipynb", "checkpoint"),
                        ("../escape.ipynb", "outside the archive"), ("ivan/hw.ipynb", "ivan/old/hw.ipynb was graded"),
                        ("dave.zip", "opened"), ("alice/data.csv", "beside alice's notebook")]:
        assert said in verdicts[entry], (entry, verdicts[entry])
    assert verdicts["dave.zip/hw.ipynb"] == "graded: dave's hw.ipynb"


@pytest.mark.parametrize("shape", ["moodle folders", "moodle flat", "canvas", "blackboard", "nbgrader exchange",
                                   "nbgrader submitted", "a folder around it"])
def test_learning_management_system_exports_are_read_as_they_are_made(tmp_path, shape):
    """Each export's own way of naming students and attempts; the student and the file graded."""
    old, new = _notebook(BLANK.replace("# YOUR CODE HERE", "# first try")), _notebook()
    members, expected = {
        "moodle folders": ({"Jane Smith_4711_assignsubmission_file_/hw.ipynb": new,
                            "Jane Smith_4711_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>",
                            "Ben Li_4712_assignsubmission_file_/work/Hw.ipynb": new},
                           {"Jane Smith_4711": "Jane Smith_4711_assignsubmission_file_/hw.ipynb",
                            "Ben Li_4712": "Ben Li_4712_assignsubmission_file_/work/Hw.ipynb"}),
        "moodle flat": ({"Jane Smith_4711_assignsubmission_file_hw.ipynb": new},
                        {"Jane Smith_4711": "Jane Smith_4711_assignsubmission_file_hw.ipynb"}),
        "canvas": ({"smithjane_1234_5678_hw.ipynb": old, "smithjane_LATE_1234_5690_hw-1.ipynb": new,
                    "libenjamin_1240_5679_HW.ipynb": new},
                   {"smithjane": "smithjane_LATE_1234_5690_hw-1.ipynb", "libenjamin": "libenjamin_1240_5679_HW.ipynb"}),
        "blackboard": ({"HW 1_jsmith_attempt_2026-03-01-10-00-00.txt": b"Name: Jane Smith",
                        "HW 1_jsmith_attempt_2026-03-01-10-00-00_hw.ipynb": old,
                        "HW 1_jsmith_attempt_2026-03-02-09-00-00.txt": b"Name: Jane Smith",
                        "HW 1_jsmith_attempt_2026-03-02-09-00-00_hw.ipynb": new},
                       {"jsmith": "HW 1_jsmith_attempt_2026-03-02-09-00-00_hw.ipynb"}),
        "nbgrader exchange": ({"jsmith+hw+2026-03-01 10:00:00.000000 UTC+k3x/hw.ipynb": old,
                               "jsmith+hw+2026-03-02 09:00:00.000000 UTC+p8q/hw.ipynb": new,
                               "bli+hw+2026-03-01 10:00:00.000000 UTC+z1z/hw.ipynb": new},
                              {"jsmith": "jsmith+hw+2026-03-02 09:00:00.000000 UTC+p8q/hw.ipynb",
                               "bli": "bli+hw+2026-03-01 10:00:00.000000 UTC+z1z/hw.ipynb"}),
        "nbgrader submitted": ({"submitted/jsmith/hw/hw.ipynb": new, "submitted/jsmith/hw/timestamp.txt": b"2026",
                                "submitted/bli/hw/hw.ipynb": new},
                               {"jsmith": "submitted/jsmith/hw/hw.ipynb", "bli": "submitted/bli/hw/hw.ipynb"}),
        "a folder around it": ({"submissions/jsmith.ipynb": new, "submissions/bli.ipynb": new},
                               {"jsmith": "submissions/jsmith.ipynb", "bli": "submissions/bli.ipynb"}),
    }[shape]
    (tmp_path / "export.zip").write_bytes(_zip_bytes(members))
    submissions, _, account = find_submissions(tmp_path / "export.zip", ["hw"], None, tmp_path / "scratch")
    assert {sub.given_id or sub.student: sub.shown["hw"] for sub in submissions} == expected
    assert set(members) <= set(account.verdicts)
    if shape == "blackboard":
        assert "record of the attempt" in account.verdicts["HW 1_jsmith_attempt_2026-03-02-09-00-00.txt"]
    if shape == "moodle folders":
        assert account.verdicts["Jane Smith_4711_assignsubmission_onlinetext_/onlinetext.html"].startswith("beside")


# -- through the grading command --------------------------------------------------------------------------

def _course(folder: Path):
    source = folder / "source" / "hw"
    source.mkdir(parents=True)
    (source / "hw.ipynb").write_text(_notebook("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
                                               "    ### END SOLUTION"))
    return {"source_dir": folder / "source", "course_id": "upload"}


def _grade(tmp_path, upload: Path, course_dir: Path, **options):
    from course_grader import grade

    return grade.grade(upload, "hw", course_dir=course_dir, workers=2, **LIMITS, quiet=True,
                       config_file=ROOT / "nbgrader_config.py", **_course_once(tmp_path), **options)


def _course_once(tmp_path):
    if not (tmp_path / "source").exists():
        return _course(tmp_path)
    return {"source_dir": tmp_path / "source", "course_id": "upload"}


@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("messy")
    _messy_upload(tmp / "upload.zip")
    report = _grade(tmp, tmp / "upload.zip", tmp / "course")
    return report, tmp


def test_a_student_with_nothing_gradable_gets_a_row_that_says_so(messy):
    report, _ = messy
    with open(report["grades_csv"]) as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert set(rows) == {r["student"] for r in report["results"]}
    assert rows["frank"]["handed_in"] == "nothing gradable: frank/report.pdf (not a notebook (a .pdf file))"
    assert rows["frank"]["score"] == "0.0" and rows["hank"]["handed_in"].startswith("nothing gradable: hank/hw.py")
    assert rows["ivan"]["handed_in"] == "ivan/old/hw.ipynb" and float(rows["ivan"]["score"]) == 2.0
    assert float(rows["carol"]["score"]) == float(rows["dave"]["score"]) == float(rows["erin"]["score"]) == 2.0
    statuses = {r["student"]: r["status"] for r in report["results"]}
    assert statuses["frank"] == statuses["hank"] == "no notebook" and statuses["judy"] == "unreadable"
    assert report["no_notebook"] == 4 and report["failed"] == 0


def test_the_summary_names_every_file_graded_and_every_file_not_graded_with_why(messy, capsys):
    from course_grader.cli import print_summary

    report, _ = messy
    print_summary(report)
    out = capsys.readouterr().out
    assert "from ivan/old/hw.ipynb" in out and "from dave.zip/hw.ipynb" in out
    for path, verdict in report["upload"].items():
        if verdict.startswith("not graded"):
            assert path in out, path
    assert "nothing gradable" in out
    assert json.loads((report["course"] if "course" in report else Path(report["course_dir"]))
                      .joinpath("grading-hw.json").read_text())["upload"] == report["upload"]


def test_a_regrade_with_another_secret_stops_before_writing_anything(tmp_path):
    inbox = tmp_path / "inbox"
    (inbox / "alice").mkdir(parents=True)
    (inbox / "alice" / "hw.ipynb").write_text(_notebook())
    course_dir = tmp_path / "course"
    first = _grade(tmp_path, inbox, course_dir, secret_seed="this term's secret")
    assert first["graded"] == 1
    before = {path: path.stat().st_mtime_ns for path in course_dir.rglob("*")}
    with pytest.raises(SystemExit, match="another hidden-test secret.*nothing was written"):
        _grade(tmp_path, inbox, course_dir, secret_seed="another secret")
    assert {path: path.stat().st_mtime_ns for path in course_dir.rglob("*")} == before
    again = _grade(tmp_path, inbox, course_dir, secret_seed="this term's secret")   # the same secret: fine
    assert again["graded"] == 1
    anew = _grade(tmp_path, inbox, course_dir, secret_seed="another secret", new_secret=True)
    assert anew["graded"] == 1 and anew["fingerprints"]["secret"] != first["fingerprints"]["secret"]
