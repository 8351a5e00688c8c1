"""Nothing a submission writes is live in the feedback page, and nothing in it writes the grader's report.

Two classes of attack on the people who read the grader's output (assignment 1,
correct code, so that the attacks cost nothing and the pages are complete):

* **Script URLs.**  Markdown links, reference links, images, raw HTML, SVG and
  displayed outputs carry ``javascript:``, ``vbscript:``, ``data:`` and
  ``file:`` URLs, spelled in mixed case, with character references, tabs, new
  lines and control characters, and an image output's metadata tries to add an
  attribute of its own.  The feedback page may keep http(s), mailto and
  relative links only (and data:image/... for images).
* **Network loads and raw control bytes.**  Network-path references
  (``//host/path``, and the backslash spellings a browser reads alike) in
  Markdown links, images and raw HTML, remote images, and ESC and other
  control bytes in Markdown and in printed output: the page loads nothing from
  the network when it is opened, keeps no link to another host but an
  explicit http(s) or mailto one, and holds no control byte.
* **Forged grading notes.**  Notebook and cell metadata carry ``grading_notes``
  and flags of the submission's own: the report, the notes cell and the
  gradebook's flag come from the grader alone.
"""

import copy
import re
import textwrap
from html.parser import HTMLParser

import nbformat
import pytest

from grading_support import autograded, cell, cell_scores, feedback_html, graded_batch, max_scores, solved_notebook

A = "a1_softmax_additive"
MARK = "PWNED"
SCRIPT = f"alert('{MARK}')"
FORGED = "FORGED-NOTE"

# Attributes whose value a browser reads as a URL (HTML, SVG, MathML).
URL_ATTRIBUTES = {"href", "src", "xlink:href", "action", "formaction", "srcset", "poster", "background",
                  "data", "codebase", "cite", "longdesc", "usemap", "manifest", "lowsrc", "dynsrc", "ping"}
SAFE_SCHEMES = {"http", "https", "mailto"}
SAFE_IMAGES = re.compile(r"data:image/(png|jpeg|gif|webp)[;,]")


def live_url(value: str, tag: str) -> bool:
    """Whether a browser would follow ``value`` (an attribute, character references decoded) to a script.

    As the URL standard parses it: leading and trailing C0 controls and spaces
    go, tabs and new lines anywhere go, the scheme is case-insensitive.
    """
    url = re.sub(r"[\t\n\r]", "", value).strip("".join(map(chr, range(33)))).lower()
    scheme = re.match(r"([a-z][a-z0-9+.\-]*):", url)
    if scheme is None or scheme.group(1) in SAFE_SCHEMES:
        return False
    return not (tag == "img" and SAFE_IMAGES.match(url))


class ActiveContent(HTMLParser):
    """Every URL attribute with a non-allow-listed scheme, and every event handler, that names the attack."""

    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            urls = [part.split()[0] for part in value.split(",") if part.split()] if name == "srcset" else [value]
            if name.startswith("on") or (name in URL_ATTRIBUTES and any(live_url(u, tag) for u in urls)):
                self.found.append(f"<{tag} {name}={value!r}>")

    handle_startendtag = handle_starttag


def active_content(html: str) -> list[str]:
    parser = ActiveContent()
    parser.feed(html)
    return parser.found


# Each a different route to a script URL; each names itself in the script so that a failure says which.
MARKDOWN_ATTACKS = {
    "link": f"[plain](javascript:{SCRIPT})",
    "mixed-case": f"[case](JaVaScRiPt:{SCRIPT})",
    "entity": f"[entity](&#106;avascript:{SCRIPT})",
    "named-entity": f"[colon](javascript&colon;{SCRIPT})",
    "tab-in-scheme": f"[tab](<java\tscript:{SCRIPT}>)",
    "reference": f"[ref][r]\n\n[r]: &#x6A;avascript:{SCRIPT}",
    "image": f"![img](javascript:{SCRIPT})",
    "vbscript": f"[vb](vbscript:msgbox('{MARK}'))",
    "data-html": f"[data](data:text/html,<script>{SCRIPT}</script>)",
    "file": f"[file](file:///etc/passwd?{MARK})",
    "html-leading-space": f'<a href=" &#x20;javascript:{SCRIPT}">space</a>',
    "html-control": f'<a href="&#1;java&#10;script:{SCRIPT}">control</a>',
    "html-img": f'<img src="javascript:{SCRIPT}" alt="{MARK}">',
    "html-form": f'<form action="javascript:{SCRIPT}"><button formaction="javascript:{SCRIPT}">go</button></form>',
    "svg-xlink": f'<svg><a xlink:href="javascript:{SCRIPT}"><text y="10">{MARK}</text></a></svg>',
    "svg-href": f'<svg><a href="javascript:{SCRIPT}"><text y="10">{MARK}</text></a></svg>',
    "math-href": f'<math href="javascript:{SCRIPT}"><mi>{MARK}</mi></math>',
}

# Each a way to load from, or link to, another host than through an explicit http(s) link.
NETWORK_ATTACKS = {
    "net-link": "[net](//evil.example/NET-link)",
    "net-backslash": r"[net](\\\\evil.example\\NET-backslash)",     # two backslashes, escaped
    "net-mixed": "[net](/\\evil.example/NET-mixed)",
    "net-space": "[net](< //evil.example/NET-space>)",
    "net-reference": "[net][n]\n\n[n]: //evil.example/NET-reference",
    "net-image": "![net](//evil.example/NET-image.png)",
    "remote-image": "![remote](https://evil.example/NET-remote.png)",
    "html-net-link": '<a href="//evil.example/NET-html">net</a>',
    "html-net-entity": '<a href="&#47;&#47;evil.example/NET-entity">net</a>',
    "html-net-tab": '<a href="/\t/evil.example/NET-tab">net</a>',
}
HONEST_LINKS = {"honest-https": "[fine](https://example.org/HONEST-https)", "honest-relative": "[fine](notes.html)",
                "honest-anchor": "[fine](#softmax_visible)"}
CONTROL_BYTES = "\x1b]0;CONTROL title\x07 \x1b[2K\x1b[1A \x00\x08\x7f\x9b"
CONTROL_OUTPUT = f"""
import sys
print({CONTROL_BYTES!r})
print({CONTROL_BYTES!r}, file=sys.stderr)
"""

_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
OUTPUT_ATTACKS = f"""
from IPython.display import HTML, Markdown, SVG, display
display(HTML({f'<a href="JAVA&#x09;SCRIPT:{SCRIPT}">html</a><img srcset="javascript:{SCRIPT} 1x">'!r}))
display(HTML({f'<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==#{MARK}">b64</a>'!r}))
display(Markdown({f'[md](&#106;avascript:{SCRIPT}) ![i](vbscript:{MARK})'!r}))
display(SVG({'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
             f'<a xlink:href="javascript:{SCRIPT}"><text y="10">svg</text></a></svg>'!r}))
display({{"image/png": {_PNG!r}}}, raw=True,
        metadata={{"image/png": {{"width": {f"1 onerror={SCRIPT}"!r}, "height": {f"1 src=javascript:{SCRIPT}"!r}}}}})
display({{"image/jpeg": {_PNG!r}}}, raw=True, metadata={{"width": {f"2 onload={SCRIPT}"!r},
        "filenames": {{"image/jpeg": {f"javascript:{SCRIPT}"!r}}}}})
"""


def _attacker():
    nb = copy.deepcopy(solved_notebook(A))
    target = cell(nb, "additive_attention")
    target.source += "\n\n" + textwrap.dedent(OUTPUT_ATTACKS).strip() + "\n"
    target.source += textwrap.dedent(CONTROL_OUTPUT)
    for name, markdown in {**MARKDOWN_ATTACKS, **NETWORK_ATTACKS, **HONEST_LINKS}.items():
        nb.cells.append(nbformat.v4.new_markdown_cell(f"{name}: {markdown}"))
    nb.cells.append(nbformat.v4.new_markdown_cell(f"control-markdown: {CONTROL_BYTES}"))
    return nb


def _forger():
    """Grading notes and flags of the submission's own, at notebook and cell level."""
    nb = copy.deepcopy(solved_notebook(A))
    nb.metadata["grading_notes"] = [f"{FORGED} notebook", "the instructor should award full marks"]
    nb.metadata["flags"] = [f"{FORGED} flag"]
    nb.cells[0].metadata["grading_notes"] = [f"{FORGED} cell"]
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        f"**Grading notes** (added by the autograder)\n\n- {FORGED} look-alike", metadata={"grading_notes": True}))
    return nb


def _forger_with_a_real_note():
    """A forged note beside one the grader writes itself (a cell id the gradebook does not know)."""
    nb = _forger()
    nb.metadata["grading_notes"] = {"notes": [f"{FORGED} dict"], "token": "guessed"}
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {
        "grade": False, "solution": True, "locked": False, "schema_version": 3, "task": False,
        "grade_id": "not_an_id_of_the_assignment"}}))
    return nb


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return graded_batch(tmp_path_factory, "feedback-inert", A, {
        "attacker": _attacker(), "forger": _forger(), "forger-beside-a-note": _forger_with_a_real_note(),
        "honest": solved_notebook(A)})


def test_the_attacks_are_in_the_page_and_cost_nothing(report):
    html = feedback_html(report, "attacker")
    for name in MARKDOWN_ATTACKS:          # every attack reached the page, as text or inert markup
        assert f"{name}:" in html, name
    assert cell_scores(report, "attacker") == max_scores(A)


def test_the_checker_sees_the_attacks():
    """The checker itself: each spelling is a live script URL to it, plain links are not."""
    for markdown in ['<a href="JaVa&#x09;ScRiPt:x">', '<a href=" &#1;javascript:x">', '<img src="vbscript:x">',
                     '<a href="data:text/html,x">', '<img srcset="a.png 1x, javascript:x 2x">',
                     '<img src="x" onerror="x">', '<a xlink:href="file:///x">']:
        assert active_content(markdown), markdown
    for markdown in ['<a href="https://example.org/a:b">', '<a href="#top">', '<a href="mailto:a@b.c">',
                     '<a href="javascript%3Ax">', '<img src="data:image/png;base64,AAAA">', '<a href="x/y.html">']:
        assert not active_content(markdown), markdown


class NetworkURLs(HTMLParser):
    """Every URL attribute that names another host than through an explicit http(s) or mailto link, or
    that loads anything but an embedded picture or a relative file as the page opens."""

    LOADED = {"img", "image", "input", "video", "audio", "source", "track", "embed", "object", "iframe"}

    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name not in URL_ATTRIBUTES or not value:
                continue
            urls = [part.split()[0] for part in value.split(",") if part.split()] if name == "srcset" else [value]
            for url in urls:
                plain = re.sub(r"[\t\n\r]", "", url).strip("".join(map(chr, range(33)))).lower()
                network_path = len(plain) > 1 and plain[0] in "/\\" and plain[1] in "/\\"
                scheme = re.match(r"([a-z][a-z0-9+.\-]*):", plain)
                loads = tag in self.LOADED and scheme is not None and not SAFE_IMAGES.match(plain)
                if network_path or loads:
                    self.found.append(f"<{tag} {name}={url!r}>")

    handle_startendtag = handle_starttag


def network_urls(html: str) -> list[str]:
    parser = NetworkURLs()
    parser.feed(html)
    return parser.found


def test_the_checker_sees_network_urls():
    for markup in ['<a href="//x">', '<a href="\\\\x">', '<a href=" /\\x">', '<a href="/&#9;/x">',
                   '<img src="https://x/y.png">', '<img src="//x/y.png">']:
        assert network_urls(markup), markup
    for markup in ['<a href="https://x">', '<a href="/abs/path">', '<a href="#top">', '<img src="y.png">',
                   '<img src="data:image/png;base64,AAAA">']:
        assert not network_urls(markup), markup


def test_feedback_loads_nothing_from_the_network_and_links_no_other_host_implicitly(report):
    html = feedback_html(report, "attacker")
    for name in NETWORK_ATTACKS:           # each reached the page, as text or a dead link
        assert f"{name}:" in html, name
    assert network_urls(html) == []
    assert 'href="https://example.org/HONEST-https"' in html and 'href="notes.html"' in html


def test_feedback_holds_no_control_byte(report):
    html = feedback_html(report, "attacker")
    assert "control-markdown:" in html and "CONTROL title" in html
    assert re.findall(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", html) == []
    assert "\u241b" in html             # ESC, shown as the symbol for it


def test_feedback_has_no_live_script_url(report):
    assert active_content(feedback_html(report, "attacker")) == []


def test_honest_feedback_keeps_its_links(report):
    html = feedback_html(report, "honest")
    assert active_content(html) == [] and '<a href="#softmax_visible"' in html


@pytest.mark.parametrize("student", ["forger", "forger-beside-a-note"])
def test_the_submission_writes_nothing_of_the_report(report, student):
    result = report["by_student"][student]
    assert not any(FORGED in line for line in result["flags"] + result["events"] + result["notes"])
    nb = autograded(report, student)
    grader_cells = [c for c in nb.cells if c.metadata.get("grading_notes")]
    assert all(FORGED not in c.source for c in grader_cells)
    assert not [key for key in nb.metadata if key.startswith("grading_notes")]
    written = report["course"] / "autograded" / student / A / f".grading-report-{A}.json"
    assert FORGED not in written.read_text()
    assert "award full marks" not in feedback_html(report, student)
    assert cell_scores(report, student) == max_scores(A)


def test_the_forger_is_not_flagged_but_a_real_note_is_kept(report):
    from nbgrader.api import Gradebook

    assert report["by_student"]["forger"]["flags"] == []
    flags = report["by_student"]["forger-beside-a-note"]["flags"]
    assert len(flags) == 1 and "not_an_id_of_the_assignment" in flags[0]
    with Gradebook(f"sqlite:///{report['course'] / 'gradebook.db'}") as gb:
        flagged = {s.student.id: any(nb.flagged for nb in s.notebooks)
                   for s in gb.find_assignment(A).submissions}
    assert flagged["forger"] is False and flagged["forger-beside-a-note"] is True


def test_the_formgrader_shows_no_live_script_url(report):
    """The formgrader renders the autograded notebook with a plain HTMLExporter and the course's config."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config.loader import PyFileConfigLoader

    from grading_support import ROOT

    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    config.HTMLExporter.template_name = "formgrade"          # as nbgrader's FormgradeExtension does
    config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
    resources = {"assignment_id": A, "notebook_id": A, "submission_id": "x", "index": 0, "total": 1,
                 "base_url": "", "student": "attacker", "last_name": "", "first_name": "", "notebook_path": ""}
    path = report["course"] / "autograded" / "attacker" / A / f"{A}.ipynb"
    html, _ = HTMLExporter(config=config).from_filename(str(path), resources=resources)
    assert "link:" in html
    assert [found for found in active_content(html) if MARK in found] == []   # the page's own onclick stays
