"""One verdict for one notebook: practice feedback gives every part the points grading gives it.

Practice and grading disagreed four ways on the same notebook: a blank notebook
whose tests were tagged ``skip-execution`` (grading 10/10, practice 0), a test
cell duplicated (practice "13 / 13"), ``nbformat_minor`` as a string (grading:
unreadable; practice: a bare ``AssertionError``) and a Markdown cell without
``source`` (grading 0, practice 10/10).  Practice now takes a notebook the way
grading does, step for step but the kernel (the same reading, the grading
pipeline's sanitizing pass, the instructor's cells restored, the same re-check).

Here a corpus of assignment 1 is graded by the grading command and by practice,
with the same hidden-test inputs (the practice secret, each student's own
draw), and every part must get the same points both ways:

* the adversarial corpus of ``test_grading_adversarial.py`` (tests edited,
  deleted or renamed; NumPy and the test helpers monkeypatched; IPython hooks;
  hangs, memory bombs, output floods, ``os._exit``; not JSON; another kernel;
  snooping; stderr);
* metadata that decides execution: tests tagged ``skip-execution`` or
  ``raises-exception``, tests that claim to be answers or not to be graded,
  tests turned into Markdown or raw cells, a test duplicated, a cell of the
  student's own tagged ``skip-execution``, editors' timings, another kernel's
  metadata;
* notebooks grading cannot read: ``nbformat_minor`` as text, a Markdown cell
  without ``source``;
* honest work: the solution, the blank exercise, a part done, and every
  catalogued mistake.
"""

import copy
import json
from pathlib import Path

import nbformat
import pytest

from grading_support import (WRONG_ANSWERS, cell, cell_scores, graded_batch, shared_root, solved_notebook,
                             student_notebook, write, wrong_answer)
from test_grading_adversarial import _submissions as adversarial_submissions
from test_grading_adversarial import _tests, _wrong_code

from course_grader import practice

A = "a1_softmax_additive"
LIMITS = {"cell_timeout": 5, "notebook_timeout": 90, "memory_mb": 1024}


def _tagged(nb, *tags):
    nb = copy.deepcopy(nb)
    for test in _tests(nb):
        if not test.metadata["nbgrader"].get("solution"):
            test.metadata["tags"] = [*test.metadata.get("tags", []), *tags]
    return nb


def _tests_flagged(nb, **flags):
    nb = copy.deepcopy(nb)
    for test in _tests(nb):
        test.metadata["nbgrader"].update(flags)
    return nb


def _tests_as(nb, cell_type):
    nb = copy.deepcopy(nb)
    for test in _tests(nb):
        test.cell_type = cell_type
        test.pop("outputs", None)
        test.pop("execution_count", None)
    return nb


def _duplicated(nb):
    nb = copy.deepcopy(nb)
    for gid in ("softmax_visible", "additive_visible"):
        copied = copy.deepcopy(cell(nb, gid))
        copied["id"] = f"copy-of-{gid.replace('_', '-')}"
        nb.cells.append(copied)
    return nb


def _metadata_cases():
    solved, blank, wrong = solved_notebook(A), student_notebook(A), _wrong_code(solved_notebook(A))
    timed = copy.deepcopy(solved)
    for c in timed.cells:
        c.metadata["execution"] = {"iopub.execute_input": "2026-03-01T10:00:00.000Z"}
    other_kernel = copy.deepcopy(solved)
    other_kernel.metadata.update(kernelspec={"name": "ir", "display_name": "R", "language": "R"},
                                 language_info={"name": "R"}, widgets={"state": {}})
    own_skipped = copy.deepcopy(solved)
    own_skipped.cells.insert(len(own_skipped.cells) - 1, nbformat.v4.new_code_cell(
        "def softmax(x, axis=-1, mask=None):\n    return 0 * x", metadata={"tags": ["skip-execution"]}))
    return {
        "skip-tagged-blank": _tagged(blank, "skip-execution"),
        "skip-tagged-wrong": _tagged(wrong, "skip-execution"),
        "raises-exception-wrong": _tagged(wrong, "raises-exception"),
        "tests-claim-answers-wrong": _tests_flagged(wrong, solution=True),
        "tests-claim-ungraded-wrong": _tests_flagged(wrong, grade=False),
        "tests-as-markdown-wrong": _tests_as(wrong, "markdown"),
        "tests-as-raw-wrong": _tests_as(wrong, "raw"),
        "duplicated-tests-solved": _duplicated(solved),
        "duplicated-tests-wrong": _duplicated(wrong),
        "own-cell-skipped": own_skipped,
        "editor-timings": timed,
        "another-kernels-metadata": other_kernel,
    }


def _unreadable_cases():
    text = json.loads(nbformat.writes(solved_notebook(A)))
    minor = dict(text, nbformat_minor="5")
    no_source = copy.deepcopy(text)
    del next(c for c in no_source["cells"] if c["cell_type"] == "markdown")["source"]
    return {"minor-as-text": json.dumps(minor).encode(), "markdown-without-source": json.dumps(no_source).encode()}


def _honest_cases():
    partly = copy.deepcopy(solved_notebook(A))
    cell(partly, "additive_attention").source = cell(student_notebook(A), "additive_attention").source
    cases = {"partly-done": partly}
    for name in WRONG_ANSWERS[A]:
        cases[f"mistake-{name.replace('_', '-')}"] = wrong_answer(A, name)
    return cases


def _corpus(course):
    corpus = dict(adversarial_submissions(course))      # "victim" (the solution) and "honest-blank" among them
    corpus.update(_metadata_cases())
    corpus.update(_unreadable_cases())
    corpus.update(_honest_cases())
    return corpus


STUDENTS = sorted(_corpus(Path("course")))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = shared_root(tmp_path_factory) / "grading-practice-corpus" / "course"
    corpus = _corpus(course)
    report = graded_batch(tmp_path_factory, "practice-corpus", A, corpus, limits=LIMITS,
                          secret_seed=practice.PRACTICE_SECRET)
    folder = tmp_path_factory.mktemp("practice-corpus")
    for student, content in corpus.items():        # as the student saves it
        path = folder / student / f"{A}.ipynb"
        if isinstance(content, bytes):
            path.parent.mkdir(parents=True)
            path.write_bytes(content)
        else:
            write(content, path)
    with pytest.MonkeyPatch.context() as patch:     # practice under grading's limits
        config = practice._course().config
        for name, value in LIMITS.items():
            patch.setitem(config.GradingLimits, name, value)
        yield report, {student: practice.practice(folder / student / f"{A}.ipynb", student=student)
                       for student in STUDENTS}


def test_the_corpus_holds_every_case_named_in_the_issue(graded):
    report, _ = graded
    assert {"skip-tagged-blank", "duplicated-tests-solved", "minor-as-text", "markdown-without-source"} \
        <= set(report["by_student"])
    assert report["failed"] == 0


@pytest.mark.parametrize("student", STUDENTS)
def test_practice_gives_every_part_the_points_grading_gives_it(graded, student):
    report, practised = graded
    parts = {part.name: part.points for part in practised[student].parts}
    graded_scores = cell_scores(report, student)
    assert parts == {name: graded_scores[name] for name in parts}, student
    assert len(parts) == len(practised[student].parts)          # each part once ("13 / 13" before)
    assert practised[student].max_points == 10


def test_what_tampering_earns_is_nothing(graded):
    report, practised = graded
    for student in ("skip-tagged-blank", "skip-tagged-wrong", "raises-exception-wrong",
                    "tests-claim-answers-wrong", "tests-claim-ungraded-wrong", "tests-as-markdown-wrong",
                    "tests-as-raw-wrong", "duplicated-tests-wrong"):
        assert sum(cell_scores(report, student).values()) == 0, student
        assert practised[student].points == 0, student
    for student in ("duplicated-tests-solved", "own-cell-skipped", "editor-timings", "another-kernels-metadata"):
        assert practised[student].points == 10 and report["by_student"][student]["score"] == 10, student
    assert report["by_student"]["skip-tagged-blank"]["flags"]           # a tag on a test: a human looks
    assert report["by_student"]["editor-timings"]["flags"] == []        # an editor's timings: nothing to see


def test_a_notebook_grading_cannot_read_is_said_so_by_practice(graded):
    _, practised = graded
    for student, said in [("minor-as-text", "'nbformat_minor' is '5'"),
                          ("markdown-without-source", "has no source text"), ("malformed-json", "")]:
        result = practised[student]
        assert result.points == 0 and all("could not be read" in part.message and said in part.message
                                          for part in result.parts), student
