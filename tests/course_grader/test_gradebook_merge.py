"""The grading command merges each student into the course's gradebook while the workers go on
writing their shards (:class:`course_grader.gradebook.GradebookMerger`): the merged gradebook holds
every student with the shard's scores, and the worker's commits never fail for it (SQLite's
"database is locked" after its five seconds' wait would end the writer with an error)."""

import shutil
import subprocess
import sys

from grading_support import ROOT

from course_grader.gradebook import GradebookMerger

STUDENTS = 30

# A worker's part: one student after another into its shard, each committed, each announced once
# committed.
WRITER = r'''
import sys
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
