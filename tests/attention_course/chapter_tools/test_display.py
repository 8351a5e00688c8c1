"""Showing the course's code in a chapter: plain (show_source) or as a folded solution (show_solution).

Both print :func:`readable_source`: decorators, signature, the docstring's first
paragraph on one line, and the code with its comments.
"""

import ast
import base64
import html
import inspect
import re

import pytest

from attention_course.chapter_tools.display import CODE_WIDTH, readable_source, show_solution, show_source
from attention_course.softmax import softmax


def documented(x, y=1):
    """Add ``y`` to ``x``, as :func:`~operator.add` would,
    on two lines.

    Args:
        x: a number.
        y: another.

    Explained in chapter 0.
    """
    def helper(z):
        """A helper.

        With a long story.
        """
        return z  # the comment stays

    return helper(x) + y


class Documented:
    """A class.

    Its long description.
    """

    def method(self):
        """What it does.

        How.
        """
        return 1


def quoted():
    """Say "hello"

    Then more.
    """
    return "hello"


def test_show_source_prints_the_signature_a_one_line_summary_and_the_code():
    assert readable_source(documented) == '''def documented(x, y=1):
    """Add y to x, as add would, on two lines."""
    def helper(z):
        """A helper."""
        return z  # the comment stays

    return helper(x) + y'''
    assert show_source(documented)._repr_markdown_() == f"```python\n{readable_source(documented)}\n```"


def test_methods_keep_their_summaries_too():
    assert readable_source(Documented) == '''class Documented:
    """A class."""

    def method(self):
        """What it does."""
        return 1'''
    assert readable_source(Documented.method) == 'def method(self):\n    """What it does."""\n    return 1'


def test_a_summary_ending_in_a_quote_still_parses():
    ast.parse(readable_source(quoted))
    assert '"""Say "hello" """' in readable_source(quoted)


def test_a_checked_function_prints_as_its_plain_code():
    code = show_source(softmax).code
    assert code.splitlines()[:3] == [
        "@checked(check_softmax)",
        "def softmax(x, axis: int = -1, mask=None, temperature: float = 1.0) -> np.ndarray:",
        '    """Softmax of x along axis: exp(x_i / T) / sum_j exp(x_j / T)."""']
    assert "raise" not in code and "Args:" not in code
    assert max(len(line) for line in code.splitlines()) <= CODE_WIDTH
    assert "Explained in chapter 2" in softmax.__doc__          # help() still has all of it


def test_objects_are_printed_one_after_another():
    assert show_source(documented, quoted).code == \
        readable_source(documented) + "\n\n\n" + readable_source(quoted)


def test_a_solution_is_not_in_the_page_text_until_decoded():
    page = show_solution(softmax)._repr_html_()
    code = readable_source(softmax)
    lines = [line.strip() for line in (code + "\n" + inspect.getsource(softmax)).splitlines()
             if len(line.strip()) > 10]
    assert not any(line in html.unescape(page) for line in lines)
    assert "<summary>Show the solution (softmax)</summary>" in page
    assert page.count("def softmax") == 0
    encoded = re.search(r'data-encoded="([^"]+)"', page).group(1)
    decoded = base64.b64decode(encoded).decode()
    assert 'class="highlight"' in decoded                      # highlighted as the theme's code blocks
    assert html.unescape(re.sub(r"<[^>]+>", "", decoded)).strip() == code.strip()   # what show_source prints


def test_show_solution_needs_something_to_show():
    with pytest.raises(ValueError, match="at least one"):
        show_solution()
    with pytest.raises(ValueError, match="at least one"):
        show_source()
