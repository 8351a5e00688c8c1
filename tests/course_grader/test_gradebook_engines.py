"""A worker keeps one SQLAlchemy engine per gradebook and checks a gradebook's schema once
(:func:`course_grader.nbgrader_api.reuse_gradebook_engines`): what is read and written stays
nbgrader's; a gradebook checked once is not checked again, and one replaced at the same path is.  Run in a fresh
interpreter, as in a worker: the change is the process's."""

import subprocess
import sys

from grading_support import ROOT

SCRIPT = r'''
import os, sys
from nbgrader.api import Gradebook
from course_grader.nbgrader_api import reuse_gradebook_engines

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
from course_grader.nbgrader_api import reuse_gradebook_engines

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
