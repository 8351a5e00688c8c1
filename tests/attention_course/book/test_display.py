"""Showing the course's code in a chapter: plain (show_source) or as a folded solution (show_solution)."""

import base64
import html
import inspect
import re

import pytest

from attention_course.book.display import show_solution, show_source
from attention_course.softmax import softmax


def test_show_source_prints_the_code():
    assert show_source(softmax)._repr_markdown_() == f"```python\n{inspect.getsource(softmax).strip()}\n```"


def test_a_solution_is_not_in_the_page_text_until_decoded():
    page = show_solution(softmax)._repr_html_()
    code = inspect.getsource(softmax)
    lines = [line.strip() for line in code.splitlines() if len(line.strip()) > 10]
    assert not any(line in html.unescape(page) for line in lines)
    assert "<summary>Show the solution (softmax)</summary>" in page
    assert page.count("def softmax") == 0
    encoded = re.search(r'data-encoded="([^"]+)"', page).group(1)
    decoded = base64.b64decode(encoded).decode()
    assert 'class="highlight"' in decoded                      # highlighted as the theme's code blocks
    assert html.unescape(re.sub(r"<[^>]+>", "", decoded)).strip() == code.strip()


def test_show_solution_needs_something_to_show():
    with pytest.raises(ValueError, match="at least one"):
        show_solution()
