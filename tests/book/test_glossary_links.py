"""Every glossary term a chapter uses is linked, with ``{term}``, where the chapter first uses it.

A reader who opens a chapter in the middle meets its words for the first time
there, so each chapter links each term of ``book/glossary.md`` at its first use
in the chapter's prose, however often an earlier chapter linked it.  This test
reads the prose of every chapter (not its code, maths, headings or the targets
of its roles and links), finds every use of every term and of the other names
an entry lists (any capitalisation, a simple plural: *heads*, *queries*), and
asks that the first use of each entry be inside a ``{term}`` role pointing to
it.  Where a longer term contains a shorter one (*multi-head attention*,
*attention*), the longer one is the word used.  Every ``{term}`` role must name
an entry of the glossary too: an unknown term is a warning, which fails the
strict build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "book" / "glossary.md"
CHAPTERS = sorted((ROOT / "book" / "chapters").glob("*.md"))

#: Directives whose body is running text (after their option lines); the body of any
#: other directive (code cells, maths, raw output) is not prose.  Nor is a figure's
#: caption: a caption sums up a picture in words the text around it introduces (and
#: links), and a role in a caption has to survive the conversion of the figure for
#: the published notebook.
PROSE_DIRECTIVES = {"admonition", "note", "tip", "hint", "important", "warning", "caution",
                    "attention", "danger", "error", "seealso", "dropdown", "margin",
                    "sidebar", "topic", "epigraph", "card", "tab-set", "tab-item", "div",
                    "table", "list-table"}
FENCE = re.compile(r"^\s*(?P<fence>`{3,}|:{3,})\s*(?:\{(?P<name>[^}]+)\})?(?P<rest>.*)$")
OPTION = re.compile(r"^\s*:[\w-]+:")
#: a role on one line (the notebook conversion reads roles line by line, so one that
#: runs over a line break would show as literal MyST in the published notebook)
ROLE = re.compile(r"\{(?P<name>[\w:.-]+)\}(?P<ticks>`+)(?P<content>.*?)(?P=ticks)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
#: maths in a paragraph, which may run over a line break but not over a blank line
INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\\n]|\n(?![ \t]*\n))+?\$")
DISPLAY_MATH_ON_ONE_LINE = re.compile(r"\$\$.*?\$\$")
LINK_TARGET = re.compile(r"(?<=\])\([^()\s]*(?:\s+\"[^\"]*\")?\)|(?<=\])\[[^\]]*\]")
HTML = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>|<https?://[^<>]*>")
TITLED = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
#: a word goes on through letters, digits and hyphens: "attention" is not used in
#: "self-attention" or "attention-based", which are other words
BEFORE, AFTER = r"(?<![\w-])", r"(?![\w-])"
#: between the words of a term: white space, line breaks, emphasis ("**local** attention"),
#: or a hyphen ("exact-match accuracy")
BETWEEN = r"(?:[*_]*\s+[*_]*|-)"
#: Names that are also everyday words, and the text before a use that marks the
#: everyday sense ("" where nothing does: "a one-layer value", "small negative
#: values" cannot be told from the attention term, so "value" is never asked for).
#: Such a use is not a use of the term; link the word by hand where it is one.  A
#: {term} role naming them is still checked.
EVERYDAY = {"value": "",
            "sequence to sequence": r"\bfrom\s+$"}   # "varies from sequence to sequence"


@dataclass(frozen=True)
class Entry:
    """One entry of the glossary: its term lines, the first one shown, the others other names."""

    names: tuple[str, ...]

    @property
    def name(self) -> str:
        return self.names[0]


def glossary_entries(text: str) -> list[Entry]:
    """The entries of the ``{glossary}`` directive in ``text``: consecutive term lines share one."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^(`{3,}|:{3,})\{glossary\}", line))
    fence = FENCE.match(lines[start])["fence"]
    entries, names = [], []
    for line in lines[start + 1:]:
        if line.strip() and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
            break
        if not line.strip() or (OPTION.match(line) and not entries and not names):
            continue
        if line[0].isspace():
            if names:
                entries.append(Entry(tuple(names)))
                names = []
            continue
        # "term : classifier" gives the term before " : " (Sphinx's glossary syntax)
        names.append(line.split(" : ")[0].strip())
    return entries


def term_pattern(name: str) -> str:
    """A name as a regular expression: its words, any white space between them, a simple plural."""
    *words, last = name.split()
    if re.search(r"[^aeiou]y$", last, re.I):
        last_pattern = re.escape(last[:-1]) + r"(?:y|ies)"
    elif re.search(r"(s|x|z|ch|sh)$", last, re.I):
        last_pattern = re.escape(last) + r"(?:es)?"
    elif re.search(r"[a-z]$", last, re.I):
        last_pattern = re.escape(last) + r"s?"
    else:
        last_pattern = re.escape(last)
    return BEFORE + BETWEEN.join([*map(re.escape, words), last_pattern]) + AFTER


def _blank(text: str, start: int, end: int) -> str:
    """``text`` with ``[start, end)`` turned into spaces, its line breaks kept."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def _prose_line(line: str, lineno: int, roles: list[tuple[int, int, str, str]]) -> str:
    """A line of prose with everything that is not running text blanked (same length).

    ``{term}`` roles are recorded in ``roles`` as ``(line, column, text, target)``
    and blanked too, like every other role, inline code, link targets and HTML (maths
    is blanked paragraph by paragraph, since it may run over a line break).
    """
    for match in ROLE.finditer(line):
        if match["name"] == "term":
            titled = TITLED.fullmatch(match["content"].strip())
            text, target = ((titled["text"], titled["target"]) if titled
                            else (match["content"], match["content"]))
            roles.append((lineno, match.start(), text.strip(), target.strip()))
    for pattern in (ROLE, INLINE_CODE, LINK_TARGET, HTML):
        for match in pattern.finditer(line):
            line = _blank(line, match.start(), match.end())
    return line


def _closing(lines: list[str], start: int, fence: str) -> int:
    char, length = fence[0], len(fence)
    for index in range(start + 1, len(lines)):
        stripped = lines[index].strip()
        if stripped and set(stripped) == {char} and len(stripped) >= length:
            return index
    return len(lines)


def prose(lines: list[str]) -> tuple[list[str], list[tuple[int, int, str, str]]]:
    """The running text of a MyST page, line for line (the rest blank), and its ``{term}`` roles.

    Not prose: the front matter, headings, targets ``(label)=``, comments, jupytext
    cell markers, code cells and other fenced blocks that are not Markdown, the
    titles and option lines of directives, figure captions, display and inline
    maths, inline code, every role's content other than a ``{term}``'s (recorded
    apart), link targets and HTML.  Admonitions and dropdowns are prose.
    """
    out = [""] * len(lines)
    roles: list[tuple[int, int, str, str]] = []

    def walk(first: int, last: int) -> None:
        index = first
        while index < last:
            line = lines[index]
            stripped = line.strip()
            fence = FENCE.match(line)
            if fence and (fence["name"] or fence["fence"][0] == "`"):
                end = min(_closing(lines, index, fence["fence"]), last)
                if (fence["name"] or "").strip() in PROSE_DIRECTIVES:
                    body = index + 1
                    if body < end and lines[body].strip() == "---":   # options as YAML
                        body = next((i for i in range(body + 1, end) if lines[i].strip() == "---"),
                                    end - 1) + 1
                    while body < end and OPTION.match(lines[body]):
                        body += 1
                    walk(body, end)
                index = end + 1
                continue
            if stripped.startswith("$$") and not DISPLAY_MATH_ON_ONE_LINE.search(stripped):
                index = next((i for i in range(index + 1, last)
                              if lines[i].strip().startswith("$$")), last) + 1
                continue
            if stripped.startswith("<!--") and "-->" not in stripped:
                index = next((i for i in range(index, last) if "-->" in lines[i]), last) + 1
                continue
            if (stripped.startswith(("#", "%", "+++")) or re.match(r"^\([\w-]+\)=$", stripped)):
                index += 1
                continue
            out[index] = _prose_line(line, index + 1, roles)
            index += 1

    start = 0
    if lines and lines[0].strip() == "---":   # the jupytext front matter
        start = next(i for i in range(1, len(lines)) if lines[i].strip() == "---") + 1
    walk(start, len(lines))
    text = "\n".join(out)
    for pattern in (DISPLAY_MATH_ON_ONE_LINE, INLINE_MATH):
        for match in pattern.finditer(text):
            text = _blank(text, match.start(), match.end())
    return text.split("\n"), roles


@dataclass(frozen=True)
class Use:
    line: int
    column: int
    text: str
    linked: bool


def uses(lines: list[str], entries: list[Entry]) -> tuple[dict[Entry, list[Use]], list[str]]:
    """Every use of every entry in the prose, in order, and the ``{term}`` roles naming no entry."""
    text_lines, roles = prose(lines)
    by_name = {name.lower(): entry for entry in entries for name in entry.names}
    found: dict[Entry, list[Use]] = {entry: [] for entry in entries}
    unknown = []
    for lineno, column, text, target in roles:
        entry = by_name.get(target.lower())
        if entry is None:
            unknown.append(f"line {lineno}: {{term}}`{text}` names no glossary entry ({target!r})")
        else:
            found[entry].append(Use(lineno, column, text, linked=True))
    text = "\n".join(text_lines)
    starts = [0]
    for line in text_lines:
        starts.append(starts[-1] + len(line) + 1)
    matches = []
    for entry in entries:
        for name in entry.names:
            everyday = EVERYDAY.get(name.lower())
            if everyday == "":
                continue
            for match in re.finditer(term_pattern(name), text, re.I):
                if everyday and re.search(everyday, text[max(0, match.start() - 40):match.start()]):
                    continue
                matches.append((match.start(), -(match.end() - match.start()), match.end(), entry))
    matches.sort(key=lambda m: m[:2])
    covered = -1
    for start, _, end, entry in matches:   # the longest name where names overlap
        if start < covered:
            continue
        covered = end
        lineno = next(i for i in range(len(starts) - 1) if starts[i + 1] > start)
        words = " ".join(re.sub(r"[*_]", " ", text[start:end]).split())
        found[entry].append(Use(lineno + 1, start - starts[lineno], words, linked=False))
    for entry in found:
        found[entry].sort(key=lambda use: (use.line, use.column))
    return found, unknown


def _role(use: Use, entry: Entry) -> str:
    """The role to write for an unlinked use: the words as written, the name they are a form of."""
    name = next((name for name in entry.names
                 if re.fullmatch(term_pattern(name), use.text, re.I)), entry.name)
    if use.text.lower() == name.lower():
        return f"{{term}}`{use.text}`"
    return f"{{term}}`{use.text} <{name[0].lower() + name[1:] if name[1:].islower() else name}>`"


ENTRIES = glossary_entries(GLOSSARY.read_text())


def test_the_glossary_is_read():
    names = {name for entry in ENTRIES for name in entry.names}
    assert {"Attention", "Teacher forcing", "Encoder-decoder", "Sequence to sequence"} <= names
    assert len(names) == len({name.lower() for name in names}), "a term is in the glossary twice"


def entry(name: str) -> Entry:
    return next(entry for entry in ENTRIES if name in entry.names)


def first_uses(page: str) -> dict[str, Use]:
    found, unknown = uses(page.splitlines(), ENTRIES)
    assert unknown == []
    return {entry.name: its_uses[0] for entry, its_uses in found.items() if its_uses}


def test_the_prose_leaves_out_code_maths_headings_and_roles():
    page = """---
jupytext: {}
---
(ch-x)=
# Attention in a heading
Prose with `attention` in code, $attention$ in maths, {cite}`attention` in a role
and [a link](attention.html), attention-based, <span class="attention">x</span>,
maths over a line break $\\sum_j
\\mathrm{attention}_j$.

```{code-cell} ipython3
attention = 1
```

$$
\\mathrm{attention}
$$ (eq-x)

```{figure} picture.svg
:name: fig-x
Attention in a caption.
```

:::{admonition} Attention
:class: attention
The first {term}`Attention <attention>` here.
:::
"""
    assert first_uses(page) == {"Attention": Use(26, 10, "Attention", linked=True)}


def test_a_use_is_a_whole_word_in_any_case_plural_or_emphasis_and_the_longest_name():
    page = """Multi-head attention (not attention alone) splits into heads;
the Queries and **local** attention; a key/value cache, self-attention.
The {term}`causal masks <causal mask>`, then a causal mask.
A value, a sequence to be read from sequence to sequence.
"""
    found = first_uses(page)
    assert found.pop("Multi-head attention") == Use(1, 0, "Multi-head attention", linked=False)
    assert found.pop("Attention") == Use(1, 26, "attention", linked=False)   # not column 11
    assert found.pop("Attention head") == Use(1, 55, "heads", linked=False)
    assert found.pop("Query") == Use(2, 4, "Queries", linked=False)
    assert found.pop("Local attention") == Use(2, 18, "local attention", linked=False)
    assert found.pop("KV cache") == Use(2, 39, "key/value cache", linked=False)   # not "key"
    assert found.pop("Self-attention") == Use(2, 56, "self-attention", linked=False)
    assert found.pop("Causal mask") == Use(3, 4, "causal masks", linked=True)
    assert found == {}    # "value" and "from sequence to sequence" are everyday words
    assert _role(Use(1, 55, "heads", False), entry("Head")) == "{term}`heads <head>`"
    assert _role(Use(2, 4, "Queries", False), entry("Query")) == "{term}`Queries <query>`"
    assert _role(Use(1, 0, "Multi-head attention", False), entry("Multi-head attention")) \
        == "{term}`Multi-head attention`"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.name)
def test_every_term_is_linked_where_the_chapter_first_uses_it(chapter):
    found, unknown = uses(chapter.read_text().splitlines(), ENTRIES)
    first = sorted(((its_uses[0], entry) for entry, its_uses in found.items()
                    if its_uses and not its_uses[0].linked), key=lambda pair: pair[0].line)
    unlinked = [f"{chapter.name}:{use.line}: {use.text!r} (glossary: {entry.name!r}) "
                f"is first used unlinked; write {_role(use, entry)}" for use, entry in first]
    assert not unknown, f"{chapter.name}: " + "; ".join(unknown)
    assert not unlinked, "\n".join(["terms first used without a {term} link:", *unlinked])


PAGES = sorted(path for path in (ROOT / "book").rglob("*.md") if "_build" not in path.parts)


@pytest.mark.parametrize("page", PAGES, ids=lambda path: str(path.relative_to(ROOT / "book")))
def test_every_term_role_names_a_glossary_entry(page):
    """An unknown term is a warning, and the build is strict; the glossary's own roles count too."""
    names = {name.lower() for entry in ENTRIES for name in entry.names}
    unknown = []
    for number, line in enumerate(page.read_text().splitlines(), 1):
        for match in ROLE.finditer(line):
            if match["name"] == "term":
                titled = TITLED.fullmatch(match["content"].strip())
                target = titled["target"] if titled else match["content"]
                if target.strip().lower() not in names:
                    unknown.append(f"{page.name}:{number}: {match[0]}")
    assert not unknown, "{term} roles that name no glossary entry:\n" + "\n".join(unknown)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.name)
def test_term_roles_stay_on_one_line(chapter):
    """A role broken over two lines is not converted for the published notebook."""
    broken = [f"{chapter.name}:{number}" for number, line in enumerate(chapter.read_text().splitlines(), 1)
              if re.search(r"\{term\}`[^`]*$", line)]
    assert not broken, f"a {{term}} role runs over a line break: {broken}"
