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
import secrets
from collections import OrderedDict
from html import unescape as unescape_html
from pathlib import Path

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbgrader.preprocessors import GetGrades


#: What a refused URL becomes (mistune's word for it): a link to nowhere in the page
HARMFUL_LINK = "#harmful-link"
#: Schemes a link may have; an image may only be embedded (:data:`IMAGE_DATA`) or relative
LINK_SCHEMES = ("http", "https", "mailto")
IMAGE_DATA = re.compile(r"data:image/(png|jpeg|gif|webp)[;,]")
_SCHEME = re.compile(r"([a-z][a-z0-9+.\-]*):")
#: Attributes whose value a browser follows or loads as a URL (HTML, SVG, MathML)
URL_ATTRIBUTES = frozenset({"href", "src", "xlink:href", "action", "formaction", "srcset", "poster", "background",
                            "data", "codebase", "cite", "longdesc", "usemap", "manifest", "lowsrc", "dynsrc", "ping"})
#: Tags whose URL attribute the browser loads as the page opens (an image's source)
LOADED_TAGS = frozenset({"img", "image", "input", "video", "audio", "source", "track", "embed", "object", "iframe"})


def browser_url(value: str) -> str:
    """``value`` as the URL standard reads it before its scheme: C0 controls and spaces at either
    end gone, tabs and new lines anywhere gone, lower case."""
    return re.sub(r"[\t\n\r]", "", str(value)).strip("".join(map(chr, range(33)))).lower()


def url_allowed(value: str, loaded: bool = False) -> bool:
    """Whether a URL in the feedback page may stay: the page must stay inert and offline.

    Links (``loaded`` False) may be http, https, mailto or relative; what the browser loads as the
    page opens (an image's source: ``loaded`` True) only an embedded picture
    (``data:image/png``, ``jpeg``, ``gif`` or ``webp``) or a relative URL.  A network-path
    reference (``//host/path``, and the backslash spellings a browser reads as one) is not relative:
    it names another host, with the page's own scheme.
    """
    url = browser_url(value)
    if len(url) >= 2 and url[0] in "/\\" and url[1] in "/\\":
        return False
    scheme = _SCHEME.match(url)
    if scheme is None:
        return True
    if loaded:
        return bool(IMAGE_DATA.match(url))
    return scheme.group(1) in LINK_SCHEMES


class SafeLinksRenderer(IPythonRenderer):
    """nbconvert's Markdown renderer with mistune's URL check on, for an allow-list of schemes
    (:func:`url_allowed`: no network-path links, images only embedded or relative)."""

    SAFE_PROTOCOLS = tuple(f"{scheme}:" for scheme in LINK_SCHEMES)

    def __init__(self, **kwargs):
        super().__init__(**kwargs, allow_harmful_protocols=False)

    def sanitize_url(self, url: str) -> str:
        """A link's URL (images have their own check, in :meth:`image`)."""
        return super().sanitize_url(url) if url_allowed(url) else HARMFUL_LINK

    def image(self, text: str, url: str, title=None) -> str:
        """mistune's image, its source embedded as nbconvert embeds it, then checked as the page loads it."""
        from mistune.util import striptags

        try:
            source = self._embed_image_or_attachment(url)
        except Exception:  # noqa: BLE001 - a missing attachment: no picture, not a failed page
            source = HARMFUL_LINK
        attributes = {"src": source if url_allowed(source, loaded=True) else HARMFUL_LINK, "alt": striptags(text)}
        if title:
            attributes["title"] = title
        return "<img" + self.render_attrs(attributes) + " />"


class SafeLinksExporter(HTMLExporter):
    """HTMLExporter whose ``markdown2html`` filter renders with :class:`SafeLinksRenderer`."""

    #: Rendered Markdown, by source and options: most of a class's Markdown cells (the assignment's
    #: own text) are the same for every student a worker renders.
    rendered: OrderedDict = OrderedDict()
    remembered = 2048

    @pass_context
    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        # With attachments or embedded images the result depends on more than the text; without,
        # the notebook's folder (a different one per student) plays no part either.
        if cell.get("attachments") or self.embed_images:
            return self._render_markdown(context, source)
        key = (source, self.anchor_link_text, self.exclude_anchor_links, repr(sorted(self.lexer_options.items())))
        done = SafeLinksExporter.rendered
        if key in done:
            done.move_to_end(key)
            return done[key]
        html = done[key] = self._render_markdown(context, source)
        if len(done) > self.remembered:
            done.popitem(last=False)
        return html

    def _render_markdown(self, context, source):
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
    """SanitizeHTML, and output metadata that cannot add to the markup (see the module's docstring);
    a URL attribute bleach keeps must also pass :func:`url_allowed` (bleach takes a network-path
    reference, ``//host/path``, for a relative URL)."""

    def sanitize_code_outputs(self, outputs):
        for output in outputs:
            if "metadata" in output:
                output["metadata"] = safe_output_metadata(output["metadata"])
        return super().sanitize_code_outputs(outputs)

    def sanitize_html_tags(self, html_str):
        from bleach.sanitizer import attribute_filter_factory

        configured = self.attributes
        allowed = attribute_filter_factory(configured)

        def attribute_filter(tag, name, value):
            if not allowed(tag, name, value):
                return False
            value = unescape_html(value)      # bleach hands the value over with its character references
            if name == "srcset" or name == "ping":      # lists of URLs
                return all(url_allowed(part.split()[0], loaded=True) for part in value.split(",") if part.split())
            return name not in URL_ATTRIBUTES or url_allowed(value, loaded=tag in LOADED_TAGS)

        self.attributes = attribute_filter
        try:
            return super().sanitize_html_tags(html_str)
        finally:
            self.attributes = configured


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
        """nbconvert's ``HTMLExporter.from_notebook_node`` (7.17), without its last step.

        That step reads the whole page into BeautifulSoup and writes it out again, to give an
        image without one an ``alt`` text and JupyterLab's cells a ``tabindex`` (this page, built
        on the classic template, has none): two thirds of the time a feedback page takes.  Here
        the images get their ``alt`` text from :func:`alt_for_images`, and MathJax (2 MB) is put in
        last, where the page's head holds a marker no submission can know.
        ``tests/course_grader/test_feedback_page.py`` checks that the page is, tag for tag, the
        one nbconvert's own pass gives.
        """
        resources = {} if resources is None else resources
        marker = None
        if any(cell.get("cell_type") == "markdown" and MATH.search(str(cell.get("source", "")))
               for cell in nb.cells):
            marker = f"/* MathJax {secrets.token_hex(16)} */"
            resources["mathjax_script"] = marker
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        self.register_filter("highlight_code", self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources))
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        html = visible_control_characters(alt_for_images(html))
        if marker is not None:
            resources["mathjax_script"] = mathjax_script()
            html = html.replace(marker, resources["mathjax_script"], 1)
        return html, resources


_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def visible_control_characters(html: str) -> str:
    """``html`` with every control character but tab and the new lines shown as a symbol for it
    (ESC as ␛, U+241B): a submission's raw escape codes, which nbconvert's ANSI filter leaves where
    they make no colour, are text in the page, never bytes a terminal or a tool would act on."""
    def symbol(match):
        code = ord(match.group(0))
        return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"

    return _CONTROL.sub(symbol, html)


#: What nbconvert's HTMLExporter says of an image that has no alt text
NO_ALT = "No description has been provided for this image"
_NOT_MARKUP = re.compile(r"(<!--.*?-->|<(script|style)\b.*?</\2\s*>)", re.I | re.S)
_IMG = re.compile(r"<img\b((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>", re.I)
_ATTRIBUTE = re.compile(r"""([^\s=/>"']+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?""")


def alt_for_images(html: str) -> str:
    """Every ``<img>`` without an ``alt`` attribute given nbconvert's ``alt`` text (:data:`NO_ALT`);
    comments and the text of scripts and style sheets are left alone, as an HTML parser leaves them."""
    def fix(match):
        attributes = match.group(1)
        if any(name.lower() == "alt" for name in _ATTRIBUTE.findall(attributes)):
            return match.group(0)
        closing = "/" if attributes.rstrip().endswith("/") else ""
        body = attributes.rstrip()[:-1] if closing else attributes
        return f'<img{body.rstrip()} alt="{NO_ALT}"{closing}>'

    parts = _NOT_MARKUP.split(html)
    # split() gives text, then (block, tag name or None) per comment, script or style: only the text is HTML to fix
    out = []
    for index, part in enumerate(parts):
        kind = index % 3
        if kind == 0:
            out.append(_IMG.sub(fix, part))
        elif kind == 1:
            out.append(part)
    return "".join(out)
