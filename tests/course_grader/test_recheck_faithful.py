"""The re-check is as faithful as Python (issue 54): an honest notebook's tests pass there as in the notebook.

The student's names come from what the student's process holds, however they
were bound; a name the student's code reads and lacks is the test's, lent; an
argument filled in place, a list a test changes, a student's object a test sets
an attribute of, and the global random generators are one in both processes.
What the re-check still cannot do is said, for an instructor to review, and
never gives the points back.  Each case here is a pattern an honest solution of
some course uses; the generated corpus (test_other_courses.py) applies them to
real courses.
"""

import types

import pytest

from course_grader.recheck.grader_loop import Cell, rerun
from course_grader.recheck.test_namespace import bound_names, tainted_names

SETUP = "import numpy as np\ndef check(a, b):\n    assert np.allclose(a, b), 'wrong values'"
#: Budgets that catch a hang, never slowness (a busy machine runs three times slower)
CELL_SECONDS, NOTEBOOK_SECONDS = 60, 300


def rerun_cells(cells, tmp_path, check=None, **options):
    """Re-check ``cells`` (a list of (kind, source) or Cell), judging every test cell unless ``check`` says."""
    built = []
    for index, cell in enumerate(cells):
        if isinstance(cell, Cell):
            built.append(cell)
        else:
            kind, source = cell[:2]
            built.append(Cell(index, kind, source, f"{kind}{index}", *cell[2:]))
    tests = {c.index for c in built if c.kind == "test"} if check is None else check
    return rerun(built, [], str(tmp_path), tests, cell_timeout=CELL_SECONDS, notebook_timeout=NOTEBOOK_SECONDS,
                 **options)


# -- which names exist: from execution, not syntax ----------------------------------------------------

BINDINGS = {
    "for": "for _ in range(1):\n    A = np.eye(2)\n    def solve(b):\n        return A @ b",
    "while": "n = 0\nwhile n < 3:\n    n += 1\n    A = np.eye(2) * n\ndef solve(b):\n    return A @ b / 3",
    "with": "import contextlib\nwith contextlib.nullcontext():\n    A = np.eye(2)\n    solve = lambda b: A @ b",
    "try": "try:\n    A = np.eye(2)\nexcept ValueError:\n    A = None\nelse:\n    def solve(b):\n        return A @ b",
    "if": "if np.__name__:\n    A = np.eye(2)\n    def solve(b):\n        return A @ b",
    "global_in_function": "def _define():\n    global A, solve\n    A = np.eye(2)\n    def solve(b):\n"
                          "        return A @ b\n_define()",
    "walrus": "(A := np.eye(2))\n(solve := lambda b: A @ b)",
    "import_in_block": "if True:\n    from numpy import eye as make_eye\nA = make_eye(2)\ndef solve(b):\n"
                       "    return A @ b",
    "exec": "exec('A = np.eye(2)\\ndef solve(b):\\n    return A @ b')",
}


@pytest.mark.parametrize("pattern", sorted(BINDINGS))
def test_a_name_bound_any_way_python_binds_one_reaches_the_tests(tmp_path, pattern):
    test = "check(solve(np.array([1.0, 2.0])), [1.0, 2.0])\nassert A.shape == (2, 2)"
    result = rerun_cells([("setup", SETUP), ("student", BINDINGS[pattern]), ("test", test)], tmp_path)
    assert result.failures == {} and result.review == {}, (result.failures, result.events)


# -- which namespace a function's globals are ----------------------------------------------------------

def test_a_function_reads_a_global_each_test_cell_sets_also_in_a_hidden_test(tmp_path):
    """The issue's model answer: solve reads the matrix A that each test cell assigns."""
    student = "def solve(b):\n    return np.linalg.solve(A, b)"
    visible = "A = np.array([[2.0, 0.0], [0.0, 4.0]])\ncheck(solve(np.array([2.0, 4.0])), [1.0, 1.0])"
    hidden = ("# hidden\n### BEGIN HIDDEN TESTS\nA = np.array([[1.0, 1.0], [0.0, 2.0]])\n"
              "check(solve(np.array([3.0, 2.0])), [2.0, 1.0])\n### END HIDDEN TESTS")
    cells = [("setup", SETUP), ("student", student), ("test", visible),
             Cell(3, "test", hidden, "hidden", ((2, 5),))]
    result = rerun_cells(cells, tmp_path)
    assert result.failures == {} and result.review == {}, result.failures


def test_a_later_student_cell_reads_a_name_an_earlier_test_cell_bound(tmp_path):
    cells = [("setup", SETUP), ("test", "data = np.arange(4.0)\nassert data.sum() == 6"),
             ("student", "mean = data.mean()\ndef centred():\n    return data - mean"),
             ("test", "check(centred(), [-1.5, -0.5, 0.5, 1.5])")]
    result = rerun_cells(cells, tmp_path)
    assert result.failures == {}, result.failures


def test_a_test_that_failed_in_the_notebook_still_binds_what_a_later_cell_uses(tmp_path):
    """Only the last test is judged (the first failed in the notebook), but its names are bound."""
    cells = [("setup", SETUP), ("test", "table = {'a': 1}\nassert False, 'failed in the notebook too'"),
             ("student", "def lookup(key):\n    return table[key]"), ("test", "assert lookup('a') == 1")]
    result = rerun_cells(cells, tmp_path, check={3})
    assert result.failures == {}, result.failures


def test_the_student_binding_a_name_again_after_a_test_makes_it_the_students(tmp_path):
    cells = [("setup", SETUP), ("test", "limit = 1"), ("student", "limit = 5\ndef below(x):\n    return x < limit"),
             ("test", "assert limit == 5 and below(4)")]
    assert rerun_cells(cells, tmp_path).failures == {}


# -- one object in two processes -----------------------------------------------------------------------

MUTATION = (
    "def fill(out, value):\n    out[...] = value\n"
    "def append_to(items, x):\n    items.append(x)\n"
    "def count_into(counts, word):\n    counts[word] = counts.get(word, 0) + 1\n"
    "def add_all(seen, xs):\n    seen.update(xs)\n"
    "class Account:\n    def __init__(self):\n        self.history = []\n"
    "    def deposit(self, amount):\n        self.history.append(amount)\n"
    "    def total(self):\n        return sum(self.history)\n"
    "def deposit_twice(account, amount):\n    account.deposit(amount)\n    account.deposit(amount)\n"
    "totals = []\ndef record(x):\n    totals.append(x)\n    return len(totals)\n"
)
MUTATION_TESTS = [
    "out = np.zeros(3)\nassert fill(out, 7.0) is None\ncheck(out, [7.0, 7.0, 7.0])",
    "items = [1]\nalias = items\nappend_to(items, 2)\nassert items == [1, 2] and alias is items",
    "counts = {}\nfor word in 'a b a'.split():\n    count_into(counts, word)\nassert counts == {'a': 2, 'b': 1}",
    "seen = set()\nadd_all(seen, [3, 1, 3])\nassert seen == {1, 3}",
    "nested = [np.zeros(2), {'k': [0]}]\ndef change(x):\n    x[0][1] = 5.0\n    x[1]['k'].append(1)\n"
    "fill(nested[0], 0.0)\nassert nested[0].tolist() == [0.0, 0.0]",
    "a = Account()\ndeposit_twice(a, 5)\nassert a.total() == 10 and len(a.history) == 2",
    "a = Account()\na.history = [1, 2]\na.deposit(3)\nassert a.total() == 6",
    "assert record(1) == 1 and record(2) == 2\nassert totals == [1, 2]\ntotals.append(9)\nassert record(3) == 4",
    # arrays with nothing in them (an empty cache, a batch of none) travel and mirror like any other
    "empty = np.zeros((2, 0, 3))\nassert fill(empty, 1.0) is None\nassert empty.shape == (2, 0, 3)\n"
    "items = [np.zeros(0)]\nappend_to(items, np.ones((0, 4)))\nassert [a.shape for a in items] == [(0,), (0, 4)]",
    "column = np.zeros((3, 4))[:, ::2]\nassert fill(column, 2.0) is None\ncheck(column, np.full((3, 2), 2.0))",
]


@pytest.mark.parametrize("test", MUTATION_TESTS, ids=["array", "list", "dict", "set", "nested", "object",
                                                      "attribute", "module_state", "empty", "strided"])
def test_what_the_students_code_changes_in_place_the_test_sees_changed_and_back(tmp_path, test):
    result = rerun_cells([("setup", SETUP), ("student", MUTATION), ("test", test)], tmp_path)
    assert result.failures == {}, result.failures


def test_the_global_random_generators_are_one_in_both_processes(tmp_path):
    student = ("import random\ndef draw():\n    return np.random.rand()\n"
               "def pick(xs):\n    return random.choice(xs)")
    tests = ["np.random.seed(3)\nfirst = draw()\nsecond = np.random.rand()\n"
             "np.random.seed(3)\nassert [first, second] == [np.random.rand(), np.random.rand()]",
             "import random\nrandom.seed(7)\nchosen = [pick('abcdef') for _ in range(5)]\n"
             "random.seed(7)\nassert chosen == [random.choice('abcdef') for _ in range(5)]"]
    cells = [("setup", SETUP), ("student", student)] + [("test", t) for t in tests]
    assert rerun_cells(cells, tmp_path).failures == {}


def test_closures_and_generators_of_the_student_work_as_in_the_notebook(tmp_path):
    student = ("def counter():\n    count = 0\n    def step():\n        nonlocal count\n        count += 1\n"
               "        return count\n    return step\n"
               "def evens():\n    n = 0\n    while True:\n        yield n\n        n += 2")
    test = ("tick = counter()\nassert [tick(), tick(), tick()] == [1, 2, 3]\n"
            "g = evens()\nassert [next(g) for _ in range(3)] == [0, 2, 4]\n"
            "def twice(f):\n    return lambda x: f(f(x))\nassert twice(lambda x: x + 1)(1) == 3")
    assert rerun_cells([("setup", SETUP), ("student", student), ("test", test)], tmp_path).failures == {}


# -- what is never given, and what an instructor is told --------------------------------------------------

def test_a_hidden_tests_expected_values_are_never_lent_and_the_zero_is_reviewed(tmp_path):
    """A student's function that returns the test's `expected` global gets nothing from it: the name
    holds the reference solution's value.  It scores 0, flagged for review with the reason."""
    reference = types.SimpleNamespace(double=lambda x: 2 * x)
    hidden = ("# hidden\n### BEGIN HIDDEN TESTS\nx = np.arange(3.0)\nexpected = reference.double(x)\n"
              "check(double(x), expected)\n### END HIDDEN TESTS")
    cells = [("setup", SETUP), ("student", "def double(x):\n    return expected"),
             Cell(2, "test", hidden, "hidden", ((2, 6),))]
    result = rerun_cells(cells, tmp_path, grader_names=lambda cell: {"reference": reference})
    assert 2 in result.failures and 2 in result.hidden
    assert "'expected'" in result.review[2] and "reference solution" in result.review[2]
    honest = [cells[0], ("student", "def double(x):\n    return x + x"), cells[2]]
    assert rerun_cells(honest, tmp_path, grader_names=lambda cell: {"reference": reference}).failures == {}


def test_an_argument_computed_from_the_reference_cannot_be_changed_by_the_students_code(tmp_path):
    reference = types.SimpleNamespace(double=lambda x: 2 * x)
    hidden = ("# hidden\n### BEGIN HIDDEN TESTS\nx = np.arange(3.0)\nexpected = reference.double(x)\n"
              "got = double(x, expected)\ncheck(got, expected)\n### END HIDDEN TESTS")
    student = "def double(x, answer):\n    answer[...] = 0.0\n    return answer"
    cells = [("setup", SETUP), ("student", student), Cell(2, "test", hidden, "hidden", ((2, 7),))]
    result = rerun_cells(cells, tmp_path, grader_names=lambda cell: {"reference": reference})
    assert 2 in result.failures and "was not made" in result.review[2]


def test_a_student_cell_that_fails_only_in_the_re_check_is_named_in_the_review(tmp_path):
    """The notebook ran the cell without an error; here it raised, so a later hidden test's 0 is reviewed."""
    cells = [("setup", SETUP),
             Cell(1, "student", "import os\nassert os.environ.get('NOT_IN_THE_RECHECK'), 'x'\n"
                                "def f():\n    return 1", "answer", (), False),
             Cell(2, "test", "# hidden\n### BEGIN HIDDEN TESTS\nassert f() == 1\n### END HIDDEN TESTS",
                  "hidden", ((2, 4),))]
    result = rerun_cells(cells, tmp_path)
    assert 2 in result.failures
    assert "the student's cell answer raised AssertionError in the re-check's student process" in result.review[2]
    assert "NameError raised by the student's code" not in result.review[2]


def test_a_visible_test_failing_only_here_says_which_error_in_which_process(tmp_path):
    cells = [("setup", SETUP), ("student", "def f():\n    return 1"),
             ("test", "assert f() == 2, 'f gives 2'"), ("test", "assert g() == 1")]
    result = rerun_cells(cells, tmp_path)
    assert result.review[2] == "AssertionError raised in the grader's process, by the test's code"
    assert result.review[3] == "NameError raised in the grader's process, by the test's code"


# -- the analysis of the instructor's cells ------------------------------------------------------------

def test_bound_names_are_every_binding_of_a_cell_but_its_functions_locals():
    source = ("for i in range(2):\n    x = i\nwith open('f') as handle:\n    pass\n"
              "try:\n    pass\nexcept ValueError as error:\n    pass\n"
              "import os.path\nfrom math import sqrt as root\n(y := 3)\n"
              "def f(a):\n    local = a\n    return local\nclass C:\n    inside = 1\n")
    assert bound_names(source) == {"i", "x", "handle", "error", "os", "root", "y", "f", "C"}


def test_what_a_test_computes_from_the_reference_is_tainted_and_its_inputs_are_not():
    source = ("x = rng.normal(size=3)\nA = np.eye(3)\nexpected = reference.solve(A, x)\nscaled = 2 * expected\n"
              "results = []\nresults.append(reference.solve(A, x))\ncheck(solve(x), expected)\n"
              "for row in reference.rows(A):\n    last = row\n")
    assert tainted_names(source, set()) == {"expected", "scaled", "results", "row", "last"}
    # a later cell that binds a name from other values makes it clean again
    assert tainted_names("expected = np.zeros(3)\nfresh = 1", {"expected", "results"}) == {"results"}
