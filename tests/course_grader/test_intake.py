"""Collections as LMSs and students make them: every student's work is graded, whatever else is in them.

Any Unicode name is a student id (kept as given, graded under a safe id, the
mapping in the report); distinct students never merge; a damaged archive
member or a symbolic link costs only that entry, with a warning (a student
whose only file it was still gets a row, which says so); links are
never followed out of the collection; a notebook that nbformat reads but does
not validate is graded, with a note, as plain nbgrader grades it.
"""

import copy
import os
import zipfile

import nbformat

from grading_support import LIMITS, ROOT, cell_scores, max_scores, solved_notebook, write

from course_grader.intake import find_submissions, student_id

A = "a1_softmax_additive"
NAMES = ["张伟", "李娜", "-", "john doe", "john_doe", "Zoë O'Brien"]


def test_any_name_is_a_distinct_safe_id():
    ids = [student_id(name) for name in NAMES]
    assert len(set(ids)) == len(NAMES)
    assert student_id("john_doe") == "john_doe" and student_id("alice") == "alice"   # safe ids are kept
    for safe in ids:
        assert safe[0].isalnum() and all(c.isalnum() or c in "._@-" for c in safe) and safe.isascii()
    assert student_id("张伟") == student_id("张伟")                                     # stable


def test_links_are_not_followed_and_cost_only_their_entry(tmp_path):
    outside = tmp_path / "outside"
    write(solved_notebook(A), outside / "someone-else.ipynb")
    inbox = tmp_path / "inbox"
    for name in ("alice", "bob"):
        write(solved_notebook(A), inbox / name / f"{A}.ipynb")
    (inbox / "ghost.ipynb").symlink_to(tmp_path / "missing.ipynb")          # dangling
    (inbox / "mallory.ipynb").symlink_to(outside / "someone-else.ipynb")    # out of the collection
    (inbox / "eve").symlink_to(outside, target_is_directory=True)
    submissions, warnings, _ = find_submissions(inbox, [A], None, tmp_path / "scratch")
    assert [s.student for s in submissions] == ["alice", "bob"]
    assert sum("symbolic link" in w for w in warnings) == 3


def test_a_damaged_archive_member_costs_only_that_member(tmp_path):
    archive = tmp_path / "export.zip"
    text = nbformat.writes(solved_notebook(A)).encode()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as z:
        for name in ("alice", "bob", "carol"):
            z.writestr(f"{name}/{A}.ipynb", text)
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        bob = z.getinfo(f"bob/{A}.ipynb")
    start = bob.header_offset + 30 + len(bob.filename) + 200     # inside bob's stored bytes
    data[start:start + 8] = b"CORRUPT!"
    archive.write_bytes(bytes(data))
    submissions, warnings, account = find_submissions(archive, [A], None, tmp_path / "scratch")
    assert [s.student for s in submissions] == ["alice", "bob", "carol"]   # bob still gets a row, which says why
    bob = submissions[1]
    assert bob.notebooks == {} and "damaged in the archive" in bob.nothing_gradable
    assert any("bob" in w and "damaged" in w for w in warnings)
    assert account.verdicts[f"bob/{A}.ipynb"].startswith("not graded: damaged in the archive")


def _not_valid_but_readable():
    nb = copy.deepcopy(solved_notebook(A))
    for cell in nb.cells:
        if cell.cell_type == "code":
            del cell["execution_count"]          # required by the schema; papermill-like tools drop it
            break
    nb.metadata["kernelspec"]["extra"] = {"made by": "another tool"}
    assert nbformat.validator.isvalid(nb) is False
    return nb


def test_every_student_in_an_awkward_collection_is_graded(tmp_path):
    submissions = {name: solved_notebook(A) for name in NAMES}
    submissions["not-strictly-valid"] = _not_valid_but_readable()
    inbox = tmp_path / "inbox"
    for name, nb in submissions.items():
        write(nb, inbox / name / f"{A}.ipynb")
    (inbox / "dangling.ipynb").symlink_to(tmp_path / "nowhere.ipynb")
    from course_grader import grade

    course = tmp_path / "course"
    report = grade.grade(inbox, A, course_dir=course, workers=2, **LIMITS, quiet=True,
                         config_file=ROOT / "nbgrader_config.py")
    report["by_student"] = {r["student"]: r for r in report["results"]}
    report["course"] = course
    assert report["failed"] == 0 and len(report["results"]) == len(submissions)
    assert sorted(report["student_ids"].values()) == sorted(n for n in NAMES if student_id(n) != n)
    for name in submissions:
        safe = student_id(name)
        assert report["by_student"][safe]["status"] == "graded"
        assert cell_scores(report, safe) == max_scores(A), name
    notes = report["by_student"]["not-strictly-valid"]["notes"]
    assert any("does not pass nbformat's validation" in n for n in notes)
    assert any("dangling.ipynb" in w for w in report["warnings"])
    assert os.path.isdir(course / "submitted" / student_id("张伟"))
