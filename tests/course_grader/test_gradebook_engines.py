"""A worker keeps one SQLAlchemy engine per gradebook and checks a gradebook's schema once
(:func:`course_grader.nbgrader_api.reuse_gradebook_engines`): what is read and written stays
nbgrader's, and a gradebook replaced at the same path is checked again.  Run in a fresh
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
with Gradebook(url) as gb:
    assert gb.engine is first_engine, "the engine was not reused"
    assert [s.id for s in gb.students] == ["ada"], "what was written is not read back"
    gb.add_student("grace")
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
