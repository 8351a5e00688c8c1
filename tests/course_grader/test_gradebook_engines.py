"""A worker keeps one SQLAlchemy engine per gradebook and checks a gradebook's schema once
(:func:`course_grader.nbgrader_patches.reuse_gradebook_engines`): what is read and written stays
nbgrader's; a gradebook checked once is not checked again, and one replaced at the same path
is.  Run in a fresh interpreter, as in a worker: the change is the process's."""

import subprocess
import sys

from grading_support import ROOT

SCRIPT = r'''
import os, sys
from nbgrader.api import Gradebook
from course_grader.nbgrader_patches import reuse_gradebook_engines

reuse_gradebook_engines()
reuse_gradebook_engines()                # twice is once
folder = sys.argv[1]
url = f"sqlite:///{folder}/gradebook.db"
with Gradebook(url) as gb:
    gb.add_student("ada")
    first_engine = gb.engine
statements = []
from sqlalchemy import event
event.listen(first_engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
with Gradebook(url) as gb:
    assert gb.engine is first_engine, "the engine was not reused"
    assert statements == [], f"a gradebook checked before was checked again: {statements}"
    assert [s.id for s in gb.students] == ["ada"], "what was written is not read back"
    gb.add_student("grace")
import nbgrader.api
with Gradebook(url, "another_course") as gb:       # another course in the same file: its row is made
    pass
with Gradebook(url) as gb:
    assert sorted(c.id for c in gb.db.query(nbgrader.api.Course).all()) == ["another_course", "default_course"]
replacement = f"{folder}/replacement.db"
with Gradebook(f"sqlite:///{replacement}") as gb:
    gb.add_student("lin")
os.replace(replacement, f"{folder}/gradebook.db")    # another file at the path: no stale connection reads it
with Gradebook(url) as gb:
    assert [s.id for s in gb.students] == ["lin"]
with Gradebook(f"sqlite:///{folder}/other.db") as gb:
    assert gb.engine is not first_engine and gb.students == []
os.remove(f"{folder}/gradebook.db")      # a new gradebook at the same path: its schema is made again
with Gradebook(url) as gb:
    assert gb.students == []
    gb.add_student("new")
with Gradebook(url) as gb:
    assert [s.id for s in gb.students] == ["new"]
print("ok")
'''


def test_engines_are_reused_and_a_replaced_gradebook_gets_its_schema(tmp_path):
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


SYNCHRONOUS = r'''
import sys
from nbgrader.api import Gradebook
from sqlalchemy import text
from course_grader.nbgrader_patches import reuse_gradebook_engines

reuse_gradebook_engines(scratch=sys.argv[2] == "scratch")
with Gradebook(f"sqlite:///{sys.argv[1]}/gradebook.db") as gb:
    gb.add_student("ada")
    print(gb.db.execute(text("PRAGMA synchronous")).scalar())
'''


def test_only_a_scratch_gradebook_skips_waiting_for_the_disk(tmp_path):
    """A worker's shard commits without fsync (``synchronous = OFF``, 0); any other gradebook keeps
    SQLite's default (FULL, 2)."""
    answers = []
    for kind in ("scratch", "course"):
        (tmp_path / kind).mkdir()
        done = subprocess.run([sys.executable, "-c", SYNCHRONOUS, str(tmp_path / kind), kind],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        answers.append(done.stdout.split()[-1])
    assert answers == ["0", "2"]


LOOKUPS = r'''
import sys
from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy import event

url = f"sqlite:///{sys.argv[1]}/gradebook.db"
with Gradebook(url) as gb:
    gb.add_assignment("ps1")
    gb.add_notebook("p1", "ps1")
    gb.add_grade_cell("both", "p1", "ps1", max_score=2, cell_type="code")   # graded and a solution
    gb.add_solution_cell("both", "p1", "ps1")
    gb.add_grade_cell("test", "p1", "ps1", max_score=3, cell_type="code")
    gb.add_solution_cell("answer", "p1", "ps1")
    gb.add_task_cell("task", "p1", "ps1", max_score=1, cell_type="markdown")
    for name in ("both", "test", "answer", "task"):
        gb.add_source_cell(name, "p1", "ps1", cell_type="code", source=f"# {name}", checksum=name)
    for student in ("ada", "grace"):
        gb.add_student(student)
        gb.add_submission("ps1", student)

LOOKUPS = [("find_grade", name, "p1", "ps1", student) for name in ("both", "test", "task", "answer", "nope")
           for student in ("ada", "grace", "nobody")]
LOOKUPS += [("find_comment", name, "p1", "ps1", student) for name in ("both", "answer", "task", "test", "nope")
            for student in ("ada", "grace")]
LOOKUPS += [(kind, name, notebook, "ps1") for kind in ("find_source_cell", "find_graded_cell")
            for name in ("both", "test", "answer", "task", "nope") for notebook in ("p1", "p2")]


def answers(lookups):
    """What each lookup (done twice) finds: its kind, id and cell, or its MissingEntry; and the statements run."""
    found, statements = [], []
    with Gradebook(url) as gb:
        def count(*args):
            statements.append(args[2])

        event.listen(gb.engine, "before_cursor_execute", count)
        for kind, *args in lookups * 2:
            try:
                item = getattr(gb, kind)(*args)
                found.append((kind, *args, type(item).__name__, item.id, getattr(item, "name", None)))
            except MissingEntry as error:
                found.append((kind, *args, "MissingEntry", str(error)))
        event.remove(gb.engine, "before_cursor_execute", count)
        grade = gb.find_grade("test", "p1", "ps1", "ada")
        grade.manual_score = 1.5
        gb.db.commit()                                           # objects expire on commit ...
        found.append(gb.find_grade("test", "p1", "ps1", "ada").manual_score)   # ... and read again
    with Gradebook(url) as gb:                                   # a new session: nothing stale
        found.append(gb.find_grade("test", "p1", "ps1", "ada").manual_score)
    return found, len(statements)


plain, _ = answers(LOOKUPS)
HITS = [lookup for lookup, answer in zip(LOOKUPS, plain) if answer[len(lookup)] != "MissingEntry"]
_, plain_statements = answers(HITS)
from course_grader.nbgrader_patches import reuse_gradebook_engines, reuse_gradebook_lookups
reuse_gradebook_engines()
reuse_gradebook_lookups()
reuse_gradebook_lookups()                   # twice is once
reused, _ = answers(LOOKUPS)
assert reused == plain, [(a, b) for a, b in zip(plain, reused) if a != b]
_, reused_statements = answers(HITS)
assert reused_statements * 3 < plain_statements, (reused_statements, plain_statements)
print("ok", len(HITS), plain_statements, reused_statements)
'''


def test_lookups_answer_what_nbgraders_queries_answer_with_fewer_statements(tmp_path):
    """Grades, comments, source and graded cells (a cell both graded and a solution, a task, a missing
    name, a missing student or notebook): every lookup answers as nbgrader's own query, the same
    object kinds, ids and errors, before and after a commit; those that find something take a third
    of the statements or fewer."""
    done = subprocess.run([sys.executable, "-c", LOOKUPS, str(tmp_path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stderr[-3000:]
