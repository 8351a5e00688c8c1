"""Showing the course's own source code inside a chapter.

A chapter explains a function and then calls it from the package.  To keep one
source of truth, the chapter does not paste the code: it shows the package's
code with :func:`show_source`, so what the reader sees is what the tests check.
"""

from __future__ import annotations

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
