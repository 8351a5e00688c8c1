"""The clean re-run: student code in a sandboxed process, tests in the grader."""

import pytest

from course_grader.recheck.grader_loop import Cell, rerun

SETUP = "import numpy as np\ndef check(a, b):\n    assert np.allclose(a, b), 'wrong values'"


def verdicts(student_code, tests, api, tmp_path, **options):
    cells = [Cell(0, "setup", SETUP)]
    for i, code in enumerate(student_code):
        cells.append(Cell(10 + i, "student", code))
    for i, code in enumerate(tests):
        cells.append(Cell(100 + i, "test", code, f"test{i}"))
    result = rerun(cells, api, str(tmp_path), {100 + i for i in range(len(tests))},
                   cell_timeout=options.pop("cell_timeout", 10), notebook_timeout=60, **options)
    return [result.failures.get(100 + i) for i in range(len(tests))], result


def test_values_travel_as_plain_data(tmp_path):
    code = ("def echo(x):\n    return x\n"
            "def many():\n    return np.float32(1.5), (1, 'two'), {'k': np.arange(3, dtype=np.int16)}, None")
    tests = ["x = np.ones((2, 3), np.float32)\ny = echo(x)\nassert isinstance(y, np.ndarray) and y.dtype == np.float32 "
             "and y.shape == (2, 3) and y is not x",
             "a, b, c, d = many()\nassert a == 1.5 and isinstance(a, np.float32) and b == (1, 'two') and d is None\n"
             "assert c['k'].dtype == np.int16 and list(c['k']) == [0, 1, 2]"]
    failures, _ = verdicts([code], tests, ["echo", "many"], tmp_path)
    assert failures == [None, None]


def test_monkeypatching_in_the_student_process_does_not_reach_the_tests(tmp_path):
    code = ("np.allclose = lambda *a, **k: True\nnp.testing.assert_allclose = lambda *a, **k: None\n"
            "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\n"
            "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n"
            "def double(x):\n    return x * 3")
    failures, _ = verdicts([code], ["check(double(np.ones(2)), 2 * np.ones(2))"], ["double"], tmp_path)
    assert failures[0] and "wrong values" in failures[0]


def test_only_the_assignments_names_come_from_the_student(tmp_path):
    # Defining `check` or `abs` in the student's code does not replace the grader's.
    code = "def check(a, b):\n    pass\nabs = lambda x: 0\ndef f(x):\n    return x + 1"
    failures, _ = verdicts([code], ["check(f(1), 3)", "assert abs(-2) == 2"], ["f"], tmp_path)
    assert failures[0] and failures[1] is None


def test_exceptions_keep_their_builtin_type(tmp_path):
    code = ("class MyError(ValueError):\n    pass\n"
            "def f(x):\n    if x < 0:\n        raise MyError('negative input')\n    return x")
    test = "try:\n    f(-1)\nexcept ValueError as e:\n    assert 'negative' in str(e)\nelse:\n    raise AssertionError('no error')"
    failures, _ = verdicts([code], [test], ["f"], tmp_path)
    assert failures == [None]


def test_grader_functions_can_be_passed_to_student_code(tmp_path):
    code = "def apply_twice(f, x):\n    return f(f(x))"
    test = "calls = []\ndef step(v):\n    calls.append(v)\n    return v * 2\nassert apply_twice(step, 3) == 12 and calls == [3, 6]"
    failures, _ = verdicts([code], [test], ["apply_twice"], tmp_path)
    assert failures == [None]


def test_student_objects_stay_in_the_student_process_and_never_judge_themselves(tmp_path):
    code = ("class Always:\n    def __eq__(self, other):\n        return True\n"
            "    def __bool__(self):\n        return True\n"
            "class Counter:\n    def __init__(self):\n        self.n = 0\n    def add(self, k):\n        self.n += k\n        return self.n\n"
            "def answer():\n    return Always()")
    tests = ["assert answer() == 42", "c = Counter()\nc.add(2)\nassert c.add(3) == 5 and c.n == 5",
             "assert float(answer()) == 42", "assert answer()", "assert 42 == answer()",
             "assert not (answer() != 42)"]
    failures, _ = verdicts([code], tests, ["answer", "Counter"], tmp_path)
    # The object's methods run in the student's process and answer with plain data (c.add(3) is 5),
    # but it never decides a comparison or its own truth: those fail, naming it in the grader's words.
    assert failures[1] is None
    for failure in failures[:1] + failures[3:]:
        assert failure.startswith("NotPlainData: answer gave an object, not plain data"), failure
    assert failures[2] is not None


def test_a_hanging_function_times_out_and_later_tests_still_run(tmp_path):
    code = "def slow():\n    while True:\n        pass\ndef fast():\n    return 1"
    failures, result = verdicts([code], ["slow()", "assert fast() == 1"], ["slow", "fast"], tmp_path,
                                cell_timeout=2)
    assert "StudentTimeout" in failures[0] and failures[1] is None


def test_replaying_the_students_cells_after_a_hang_is_not_taken_from_the_next_tests_budget(tmp_path):
    """The replacement process replays a cell that takes 1.5 s; the next test has its own 2 s (on a busy
    machine, a restart and replay that ate the test's budget failed an honest test)."""
    code = "import time\ntime.sleep(1.5)\ndef slow():\n    while True:\n        pass\ndef fast():\n    return 1"
    failures, result = verdicts([code], ["slow()", "assert fast() == 1"], ["slow", "fast"], tmp_path,
                                cell_timeout=2)
    assert "StudentTimeout" in failures[0] and failures[1] is None, failures


def test_a_dying_process_is_replaced_and_replayed(tmp_path):
    code = "import os\ndef die():\n    os._exit(1)\ndef fine():\n    return 7"
    failures, result = verdicts([code], ["die()", "assert fine() == 7"], ["die", "fine"], tmp_path)
    assert failures[0] is not None and failures[1] is None
    assert any("died" in what for _, what in result.events)


def test_a_cell_that_kills_the_process_is_not_replayed(tmp_path):
    student = ["def a():\n    return 1", "import os\nos._exit(0)", "def b():\n    return 2"]
    failures, _ = verdicts(student, ["assert a() == 1 and b() == 2"], ["a", "b"], tmp_path)
    assert failures == [None]


@pytest.mark.parametrize("reply", ["[[] for _ in range(3_000_000)]",           # many values
                                   "[{'k': [1.5] * 20} for _ in range(300_000)]",
                                   "'x' * (5 * 2 ** 20)"])                     # one huge string
def test_a_swollen_reply_is_refused_before_it_is_decoded(tmp_path, reply):
    import tracemalloc

    code = f"def f(x):\n    return {reply}"
    tracemalloc.start()
    try:
        # Building and encoding the reply takes the student's process ~7 s on a busy 2-core
        # machine: a cell limit far above that, so that the memory limit, not the clock, decides.
        failures, _ = verdicts([code], ["f(1)"], ["f"], tmp_path, cell_timeout=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert failures[0] and "the limit is" in failures[0]
    assert peak < 150 * 2 ** 20          # the reply's bytes, never the objects it would become


# Ordinary test styles (nbgrader's own ps1 deletes a name; others compare sets, fractions, generators,
# objects of the student's classes, pandas frames, printed output).  The re-check must give a correct
# answer what the notebook gives it, and a wrong answer must still fail.
SQUARES = "def squares(n):\n    return [i ** 2 for i in range(1, n + 1)]\n"
STYLES = {
    "name_deletion": (SQUARES + "def sum_of_squares(n):\n    return sum(squares(n))",
                      SQUARES + "def sum_of_squares(n):\n    return sum(i ** 2 for i in range(1, n + 1))",
                      "orig = squares\ndel squares\ntry:\n    try:\n        sum_of_squares(1)\n"
                      "    except NameError:\n        pass\n    else:\n"
                      "        raise AssertionError('sum_of_squares does not use squares')\n"
                      "finally:\n    squares = orig\nassert sum_of_squares(3) == 14",
                      ["squares", "sum_of_squares"]),
    "helper_replaced": (SQUARES + "def sum_of_squares(n):\n    return sum(squares(n))",
                        SQUARES + "def sum_of_squares(n):\n    return sum(i ** 2 for i in range(1, n + 1))",
                        "orig = squares\nsquares = lambda n: [1] * n\ntry:\n    assert sum_of_squares(4) == 4\n"
                        "finally:\n    squares = orig\nassert sum_of_squares(2) == 5",
                        ["squares", "sum_of_squares"]),
    "sets": ("def unique_words(text):\n    return set(text.split())",
             "def unique_words(text):\n    return list(set(text.split()))",
             "assert unique_words('a b a c') == {'a', 'b', 'c'}\nassert frozenset(unique_words('x')) == {'x'}",
             ["unique_words"]),
    "fractions": ("from fractions import Fraction\ndef harmonic(n):\n    return sum(Fraction(1, k) for k in range(1, n + 1))",
                  "def harmonic(n):\n    return sum(1 / k for k in range(1, n + 1))",
                  "from fractions import Fraction\nassert harmonic(3) == Fraction(11, 6)", ["harmonic"]),
    "generators": ("def evens(n):\n    for i in range(0, n, 2):\n        yield i",
                   "def evens(n):\n    for i in range(1, n, 2):\n        yield i",
                   "assert list(evens(7)) == [0, 2, 4, 6]\nassert next(iter(evens(3))) == 0\n"
                   "assert sum(1 for _ in evens(10)) == 5", ["evens"]),
    "student_class": ("class Stack:\n    def __init__(self):\n        self.items = []\n"
                      "    def push(self, x):\n        self.items.append(x)\n    def pop(self):\n"
                      "        return self.items.pop()\n    def __len__(self):\n        return len(self.items)\n"
                      "    def __contains__(self, x):\n        return x in self.items",
                      "class Stack:\n    def __init__(self):\n        self.items = []\n"
                      "    def push(self, x):\n        self.items.append(x)\n    def pop(self):\n"
                      "        return self.items.pop(0)\n    def __len__(self):\n        return len(self.items)\n"
                      "    def __contains__(self, x):\n        return x in self.items",
                      "s = Stack()\ns.push(1)\ns.push(2)\nassert len(s) == 2 and 1 in s and s.pop() == 2 and len(s) == 1",
                      ["Stack"]),
    "pandas_frame": ("import pandas as pd\ndef table():\n    return pd.DataFrame({'a': [1, 2], 'b': [3, 4]})",
                     "import pandas as pd\ndef table():\n    return pd.DataFrame({'a': [1, 2], 'b': [3, 5]})",
                     "df = table()\nassert df.shape == (2, 2) and list(df.columns) == ['a', 'b']\n"
                     "assert df['b'].tolist() == [3, 4] and len(df) == 2", ["table"]),
    "printed_output": ("def greet(name):\n    print(f'Hello, {name}!')",
                       "def greet(name):\n    print(f'Hi, {name}!')",
                       "import contextlib, io\nbuffer = io.StringIO()\nwith contextlib.redirect_stdout(buffer):\n"
                       "    greet('Ada')\nassert buffer.getvalue() == 'Hello, Ada!\\n'", ["greet"]),
}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_ordinary_test_styles_pass_correct_code_and_fail_wrong_code(tmp_path, style):
    correct, wrong, test, api = STYLES[style]
    failures, result = verdicts([correct], [test], api, tmp_path)
    assert failures == [None] and not result.unverifiable, (failures, result.events)
    failures, _ = verdicts([wrong], [test], api, tmp_path)
    assert failures[0] is not None


def test_a_test_the_re_check_cannot_reproduce_leaves_the_notebook_result_standing(tmp_path):
    # The test sends a frame of its own to the student's function: not plain data.
    code = "import pandas as pd\ndef same(a, b):\n    return a.equals(b)"
    test = "import pandas as pd\nframe = pd.DataFrame({'a': [1]})\nassert same(frame, frame)"
    failures, result = verdicts([code], [test], ["same"], tmp_path)
    assert failures == [None] and "cannot send a DataFrame" in result.unverifiable[100]


# -- what an honest notebook of any nbgrader course relies on (issue 37) ----------------------------

def test_a_tests_imports_are_the_graders_own_never_the_students(tmp_path):
    code = "import numpy as np\nnp.allclose = lambda *a, **k: True\ndef double(x):\n    return 3 * x"
    test = "assert np.allclose(double(np.ones(2)), 2 * np.ones(2)), 'double doubles'"
    cells = [Cell(0, "student", code), Cell(1, "test", test, "t")]
    # `np` comes from the instructor's solution cell's import, done by the grader
    result = rerun(cells, ["double"], str(tmp_path), {1}, cell_timeout=10, notebook_timeout=60,
                   given_imports={"np": ("numpy", None)})
    assert "double doubles" in result.failures[1]
    honest = [Cell(0, "student", "import numpy as np\ndef double(x):\n    return 2 * x"), cells[1]]
    assert rerun(honest, ["double"], str(tmp_path), {1}, cell_timeout=10, notebook_timeout=60,
                 given_imports={"np": ("numpy", None)}).failures == {}


def test_a_module_in_the_submission_folder_can_be_imported_by_the_students_code(tmp_path):
    (tmp_path / "my_helpers.py").write_text("def triple(x):\n    return 3 * x\n")
    failures, _ = verdicts(["from my_helpers import triple\ndef f(x):\n    return triple(x) + 1"],
                           ["assert f(2) == 7"], ["f"], tmp_path)
    assert failures == [None]


def test_the_instructors_modules_can_be_imported_by_setup_and_test_cells(tmp_path):
    source, work = tmp_path / "source", tmp_path / "work"
    source.mkdir(), work.mkdir()
    (source / "grading_helpers_for_test.py").write_text("def expect_square(f):\n    assert f(3) == 9, 'squares'\n")
    (work / "grading_helpers_for_test.py").write_text("def expect_square(f):\n    pass\n")   # the student's copy
    cells = [Cell(0, "setup", "from grading_helpers_for_test import expect_square"),
             Cell(1, "student", "def square(x):\n    return x + x"),
             Cell(2, "test", "expect_square(square)", "t")]
    result = rerun(cells, ["square"], str(work), {2}, cell_timeout=10, notebook_timeout=60, source_folder=source)
    assert "squares" in result.failures[2]            # the instructor's helper judged, not the student's


def test_tests_that_read_ipythons_history_see_the_notebooks_numbering(tmp_path):
    cells = [Cell(0, "setup", "import numpy as np"),
             Cell(1, "student", "%matplotlib inline\nvalue = 41\nvalue + 1"),
             Cell(2, "test", "assert Out[2] == 42 and _ == 42, 'the answer'\nassert 'value = 41' in In[2]", "t"),
             Cell(3, "student", "print('extra cell')"),
             Cell(4, "test", "assert len(In) == 6 and In[5].startswith('assert len(In)')", "u")]
    result = rerun(cells, [], str(tmp_path), {2, 4}, cell_timeout=10, notebook_timeout=60)
    assert result.failures == {}


def test_a_large_value_travels_only_if_a_test_uses_it_and_then_as_a_handle(tmp_path):
    """The notebook built 400,000 tuples and printed how many; only the test that uses them asks."""
    code = "output = [(i,) * 9 for i in range(400_000)]\ndef f():\n    return 1"
    tests = ["assert f() == 1", "assert len(output) == 400_000 and output[3] == (3,) * 9"]
    failures, result = verdicts([code], tests, ["output", "f"], tmp_path)
    assert failures == [None, None] and not result.unverifiable


def test_a_students_generator_is_a_generator_here_too(tmp_path):
    code = ("def fibonacci():\n    a, b = 0, 1\n    while True:\n        yield a\n        a, b = b, a + b\n"
            "def running_total():\n    total = 0\n    while True:\n        total += (yield total) or 0")
    tests = ["import types\nfrom itertools import islice\nassert isinstance(fibonacci(), types.GeneratorType)\n"
             "assert list(islice(fibonacci(), 6)) == [0, 1, 1, 2, 3, 5]",
             "g = running_total()\nassert next(g) == 0 and g.send(5) == 5 and g.send(2) == 7",
             "assert list(islice(fibonacci(), 3)) == [0, 1, 2]"]      # wrong on purpose: it must fail
    failures, _ = verdicts([code], tests[:2] + ["from itertools import islice\n" + tests[2]],
                           ["fibonacci", "running_total"], tmp_path)
    assert failures[:2] == [None, None] and "AssertionError" in failures[2]


def test_dir_in_a_test_lists_the_students_names_as_the_notebook_does(tmp_path):
    test = ("if 'vec' not in dir():\n    raise ValueError(\"You haven't created the variable 'vec' yet!\")\n"
            "assert type(vec) == np.ndarray and vec.tolist() == [5, 3]")
    failures, _ = verdicts(["vec = np.array([5, 3])"], [test], ["vec"], tmp_path)
    assert failures == [None]
    failures, _ = verdicts(["vector = np.array([5, 3])"], [test], ["vec"], tmp_path)
    assert "You haven't created the variable 'vec' yet" in failures[0]


def test_a_test_may_index_the_students_frame_with_slices(tmp_path):
    code = "import pandas as pd\nframe = pd.DataFrame({'a': [1, 2, 3], 'b': [4, 5, 6]})"
    tests = ["assert list(frame.loc[:, 'b']) == [4, 5, 6] and list(frame.iloc[::2, 0]) == [1, 3]"]
    failures, result = verdicts([code], tests, ["frame"], tmp_path)
    assert failures == [None] and not result.unverifiable


def test_a_test_reads_the_files_the_students_code_wrote_and_the_submission_is_left_alone(tmp_path):
    code = ("import os\nos.makedirs('out', exist_ok=True)\nopen('out/table.tsv', 'w').write('a\\tb\\n1\\t2\\n')\n"
            "open('notes.txt', 'w').write('first')\nos.symlink('/etc/hostname', 'link.txt')")
    tests = ["assert open('out/table.tsv').read().split() == ['a', 'b', '1', '2']",
             "import os\nassert open('notes.txt').read() == 'again' and not os.path.exists('link.txt')"]
    cells = [Cell(0, "student", code), Cell(1, "test", tests[0], "t0"),
             Cell(2, "student", "open('notes.txt', 'w').write('again')"), Cell(3, "test", tests[1], "t1")]
    result = rerun(cells, [], str(tmp_path), {1, 3}, cell_timeout=10, notebook_timeout=60)
    assert result.failures == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == []      # written beside the tests, not into it


def test_what_a_given_cell_imports_from_a_folder_it_put_on_the_path_is_the_students(tmp_path):
    """The grader cannot import it itself (the notebook put ``code/`` on ``sys.path``), so the
    test gets the student's process's copy, rather than a NameError."""
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "utilities.py").write_text("def bounding_box(points):\n    xs, ys = zip(*points)\n"
                                                    "    return min(xs), max(xs), min(ys), max(ys)\n")
    cells = [Cell(0, "student", "import sys\nsys.path.append('code')\nfrom utilities import bounding_box"),
             Cell(1, "test", "assert bounding_box([(0, 1), (2, 3)]) == (0, 2, 1, 3)", "t")]
    result = rerun(cells, [], str(tmp_path), {1}, cell_timeout=10, notebook_timeout=60,
                   given_imports={"bounding_box": ("utilities", "bounding_box")})
    assert result.failures == {} and not result.unverifiable


def test_a_cells_figures_are_closed_when_it_ends_as_in_a_kernel(tmp_path):
    cells = [Cell(0, "student", "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.plot([2, 1])"),
             Cell(1, "student", "plt.plot([1, 2], 'g--D')\nax2check = plt.gca()"),
             Cell(2, "test", "assert len(ax2check.get_lines()) == 1, 'one line'", "t")]
    result = rerun(cells, ["ax2check"], str(tmp_path), {2}, cell_timeout=30, notebook_timeout=90)
    assert result.failures == {}


def test_a_test_may_ask_the_class_of_the_students_objects_and_read_what_functools_wraps_keeps(tmp_path):
    code = ("import functools\nimport matplotlib.pyplot as plt\nfig, ax2check = plt.subplots()\n"
            "ax2check.hist([1, 2, 2, 3], bins=3)\n"
            "def deduplicate(f):\n    @functools.wraps(f)\n    def wrapper(*args):\n"
            "        return f(*sorted(set(args)))\n    return wrapper\n"
            "@deduplicate\ndef total(*args):\n    return sum(args)\n"
            "class Fake:\n    pass\nFake.__module__, Fake.__qualname__ = 'builtins', 'int'\nfake = Fake()")
    tests = ["import matplotlib\nrect = [ch for ch in ax2check.get_children() if ch.__class__ == matplotlib.patches.Rectangle]\n"
             "assert len(rect) == 4 and isinstance(rect[0], matplotlib.patches.Rectangle)",
             "assert total(1, 1, 2) == 3 and total.__name__ == 'total' and total.__wrapped__(1, 1, 2) == 4",
             "assert isinstance(fake, int)"]     # a type the wire carries as data never names a handle's class
    failures, _ = verdicts([code], tests, ["ax2check", "total", "fake"], tmp_path,
                           given_imports={"plt": ("matplotlib.pyplot", None)})   # as the notebook imports it
    assert failures[:2] == [None, None] and "AssertionError" in failures[2]


def test_a_stand_in_naming_its_class_is_still_sent_back_and_recorded_as_what_it_is(tmp_path):
    """An object array (a handle whose class the grader knows: numpy.ndarray) goes back to the
    student's code as itself, and is not taken for plain data when the call is recorded."""
    code = ("def make():\n    return np.array([{'a': 1}, None], dtype=object)\n"
            "def size(x):\n    return len(x)")
    test = "x = make()\nassert isinstance(x, np.ndarray) and size(x) == 2"
    failures, result = verdicts([code], [test], ["make", "size"], tmp_path)
    assert failures == [None] and not result.unverifiable


def test_a_helper_of_a_setup_cell_or_an_earlier_test_sees_the_students_current_names(tmp_path):
    """The helper reads the student's names as globals: the test cell that calls it never names them."""
    cells = [Cell(0, "setup", "def check_double():\n    assert double(3) == 6, 'double'"),
             Cell(1, "student", "def double(x):\n    return 2 * x"),
             Cell(2, "test", "check_double()", "t0"),
             Cell(3, "test", "def check_triple():\n    assert triple(2) == 6, 'triple'", "t1"),
             Cell(4, "student", "def double(x):\n    return x + 1\ndef triple(x):\n    return 3 * x"),
             Cell(5, "test", "check_triple()", "t2"), Cell(6, "test", "check_double()", "t3")]
    result = rerun(cells, ["double", "triple"], str(tmp_path), {2, 3, 5, 6}, cell_timeout=10, notebook_timeout=60)
    assert set(result.failures) == {6} and "double" in result.failures[6]   # the redefined double, not a stale one


def test_an_object_built_to_be_asked_for_ever_costs_a_test_a_bounded_number_of_questions(tmp_path, monkeypatch):
    """An always-equal object whose every item is itself: NumPy asks it for its length and items
    without end, each a round trip.  A test may ask the student's objects so many questions, then
    fails in the grader's words, and the next test gets as many again; an honest test that asks
    fewer (a generator's values) is answered."""
    from course_grader import limits
    from course_grader.recheck import transport as student_process

    monkeypatch.setattr(limits, "OBJECT_QUESTIONS_PER_TEST", 300)
    asked = []
    original = student_process.StudentProcess._exchange

    def counting(self, header, arrays, deadline):
        asked.append(header["op"])
        return original(self, header, arrays, deadline)

    monkeypatch.setattr(student_process.StudentProcess, "_exchange", counting)
    code = ("class Always:\n    def __eq__(self, other):\n        return True\n"
            "    def __len__(self):\n        return 64\n    def __getitem__(self, i):\n        return self\n"
            "def answer(x):\n    return Always()\n"
            "def squares(n):\n    for i in range(n):\n        yield i * i")
    tests = ["check(answer(1), [1.0])", "check(answer(2), [2.0])",
             "assert list(squares(250)) == [i * i for i in range(250)]"]
    failures, _ = verdicts([code], tests, ["answer", "squares"], tmp_path, cell_timeout=60)
    for failure in failures[:2]:
        assert failure.startswith("TooManyQuestions: the test asked the student's objects more than 300"), failure
    assert failures[2] is None
    questions = [op for op in asked if op in ("getattr", "apply")]
    assert len(questions) <= 2 * 300 + 251      # each test stopped at its bound; the honest one asked its own


def test_an_interrupted_call_gets_no_grace_beyond_the_submission_s_budget():
    from course_grader.recheck.transport import INTERRUPT_GRACE_SECONDS, interrupt_grace

    assert interrupt_grace(100.0, 1000.0) == 100.0 + INTERRUPT_GRACE_SECONDS
    assert interrupt_grace(100.0, 101.0) == 101.0       # what is left of the budget, no more
    assert interrupt_grace(100.0, 100.0) is None        # none left: the process is stopped at once
    assert interrupt_grace(100.0, 99.0) is None
