"""The grading command merges each student into the course's gradebook while the workers go on
writing their shards (:class:`course_grader.gradebook.GradebookMerger`): the merged gradebook holds
every student with the shard's scores, and the worker's commits never fail for it (SQLite's
"database is locked" after its five seconds' wait would end the writer with an error)."""

import shutil
import subprocess
import sys

import pytest

from grading_support import ROOT

from course_grader.gradebook import GradebookMerger

STUDENTS = 30

# A worker's part: one student after another into its shard, each committed, each announced once
# committed.
WRITER = r'''
import sys

import pytest
from nbgrader.api import Gradebook

with Gradebook(sys.argv[1]) as gb:
    for i in range(int(sys.argv[2])):
        student = f"s{i:02d}"
        gb.add_student(student, first_name=f"First{i}")
        gb.add_submission("a", student)
        grade = gb.find_grade("q1", "nb", "a", student)
        grade.auto_score = i % 3
        comment = gb.find_comment("q1", "nb", "a", student)
        comment.auto_comment = f"note {i}"
        gb.db.commit()
        print(student, flush=True)
'''


def test_students_merged_while_their_worker_writes_arrive_whole(tmp_path):
    from nbgrader.api import Gradebook

    master = tmp_path / "gradebook.db"
    with Gradebook(f"sqlite:///{master}") as gb:
        gb.add_assignment("a")
        gb.add_notebook("nb", "a")
        gb.add_grade_cell("q1", "nb", "a", max_score=2, cell_type="code")
        gb.add_solution_cell("q1", "nb", "a")
    shard = tmp_path / "shard.db"
    shutil.copyfile(master, shard)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, f"sqlite:///{shard}", str(STUDENTS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    merged = []
    with GradebookMerger(f"sqlite:///{master}") as merger:
        for line in writer.stdout:
            merger.merge(f"sqlite:///{shard}", "a", [line.strip()])   # while the writer goes on
            merged.append(line.strip())
    assert writer.wait(timeout=120) == 0, writer.stderr.read()[-3000:]
    assert len(merged) == STUDENTS
    with Gradebook(f"sqlite:///{master}") as gb:
        for i in range(STUDENTS):
            student = f"s{i:02d}"
            assert gb.find_grade("q1", "nb", "a", student).auto_score == i % 3
            assert gb.find_comment("q1", "nb", "a", student).auto_comment == f"note {i}"
            assert gb.find_student(student).first_name == f"First{i}"
        assert sorted(s.student.id for s in gb.find_assignment("a").submissions) == merged


def _course_gradebook(path):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path}") as gb:
        gb.add_assignment("a")
        for notebook in ("nb1", "nb2"):
            gb.add_notebook(notebook, "a")
            gb.add_grade_cell("q1", notebook, "a", max_score=2, cell_type="code")
            gb.add_solution_cell("q1", notebook, "a")
            gb.add_grade_cell("essay", notebook, "a", max_score=3, cell_type="markdown")
            gb.add_solution_cell("essay", notebook, "a")
        gb.add_student("old", first_name="Before")
        gb.add_submission("a", "old", timestamp="2026-01-01 10:00:00")
        essay = gb.find_grade("essay", "nb1", "a", "old")
        essay.manual_score = 2.5                                  # graded by hand before this run
        gb.db.commit()


def _graded_shard(path):
    """What a worker leaves in its shard: new students, and the old one graded again."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path}") as gb:
        for i, student in enumerate(["new-1", "new-2", "old"]):
            gb.update_or_create_student(student, first_name=f"First {i}", email=f"{student}@example.org")
            gb.update_or_create_submission("a", student, timestamp=f"2026-02-0{i + 1} 12:00:00")
            for notebook in ("nb1", "nb2"):
                grade = gb.find_grade("q1", notebook, "a", student)
                grade.auto_score = (i + len(notebook)) % 3
                comment = gb.find_comment("q1", notebook, "a", student)
                comment.auto_comment = f"{student} {notebook}"
                gb.find_submission_notebook(notebook, "a", student).flagged = i == 1
            gb.db.commit()
        gb.add_student("no-submission")


def _contents(path) -> dict:
    """The gradebook as nbgrader reads it, by names (the ids of new rows differ between merges)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path}") as gb:
        return {student.id: (student.first_name, student.last_name, student.email, [
            (str(sub.timestamp), [(nb.name, nb.flagged, nb.late_submission_penalty,
                                   sorted((g.name, g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                                          for g in nb.grades),
                                   sorted((c.name, c.auto_comment, c.manual_comment) for c in nb.comments))
                                  for nb in sorted(sub.notebooks, key=lambda nb: nb.name)])
            for sub in student.submissions])
            for student in gb.students}


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")   # nbgrader's own add_submission
def test_rows_copied_from_the_workers_shards_equal_what_nbgraders_objects_merge(tmp_path):
    """The grading command's shards are copies of the course's gradebook: a student's rows are
    copied as they are.  The result equals nbgrader's object-by-object merge (new students, a
    student graded again whose hand grade stays), and a shard made elsewhere (other ids) still
    merges through nbgrader's objects."""
    from course_grader.gradebook import GradebookMerger, RowCopier

    course = tmp_path / "course.db"
    _course_gradebook(course)
    shard = tmp_path / "shard.db"
    shutil.copyfile(course, shard)
    _graded_shard(shard)
    results = {}
    for name, copies in (("objects", False), ("rows", True)):
        target = tmp_path / f"{name}.db"
        shutil.copyfile(course, target)
        with GradebookMerger(f"sqlite:///{target}", copies=copies) as merger:
            merger.merge(f"sqlite:///{shard}", "a", ["new-1", "old"])
            merger.merge(f"sqlite:///{shard}", "a", ["new-2", "no-submission", "nobody"])
            assert (merger._master is None) == copies        # the rows were copied, not merged as objects
        results[name] = _contents(target)
    assert results["rows"] == results["objects"]
    assert results["rows"]["old"][3][0][1][0][3][0] == ("essay", None, 2.5, None, True)   # the hand grade stays
    assert results["rows"]["new-2"][3][0][1][1][1] is True                               # flagged

    elsewhere = tmp_path / "elsewhere.db"        # the same assignment, added to another gradebook
    _course_gradebook(elsewhere)
    assert RowCopier.open(f"sqlite:///{elsewhere}", f"sqlite:///{shard}", "a") is None
    with GradebookMerger(f"sqlite:///{elsewhere}", copies=True) as merger:
        merger.merge(f"sqlite:///{shard}", "a", ["new-1", "new-2", "old"])
    assert _contents(elsewhere) == results["objects"]
