"""Showing the course's own source code inside a chapter.

A chapter explains a function and then calls it from the package.  To keep one
source of truth, the chapter does not paste the code: it shows the package's
code with :func:`show_source`, so what the reader sees is what the tests check.
The course's version of a function that an assignment grades is shown with
:func:`show_solution` instead: folded, and kept out of the page's searchable text.
"""

from __future__ import annotations

import base64
import inspect
import textwrap


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


def show_source(*objects) -> Source:
    """The source of functions or classes, one after another."""
    if not objects:
        raise ValueError("show_source needs at least one function or class")
    return Source("\n\n\n".join(inspect.getsource(obj).rstrip() for obj in objects))


class Solution:
    """A graded function's solution, folded, and out of the page's text until the reader unfolds it.

    The highlighted code is written into the page base64-encoded and decoded by a
    few lines of script when the reader opens the fold, so that searching the
    book (its search box, or the text of its pages) for a function an
    assignment grades does not turn up the answer.
    """

    def __init__(self, objects):
        self.names = [obj.__name__ for obj in objects]
        self.code = Source("\n\n\n".join(inspect.getsource(obj).rstrip() for obj in objects)).code

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
