"""What a reader of the book must not see: the book's own machinery (issue 35).

The strict build asserts every trained number (``claim``), hands numbers to the
prose (``glue``) and seeds the chapter (``notebook.setup``), but in cells tagged
``remove-cell`` or ``remove-input``: a code block a reader sees holds what the
reader learns with.  The prose says nothing of make targets, caches, oneDNN,
graph rewrites or claim thresholds, except in folded notes (a dropdown
admonition, such as each training chapter's "How much do these numbers vary?").

Shared by ``tests/book/test_machinery_out_of_sight.py`` (the MyST sources: fails
without a build) and ``tests/site/test_site_machinery.py`` (the built HTML).
"""

from __future__ import annotations

import re

#: in a code block a reader sees: the machinery's calls and imports, and calls on the training cache
CODE = re.compile(
    r"\b(?:claim|measure|glue)\("
    r"|\bnotebook\.setup\b"
    r"|chapter_tools\.(?:claims|notebook)\b"
    r"|chapter_tools import [^\n]*\b(?:claims|notebook)\b"
    r"|training\.cache import (?!trained_model\s*$)"    # trained_model is how a chapter trains
    r"|\b(?:cache_dir|content_key|forget_page)\("
    r"|ATTENTION_COURSE_(?:CACHE|CLAIMS)", re.M)

#: in prose outside a folded note
PROSE = re.compile(
    r"`make\b|\bmake (?:claims|book|test|clean)\b"
    r"|\boneDNN\b|\bgraph rewrites?\b|\bGrappler\b|\bgraph optimi[sz]er\b"
    r"|\bthresholds?\b|\basserted[:;,]? (?:at least|at most)\b"
    r"|\bkeyed (?:on|by)\b|\b(?:course's|book's) cache\b|\bfrom the cache\b|\bin the cache instead\b"
    r"|\b(?:results|model|models|runs?) (?:is|are) cached\b", re.I)

#: a cache a chapter teaches (the key/value cache of decoding) or the CPU's
TAUGHT_CACHE = re.compile(r"\b(?:KV|key/value|key-value|CPU)[ -]caches?\b", re.I)
#: any cache at all, on a page that does not teach one
ANY_CACHE = re.compile(r"\bcach(?:e[sd]?|ing)\b", re.I)


def prose_problems(text: str, page_teaches_a_cache: bool) -> list[str]:
    """The phrases of ``text`` (prose outside folded notes) that talk about the machinery."""
    found = [m.group(0) for m in PROSE.finditer(text)]
    if not page_teaches_a_cache:
        found += [m.group(0) for m in ANY_CACHE.finditer(TAUGHT_CACHE.sub("", text))]
    return found


def teaches_a_cache(page_text: str) -> bool:
    return bool(TAUGHT_CACHE.search(page_text))


def code_problems(code: str) -> list[str]:
    """The machinery in a code block a reader sees: calls, imports, and talk of it in comments."""
    found = [m.group(0) for m in CODE.finditer(code)]
    comments = "\n".join(line.split("#", 1)[1] for line in code.splitlines() if "#" in line)
    return found + [m.group(0) for m in PROSE.finditer(comments)]
