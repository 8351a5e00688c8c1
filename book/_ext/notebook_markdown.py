"""A chapter's MyST Markdown as the plain Markdown a notebook shows.

The site reads MyST: glued numbers, glossary terms, citations, figure and
equation references, admonitions and answers that fold.  Jupyter, Colab and
Binder render CommonMark with HTML and MathJax, and would show every
``{glue:text}`` role and ``:::`` fence as literal text.  So the published
``.ipynb`` of a chapter has its Markdown cells converted here, each construct
into what the site shows:

* ``{glue:text}`key:fmt``` -> the value, formatted as on the site (myst-nb's
  own ``format_plain_text``), marked as the book's run;
* ``{term}``, ``{doc}``, ``{ref}`` -> a link to that place on the published site;
* ``{cite}`a,b``` -> ``[Author et al., 2017, ...]``, each a link to its
  entry on the bibliography page;
* ``{numref}`` and ``{eq}`` -> the number the site shows (``Fig. 11.2``,
  ``(11.3)``), and a labelled equation gets that number as its ``\\tag``;
* admonitions -> a blockquote with the title in bold; answers and other
  dropdowns -> a collapsed ``<details>`` block;
* ``{figure}`` -> the image itself, embedded in the cell as a ``data:`` URI
  (no file, no network: see :func:`figure_image` for why this form), and its
  caption below it, numbered as on the site (``Fig. 11.1: ...``);
* ``(label)=`` targets -> nothing.

A figure drawn by a code cell has its number and caption in the cell's
metadata (``mystnb: figure: {name, caption}``), which Jupyter does not show:
:func:`code_figure_caption` writes them as the Markdown of a cell that the
notebook places after the code cell (``course_notebooks``), numbered as on
the site.

:class:`References` holds what the site knows (numbers, anchors, glued values);
``course_sphinx`` fills it from the Sphinx build.  Anything left unresolved is
an error naming the role, so a new construct cannot slip through silently.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

ROLE = re.compile(r"\{(glue:text|glue|term|cite|cite:p|doc|ref|numref|eq)\}`([^`]+)`")
#: a role whose content goes on past the end of the line (MyST reads it across the line break)
OPEN_ROLE = re.compile(r"\{(glue:text|glue|term|cite|cite:p|doc|ref|numref|eq)\}`[^`]*$")
FENCE = re.compile(r"^(?P<fence>:{3,}|`{3,})\{(?P<name>[a-z-]+)\}\s*(?P<title>.*)$")
OPTION = re.compile(r"^:(?P<key>[a-z-]+):\s*(?P<value>.*)$")
TARGET = re.compile(r"^\([\w-]+\)=\s*$")
LABELLED_EQUATION_END = re.compile(r"^\$\$\s*\((?P<label>[\w-]+)\)\s*$")
TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
ADMONITIONS = {"admonition", "note", "tip", "hint", "important", "warning", "caution",
               "attention", "danger", "error", "seealso", "dropdown"}
#: what a glued value is marked with (the title shows on hovering it)
GLUE_TITLE = "from the book's own run; yours may differ slightly"
#: the images a ``{figure}`` may show, by file suffix
IMAGE_TYPES = {".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg",
               ".jpeg": "image/jpeg", ".gif": "image/gif"}


class UnresolvedReference(ValueError):
    """A MyST role or directive that the conversion cannot turn into Markdown."""


@dataclass
class References:
    """What the built site shows for each reference, as the conversion needs it.

    ``site`` is the published site's URL (ending in ``/``); every target below
    is a path on it with its anchor (``glossary.html#term-Attention``).
    """

    site: str
    glue: dict[str, str] = field(default_factory=dict)        # key -> text/plain of the value
    terms: dict[str, str] = field(default_factory=dict)       # lower-cased term -> target
    citations: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (label, target)
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)     # label -> (title, target)
    figures: dict[str, str] = field(default_factory=dict)     # label -> "Fig. 11.2"
    equations: dict[str, str] = field(default_factory=dict)   # label -> "11.3"
    pages: dict[str, str] = field(default_factory=dict)       # docname -> title

    def url(self, target: str) -> str:
        return self.site + target


def author_year(persons: list[str], year: str) -> str:
    """``["Vaswani", "Shazeer", ...], "2017"`` -> ``Vaswani et al., 2017`` (the site's style)."""
    if len(persons) == 1:
        names = persons[0]
    elif len(persons) == 2:
        names = f"{persons[0]} and {persons[1]}"
    else:
        names = f"{persons[0]} et al."
    return f"{names}, {year}"


def _format_glue(text: str, fmt: str) -> str:
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(text, fmt)


def _title_and_target(content: str) -> tuple[str | None, str]:
    match = TITLED.fullmatch(content.strip())
    if match:
        return match["text"].strip(), match["target"].strip()
    return None, content.strip()


def _docname(target: str, docname: str) -> str:
    """A ``{doc}`` target (``/status``, ``../intro``, ``02_attention_as_lookup``) as a docname."""
    if target.startswith("/"):
        return target.lstrip("/")
    parts = docname.split("/")[:-1] + target.split("/")
    resolved: list[str] = []
    for part in parts:
        if part == "..":
            resolved.pop()
        elif part not in ("", "."):
            resolved.append(part)
    return "/".join(resolved)


def convert_role(kind: str, content: str, refs: References, docname: str) -> str:
    """One role as Markdown (raises UnresolvedReference if the site has no such target)."""
    def missing(what):
        return UnresolvedReference(f"{docname}: {{{kind}}}`{content}`: {what}")

    if kind in ("glue:text", "glue"):
        key, _, fmt = content.partition(":")
        if key not in refs.glue:
            raise missing("no value was glued under this name")
        value = _format_glue(refs.glue[key], fmt or "s") if kind == "glue:text" else refs.glue[key]
        return f'<span title="{GLUE_TITLE}">{value}</span>'
    if kind == "term":
        text, term = _title_and_target(content)
        target = refs.terms.get(term.lower())
        if target is None:
            raise missing("not a term of the glossary")
        return f"[{text or term}]({refs.url(target)})"
    if kind in ("cite", "cite:p"):
        links = []
        for key in (k.strip() for k in content.split(",")):
            if key not in refs.citations:
                raise missing(f"no bibliography entry {key!r}")
            label, target = refs.citations[key]
            links.append(f"[{label}]({refs.url(target)})")
        return "[" + ", ".join(links) + "]"
    if kind == "doc":
        text, target = _title_and_target(content)
        name = _docname(target, docname)
        if name not in refs.pages:
            raise missing("no such page")
        return f"[{text or refs.pages[name]}]({refs.url(name + '.html')})"
    if kind == "ref":
        text, label = _title_and_target(content)
        if label not in refs.labels:
            raise missing("no such label")
        title, target = refs.labels[label]
        return f"[{text or title}]({refs.url(target)})"
    if kind == "numref":
        text, label = _title_and_target(content)
        if label not in refs.figures:
            raise missing("no numbered figure with this label")
        number = refs.figures[label]
        if text:  # "{numref}`Figure %s <fig-x>`" or "{number}"
            return text.replace("%s", number.split()[-1]).replace("{number}", number.split()[-1])
        return number
    if kind == "eq":
        if content not in refs.equations:
            raise missing("no numbered equation with this label")
        return f"({refs.equations[content]})"
    raise missing("this role has no notebook equivalent")


def convert_roles(line: str, refs: References, docname: str) -> str:
    # a role's content may span a line break, which reads as a space
    return ROLE.sub(lambda m: convert_role(m[1], " ".join(m[2].split()), refs, docname), line)


def _closing(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing the fence opened at ``start`` (same character, at least as long)."""
    char, length = fence[0], len(fence)
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped and set(stripped) == {char} and len(stripped) >= length:
            return index
    raise UnresolvedReference(f"the {fence} fence opened at line {start + 1} is never closed")


def _options(inner: list[str]) -> tuple[list[str], dict[str, str]]:
    """A directive's body without its leading ``:key: value`` lines, and those options."""
    options = {}
    while inner and OPTION.match(inner[0]):
        option = OPTION.match(inner[0])
        options[option["key"]] = option["value"]
        inner = inner[1:]
    return inner, options


def _admonition(name: str, title: str, options: dict[str, str], body: list[str]) -> list[str]:
    title = title.strip() or name.capitalize()
    classes = options.get("class", "").split()
    if name == "dropdown" or "dropdown" in classes:
        return ["<details>", f"<summary><b>{title}</b></summary>", "", *body, "", "</details>"]
    quoted = [f"> {line}" if line.strip() else ">" for line in body]
    return [f"> **{title}**", ">", *quoted]


def figure_image(path: Path, alt: str) -> str:
    """An image file as an ``<img>`` whose ``src`` is the file itself, as a base64 ``data:`` URI.

    Why this form.  A cell attachment (``![alt](attachment:x.svg)``, the file
    in the cell's ``attachments``) would be the notebook's own way, but
    JupyterLab and Notebook 7 (one renderer, ``AttachmentsResolver`` in
    ``@jupyterlab/attachments``) resolve an attachment only if its type is a
    safe raster type (PNG, JPEG, GIF, BMP, WebP): an SVG attachment shows as a
    broken image (jupyterlab/jupyterlab#10464); and Colab renders no
    attachment at all (googlecolab/colabtools#3836).  An ``<img>`` with a
    ``data:`` URI is rendered by JupyterLab and Notebook 7, offline, from the
    notebook alone: their sanitizer leaves ``src`` unchecked
    (jupyterlab/jupyterlab#5183) and their URL resolver leaves ``data:`` URLs
    alone.  A raw ``<img>`` tag rather than Markdown's ``![alt](data:...)``:
    markdown-it based renderers accept ``data:`` link targets for raster
    images only (jupyter-book/mystmd#855).  Colab shows no SVG in a Markdown
    cell in any form (googlecolab/colabtools#2092); there, the number in the
    caption links to the figure on the published site.
    """
    suffix = path.suffix.lower()
    if suffix not in IMAGE_TYPES:
        raise UnresolvedReference(f"{path.name}: a notebook cannot embed a {suffix} image")
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img src="data:{IMAGE_TYPES[suffix]};base64,{data}" alt="{html.escape(alt)}">'


def _figure(target: str, options: dict[str, str], caption: list[str], refs: References,
            docname: str, page_dir: Path | None) -> list[str]:
    """A ``{figure}`` as the embedded image, then its caption numbered as on the site.

    Options that only lay the page out (``:width:``, ``:align:``) have no
    equivalent: the image keeps its own size, which a notebook shrinks to fit.
    """
    where = f"{docname}: the figure {target}"
    if caption and caption[0].strip() == "---":
        raise UnresolvedReference(f"{where}: write its options as :key: value lines")
    label = options.get("name")
    if not label:
        raise UnresolvedReference(f"{where} has no :name:, so no number to show")
    if label not in refs.figures:
        raise UnresolvedReference(f"{where}: {label!r} is not a numbered figure of the site")
    if page_dir is None:
        raise UnresolvedReference(f"{where}: the page's folder is unknown, so is the image")
    path = page_dir / target
    if not path.is_file():
        raise UnresolvedReference(f"{where}: no such image file")
    number = _numbered(label, refs)
    while caption and not caption[0].strip():
        caption = caption[1:]
    while caption and not caption[-1].strip():
        caption = caption[:-1]
    text = [f"**{number}:** {caption[0]}" if caption else f"**{number}**", *caption[1:]]
    return [figure_image(path, options.get("alt", "")), "", *text]


def _numbered(label: str, refs: References) -> str:
    """A figure's number as the site shows it, linked to the figure on the site where known."""
    number = refs.figures[label]
    if label in refs.labels:   # where the image does not render (Colab), the site's figure
        number = f"[{number}]({refs.url(refs.labels[label][1])})"
    return number


def code_figure_caption(metadata: dict, refs: References, docname: str,
                        page_dir: Path | None = None) -> str | None:
    """The caption of a figure that a code cell draws, numbered as on the site; None if none.

    ``metadata`` is the code cell's metadata; its ``mystnb.figure`` holds the
    figure's ``name`` (its label) and ``caption`` (MyST Markdown, converted).
    """
    figure = (metadata.get("mystnb") or {}).get("figure")
    if not figure:
        return None
    label = figure.get("name")
    where = f"{docname}: the figure of a code cell"
    if not label:
        raise UnresolvedReference(f"{where} has no name, so no number to show")
    if label not in refs.figures:
        raise UnresolvedReference(f"{where}: {label!r} is not a numbered figure of the site")
    caption = convert_markdown(str(figure.get("caption", "")).strip(), refs, docname, page_dir)
    return f"**{_numbered(label, refs)}:** {caption}" if caption else f"**{_numbered(label, refs)}**"


def convert_lines(lines: list[str], refs: References, docname: str,
                  page_dir: Path | None = None) -> list[str]:
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = FENCE.match(line)
        if fence and fence["name"] == "figure":
            end = _closing(lines, index, fence["fence"])
            inner, options = _options(lines[index + 1:end])
            caption = convert_lines(inner, refs, docname, page_dir)
            out.extend(_figure(fence["title"].strip(), options, caption, refs, docname,
                               page_dir))
            index = end + 1
            continue
        if fence and fence["name"] in ADMONITIONS:
            end = _closing(lines, index, fence["fence"])
            inner, options = _options(lines[index + 1:end])
            body = convert_lines(inner, refs, docname, page_dir)
            while body and not body[0].strip():
                body = body[1:]
            while body and not body[-1].strip():
                body = body[:-1]
            title = convert_roles(fence["title"], refs, docname)
            out.extend(_admonition(fence["name"], title, options, body))
            index = end + 1
            continue
        if fence:
            raise UnresolvedReference(f"{docname}: the directive {{{fence['name']}}} has no "
                                      "notebook equivalent")
        if TARGET.match(line):
            index += 1
            continue
        labelled = LABELLED_EQUATION_END.match(line)
        if labelled:
            label = labelled["label"]
            if label not in refs.equations:
                raise UnresolvedReference(f"{docname}: the equation {label!r} has no number")
            out.extend([f"\\tag{{{refs.equations[label]}}}", "$$"])
            index += 1
            continue
        # a role that opens on this line and closes on a later one: convert the lines together
        end = index
        while OPEN_ROLE.search(lines[end]) and end + 1 < len(lines) and lines[end + 1].strip():
            end += 1
        out.extend(convert_roles("\n".join(lines[index:end + 1]), refs, docname).split("\n"))
        index = end + 1
    return out


def convert_markdown(text: str, refs: References, docname: str,
                     page_dir: Path | None = None) -> str:
    """A Markdown cell of the page ``docname``, with every MyST construct converted.

    ``page_dir``, the folder of the page's source file, is where the images
    of its figures are found (their paths are relative to it).
    """
    lines = convert_lines(text.split("\n"), refs, docname, page_dir)
    while lines and not lines[0].strip():  # a cell that held only a target
        lines = lines[1:]
    return "\n".join(lines)


#: What no converted notebook may contain: any of these would show as literal MyST.
MYST_SYNTAX = re.compile(
    r"\{[a-z:-]+\}`"                 # a role
    r"|^(:{3,}|`{3,})\{[a-z-]+\}"    # a directive fence
    r"|^:{3,}\s*$"                   # a colon fence closing
    r"|^\([\w-]+\)=\s*$"             # a target
    r"|^\$\$\s*\([\w-]+\)",          # an equation label
    re.M)
