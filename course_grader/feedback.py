"""What makes a submission inert in the pages instructors and students open.

nbconvert's :class:`~nbconvert.preprocessors.SanitizeHTML` cleans the HTML a
submission writes (raw HTML in Markdown, HTML outputs) with bleach, whose URL
schemes are an allow-list.  Two routes around it are closed here:

* :class:`SafeLinksExporter`: Markdown's own links and images (``[x](URL)``,
  ``![x](URL)``, ``<URL>``, reference links) are made by nbconvert's renderer,
  which keeps every scheme.  This exporter renders Markdown with mistune's
  URL check on and an allow-list of http, https and mailto (plus relative
  links, and data:image/png, jpeg, gif or webp for images): anything else,
  however spelled (``JaVaScRiPt:``, ``&#106;avascript:``, ``java<TAB>script:``),
  becomes ``#harmful-link``.  :func:`safe_links_in_every_html_export` does the
  same for the formgrader's pages.
* :class:`SanitizeSubmission`: SanitizeHTML, plus an output's metadata cut to
  what the templates may read (numeric width and height, ``unconfined``,
  ``alt``): nbconvert writes ``width={{ width }}`` unquoted and
  ``src="{{ filenames[...] }}"``, so any other value could add an attribute or
  a script URL to an image.

The feedback page itself is :class:`FeedbackExporter`'s: nbgrader's template
with MathJax inlined from the copy the book's site serves (a student offline
sees formulas), outputs that wrap, cells awaiting a hand grade said to await
one (:class:`FeedbackGrades`), and test cells named by :func:`test_title`.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbgrader.preprocessors import GetGrades


class SafeLinksRenderer(IPythonRenderer):
    """nbconvert's Markdown renderer with mistune's URL check on, for an allow-list of schemes."""

    SAFE_PROTOCOLS = ("http:", "https:", "mailto:")

    def __init__(self, **kwargs):
        super().__init__(**kwargs, allow_harmful_protocols=False)


class SafeLinksExporter(HTMLExporter):
    """HTMLExporter whose ``markdown2html`` filter renders with :class:`SafeLinksRenderer`."""

    @pass_context
    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        renderer = SafeLinksRenderer(
            escape=False, attachments=cell.get("attachments", {}), embed_images=self.embed_images,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=self.anchor_link_text, exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options)
        return MarkdownWithMath(renderer=renderer).render(source)


def safe_links_in_every_html_export():
    """Every HTMLExporter of this process renders Markdown with :class:`SafeLinksRenderer`.

    For the formgrader: it builds a plain HTMLExporter (no setting names the
    class) whose template renders the autograded notebook's Markdown as it is.
    The course's ``nbgrader_config.py`` calls this, so the formgrader, and
    nbgrader's commands, apply the allow-list too; the grading workers, which
    do not run that file, use :class:`SafeLinksExporter` by configuration.
    """
    import nbconvert.exporters.html

    nbconvert.exporters.html.IPythonRenderer = SafeLinksRenderer


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def safe_output_metadata(metadata: dict) -> dict:
    """``{mimetype: {...}}`` with only a numeric width and height, ``unconfined`` and a text ``alt``."""
    kept = {}
    for mimetype, info in metadata.items():
        if isinstance(info, dict):
            kept[mimetype] = {key: value for key, value in info.items()
                              if (key in ("width", "height") and _number(value))
                              or (key == "unconfined" and value is True)
                              or (key == "alt" and isinstance(value, str))}
    return kept


class SanitizeSubmission(SanitizeHTML):
    """SanitizeHTML, and output metadata that cannot add to the markup (see the module's docstring)."""

    def sanitize_code_outputs(self, outputs):
        for output in outputs:
            if "metadata" in output:
                output["metadata"] = safe_output_metadata(output["metadata"])
        return super().sanitize_code_outputs(outputs)


# ---------------------------------------------------------------------------
# The feedback page: templates/course_feedback (nbgrader's, changed where said)
# ---------------------------------------------------------------------------

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: MathJax 3 as the book's site serves it (sphinx-mathjax-offline, pinned in requirements.txt):
#: the SVG build, whose fonts are inside the script, so that it works inlined into one page.
MATHJAX_PACKAGE = "sphinx-mathjax-offline"
MATHJAX_FILE = "static/mathjax/tex-svg.js"
#: What MathJax would typeset in a page: TeX delimiters in a Markdown cell.
MATH = re.compile(r"\$|\\\(|\\\[|\\begin\{")


@functools.lru_cache(maxsize=1)
def mathjax_script() -> str:
    """MathJax's script, from the installed package the site uses (no network, ever)."""
    from importlib.metadata import distribution

    files = [f for f in distribution(MATHJAX_PACKAGE).files or [] if f.as_posix().endswith(MATHJAX_FILE)]
    if not files:
        raise FileNotFoundError(f"{MATHJAX_PACKAGE} has no {MATHJAX_FILE}: install requirements.txt")
    script = Path(files[0].locate()).read_text(encoding="utf-8")
    if "</script" in script.lower():
        raise ValueError(f"{MATHJAX_FILE} cannot be inlined: it contains '</script'")
    return script


def test_title(cell) -> str:
    """How the feedback names a test cell: its grade id, and its first comment or docstring line."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    name = str(meta.get("grade_id") or "test")
    for line in str(cell.get("source", "")).splitlines():
        text = line.strip()
        if not text:
            continue
        if text.startswith("#"):
            words = text.lstrip("#").strip()
        elif text[:3] in ('"""', "'''") or text[:1] in ('"', "'"):
            words = text.strip("\"'").strip()
        else:
            break                     # code first: no comment names this test
        if words:
            return f"{name} \N{EM DASH} {words[:120]}"
    return name


class FeedbackGrades(GetGrades):
    """nbgrader's GetGrades, which also marks the cells that await a hand grade.

    nbgrader's page shows such a cell as "Score: 0.0"; the course's template
    (``to_grade_by_hand``) says "to be graded by hand" instead, and the page's
    heading says how many points are still to be graded.
    """

    def preprocess(self, nb, resources):
        nb, resources = super().preprocess(nb, resources)
        from .gradebook import points_to_grade_by_hand

        with self.gradebook:
            submission = self.gradebook.find_submission_notebook(
                self.notebook_id, self.assignment_id, self.student_id)
            resources["nbgrader"]["to_grade_by_hand"] = points_to_grade_by_hand(_OneNotebook(submission))
        return nb, resources

    def preprocess_cell(self, cell, resources, cell_index):
        if isinstance(cell.metadata.get("nbgrader"), dict):
            cell.metadata.nbgrader["to_grade_by_hand"] = False   # nothing the submission says counts
        return super().preprocess_cell(cell, resources, cell_index)

    def _get_score(self, cell, resources):
        super()._get_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata.nbgrader["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        cell.metadata.nbgrader["to_grade_by_hand"] = grade.auto_score is None and grade.manual_score is None


class _OneNotebook:
    """A submitted notebook where :func:`~course_grader.gradebook.points_to_grade_by_hand` wants a submission."""

    def __init__(self, notebook):
        self.notebooks = [notebook]


class FeedbackExporter(SafeLinksExporter):
    """The feedback page: the course's template (``templates/course_feedback``), MathJax inlined.

    nbgrader sets ``HTMLExporter.template_name`` to its own ``feedback``; this
    exporter uses the course's, nbgrader's page with the changes its header lists.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.extra_template_basedirs = [str(TEMPLATES), *self.extra_template_basedirs]
        self.template_name = "course_feedback"
        self.template_paths = self._template_paths()   # nbconvert computes them once, from the first name

    def default_filters(self):
        yield from super().default_filters()
        yield ("test_title", test_title)

    def from_notebook_node(self, nb, resources=None, **kw):
        resources = {} if resources is None else resources
        if any(cell.get("cell_type") == "markdown" and MATH.search(str(cell.get("source", "")))
               for cell in nb.cells):
            resources["mathjax_script"] = mathjax_script()
        return super().from_notebook_node(nb, resources, **kw)
