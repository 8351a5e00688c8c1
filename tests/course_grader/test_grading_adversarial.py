"""Submissions that attack the grader: each is graded without crashing the run, earns nothing it
did not earn, is reported clearly, and leaves the gradebook intact.

All cases use assignment 1. "Correct" code below is the instructor's solution; "wrong" code
returns zeros of the right shape, which fails every test unless the tests are switched off.
"""

import copy
import hashlib
import json
import sqlite3
import textwrap

import pytest

from grading_support import (ROOT, autograded, cell, cell_scores, edited, feedback_html, graded_batch,
                             grade_id, max_scores, outputs_text, shared_root, solved_notebook,
                             student_notebook)

A = "a1_softmax_additive"
SOFTMAX_CELLS = ["softmax_visible", "softmax_stability", "softmax_axes", "softmax_masks"]
ADDITIVE_CELLS = ["additive_visible", "additive_keras"]
WRONG_SOFTMAX = ("def softmax(x, axis=-1, mask=None):\n    return np.zeros_like(np.asarray(x, dtype=float))\n")
WRONG_ADDITIVE = ("def additive_attention(query, key, value, scale=None, query_mask=None, value_mask=None):\n"
                  "    q, v = np.asarray(query), np.asarray(value)\n"
                  "    return np.zeros(q.shape[:2] + v.shape[-1:]), np.zeros(q.shape[:2] + v.shape[1:2])\n")


def _wrong_code(nb):
    nb = copy.deepcopy(nb)
    cell(nb, "softmax").source = WRONG_SOFTMAX
    cell(nb, "additive_attention").source = WRONG_ADDITIVE
    return nb


def _append_to(nb, gid, code):
    nb = copy.deepcopy(nb)
    cell(nb, gid).source += "\n\n" + textwrap.dedent(code).strip() + "\n"
    return nb


def _tests(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


def _submissions(course):
    solved, blank = solved_notebook(A), student_notebook(A)
    subs = {"victim": solved, "honest-blank": blank}

    # 1. Test cells edited to do nothing, with wrong code.
    nb = _wrong_code(solved)
    for c in _tests(nb):
        c.source = "pass  # tests removed"
    subs["edited-tests"] = nb

    # 2. Test cells deleted, with wrong code.
    nb = _wrong_code(solved)
    nb.cells = [c for c in nb.cells if not c.metadata.get("nbgrader", {}).get("grade")]
    subs["deleted-tests"] = nb

    # 3. Cell ids changed: nbgrader ids of the test cells, and the notebook's own cell ids.
    nb = _wrong_code(solved)
    for i, c in enumerate(_tests(nb)):
        c.metadata["nbgrader"]["grade_id"] = f"renamed_{i}"
        c.source = "pass"
    for i, c in enumerate(nb.cells):
        c.id = f"changed-{i}"
    subs["changed-ids"] = nb

    # 3b. The same renaming with correct code: the code still runs and earns its marks.
    nb = copy.deepcopy(solved)
    for i, c in enumerate(nb.cells):
        if "nbgrader" in c.metadata and not c.metadata["nbgrader"].get("locked"):
            c.metadata["nbgrader"]["grade_id"] = f"mine_{i}"
        c.id = f"changed-{i}"
    subs["changed-ids-correct"] = nb

    # 4. NumPy's test helpers monkeypatched, with wrong code.
    subs["monkeypatch-numpy"] = _append_to(_wrong_code(solved), "softmax", """
        np.testing.assert_allclose = lambda *args, **kwargs: None
        np.allclose = lambda *args, **kwargs: True
        np.array_equal = lambda *args, **kwargs: True
        np.isfinite = lambda x: np.ones(np.shape(x), dtype=bool)
    """)

    # 5. The notebook's own check helpers replaced, with wrong code.
    subs["monkeypatch-helpers"] = _append_to(_wrong_code(solved), "softmax", """
        check_close = lambda *args, **kwargs: None
        check_equal = lambda *args, **kwargs: None
        import builtins
        builtins.AssertionError = type("Quiet", (Exception,), {})
    """)

    # 6. An IPython input transformer that rewrites every later test cell into `pass`.
    subs["ipython-hook"] = _append_to(_wrong_code(solved), "softmax", """
        ip = get_ipython()
        ip.input_transformers_cleanup.append(
            lambda lines: ["pass\\n"] if any("check_" in line or "assert" in line for line in lines) else lines)
        ip.events.register("post_run_cell", lambda result: None)
    """)

    # 7. An infinite loop inside a function the tests call (softmax is correct).
    subs["infinite-loop"] = edited(solved, "additive_attention", "query, key, value = np.asarray(query)",
                                   "while True:\n        pass\n    query, key, value = np.asarray(query)")

    # 8. A loop that ignores interrupts: the kernel must be restarted.
    subs["uninterruptible"] = edited(solved, "additive_attention", "query, key, value = np.asarray(query)",
                                     "import signal\n    signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                                     "    while True:\n        pass\n    query, key, value = np.asarray(query)")

    # 9. A memory bomb inside a function the tests call.  It reserves 1 GiB per step
    # without touching it, so it reaches the address-space limit (RLIMIT_AS) in its
    # first steps, in microseconds: how busy the machine is cannot make the time
    # limit strike first.
    subs["memory-bomb"] = edited(solved, "additive_attention", "query, key, value = np.asarray(query)",
                                 "hog = []\n    while True:\n        hog.append(np.empty(2 ** 27))\n"
                                 "    query, key, value = np.asarray(query)")

    # 10. An output flood.
    subs["output-flood"] = edited(solved, "additive_attention", "query, key, value = np.asarray(query)",
                                  "while True:\n        print('spam ' * 2000)\n"
                                  "    query, key, value = np.asarray(query)")

    # 11. os._exit: the kernel dies in the first additive test, again in the second.
    subs["os-exit"] = edited(solved, "additive_attention", "query, key, value = np.asarray(query)",
                             "import os\n    os._exit(3)\n    query, key, value = np.asarray(query)")

    # 12. Not JSON at all.
    subs["malformed-json"] = b'{"cells": [{"cell_type": "code", "source": "'

    # 13. Correct code, but the notebook asks for another kernel.
    nb = copy.deepcopy(solved)
    nb.metadata["kernelspec"] = {"name": "ir", "display_name": "R", "language": "R"}
    subs["other-kernel"] = nb

    # 14. Correct code that also tries to read other students' work, the solutions and the
    #     gradebook, to write to the gradebook, and to reach the network.
    targets = {
        "victim": course / "submitted" / "victim" / A / f"{A}.ipynb",
        "solutions": ROOT / "solutions" / A / f"{A}.ipynb",
        "gradebook": course / "gradebook.db",
        "course": course,
    }
    subs["snooper"] = _append_to(solved, "additive_attention", f"""
        import os, socket
        for name, path in {json.dumps({k: str(v) for k, v in targets.items()})}.items():
            try:
                found = os.listdir(path) if os.path.isdir(path) else open(path, "rb").read(100)
                print("READ", name, len(found), os.listdir(path) if os.path.isdir(path) else "")
            except Exception as error:
                print("BLOCKED read", name, type(error).__name__)
        try:
            with open({str(targets["gradebook"])!r}, "r+b") as f:
                f.write(b"garbage" * 100)
            print("WROTE gradebook")
        except Exception as error:
            print("BLOCKED write gradebook", type(error).__name__)
        for address in [("1.1.1.1", 53), ("127.0.0.1", 22)]:
            try:
                socket.create_connection(address, timeout=3)
                print("CONNECTED", address)
            except Exception as error:
                print("BLOCKED network", address, type(error).__name__)
        open("scratch.txt", "w").write("mine")          # its own directory: allowed, and private
        print("WROTE own directory")
    """)

    # 15. Correct code that writes warnings to stderr from inside the tested functions.
    subs["noisy-but-right"] = edited(solved, "softmax", "x = np.asarray(x)",
                                     "import sys, warnings\n    warnings.warn('a harmless warning')\n"
                                     "    print('debug output', file=sys.stderr)\n    x = np.asarray(x)")
    return subs


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    course = shared_root(tmp_path_factory) / "grading-adversarial" / "course"
    return graded_batch(tmp_path_factory, "adversarial", A, _submissions(course),
                        limits={"cell_timeout": 5, "notebook_timeout": 90, "memory_mb": 1024})


def _total(report, student):
    return sum(cell_scores(report, student).values())


def test_the_run_completes_and_every_submission_has_a_grade(report):
    assert set(report["by_student"]) == set(_submissions(report["course"]))
    assert report["failed"] == 0          # nbgrader processed every notebook (possibly as the blank)


def test_gradebook_is_intact(report):
    db = report["course"] / "gradebook.db"
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert cell_scores(report, "victim") == max_scores(A)


@pytest.mark.parametrize("student", ["edited-tests", "deleted-tests", "changed-ids"])
def test_restored_tests_grade_the_wrong_code(report, student):
    assert _total(report, student) == 0
    nb = autograded(report, student)
    assert all("pass  # tests removed" not in c.source for c in nb.cells if grade_id(c) in SOFTMAX_CELLS)


@pytest.mark.parametrize("student", ["monkeypatch-numpy", "monkeypatch-helpers", "ipython-hook"])
def test_tampering_earns_nothing_and_is_flagged(report, student):
    assert _total(report, student) == 0
    result = report["by_student"][student]
    assert result["flags"], "tampering must be flagged"
    nb = autograded(report, student)
    assert "passed inside the notebook but FAILED when re-run" in outputs_text(nb, "softmax_visible")
    assert "flagged for review" in feedback_html(report, student)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{report['course'] / 'gradebook.db'}") as gb:
        assert gb.find_submission_notebook(A, A, student).flagged


@pytest.mark.parametrize("student, event", [("infinite-loop", "cell_timeout"),
                                            ("uninterruptible", "kernel_unresponsive"),
                                            ("memory-bomb", None),
                                            ("output-flood", "output_flood"),
                                            ("os-exit", "kernel_died")])
def test_a_misbehaving_function_costs_only_its_own_points(report, student, event):
    scores, full = cell_scores(report, student), max_scores(A)
    assert {c: scores[c] for c in SOFTMAX_CELLS} == {c: full[c] for c in SOFTMAX_CELLS}
    assert {c: scores[c] for c in ADDITIVE_CELLS} == {c: 0.0 for c in ADDITIVE_CELLS}
    nb = autograded(report, student)
    explained = outputs_text(nb, "additive_visible")
    expected = {"infinite-loop": "TimeLimitError", "uninterruptible": "TimeLimitError",
                "memory-bomb": "MemoryError", "output-flood": "output truncated", "os-exit": "KernelDied"}
    assert expected[student] in explained
    if event:
        report_file = report["course"] / "autograded" / student / A / f".grading-report-{A}.json"
        assert event in [e["kind"] for e in json.loads(report_file.read_text())["events"]]


def test_output_flood_is_capped(report):
    path = report["course"] / "autograded" / "output-flood" / A / f"{A}.ipynb"
    assert path.stat().st_size < 3_000_000


def test_malformed_json_is_graded_as_the_blank_exercise_with_a_note(report):
    result = report["by_student"]["malformed-json"]
    assert result["status"] == "unreadable" and _total(report, "malformed-json") == 0
    assert "could not be read as a Jupyter notebook" in feedback_html(report, "malformed-json")


def test_renamed_solution_cells_keep_their_marks(report):
    assert cell_scores(report, "changed-ids-correct") == max_scores(A)
    assert any("unknown nbgrader ids" in flag for flag in report["by_student"]["changed-ids-correct"]["flags"])


def test_another_kernel_name_is_graded_in_the_sandbox_kernel(report):
    assert cell_scores(report, "other-kernel") == max_scores(A)
    assert any("declares the kernel 'ir'" in n and "sandbox's Python kernel" in n
               for n in report["by_student"]["other-kernel"]["notes"])


def test_snooper_reads_and_writes_nothing_outside_its_folder(report):
    nb = autograded(report, "snooper")
    text = outputs_text(nb, "additive_attention")
    for name in ("victim", "solutions", "gradebook", "course"):
        assert f"BLOCKED read {name}" in text
    assert "BLOCKED write gradebook" in text and "WROTE gradebook" not in text
    assert text.count("BLOCKED network") == 2 and "CONNECTED" not in text
    assert "WROTE own directory" in text
    assert cell_scores(report, "snooper") == max_scores(A)     # correct code keeps its marks
    assert not (report["course"] / "autograded" / "snooper" / A / "scratch.txt").exists()
    victim = report["course"] / "submitted" / "victim" / A / f"{A}.ipynb"
    assert hashlib.sha256(victim.read_bytes()).hexdigest()    # still there, still readable here


def test_stderr_does_not_zero_a_correct_answer(report):
    assert cell_scores(report, "noisy-but-right") == max_scores(A)
    assert report["by_student"]["noisy-but-right"]["flags"] == []
