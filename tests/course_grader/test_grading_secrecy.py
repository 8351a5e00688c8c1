"""What a submission can learn, and what it can make run: hidden tests stay hidden, feedback is inert.

Two classes of attack, several techniques each (assignment 1, correct code, so
that every hidden test runs):

* **Reading the hidden tests.**  The hidden tests are cut out of the test cells
  before the student's kernel starts and run only in the grader, so whatever
  the student's code hooks (IPython's events and input transformers, the
  history, a background thread, the caller's frames, the messages of its own
  exceptions) finds no hidden code and no hidden data to copy into the
  notebook's outputs.
* **Attacking the person who grades.**  Markdown, HTML, JavaScript and SVG
  outputs, notebook metadata and cell ids that carry scripts are made inert in
  the autograded notebook and in the feedback page; the page is opened in a
  headless browser to see that none of them runs.
"""

import copy
import sys
import textwrap
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import numpy as np
import pytest

from grading_support import (HIDDEN_BLOCK, autograded, cell, cell_scores, feedback_html, graded_batch,
                             max_scores, outputs_text, solved_notebook)

A = "a1_softmax_additive"
HIDDEN_CELLS = ["softmax_stability", "softmax_axes", "softmax_masks", "additive_keras"]
VISIBLE_CELLS = ["softmax_visible", "additive_visible"]
# Text that exists only in the hidden regions of assignment 1's tests.
HIDDEN_MARKERS = ["BEGIN HIDDEN TESTS", "grading_rng", "reference.softmax", "reference.additive_attention",
                  "very_negative", "masked_huge_score", "masked entries must be exactly 0"]


def _append_to(nb, gid, code):
    nb = copy.deepcopy(nb)
    cell(nb, gid).source += "\n\n" + textwrap.dedent(code).strip() + "\n"
    return nb


CARRIER = """
from IPython import get_ipython as _get_ipython
def _carrier(function):
    def wrapped(*args, **kwargs):
        if type(_get_ipython()).__name__ != "ZMQInteractiveShell":     # the grader's clean process
            raise ValueError("LEAKED " + repr(args) + repr(kwargs))
        return function(*args, **kwargs)
    return wrapped
"""


def _leakers():
    solved = solved_notebook(A)
    return {
        # Print every cell's source as it arrives.
        "hook-pre-run": _append_to(solved, "softmax", """
            get_ipython().events.register("pre_run_cell", lambda info: print("SEEN", info.raw_cell))
        """),
        # Record every cell's lines and keep them in an output the notebook updates by id.
        "transformer-display": _append_to(solved, "softmax", """
            from IPython.display import display
            _seen, _handle = [], display("", display_id=True)
            def _record(lines):
                _seen.extend(lines)
                _handle.update("".join(_seen))
                return lines
            get_ipython().input_transformers_cleanup.append(_record)
        """),
        # A thread that keeps printing the kernel's input history.
        "history-thread": _append_to(solved, "softmax", """
            import threading, time
            def _dump():
                for _ in range(200):
                    print("HISTORY", get_ipython().user_ns.get("In"))
                    time.sleep(0.05)
            threading.Thread(target=_dump, daemon=True).start()
        """),
        # The tested function prints whatever its callers hold.
        "caller-frames": _append_to(solved, "softmax", """
            import inspect
            _correct_softmax = softmax
            def softmax(x, axis=-1, mask=None):
                for frame in inspect.stack()[1:]:
                    print("FRAME", {k: v for k, v in frame.frame.f_globals.items() if not k.startswith("_")})
                    print("LOCALS", frame.frame.f_locals)
                return _correct_softmax(x, axis=axis, mask=mask)
        """),
        # Outside the notebook's kernel, the functions raise with their inputs in the message.
        "exception-carrier": _append_to(_append_to(solved, "softmax", CARRIER + "softmax = _carrier(softmax)"),
                                        "additive_attention", "additive_attention = _carrier(additive_attention)"),
    }


SCRIPT = "document.title = 'PWNED {}'"


def _attacker():
    nb = solved_notebook(A)
    html = f"<script>{SCRIPT.format('html')}</script><img src=x onerror=\"{SCRIPT.format('img')}\">"
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" onload="{SCRIPT.format("svg")}">'
           '<rect width="1" height="1"/></svg>')
    nb = _append_to(nb, "additive_attention", f"""
        from IPython.display import HTML, Javascript, Markdown, SVG, display
        display(HTML({html!r}))
        display(Javascript({SCRIPT.format('javascript')!r}))
        display(SVG({svg!r}))
        display(Markdown({('<script>' + SCRIPT.format('markdown-output') + '</script>')!r}))
    """)
    nb.cells.append(nbformat.v4.new_markdown_cell(
        f"<script>{SCRIPT.format('markdown')}</script>\n\n<img src=x onerror=\"{SCRIPT.format('md-img')}\">\n\n"
        f"[click](javascript:{SCRIPT.format('link')})"))
    # A cell with nbgrader metadata the gradebook does not know: its id is quoted in the grading notes.
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {
        "grade": False, "solution": True, "locked": False, "schema_version": 3, "task": False,
        "grade_id": f"<img src=x onerror=\"{SCRIPT.format('note')}\">"}}))
    nb.metadata["title"] = f"</title><script>{SCRIPT.format('title')}</script>"
    nb.metadata["kernelspec"]["display_name"] = f"<script>{SCRIPT.format('kernel')}</script>"
    return nb


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return graded_batch(tmp_path_factory, "secrecy", A, {**_leakers(), "attacker": _attacker()})


def _all_outputs(nb) -> str:
    parts = []
    for c in nb.cells:
        parts.append(c.source if c.cell_type == "markdown" else "")
        for output in c.get("outputs", []):
            parts.append(str(output.get("text", "")) + str(output.get("evalue", "")) +
                         "".join(output.get("traceback", [])) + str(output.get("data", "")))
    return "\n".join(parts)


@pytest.mark.parametrize("student", sorted(_leakers()))
def test_no_hidden_code_or_data_reaches_the_notebook_or_the_feedback(report, student):
    nb = autograded(report, student)
    seen = _all_outputs(nb) + feedback_html(report, student)
    for marker in HIDDEN_MARKERS:
        assert marker not in seen, f"{marker!r} leaked through {student}"
    assert not HIDDEN_BLOCK.search(seen)


@pytest.mark.parametrize("student", ["hook-pre-run", "transformer-display", "history-thread", "caller-frames"])
def test_spying_code_keeps_its_marks(report, student):
    scores = cell_scores(report, student)
    assert {c: scores[c] for c in HIDDEN_CELLS} == {c: max_scores(A)[c] for c in HIDDEN_CELLS}


def test_an_exception_does_not_carry_hidden_inputs_into_the_feedback(report):
    nb = autograded(report, "exception-carrier")
    for gid in HIDDEN_CELLS:
        text = outputs_text(nb, gid)
        assert "your code raised an exception during a hidden test" in text and "LEAKED" not in text
    assert set(cell_scores(report, "exception-carrier").values()) == {0.0}
    # Visible tests may quote their own (public) inputs in the grading notes; nothing else does.
    for line in nb.cells[0].source.splitlines():
        if "LEAKED" in line:
            assert any(gid.replace("_", "\\_") in line for gid in VISIBLE_CELLS), line


class _ActiveContent(HTMLParser):
    """Scripts, event handlers and javascript: links that mention the attack's marker."""

    def __init__(self):
        super().__init__()
        self.found, self._in_script = [], False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        for name, value in attrs:
            value = value or ""
            if "PWNED" in value and (name.startswith("on") or value.strip().lower().startswith("javascript:")):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script and "PWNED" in data:
            self.found.append(f"<script>{data.strip()[:80]}")


def test_feedback_has_no_script_from_the_submission(report):
    parser = _ActiveContent()
    parser.feed(feedback_html(report, "attacker"))
    assert parser.found == []
    assert cell_scores(report, "attacker") == max_scores(A)       # inert, not penalised


def test_autograded_notebook_has_no_active_output(report):
    nb = autograded(report, "attacker")
    for c in nb.cells:
        for output in c.get("outputs", []):
            data = output.get("data", {})
            assert "application/javascript" not in data and "image/svg+xml" not in data
            assert "<script" not in data.get("text/html", "") and "<img" not in data.get("text/html", "")
        if c.cell_type == "markdown":
            assert "<script" not in c.source and "<img src=x onerror" not in c.source


def test_no_script_runs_when_the_feedback_is_opened(report):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "site"))
    from built_site import CHROMIUM_ARGS, chromium_path, in_own_thread
    from playwright.sync_api import sync_playwright

    path = report["course"] / "feedback" / "attacker" / A / f"{A}.html"
    dialogs = []

    def look():
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                                 args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
                page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("file:")
                           else route.continue_())
                page.goto(path.as_uri(), wait_until="load")
                page.wait_for_timeout(500)
                for link in page.locator("a").all():
                    if "javascript" in (link.get_attribute("href") or ""):
                        link.click()
                title = page.title()
            finally:
                browser.close()
        return title

    title = in_own_thread(look)
    assert "PWNED" not in title and dialogs == []


def test_the_summary_prints_student_text_as_data(capsys):
    """A student id or note cannot move the cursor or add a forged line to the instructor's terminal."""
    from course_grader.cli import print_summary

    forged = "mallory\x1b[2K\r  alice  10.0 / 10.0  graded\n  bob    10.0 / 10.0  graded"
    result = {"student": forged, "score": 0.0, "max_score": 10.0, "status": "graded",
              "notes": ["note\nwith a new line\x07"], "flags": ["\x1b]0;title\x07"], "events": ["\r\n"]}
    print_summary({"assignment": "a1", "graded": 1, "unreadable": 0, "failed": 0, "flagged": 1,
                   "seconds": 1.0, "submissions_per_minute": 60.0, "results": [result],
                   "phases_seconds": {}, "grades_csv": "grades.csv", "course_dir": "course"})
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    student_lines = [line for line in out.splitlines() if line.startswith("  ")]
    assert len(student_lines) == 1 and "mallory" in student_lines[0]


# Hidden tests' inputs come from the course's secret: nothing written down predicts them.

def test_inputs_depend_on_the_secret_the_test_and_the_student():
    from course_grader.hidden_tests import rng_factory

    def draw(secret, cell="softmax_stability", student="ada"):
        return rng_factory(secret, A, A, cell, student)().normal(size=4)

    assert np.array_equal(draw("s1"), draw("s1"))              # graded again: the same inputs
    assert not np.array_equal(draw("s1"), draw("s2"))
    assert not np.array_equal(draw("s1"), draw("s1", student="bob"))
    assert not np.array_equal(draw("s1"), draw("s1", cell="softmax_axes"))


def test_the_secret_file_is_created_once_and_private(tmp_path):
    from course_grader.hidden_tests import read_or_create_secret

    path = tmp_path / "course" / ".hidden-tests-secret"
    first = read_or_create_secret(path)
    assert len(first) >= 64 and (path.stat().st_mode & 0o777) == 0o600
    assert read_or_create_secret(path) == first


def _replayer():
    """A submission that answers from a table of last term's hidden inputs and outputs, and 0 otherwise."""
    import pickle

    from course_grader.hidden_tests import reference_solution, rng_factory
    from grading_support import SOLUTIONS, source_notebook

    reference = reference_solution(SOLUTIONS / A / f"{A}.ipynb")
    table = {}

    def recording_softmax(x, axis=-1, mask=None):
        x = np.asarray(x)
        result = reference.softmax(x, axis=axis, mask=mask)
        table[x.tobytes()] = result
        return result

    hidden = cell(source_notebook(A), "softmax_stability").source
    namespace = dict(vars(reference), softmax=recording_softmax, reference=reference,
                     grading_rng=rng_factory("last term's secret", A, A, "softmax_stability", "replayer"))
    exec(hidden, namespace)
    nb = copy.deepcopy(solved_notebook(A))
    cell(nb, "softmax").source = textwrap.dedent(f"""
        import pickle
        _TABLE = pickle.loads({pickle.dumps(table)!r})

        def softmax(x, axis=-1, mask=None):
            x = np.asarray(x)
            return _TABLE.get(x.tobytes(), np.zeros_like(x, dtype=float))
    """)
    return nb, len(table)


def test_last_terms_hidden_data_is_worthless(tmp_path_factory):
    nb, remembered = _replayer()
    assert remembered == 4                       # every input of last term's hidden test
    report = graded_batch(tmp_path_factory, "replay", A, {"replayer": nb})
    assert cell_scores(report, "replayer")["softmax_stability"] == 0
    secret = report["course"] / ".hidden-tests-secret"
    assert secret.exists() and (secret.stat().st_mode & 0o777) == 0o600
