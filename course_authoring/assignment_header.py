"""The parts every assignment notebook shares, written into ``solutions/`` by ``references.py``.

Each source notebook in ``solutions/`` has, after its title cell, the
"How this assignment works" cell (:data:`INSTRUCTIONS`, the whole cell) and a
first code cell that begins with :data:`HELPERS` (the checks the tests call
and, last, ``decode_reference``, the decoder of the hidden tests' data; what
follows it in that cell belongs to the assignment); its last cell is
:data:`PRACTICE`, the student's call for practice feedback
(:mod:`course_grader.practice`), tagged :data:`PRACTICE_TAGS` so that a graded
run does not execute it.  Edit them here, then run
``python -m course_authoring.references`` (which rewrites them in every notebook)
and ``python -m course_authoring.exercises``;
``tests/course_authoring/test_exercise_references.py`` fails while a notebook differs.
"""

INSTRUCTIONS = '''\
## How this assignment works

* Write your code where it says `# YOUR CODE HERE`, replacing `raise NotImplementedError()`.
  Keep the function names and arguments as they are: the tests call them.
* After each function come **visible tests**. Run them: they check the basics, and when they
  fail their message says what is wrong. A second test cell is empty here: the autograder fills
  it with **hidden tests** (edge cases, inputs you do not see) that give most of the points.
* NumPy only. Nothing here needs a Python loop over the batch, the heads or the positions;
  broadcasting, `@` and `reshape` do it, and the tests run on larger inputs than the examples.
* Leave the test cells and the first code cell as they are. The autograder restores them,
  runs every test again with *your functions in a separate, clean process*, and flags
  submissions that change how tests run. Code that tries to read or write files outside this
  notebook's folder, or to reach the network, fails in the grading sandbox.
* Before handing in, run *Kernel → Restart & Run All* and make sure no cell fails because of
  a typo. Hand in this `.ipynb` file (see the course's *Exercises* page).'''

HELPERS = '''\
import numpy as np


def check_close(actual, expected, what, rtol=1e-5, atol=1e-6):
    """Fail with a clear message unless `actual` has the shape and (float32-accurate) values of `expected`."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: expected shape {expected.shape}, got {actual.shape}"
    assert actual.dtype != object, f"{what}: expected an array of numbers, got {actual.dtype} values"
    assert np.isfinite(actual).all(), f"{what}: the result contains NaN or infinity"
    if not np.allclose(actual, expected, rtol=rtol, atol=atol):
        worst = np.max(np.abs(actual.astype(float) - expected))
        raise AssertionError(f"{what}: wrong values (largest difference {worst:.3g})")


def check_equal(actual, expected, what):
    """Fail unless `actual` equals `expected` exactly (shape and every entry)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: expected shape {expected.shape}, got {actual.shape}"
    assert np.array_equal(actual, expected), f"{what}: wrong values"


def decode_reference(text):
    """Arrays stored in a test cell as text, as {case: {name: array}}; the tests use it."""
    import base64, json, zlib
    payload = zlib.decompress(base64.b64decode(text))
    size = int.from_bytes(payload[:4], "little")
    offset, cases = 4 + size, {}
    for key, dtype, shape in json.loads(payload[4:4 + size]):
        count = int(np.prod(shape, dtype=np.int64))
        array = np.frombuffer(payload, dtype=np.dtype(dtype), count=count, offset=offset)
        offset += array.nbytes
        case, name = key.split("/", 1)
        cases.setdefault(case, {})[name] = array.reshape(tuple(shape)).copy()
    return cases'''

PRACTICE = """\
# Practice feedback, for you (not a grade): this assignment's hidden tests and its catalogue of
# common mistakes, run on this notebook as last saved (save it first), with practice inputs.
# It needs the course installed (see the Exercises page); a graded run skips this cell.
from course_grader.practice import check

check()"""
#: nbclient's tag for a cell it does not execute (``course_grader.practice.SKIP_TAG``)
PRACTICE_TAGS = ["skip-execution"]
