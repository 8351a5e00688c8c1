"""Sphinx extension for the course site (loaded through ``_config.yml``).

1. **Notebooks for Colab, Binder and the download button.**  At the end of
   every build, ``course_notebooks.write_notebooks`` writes a clean ``.ipynb``
   of every chapter (and copies the exercise notebooks) into
   ``_build/html/notebooks/``, its Markdown converted from MyST to what a
   notebook renders (``notebook_markdown``), with the numbers, anchors and
   glued values of this build (``site_references``), each chapter's first code
   cell installing the course at the commit the site was built from
   (``course_notebooks.install_cell``).  The page's ``.ipynb`` download button points
   there.  Colab and Binder can only open notebooks that live in the GitHub
   repository, so their buttons point at the same paths on the branch
   ``course_notebooks_branch``, which the deploy workflow publishes: the
   repository with these notebooks laid next to the ``.md`` sources.
   (Jupyter Book's own buttons would open the raw ``.md`` in Colab.)

2. **How long each chapter takes.**  The directive ``course-chapter-times``
   becomes a table of the book's chapters, in reading order and grouped by
   part, with the reading time (words of prose / 200 per minute) and the
   execution time measured when the book was built (myst-nb's execution data,
   the same numbers as ``nb-exec-table``).

3. **The claims under several seeds.**  The directive ``course-claims-table``
   becomes the table that ``make claims`` wrote to
   ``attention_course/chapter_tools/claims_by_seed.json``:
   every claim about a trained result, its threshold, its value under each
   seed and its smallest margin.  A missing or unreadable file is a warning,
   so the strict build fails rather than publish a page without its table.

4. **Pages without script errors, that work offline.**  MathJax is served
   from the site itself (``sphinx-mathjax-offline``); this extension warns
   (so the strict build fails) when a page would load a script from the
   network, and writes each inline script once (see ``drop_duplicate_scripts``).

6. **No accessibility violations** (axe-core's WCAG 2 A and AA rules, which
   ``tests/site/test_site_accessibility.py`` runs on every page).  Two things
   the theme and docutils write are fixed as each page is written
   (:func:`accessible_page`): the sidebar's expanders (``<summary>``) get a
   name, and the bibliography's entries the role its list needs
   (``listitem``, not the deprecated ``doc-biblioentry``).  The search index
   reads maths as text and the glossary once (:func:`searchable_doctree`).

5. **A failed chapter still has a page.**  ``scripts/build_book.py`` caches a
   chapter that failed with the outputs its cells made up to the failure and
   names it in ``_build/failed-pages.json``; such a page gets, at its top, an
   error box saying which cell failed and why (:func:`mark_failed_page`), so
   that a reader or a reviewer has the rest of the book and knows what is missing.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import posixpath
import re
from html import escape, unescape
from pathlib import Path

from docutils import nodes
from sphinx.addnodes import pending_xref, toctree
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

# Jupyter Book puts this folder on sys.path (it is the extension's local_extensions path)
import course_notebooks  # the same code the deploy workflow runs
import notebook_markdown
from attention_course.chapter_tools import claims
from attention_course.seeding import course_seed

LOGGER = logging.getLogger(__name__)
WORDS_PER_MINUTE = 200
READING_KEY = "course_reading_words"
TABLE_KEY = "course_has_chapter_times"


# --- 1. notebooks -------------------------------------------------------------------

def _is_notebook(app: Sphinx, pagename: str) -> bool:
    return "kernelspec" in app.env.metadata.get(pagename, {})


def notebook_path(app: Sphinx, pagename: str) -> str:
    """Where a page's notebook lies, relative to the site root and to the notebooks branch."""
    return posixpath.join(app.config.course_notebooks_dir, f"{pagename}.ipynb")


def point_buttons_at_notebooks(app: Sphinx, pagename, templatename, context, doctree):
    """Rewrite the theme's download and launch buttons for a notebook page."""
    if not _is_notebook(app, pagename) or "header_buttons" not in context:
        return
    # the notebooks branch lays each .ipynb next to its source, in the book's folder
    book_dir = app.config.html_theme_options.get("path_to_docs", "").strip("/")
    relative_to_repo = posixpath.join(book_dir, f"{pagename}.ipynb")
    download_url = context["pathto"](notebook_path(app, pagename), 1)
    launch = app.config.html_theme_options.get("launch_buttons", {})
    repo_url = app.config.html_theme_options.get("repository_url", "").rstrip("/")
    org, repo = repo_url.rsplit("/", 2)[-2:]
    branch = app.config.course_notebooks_branch
    interface = {"classic": "tree", "jupyterlab": "lab/tree"}[
        launch.get("notebook_interface", "classic")]
    urls = {
        "Colab": f"{launch.get('colab_url', '').rstrip('/')}/github/{org}/{repo}/blob/"
                 f"{branch}/{relative_to_repo}",
        "Binder": f"{launch.get('binderhub_url', '').rstrip('/')}/v2/gh/{org}/{repo}/"
                  f"{branch}?urlpath={interface}/{relative_to_repo}",
    }
    for group in context["header_buttons"]:
        if group.get("label") == "download-buttons":
            buttons = group["buttons"]
            notebook_buttons = [b for b in buttons if b.get("label") == "download-notebook-button"]
            if not notebook_buttons:  # the theme adds it only when launch buttons are on
                notebook_buttons = [{"type": "link", "text": ".ipynb", "icon": "fas fa-code",
                                     "tooltip": "Download notebook file",
                                     "label": "download-notebook-button"}]
                buttons.insert(0, notebook_buttons[0])
            notebook_buttons[0]["url"] = download_url
            # A page written as a notebook (the exercises) would also offer its
            # source, the same .ipynb a second time: one download is enough.
            group["buttons"] = [b for b in buttons if b is notebook_buttons[0]
                                or not str(b.get("url", "")).endswith(".ipynb")]
        elif group.get("label") == "launch-buttons":
            for button in group["buttons"]:
                if button.get("text") in urls:
                    button["url"] = urls[button["text"]]


def site_references(app: Sphinx) -> notebook_markdown.References:
    """What the built site shows for every term, citation, label, figure and equation."""
    from pybtex.richtext import Text
    from docutils.nodes import make_id

    env = app.env
    references = notebook_markdown.References(site=app.config.html_baseurl.rstrip("/") + "/")
    std = env.get_domain("std")
    for (kind, name), (docname, anchor) in std.objects.items():
        if kind == "term":
            references.terms[name.lower()] = f"{docname}.html#{anchor}"
    figure_format = app.config.numfig_format["figure"]
    for label, (docname, anchor, title) in std.labels.items():
        references.labels[label] = (title, f"{docname}.html#{anchor}")
        number = env.toc_fignumbers.get(docname, {}).get("figure", {}).get(anchor)
        if number:
            references.figures[label] = figure_format % ".".join(map(str, number))
    for label, (docname, _) in env.get_domain("math").equations.items():
        number = env.toc_fignumbers.get(docname, {}).get("displaymath", {}).get(
            make_id(f"equation-{label}"))
        if number:
            text = ".".join(map(str, number))
            references.equations[label] = app.config.math_numsep.join(text.rsplit(".", 1))
    for citation in env.get_domain("cite").citations:
        entry = citation.entry
        names = [Text.from_latex(" ".join(person.last_names)).render_as("text")
                 for person in entry.persons.get("author", [])]
        references.citations[citation.key] = (
            notebook_markdown.author_year(names, entry.fields.get("year", "n.d.")),
            f"{citation.bibliography_key.docname}.html#{citation.citation_id}")
    references.pages = {docname: title.astext() for docname, title in env.titles.items()}
    return references


def page_glue(app: Sphinx, docname: str) -> dict[str, str]:
    """The values a page glued (myst-nb writes them next to the executed notebook)."""
    path = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.glue.json"
    if not path.exists():
        return {}
    return {key: output["data"]["text/plain"]
            for key, output in json.loads(path.read_text()).items()
            if "text/plain" in output.get("data", {})}


def write_site_notebooks(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir) / app.config.course_notebooks_dir
    shared = site_references(app)

    def references(docname: str) -> notebook_markdown.References:
        return dataclasses.replace(shared, glue=page_glue(app, docname))

    try:
        written = course_notebooks.write_notebooks(outdir, Path(app.srcdir), references)
    except notebook_markdown.UnresolvedReference as error:
        LOGGER.warning(f"[course] a published notebook would show MyST: {error}")
        return
    LOGGER.info(f"[course] {len(written)} notebooks in {outdir}, installing the course at "
                f"{course_notebooks.built_from(Path(app.srcdir))}")


def drop_duplicate_scripts(app: Sphinx, pagename, templatename, context, doctree):
    """Write each inline script once.

    Sphinx 7.4 adds a script registered after the builder started (sphinx-thebe's and
    sphinx-togglebutton's inline configuration) a second time when writing starts,
    once with the file name ``None`` and once with ``""``; the second copy of
    ``const THEBE_JS_URL = ...`` is a JavaScript error on every page.
    """
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def check_scripts_are_local(app: Sphinx, pagename, templatename, context, doctree):
    """Warn (and so fail the strict build) if a page would load a script from the network."""
    for script in context.get("script_files", []):
        filename = getattr(script, "filename", script) or ""
        if "://" in str(filename):
            LOGGER.warning(f"[course] {pagename} loads a script from the network: {filename}",
                           location=pagename)


# --- 2. chapter times ---------------------------------------------------------------

class ChapterTimesNode(nodes.General, nodes.Element):
    """Placeholder for the chapter table, filled once every chapter has executed."""


class ChapterTimes(SphinxDirective):
    """``course-chapter-times``: the chapters with reading and execution time."""

    def run(self):
        from myst_nb.sphinx_ import NbMetadataCollector

        NbMetadataCollector.set_doc_data(self.env, self.env.docname, TABLE_KEY, True)
        return [ChapterTimesNode()]


def count_words(app: Sphinx, doctree: nodes.document) -> None:
    """Store the number of words of prose (not code, outputs or maths) of a page."""
    from myst_nb.sphinx_ import NbMetadataCollector

    skip = (nodes.literal_block, nodes.math_block, nodes.math, nodes.raw, nodes.comment)

    def is_prose(node: nodes.Node) -> bool:
        parent = node.parent
        while parent is not None:
            if isinstance(parent, skip) or "cell_output" in parent.get("classes", []):
                return False
            parent = parent.parent
        return True

    words = sum(len(text.astext().split()) for text in doctree.findall(nodes.Text)
                if is_prose(text))
    NbMetadataCollector.set_doc_data(app.env, app.env.docname, READING_KEY, words)


def outdated_tables(app: Sphinx, env, added, changed, removed):
    """Rebuild the pages with a chapter table whenever any page is read again."""
    from myst_nb.sphinx_ import NbMetadataCollector

    if not (added or changed or removed):
        return []
    return [docname for docname, data in NbMetadataCollector.get_doc_data(env).items()
            if data.get(TABLE_KEY) and docname not in removed]


def _parts(env) -> list[tuple[str, list[str]]]:
    """(part caption, chapters in reading order) from the root page's toctrees."""
    root = env.get_doctree(env.config.root_doc)
    parts = []
    for tree in root.findall(toctree):
        chapters: list[str] = []

        def visit(docname: str) -> None:
            chapters.append(docname)
            for child in env.toctree_includes.get(docname, []):
                visit(child)

        for _, ref in tree["entries"]:
            if ref in env.all_docs:
                visit(ref)
        parts.append((tree.get("caption") or "", chapters))
    return parts


def _entry(*children) -> nodes.entry:
    return nodes.entry("", nodes.paragraph("", "", *children))


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


class ChapterTimesTransform(SphinxPostTransform):
    default_priority = 8  # before references are resolved, like myst-nb's nb-exec-table

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(ChapterTimesNode)):
            node.replace_self(self.table())

    def table(self) -> nodes.table:
        from myst_nb.sphinx_ import NbMetadataCollector

        data = NbMetadataCollector.get_doc_data(self.env)
        header = ["Chapter", "Reading", "Running"]
        table = nodes.table(classes=["colwidths-auto", "course-chapter-times"])
        group = nodes.tgroup(cols=len(header))
        table += group
        group.extend(nodes.colspec(colwidth=1) for _ in header)
        head = nodes.thead()
        head += nodes.row("", *(_entry(nodes.Text(h)) for h in header))
        body = nodes.tbody()
        group += [head, body]
        for caption, chapters in _parts(self.env):
            rows = []
            for docname in chapters:
                doc_data = data.get(docname, {})
                if docname == self.env.docname or not _is_notebook(self.app, docname):
                    continue
                link = pending_xref("", nodes.inline(text=""), refdoc=self.env.docname,
                                    reftarget="/" + docname, reftype="doc", refdomain="std",
                                    refexplicit=False, refwarn=True)
                words = doc_data.get(READING_KEY, 0)
                execution = doc_data.get("exec_data") or {}
                number = self.env.toc_secnumbers.get(docname, {}).get("")
                prefix = [nodes.Text(".".join(map(str, number)) + ". ")] if number else []
                rows.append(nodes.row("", _entry(*prefix, link),
                                      _entry(nodes.Text(f"{math.ceil(words / WORDS_PER_MINUTE)} min")),
                                      _entry(nodes.Text(_duration(execution.get("runtime"))))))
            if rows and caption:
                title = nodes.entry("", nodes.paragraph("", "", nodes.strong(text=caption)),
                                    morecols=len(header) - 1)
                body += nodes.row("", title, classes=["course-part"])
            body.extend(rows)
        return table


# --- 3. claims under several seeds -------------------------------------------------

# shipped with the package (a student's notebook reads it when a claim does not hold)
CLAIMS_TABLE = claims.TABLE


def _simple_table(header: list[str], rows: list[list[str]], classes: list[str]) -> nodes.table:
    table = nodes.table(classes=["colwidths-auto", *classes])
    group = nodes.tgroup(cols=len(header))
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in header)
    head, body = nodes.thead(), nodes.tbody()
    head += nodes.row("", *(_entry(nodes.Text(h)) for h in header))
    body.extend(nodes.row("", *(_entry(nodes.Text(cell)) for cell in row)) for row in rows)
    group += [head, body]
    return table


class ClaimsTable(SphinxDirective):
    """``course-claims-table``: ``claims_by_seed.json`` as a table, in chapter order.

    Beside the committed table's seeds, one column gives each claim's value in
    the pages of this site, as the build that made them measured it (their
    records in ``_build/claims``): the table was measured on one machine, the
    site may have been built on another, with other round-off.
    """

    def run(self):
        path = CLAIMS_TABLE
        self.env.note_dependency(str(path))
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            seeds, rows = data["seeds"], data["claims"]
        except (OSError, ValueError, KeyError) as error:
            LOGGER.warning("course-claims-table: cannot read %s (run `make claims`): %s",
                           CLAIMS_TABLE.name, error, location=self.get_location())
            return []
        built_seed, built = self.built_values()

        def show(value, fmt):
            return "missing" if value is None else format(value, fmt)

        def asserted(row):
            return row["op"] in (">", ">=", "<", "<=")

        def share(row):
            spread = row.get("spread")
            if not spread:
                return "-"
            return f"{row['margin'] / spread:.2f}"

        header = ["Claim", "Ch.", "What is measured", "Asserted", f"This site (seed {built_seed})",
                  *(f"Seed {s}" for s in seeds), "Smallest margin", "Margin / spread"]
        body = [[row["name"], str(row["chapter"]), row["about"],
                 f"{row['op']} {format(row['threshold'], row['fmt'])}" if asserted(row)
                 else "nothing (measured: varies)",
                 show(built.get(row["name"]), row["fmt"]),
                 *(show(row["values"].get(str(s)), row["fmt"]) for s in seeds),
                 (show(row["margin"], row["fmt"]) + ("" if row["holds"] else " (fails)"))
                 if asserted(row) else "-",
                 share(row) if asserted(row) else "-"]
                for row in rows]
        measured = data.get("measured", {})
        claims = [row for row in rows if asserted(row)]
        note = nodes.paragraph(text=(
            f"{len(claims)} claims, {sum(row['holds'] for row in claims)} holding under every seed, "
            f"and {len(rows) - len(claims)} measurements of what varies from run to run. "
            f"Seeds {seeds[0]}-{seeds[-1]} were measured on {measured.get('date', '?')} on "
            f"{measured.get('cores', '?')} cores of an {measured.get('cpu', '?')}; the column "
            f"'This site' is what the pages of this site measured when they were built."))
        table = _simple_table(header, body, ["course-claims"])
        # eight seeds do not fit a page's column: the table scrolls, and says so
        scroll = nodes.container(classes=["course-scroll"])
        scroll += table
        hint = nodes.paragraph(text="(The table scrolls sideways.)", classes=["course-scroll-hint"])
        return [note, hint, scroll]

    def built_values(self) -> tuple[int, dict[str, float]]:
        """The course seed of this build and the values its pages recorded (``_build/claims``)."""
        # the folder the build's kernels recorded into (book_build.build sets it for Sphinx too);
        # read through claims.load, which knows how records are laid out
        seed, folder = course_seed(), os.environ.get(claims.FOLDER_VARIABLE)
        if not folder:
            return seed, {}
        for record in sorted(Path(folder).rglob("*.json")):
            self.env.note_dependency(str(record))
        try:
            recorded = claims.load(Path(folder)).get(seed, {})
        except (OSError, ValueError, TypeError):    # a record of an older format: the column stays empty
            recorded = {}
        return seed, {name: checked.value for name, checked in recorded.items()}


# --- 6. accessibility ----------------------------------------------------------------

#: an entry of the bibliography, as docutils writes it (``<div class="citation" ... role="doc-biblioentry">``)
CITATION_ROLE = re.compile(r'(<div class="citation"[^>]*?) role="doc-biblioentry"')
#: the toggle of a folded code cell (hide-input), as myst-nb writes it: its label says "Toggle hidden
#: content" while it shows "Show code cell source", so a voice user saying what they see is not
#: understood (WCAG 2.5.3, label in name); without the label, its name is the text it shows
FOLDED_CELL_TOGGLE = '<summary aria-label="Toggle hidden content">'
#: a sidebar entry with pages under it, as pydata-sphinx-theme writes it: its link, then an
#: expander whose ``<summary>`` holds only an icon
SIDEBAR_EXPANDER = re.compile(r'(<a\b[^>]*>(?P<title>(?:(?!</a>).)*)</a>\s*<details\b[^>]*>\s*)<summary>', re.S)


def name_sidebar_expanders(html: str) -> str:
    """Give each sidebar ``<summary>`` (an icon only, no name for a screen reader) a name."""
    def named(match: re.Match) -> str:
        title = " ".join(re.sub(r"<[^>]+>", "", match["title"]).split())
        label = escape(f"Pages under {unescape(title)}", quote=True)
        return f'{match[1]}<summary aria-label="{label}">'

    return SIDEBAR_EXPANDER.sub(named, html)


def accessible_page(app: Sphinx, pagename, templatename, context, doctree):
    """Fix what the theme and docutils write that an accessibility check fails (see 6. above)."""
    if "body" in context:
        # The list of references (role="list") must hold list items: doc-biblioentry is
        # deprecated in WAI-ARIA 1.3 and not a list item.
        context["body"] = CITATION_ROLE.sub(r'\1 role="listitem"', context["body"])
        context["body"] = context["body"].replace(FOLDED_CELL_TOGGLE, "<summary>")
    generate = context.get("generate_toctree_html")
    if generate is not None and not getattr(generate, "course_named", False):
        def generate_named(*args, **kwargs):
            return name_sidebar_expanders(str(generate(*args, **kwargs)))

        generate_named.course_named = True
        context["generate_toctree_html"] = generate_named


# What a reader searches for is words: the search index reads a page's maths as text
# ("softmax(QKᵀ / √d_k)"), not as LaTeX ("mathrm", "frac", "sqrt" were words of the index),
# and the glossary once, as a page, not once more for every term it defines (each term was an
# index entry, listed above every page: "attention" found the glossary three times, first).
# course.js reads the maths of the snippets under each result the same way.

#: LaTeX commands read as a symbol
LATEX_SYMBOLS = {
    "top": "ᵀ", "cdot": "·", "times": "×", "in": "∈", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "neq": "≠", "approx": "≈", "sum": "Σ", "prod": "Π", "infty": "∞", "to": "→", "rightarrow": "→",
    "leftarrow": "←", "mapsto": "↦", "ldots": "…", "dots": "…", "cdots": "…", "odot": "⊙", "oplus": "⊕",
    "sqrt": "√", "mid": "|", "partial": "∂", "nabla": "∇", "pm": "±", "propto": "∝", "sim": "~",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ",
    "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ",
    "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
#: LaTeX commands that only style or space what follows: read as nothing
LATEX_SILENT = {
    "mathrm", "mathbf", "mathit", "mathcal", "mathsf", "mathtt", "mathbb", "boldsymbol", "bm", "text",
    "textrm", "textit", "textbf", "operatorname", "displaystyle", "textstyle", "scriptstyle", "left",
    "right", "big", "Big", "bigg", "Bigg", "hat", "tilde", "bar", "vec", "overline", "underbrace",
    "overbrace", "nonumber", "notag", "quad", "qquad", "label", "tag", "limits",
}


def _group(text: str, start: int) -> tuple[str, int]:
    """The ``{...}`` group (or single character) of LaTeX at ``start``: its content and its end."""
    while start < len(text) and text[start].isspace():
        start += 1
    if start >= len(text) or text[start] != "{":
        return text[start:start + 1], start + 1
    depth = 0
    for end in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return text[start + 1:end], end + 1
    return text[start + 1:], len(text)


def plain_maths(tex: str) -> str:
    """LaTeX as a reader would type it into a search box: ``\\mathrm{softmax}(QK^\\top)`` is
    ``softmax(QKᵀ)``, ``\\frac{a}{b}`` is ``(a)/(b)``; environments, spacing and font commands
    disappear.  (course.js does the same for the snippets of the search page.)"""
    text = re.sub(r"\\\\(\[[^\]]*\])?", " ", tex)          # line breaks, \\[2pt]
    text = re.sub(r"\\[()\[\]]|^\s*\$\$?|\$\$?\s*$", " ", text)   # delimiters: \( \) \[ \] $$
    text = re.sub(r"\\(begin|end)\{[^}]*\}|\\(label|tag)\{[^}]*\}", " ", text)
    while (found := re.search(r"\\[dt]?frac(?![A-Za-z])", text)):
        numerator, after = _group(text, found.end())
        denominator, after = _group(text, after)
        text = f"{text[:found.start()]}({numerator})/({denominator}){text[after:]}"
    text = re.sub(r"&|\\[,;:! ]|~", " ", text)
    text = re.sub(r"\\([{}_%#$])", r"\1", text)
    text = re.sub(r"\\([A-Za-z]+)",
                  lambda m: LATEX_SYMBOLS.get(m[1], "" if m[1] in LATEX_SILENT else m[1]), text)
    text = text.replace("{", "").replace("}", "").replace("^ᵀ", "ᵀ")
    return " ".join(text.split())


def searchable_doctree(doctree: nodes.document) -> nodes.document:
    """What the search index reads of a page: its maths as plain text, its glossary's terms
    without index entries of their own."""
    from sphinx import addnodes

    copy = doctree.deepcopy()
    for node in list(copy.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block)))):
        # (replace_self would refuse: a numbered equation's ids go with it, in this copy only)
        node.parent.replace(node, nodes.Text(f" {plain_maths(node.astext())} "))
    for glossary in copy.findall(addnodes.glossary):
        for entry in list(glossary.findall(addnodes.index)):
            entry.parent.remove(entry)
    return copy


def index_searchable_text(app: Sphinx) -> None:
    """Make the HTML builder index :func:`searchable_doctree` of each page (the page itself
    is written as it is)."""
    index_page = getattr(app.builder, "index_page", None)
    if index_page is None or getattr(index_page, "course_searchable", False):
        return

    def searchable_index_page(pagename, doctree, title):
        return index_page(pagename, searchable_doctree(doctree), title)

    searchable_index_page.course_searchable = True
    app.builder.index_page = searchable_index_page


# --- 5. failed pages ------------------------------------------------------------------

def failed_pages(app: Sphinx) -> dict[str, dict]:
    """``{docname: {"line", "source", "error", ...}}`` of the chapters that failed to execute."""
    path = Path(app.outdir).parent / "failed-pages.json"   # written by scripts/build_book.py
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def mark_failed_page(app: Sphinx, doctree: nodes.document) -> None:
    """Put an error box under the title of a page whose chapter failed to execute."""
    record = failed_pages(app).get(app.env.docname)
    if record is None:
        return
    where = f"the code cell at line {record.get('line')} of its source" if record.get("line") \
        else "a code cell"
    error = (record.get("error") or "").strip()
    last_line = error.splitlines()[-1] if error else "(no message)"
    box = nodes.error()
    box += nodes.paragraph(text=(
        f"This page did not build: {where} failed, so the outputs below stop there and the "
        "cells after it were not run."))
    box += nodes.paragraph("", "", nodes.strong(text=last_line))
    if error and error != last_line:
        box += nodes.paragraph(text="The traceback:")
        box += nodes.literal_block(text=error)
    if record.get("source"):
        box += nodes.paragraph(text="The cell:")
        box += nodes.literal_block(text=record["source"], language="ipython3")
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is not None and section.children and isinstance(section[0], nodes.title):
        section.insert(1, box)
    else:
        doctree.insert(0, box)


def setup(app: Sphinx) -> dict:
    app.add_config_value("course_notebooks_dir", "notebooks", "html")
    app.add_config_value("course_notebooks_branch", "notebooks", "html")
    # after the theme's own handlers (priority 501) have built the buttons
    app.connect("html-page-context", point_buttons_at_notebooks, priority=600)
    app.connect("html-page-context", drop_duplicate_scripts, priority=600)
    app.connect("html-page-context", check_scripts_are_local, priority=600)
    app.connect("html-page-context", accessible_page, priority=600)
    app.connect("builder-inited", index_searchable_text)
    app.connect("build-finished", write_site_notebooks)
    app.add_node(ChapterTimesNode)
    app.add_directive("course-chapter-times", ChapterTimes)
    app.add_post_transform(ChapterTimesTransform)
    app.add_directive("course-claims-table", ClaimsTable)
    app.connect("doctree-read", count_words)
    app.connect("doctree-read", mark_failed_page)
    app.connect("env-get-outdated", outdated_tables)
    # env_version: a build with an older environment reads and writes every page again, so
    # that the search index is made from every page as searchable_doctree reads it
    return {"version": "1.0", "env_version": 2, "parallel_read_safe": True, "parallel_write_safe": True}
