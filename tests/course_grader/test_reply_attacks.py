"""Attacks on the reply channel of the clean re-check: what the student's process sends back.

Three classes (issue 36), several routes each:

* **Objects that judge themselves.**  What comes back is plain data before a
  test sees it: a dict, list or ndarray subclass arrives as its base type's
  real contents, and an object that is not plain data never decides ``==``,
  ``<`` or its own truth, so one that claims to equal anything earns nothing.
* **Hidden inputs carried out through the feedback.**  A hidden test's failure
  says the grader's words and the test's declared text, never the text of a
  reply, the shape or value of a result, or a message the student chose.
* **Replies that cost the grader.**  One strict format, bounded in bytes,
  values, depth, arrays and string length; a forged or swollen reply is
  refused in the grader's words and earns nothing.

The student's code here forges frames itself, as a submission can: the
protocol's pipe is one of its process's file descriptors.
"""

import tracemalloc

import pytest

from course_grader.hidden_tests import delimiters, hidden_regions
from course_grader.recheck.grader_loop import Cell, rerun

SETUP = '''import numpy as np
def check_close(actual, expected, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: expected shape {expected.shape}, got {actual.shape}"
    if not np.allclose(actual, expected):
        worst = np.max(np.abs(actual.astype(float) - expected))
        raise AssertionError(f"{what}: wrong values (largest difference {worst:.3g})")
'''
SECRET = "997.1837"     # a hidden input; none of its digits' run may reach the feedback

# Writes a frame straight into the protocol's pipe (the one write-only pipe of the process), then waits.
FORGER = '''
import os as _os, stat as _stat, struct as _struct, fcntl as _fcntl, time as _time
def _forge(payload, size=None):
    for fd in range(3, 256):
        try:
            if _stat.S_ISFIFO(_os.fstat(fd).st_mode) and _fcntl.fcntl(fd, _fcntl.F_GETFL) & _os.O_ACCMODE == _os.O_WRONLY:
                break
        except OSError:
            pass
    data = _struct.pack("<Q", len(payload) if size is None else size) + payload
    while data:
        data = data[_os.write(fd, data):]
    _time.sleep(60)
'''


def run(student: str, test: str, api, tmp_path, hidden=True, **options):
    """The failure of one test cell (``None`` if it passed), and the re-check's verdicts."""
    if hidden:
        test = f"# Hidden tests (1 point): the answer on a secret input\n### BEGIN HIDDEN TESTS\n{test}\n### END HIDDEN TESTS"
    cells = [Cell(0, "setup", SETUP, "setup"), Cell(1, "student", FORGER + student),
             Cell(2, "test", test, "answer_test", hidden_regions(test, delimiters()))]
    result = rerun(cells, api, str(tmp_path), {2}, cell_timeout=options.pop("cell_timeout", 20),
                   notebook_timeout=90, **options)
    return result.failures.get(2), result


def _no_secret(failure, result):
    said = str(failure) + " ".join(what for _, what in result.events)
    assert "997" not in said and "LEAK" not in said, said


# -- objects that judge themselves ------------------------------------------------------------------

ALWAYS = "class Always:\n    def __eq__(self, other):\n        return True\n    def __ne__(self, other):\n        return False\n" \
         "    def __bool__(self):\n        return True\n    def __len__(self):\n        return 2\n"


@pytest.mark.parametrize("test", ["assert answer(2.0) == 4.0, 'twice the input'",
                                  "assert not answer(2.0) != 4.0",
                                  "assert answer(2.0)",
                                  "assert [answer(2.0)] == [4.0]"])
def test_an_object_that_equals_anything_earns_nothing_and_is_named(tmp_path, test):
    failure, _ = run(ALWAYS + "def answer(x):\n    return Always()", test, ["answer"], tmp_path)
    assert failure and failure.startswith("answer gave an object, not plain data"), failure


@pytest.mark.parametrize("base, value, test", [
    ("dict", "{}", "got = counts('a b a')\nassert got == {'a': 2, 'b': 1}, 'wrong counts'"),
    ("dict", "{}", "got = counts('a b a')\nassert len(got) == 2, 'two distinct words'"),
    ("list", "[]", "got = counts('a b a')\nassert got == [2, 1] and len(got) == 2, 'wrong counts'"),
    ("tuple", "()", "got = counts('a b a')\nassert got == (2, 1), 'wrong counts'"),
])
def test_a_subclass_of_dict_list_or_tuple_that_lies_is_judged_by_its_contents(tmp_path, base, value, test):
    student = (f"class Liar({base}):\n    def __eq__(self, other):\n        return True\n"
               "    def __len__(self):\n        return 2\n    def __iter__(self):\n        return iter([2, 1])\n"
               f"def counts(text):\n    return Liar({value})")
    failure, _ = run(student, test, ["counts"], tmp_path, hidden=False)
    assert failure and failure.startswith("AssertionError"), failure


def test_an_ndarray_subclass_that_lies_is_judged_by_its_data(tmp_path):
    student = ("import numpy as np\nclass Liar(np.ndarray):\n    def __eq__(self, other):\n"
               "        return np.ones(np.shape(other), bool)\n    __ne__ = lambda self, other: np.zeros(np.shape(other), bool)\n"
               "def answer(x):\n    return np.zeros(3).view(Liar)")
    failure, _ = run(student, "assert np.all(answer(1.0) == [1.0, 2.0, 3.0]), 'the values'", ["answer"], tmp_path)
    assert failure == "AssertionError in a hidden test: the values", failure


def test_a_lying_container_inside_a_result_is_plain_data_too(tmp_path):
    student = ("import numpy as np\nclass Cache(list):\n    def __len__(self):\n        return 3\n"
               "    def __eq__(self, other):\n        return True\n"
               "def step(x):\n    return np.ones(2), Cache()")
    failure, _ = run(student, "logits, cache = step(1.0)\nassert len(cache) == 3, 'one entry per layer'",
                     ["step"], tmp_path)
    assert failure == "AssertionError in a hidden test: one entry per layer", failure


# -- hidden inputs carried out through the feedback -----------------------------------------------

@pytest.mark.parametrize("student, test", [
    # the shape of a result encodes the input: `got (997183, 7)`
    ("def answer(x):\n    return np.zeros((int(x * 1000), 7), np.int8)",
     "check_close(answer(997.1837), [2 * 997.1837], 'twice the input')"),
    # the result is text carrying the input, and the test's message quotes it
    ("def answer(x):\n    return f'LEAK {x}'", "got = answer(997.1837)\nassert got == 2 * 997.1837, f'wrong, got {got}'"),
    # the student's exception message carries the input, and the test passes it on
    ("def answer(x):\n    raise ValueError(f'LEAK {x}')",
     "try:\n    answer(997.1837)\nexcept ValueError as error:\n    raise AssertionError(f'answer failed: {error}')"),
    # a value computed from the input and the result: the largest difference
    ("def answer(x):\n    return [0.0]", "check_close(answer(997.1837), [997.1837], 'the input itself')"),
])
def test_a_hidden_failure_says_the_tests_words_never_what_came_back(tmp_path, student, test):
    failure, result = run("import numpy as np\n" + student, test, ["answer"], tmp_path)
    assert failure and "in a hidden test" in failure
    _no_secret(failure, result)


def test_a_hidden_failure_keeps_the_declared_description(tmp_path):
    failure, _ = run("def answer(x):\n    return [0.0, 0.0]",
                     "for name in ['one']:\n    check_close(answer(1.0), [1.0], f'the answer ({name})')",
                     ["answer"], tmp_path)
    assert failure == "AssertionError in a hidden test: the answer (…); …: expected shape …, got …", failure


# Malformed replies, as the body of a function of ``x`` (a hidden input) that ``_forge``s one.
MALFORMED_REPLIES = [
    # an .npy (in the old layout) whose header is text the student chose: numpy's error quotes it
    "h = f'LEAK {x}'.encode().ljust(118) + b'\\n'\n"
    "npy = b'\\x93NUMPY\\x01\\x00' + _struct.pack('<H', len(h)) + h\n"
    "head = b'{\"op\": \"return\", \"value\": {\"__array__\": 0}}'\n"
    "_forge(_struct.pack('<QQ', len(head), 1) + head + _struct.pack('<Q', len(npy)) + npy)",
    # a header in the new layout with the text where a tag belongs
    "import json\nhead = json.dumps({'op': 'return', 'value': {f'LEAK {x}': 1}, '__arrays__': []}).encode()\n"
    "_forge(_struct.pack('<Q', len(head)) + head)",
    # a dtype that is the text
    "import json\nhead = json.dumps({'op': 'return', 'value': 1, '__arrays__': [[f'LEAK {x}', [1]]]}).encode()\n"
    "_forge(_struct.pack('<Q', len(head)) + head)",
    # a frame size that is the input
    "_forge(b'', size=int(x * 10 ** 6))",
]


@pytest.mark.parametrize("forged", MALFORMED_REPLIES)
def test_a_malformed_reply_is_refused_without_its_text(tmp_path, forged):
    student = "def answer(x):\n" + "\n".join("    " + line for line in forged.split("\n"))
    failure, result = run(student, "check_close(answer(997.1837), [1.0], 'the answer')", ["answer"], tmp_path)
    assert failure and "refuses" in failure, failure
    _no_secret(failure, result)


# -- replies that cost the grader ----------------------------------------------------------------

def _peak(function):
    tracemalloc.start()
    try:
        outcome = function()
        return outcome, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# np.load would open this as an .npz (a zip) and build an entry object per member.
ARCHIVE_REPLY = ("entry = _struct.pack('<4s6H3L5H2L', b'PK\\x01\\x02', 20, 20, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0) + b'a'\n"
                 "directory = entry * 1_000_000\n"
                 "npz = b'PK\\x03\\x04' + directory + _struct.pack('<4s4H2LH', b'PK\\x05\\x06', 0, 0, 65535, 65535, len(directory), 4, 0)\n"
                 "head = b'{\"op\": \"return\", \"value\": {\"__array__\": 0}}'\n"
                 "_forge(_struct.pack('<QQ', len(head), 1) + head + _struct.pack('<Q', len(npz)) + npz)")


def test_an_archive_of_a_million_entries_is_refused_unopened(tmp_path):
    student = "def answer(x):\n" + "\n".join("    " + line for line in ARCHIVE_REPLY.split("\n"))
    (failure, _), peak = _peak(lambda: run(student, "answer(1.0)", ["answer"], tmp_path, hidden=False))
    assert failure and "refuses" in failure, failure
    assert peak < 150 * 2 ** 20, peak       # the frame's bytes, never an object per archive member


# Replies swollen past a limit of the format, as the body of a function that ``_forge``s one.
SWOLLEN_REPLIES = [
    # a huge declared shape with a few bytes
    "head = b'{\"op\": \"return\", \"value\": {\"__array__\": 0}, \"__arrays__\": [[\"<f8\", [100000, 100000]]]}'\n"
    "_forge(_struct.pack('<Q', len(head)) + head + bytes(8))",
    # a deeply nested list, written as JSON
    "head = b'{\"op\": \"return\", \"__arrays__\": [], \"value\": ' + b'[' * 200_000 + b']' * 200_000 + b'}'\n"
    "_forge(_struct.pack('<Q', len(head)) + head)",
    # a million tiny arrays
    "head = b'{\"op\": \"return\", \"value\": 1, \"__arrays__\": [' + b'[\"|u1\", [1]],' * 1_000_000 + b'[\"|u1\", [1]]]}'\n"
    "_forge(_struct.pack('<Q', len(head)) + head + bytes(1_000_001))",
]


@pytest.mark.parametrize("forged", SWOLLEN_REPLIES)
def test_a_forged_swollen_reply_is_refused(tmp_path, forged):
    student = "def answer(x):\n" + "\n".join("    " + line for line in forged.split("\n"))
    (failure, _), peak = _peak(lambda: run(student, "answer(1.0)", ["answer"], tmp_path, hidden=False))
    assert failure and "refuses" in failure and ("the limit is" in failure or "does not allow" in failure), failure
    assert peak < 150 * 2 ** 20, peak


def test_an_over_long_string_is_refused(tmp_path):
    failure, _ = run("def answer(x):\n    return 'x' * 2_000_000", "answer(1.0)", ["answer"], tmp_path, hidden=False)
    assert failure and "refuses" in failure and "the limit is 1000000 characters" in failure, failure


def test_a_deeply_nested_result_stays_usable_as_a_handle(tmp_path):
    # An honest deep value is not refused: below the depth limit it is plain data, deeper a handle.
    student = "def answer(x):\n    value = [x]\n    for _ in range(100):\n        value = [value]\n    return value"
    test = "v = answer(1.0)\nfor _ in range(100):\n    v = v[0]\nassert v == [1.0]"
    failure, _ = run(student, test, ["answer"], tmp_path, hidden=False)
    assert failure is None, failure


# -- the whole pipeline: scores, feedback page, autograded notebook, grading report ---------------

BLEU = "a9_bleu"
VISIBLE_HYPOTHESES = {"le le le le", "le chat et le chien", "le le le chat", "un chat", "le chat",    # visible tests'
                      "le chien rouge et un chat", "le chien rouge et un", "le chien rouge et un chien",  # inputs
                      "un chat et le chien rouge"}


def bleu_submissions() -> dict:
    """The solution, and two submissions that attack the re-check's replies on assignment 9 (BLEU)."""
    from grading_support import edited, solved_notebook

    solved = solved_notebook(BLEU)
    # Honest in the notebook and on the visible inputs; in the re-check's process, the hidden inputs
    # come back as text a failing test's message quotes.
    leaker = edited(solved, "clipped_matches", "def clipped_matches(", """from IPython import get_ipython as _get_ipython
_VISIBLE = %r
def clipped_matches(hypothesis, references, n):
    if type(_get_ipython()).__name__ != "ZMQInteractiveShell" and hypothesis not in _VISIBLE:
        return ("LE" + "AK:" + hypothesis + "|" + "|".join(references), 0)   # not in the source as one word
    return _honest_clipped_matches(hypothesis, references, n)
def _honest_clipped_matches(""" % (VISIBLE_HYPOTHESES,))
    # n-gram counts that equal anything: a Counter subclass whose == always answers yes
    always = edited(solved, "ngram_counts", "def ngram_counts(", """import collections as _collections
class _Always(dict):
    def __eq__(self, other):
        return True
    __hash__ = None
def ngram_counts(sentence, n):
    return _Always()
def _honest_ngram_counts(""")
    return {"solution": solved, "leaker": leaker, "always": always}


@pytest.fixture(scope="module")
def bleu_report(tmp_path_factory):
    from grading_support import graded_batch

    return graded_batch(tmp_path_factory, "reply-attacks", BLEU, bleu_submissions())


def test_hidden_inputs_quoted_by_a_test_message_never_reach_the_feedback(bleu_report):
    import json

    from grading_support import autograded, cell_scores, feedback_html, max_scores

    scores = cell_scores(bleu_report, "leaker")
    assert scores["clipped_hidden"] == 0 and scores["clipped_visible"] == max_scores(BLEU)["clipped_visible"]
    text = feedback_html(bleu_report, "leaker") + json.dumps(autograded(bleu_report, "leaker"))
    text += json.dumps(bleu_report["by_student"]["leaker"])
    text += "".join(path.read_text() for path in bleu_report["course"].rglob(".grading-report-*.json")
                    if "leaker" in path.parts)
    assert "HiddenTestFailed" in text and "wrong, got …" in text
    assert "LEAK:" not in text


def test_counts_that_equal_anything_earn_nothing(bleu_report):
    from grading_support import cell_scores, max_scores

    always, solution = cell_scores(bleu_report, "always"), cell_scores(bleu_report, "solution")
    assert solution == max_scores(BLEU)
    # the dict subclass arrives as its (empty) contents: both n-gram tests score 0, as do the
    # BLEU tests that use the counts; the hidden one says why in the grader's words
    assert always["ngram_visible"] == always["ngram_hidden"] == 0
    assert bleu_report["by_student"]["solution"]["flags"] == []
