"""Once the student's process has seen a hidden test's inputs, nothing it says reaches anyone verbatim.

The clean re-check sends the hidden tests' inputs to the student's process (its
functions must be called with them).  From the first hidden test on, that
process may write them into anything it produces.  Here a student's functions
pass the hidden test, keep its input (a 12-digit number drawn from the course's
secret), and then try every channel they have, one visible test each: an
exception's message, the name of an exception class of their own, a file named
after it (made unreadable, and one outside its folder through a forged reply of
the process's file scan), printed text and warnings, an object whose ``str`` is
it, an array whose shape encodes it, a list holding it, an exit status.  Each
visible test passes in the notebook's kernel (which never sees the input) and
fails in the re-check.

None of it may reach the feedback, the autograded notebook, the grading
reports, the gradebook, the CSV or the instructor's summary; a visible test
that fails before any hidden test keeps the student's own message (it carries
nothing secret), so the grader does not withhold more than it must.
"""

import json
import re
import sqlite3
from pathlib import Path

import nbformat
import pytest

from grading_support import LIMITS, ROOT

ASSIGNMENT = "leak"
SECRET = "the course's secret for the leak test"
STUDENT = "mallory"

INSTRUCTOR = '''\
### BEGIN SOLUTION
def double(x):
    return 2 * x

def before(x):
    return x

echo_raise = echo_type = echo_print = echo_str = echo_items = echo_exit = before

def echo_shape(x):
    return np.asarray(x)
### END SOLUTION
'''

STUDENT_CODE = '''\
import os, sys, warnings
from IPython import get_ipython

_SEEN = []

def _in_recheck():          # the notebook's kernel never sees a hidden input; the re-check's process does
    return type(get_ipython()).__name__ != "ZMQInteractiveShell"

def _leak():
    return "LEAK" + "-".join(str(x) for x in _SEEN)

def _forge_the_file_scan():
    """The re-check process's own scan of written files, replaced: it names a file outside the folder,
    then fails with the input in its message.  (The process's program is the frame that called this.)"""
    frame = sys._getframe()
    while frame is not None and "changed_files" not in frame.f_globals:
        frame = frame.f_back
    calls = []
    def changed_files(seen, arrays):
        calls.append(1)
        if len(calls) == 1:
            arrays.append(np.frombuffer(_leak().encode(), dtype=np.uint8))
            return {"written": [["../" + _leak(), len(arrays) - 1]], "removed": []}
        raise PermissionError(13, "Permission denied", _leak())
    frame.f_globals["changed_files"] = changed_files

def double(x):
    if _in_recheck() and isinstance(x, int) and x >= 10 ** 11:
        _SEEN.append(x)
        for name in (_leak(), _leak() + ".txt"):
            with open(name, "w") as handle:
                handle.write(_leak())
        os.chmod(_leak(), 0)                       # unreadable: its scan of written files skips it
        os.makedirs(_leak() + "_folder", exist_ok=True)
    return 2 * x

def before(x):
    if _in_recheck():
        raise ValueError("BEFORE-HIDDEN " + _leak())
    return x

def echo_raise(x):
    if _in_recheck() and _SEEN:
        _forge_the_file_scan()
        raise ValueError(_leak())
    return x

def echo_type(x):
    if _in_recheck() and _SEEN:
        raise type(_leak(), (BaseException,), {})(_leak())   # a name no built-in exception has
    return x

def echo_print(x):
    if _in_recheck() and _SEEN:
        print(_leak())
        print(_leak(), file=sys.stderr)
        warnings.warn(_leak())
    return x

class _Talker:
    def __str__(self):
        return _leak()
    __repr__ = __str__

def echo_str(x):
    return _Talker() if _in_recheck() and _SEEN else x

def echo_shape(x):
    if _in_recheck() and _SEEN:
        return np.zeros((_SEEN[0] % 997 + 2, 3))
    return np.asarray(x)

def echo_items(x):
    return [_leak()] if _in_recheck() and _SEEN else [x]

def echo_exit(x):
    if _in_recheck() and _SEEN:
        os._exit(_SEEN[0] % 250 + 3)
    return x
'''

HIDDEN = ('assert double(1) == 2, "double(1) should be 2"\n'
          "### BEGIN HIDDEN TESTS\n"
          'x = int(grading_rng("x").integers(10 ** 11, 10 ** 12))\n'
          'assert double(x) == reference.double(x), f"double is wrong on {x}"\n'
          "### END HIDDEN TESTS\n")

#: (grade id, source): the tests, in order; every one but the hidden test is visible
TESTS = [
    ("before_test", 'assert before(1) == 1, f"before(1) gave {before(1)}"'),
    ("hidden_test", HIDDEN),
    ("files_test", 'import os\nnames = sorted(os.listdir("."))\n'
                   'assert not [n for n in names if n.startswith("LEAK")], f"unexpected files: {names}"'),
    ("raise_test", 'assert echo_raise(1) == 1, "echo_raise(1) should be 1"'),
    ("type_test", 'assert echo_type(1) == 1, "echo_type(1) should be 1"'),
    ("print_test", "import io, contextlib\nbuffer = io.StringIO()\nwith contextlib.redirect_stdout(buffer):\n"
                   "    value = echo_print(1)\n"
                   'assert value == 1 and buffer.getvalue() == "", f"echo_print printed {buffer.getvalue()!r}"'),
    ("str_test", 'value = echo_str(1)\nassert str(value) == "1", f"echo_str(1) gave {value}"'),
    ("shape_test", 'value = np.asarray(echo_shape([1.0]))\n'
                   'assert value.shape == (1,), f"expected shape (1,), got {value.shape}"'),
    ("items_test", 'assert echo_items(1) == [1], f"echo_items(1) gave {echo_items(1)}"'),
    ("exit_test", 'assert echo_exit(1) == 1, "echo_exit(1) should be 1"'),
]


def _meta(grade_id, **flags):
    info = {"grade": False, "grade_id": grade_id, "locked": False, "schema_version": 3, "solution": False,
            "task": False, **flags}
    return {"nbgrader": info}


def _notebook(folder: Path, answer: str, hidden: bool):
    cells = [nbformat.v4.new_code_cell("import numpy as np", metadata=_meta("setup", locked=True)),
             nbformat.v4.new_code_cell(answer, metadata=_meta("answer", solution=True))]
    for grade_id, source in TESTS:
        if not hidden:     # the released test cell: its visible part only
            source = re.sub(r"### BEGIN HIDDEN TESTS.*### END HIDDEN TESTS\n", "", source, flags=re.S)
        points = 2 if grade_id == "hidden_test" else 1
        cells.append(nbformat.v4.new_code_cell(source, metadata=_meta(grade_id, grade=True, locked=True,
                                                                      points=points)))
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")


def _hidden_input() -> int:
    from course_grader.hidden_tests import rng_factory

    return int(rng_factory(SECRET, ASSIGNMENT, ASSIGNMENT, "hidden_test", STUDENT)("x").integers(10 ** 11, 10 ** 12))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from course_grader import grade

    tmp = tmp_path_factory.mktemp("leak")
    _notebook(tmp / "source" / ASSIGNMENT, INSTRUCTOR, hidden=True)
    _notebook(tmp / "inbox" / STUDENT, STUDENT_CODE, hidden=False)
    report = grade.grade(tmp / "inbox", ASSIGNMENT, course_dir=tmp / "course", workers=1, **LIMITS, quiet=True,
                         config_file=ROOT / "nbgrader_config.py", secret_seed=SECRET,
                         source_dir=tmp / "source", course_id="leak")
    return report, tmp / "course"


def _everything_written(report: dict, course: Path, summary: str) -> dict[str, str]:
    """Every text the run wrote or printed, by where it is."""
    texts = {"summary": summary, "report": json.dumps(report)}
    for path in course.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".ipynb", ".json", ".csv", ".log"):
            texts[str(path.relative_to(course))] = path.read_text(errors="replace")
    with sqlite3.connect(course / "gradebook.db") as db:
        texts["gradebook"] = "\n".join(db.iterdump())
    return texts


def test_the_student_passes_the_hidden_test_and_holds_its_input(graded):
    report, course = graded
    from grading_support import cell_scores

    scores = cell_scores({"course": course, "assignment": ASSIGNMENT}, STUDENT)
    assert scores["hidden_test"] == 2                        # the input reached the student's process
    assert {gid: scores[gid] for gid, _ in TESTS if gid != "hidden_test"} == {gid: 0 for gid, _ in TESTS
                                                                              if gid != "hidden_test"}


def test_nothing_the_student_says_after_it_reaches_anyone(graded, capsys):
    from course_grader.cli import print_summary

    report, course = graded
    print_summary(report)
    texts = _everything_written(report, course, capsys.readouterr().out)
    secret = str(_hidden_input())
    for where, text in texts.items():
        assert secret not in text, f"the hidden input reached {where}"
        assert not re.search(r"LEAK\d", text), f"the student's text after the hidden test reached {where}"


def test_each_channel_fails_its_test_in_the_graders_words(graded):
    report, course = graded
    nb = nbformat.read(course / "autograded" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    messages = {}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if errors:
            messages[gid] = errors[0].evalue
    assert "your code raised an exception during a test run after hidden tests" in messages["raise_test"]
    assert "echo_raise(1) should be 1" in messages["raise_test"]          # the test's own words, kept
    assert "expected shape (1,), got …" in messages["shape_test"]          # the student's shape, not
    assert "echo_print printed …" in messages["print_test"]
    # before any hidden test the student's process holds nothing secret: its own message is shown
    assert "BEFORE-HIDDEN" in messages["before_test"]


def test_the_process_s_file_scan_is_reported_without_its_words(graded):
    report, _ = graded
    events = " ".join(report["results"][0]["events"])
    assert "not brought over" in events
