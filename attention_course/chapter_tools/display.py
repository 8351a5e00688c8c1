"""Showing the course's own source code inside a chapter.

A chapter explains a function and then calls it from the package.  To keep one
source of truth, the chapter does not paste the code: it shows the package's
code with :func:`show_source`, so what the reader sees is what the tests check.
The course's version of a function that an assignment grades is shown with
:func:`show_solution` instead: folded, and kept out of the page's searchable text.

Both print what a reader needs and no more (:func:`readable_source`): the
decorators, the signature, the docstring's first sentence and the code with
its comments.  The rest of a docstring (arguments, returns, the chapter that
explains it) stays in the package for ``help()``.  A function whose arguments
are checked is printed as its plain code under one ``@checked(check_...)``
line, which says that the checks exist and where they are
(:mod:`attention_course.checks` explains why they live there).  Printed lines
fit the book's code box, :data:`CODE_WIDTH` characters
(``tests/book/test_printed_code.py`` holds every chapter's calls to it).
"""

from __future__ import annotations

import ast
import base64
import inspect
import re
import textwrap

#: The width of the book's code box, in characters: what a cell output's code block
#: shows without scrolling in the theme's widest layout (sphinx-book-theme 1.3 on
#: pydata-sphinx-theme 0.17, a window 1408 px or wider).  The page is 88rem = 1408 px;
#: less the 20 % left sidebar, the 17rem "On this page" column, the article's
#: 2rem + 2rem padding, the output's 1em indent and the code block's 1rem + 1rem
#: padding, 742 px remain, for code set at 0.875 x 16 px = 14 px in a monospace font
#: 0.6 em wide (DejaVu Sans Mono, Menlo, Source Code Pro): 742 / 8.4 = 88 characters.
#: Read from the built site's stylesheets; a narrower window scrolls sooner.
CODE_WIDTH = 88


def _summary(raw: str) -> str:
    """The first paragraph of a docstring's source text, on one line, as plain text, in its quotes."""
    prefix = raw[: len(raw) - len(raw.lstrip("rRuUbBfF"))]
    body = raw[len(prefix):]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    text = body[len(quote): len(body) - len(quote)]
    paragraph = []
    for line in textwrap.dedent(text.lstrip("\n")).strip().splitlines():
        if not line.strip():
            break
        paragraph.append(line.strip())
    summary = _plain(" ".join(paragraph))
    if summary.endswith(quote[0]):  # a closing quote right after a quoted word
        summary += " "
    return f"{prefix}{quote}{summary}{quote}"


def _plain(text: str) -> str:
    """Docstring mark-up as plain text: no double back-quotes; a role (:func: ...) keeps its target."""
    text = re.sub(r":[\w:]+:`~[\w.]*?(\w+)`", r"\1", text)
    text = re.sub(r":[\w:]+:`([^`]+)`", r"\1", text)
    return re.sub(r"``(.+?)``", r"\1", text)


def readable_source(obj) -> str:
    """The source of a function, method or class as a chapter prints it.

    Every docstring in it (the object's own, its methods', its nested
    functions') is cut to its first paragraph, on one line; everything else
    (decorators, signature, code, comments) is printed as it is written.
    """
    source = textwrap.dedent(inspect.getsource(obj))
    lines = source.splitlines()
    replacements = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                start, end = first.lineno - 1, first.end_lineno
                line = lines[start]
                indent = line[: len(line) - len(line.lstrip())]
                raw = ast.get_source_segment(source, first.value)
                if line.strip().startswith(raw.split("\n")[0].strip()):  # the docstring starts its line
                    replacements.append((start, end, indent + _summary(raw)))
    for start, end, text in sorted(replacements, reverse=True):
        lines[start:end] = [text]
    return "\n".join(lines).strip("\n")


class Source:
    """Python source rendered as a highlighted code block (Markdown output).

    Markdown, not HTML, so that Jupyter Book renders it with the theme's own
    highlighting and copy button, and Jupyter or Colab with theirs.
    """

    def __init__(self, code: str):
        self.code = textwrap.dedent(code).strip("\n")

    def _repr_markdown_(self) -> str:
        return f"```python\n{self.code}\n```"

    def __repr__(self) -> str:
        return self.code


def _sources(objects) -> str:
    return "\n\n\n".join(readable_source(obj) for obj in objects)


def show_source(*objects) -> Source:
    """The source of functions or classes, one after another, as :func:`readable_source` prints it."""
    if not objects:
        raise ValueError("show_source needs at least one function or class")
    return Source(_sources(objects))


class Solution:
    """A graded function's solution, folded, and out of the page's text until the reader unfolds it.

    The highlighted code (as :func:`show_source` prints it) is written into the
    page base64-encoded and decoded by a few lines of script when the reader
    opens the fold, so that searching the book (its search box, or the text of
    its pages) for a function an assignment grades does not turn up the answer.
    """

    def __init__(self, objects):
        self.names = [obj.__name__ for obj in objects]
        self.code = Source(_sources(objects)).code

    def _repr_html_(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        code = highlight(self.code, PythonLexer(), HtmlFormatter(cssclass="highlight"))
        encoded = base64.b64encode(f'<div class="highlight-python notranslate">{code}</div>'.encode()).decode()
        return (f'<details class="course-solution"><summary>Show the solution ({", ".join(self.names)})'
                f'</summary><div class="course-solution-code" data-encoded="{encoded}">'
                f'<noscript>(the solution is shown with JavaScript; without it, read it in the '
                f'package: <code>attention_course</code>)</noscript></div></details><script>{_REVEAL}</script>')

    def __repr__(self) -> str:
        return f"the solution of {', '.join(self.names)}: print(inspect.getsource(...)) shows it"


# Decode a solution when its fold is first opened (every fold of the page, once each).
_REVEAL = """document.querySelectorAll("details.course-solution:not([data-bound])").forEach(function (d) {
  d.setAttribute("data-bound", "true");
  d.addEventListener("toggle", function () {
    var box = d.querySelector(".course-solution-code");
    if (!d.open || !box.hasAttribute("data-encoded")) return;
    var bytes = Uint8Array.from(atob(box.getAttribute("data-encoded")), function (c) { return c.charCodeAt(0); });
    box.innerHTML = new TextDecoder().decode(bytes);
    box.removeAttribute("data-encoded");
  });
});"""


def show_solution(*objects) -> Solution:
    """The source of functions an assignment grades, folded and hidden from search (:class:`Solution`).

    A chapter calls it after the Markdown that links to the assignment, so that a
    reader can try the exercise first.
    """
    if not objects:
        raise ValueError("show_solution needs at least one function or class")
    return Solution(objects)
