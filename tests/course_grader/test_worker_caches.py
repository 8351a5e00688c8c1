"""What a grading worker computes once instead of per cell (:mod:`course_grader.nbgrader_api`): the
same verdicts and the same pages as nbgrader's own path.  Run in fresh interpreters, as in a
worker: the changes are the process's."""

import subprocess
import sys

from grading_support import ROOT

METADATA = r'''
import copy, jsonschema
from nbgrader.nbgraderformat import common
from nbgrader.nbgraderformat.v3 import MetadataValidatorV3
from course_grader.nbgrader_patches import check_metadata_with_one_validator

good = {"grade": True, "grade_id": "t", "locked": True, "points": 2, "schema_version": 3, "solution": False,
        "task": False}
cases = [good, {**good, "points": "two"}, {**good, "grade": "yes"}, {**good, "grade_id": 7},
         {**good, "surprise": 1}, {k: v for k, v in good.items() if k != "grade_id"}]
schema = MetadataValidatorV3().schema

def verdicts():
    out = []
    for case in cases:
        try:
            common.jsonschema.validate(copy.deepcopy(case), schema)
            out.append(None)
        except jsonschema.ValidationError as error:
            out.append((error.message, list(error.path), error.validator))
    return out

nbgraders = verdicts()
check_metadata_with_one_validator()
checked = []
original = jsonschema.validators.validator_for(schema).check_schema
jsonschema.validators.validator_for(schema).check_schema = classmethod(lambda cls, s: checked.append(1) or original(s))
assert verdicts() == nbgraders, (verdicts(), nbgraders)
assert nbgraders[0] is None and all(v is not None for v in nbgraders[1:5])
assert len(checked) <= 1, "the schema was checked again"
other = copy.deepcopy(schema)
other["required"] = other["required"] + ["surprise"]
try:
    common.jsonschema.validate(good, other)
    raise SystemExit("a changed schema was not used")
except jsonschema.ValidationError as error:
    assert "surprise" in error.message
print("ok")
'''

HIGHLIGHT = r'''
from nbconvert.filters.highlight import Highlight2HTML
from course_grader.nbgrader_patches import reuse_highlighting

cases = [("def f(x):\n    return x  # <b>\n", None, None), ("def f(x):\n    return x  # <b>\n", "python", None),
         ("%%bash\necho hi\n", "ipython3", {"magics_language": "bash"}), ("", None, None),
         ("SELECT 1;", "sql", None)]
plain = Highlight2HTML(pygments_lexer="ipython3")
wide = Highlight2HTML(pygments_lexer="ipython3", extra_formatter_options={"linenos": "inline"})
theirs = [f(*case) for f in (plain, wide) for case in cases]
reuse_highlighting(size=3)
reuse_highlighting(size=3)            # twice is once
ours = [f(*case) for f in (plain, wide) for case in cases]
again = [f(*case) for f in (plain, wide) for case in cases]
assert ours == theirs and again == theirs
assert len(set(theirs)) >= 6      # the language, the magics language and the options each matter
print("ok")
'''

MARKDOWN = r'''
import nbformat
from nbformat.v4 import new_markdown_cell, new_notebook
from course_grader.feedback import SafeLinksExporter

image = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
texts = ["# Part 1\n\nSoftmax: $e^{x_i} / \\sum_j e^{x_j}$", "[ok](https://example.org) [bad](javascript:alert(1))",
         "<b>bold</b> *emphasis*", "# Part 1\n\nSoftmax: $e^{x_i} / \\sum_j e^{x_j}$"]

def notebook(attachment):
    nb = new_notebook(cells=[new_markdown_cell(t, id=f"cell-{i}") for i, t in enumerate(texts)])
    with_image = new_markdown_cell("![dot](attachment:dot.png)", id="image")
    with_image.attachments = {"dot.png": {"image/png": attachment}}
    nb.cells.append(with_image)
    return nb

def render(nb):
    return SafeLinksExporter(template_name="lab").from_notebook_node(nb)[0]

SafeLinksExporter.remembered = 0            # nothing kept: nbconvert's own rendering each time
theirs = [render(notebook(image)), render(notebook(image[:-8] + "AAAAAAA="))]
assert not SafeLinksExporter.rendered
SafeLinksExporter.remembered = 2048
ours = [render(notebook(image)), render(notebook(image[:-8] + "AAAAAAA=")), render(notebook(image))]
assert ours[:2] == theirs and ours[2] == theirs[0]
assert theirs[0] != theirs[1]               # a cell's attachments are its own, never a remembered page
assert 'href="javascript:' not in ours[0] and 'href="https://example.org"' in ours[0]   # SafeLinksRenderer's
assert len(SafeLinksExporter.rendered) == 3, list(SafeLinksExporter.rendered)   # the three distinct texts
print("ok")
'''

IMPORTS = r'''
import sys
import course_grader.workers
import jsonschema, nbformat
from nbformat.v4 import new_code_cell, new_notebook
assert sys.modules["rfc3987_syntax"] is None          # never imported: no parsers built
nb = new_notebook(cells=[new_code_cell("x = 1")])
nbformat.validate(nb)
nb.cells[0]["execution_count"] = "one"
try:
    nbformat.validate(nb)
    raise SystemExit("an invalid notebook passed")
except nbformat.ValidationError:
    pass
assert "date-time" in jsonschema.FormatChecker().checkers    # the other formats are jsonschema's as ever
print("ok")
'''


def _run(script):
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]


def test_cell_metadata_gets_nbgraders_verdicts_from_one_checked_validator():
    _run(METADATA)


def test_highlighted_cells_are_nbconverts_whatever_the_language_magics_or_options():
    _run(HIGHLIGHT)


def test_a_grading_process_starts_without_the_iri_parsers_and_nbformat_still_validates():
    _run(IMPORTS)


def test_remembered_markdown_renders_as_nbconvert_renders_it_and_attachments_are_never_reused():
    _run(MARKDOWN)
