"""Every file or folder of the repository that the book and the docs name in code exists.

Code is code font (`` `book/exercises/` ``) and code blocks, comments included; a
path is a word of it with a slash that ends in a slash or a file extension, wherever
it stands in a command (`` `.venv/bin/jupyter lab book/exercises/` ``).  A
placeholder (``<assignment>``), a wildcard (``*``) or ``NN_topic`` stands for any
name: such a path must match at least one that exists.  In a code block laid out as
a tree (a folder at the start of a line, what it holds described after it, as in the
README), a path may also lie in a folder that starts an earlier line.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("*.md"), *(ROOT / "book").glob("*.md"), *(ROOT / "book" / "chapters").glob("*.md")])
#: made by a build, by grading or by set-up, not kept in the repository
GENERATED = ("_build/", ".venv/", "grading/", "submissions", "feedback/", "submitted/", "autograded/",
             "logs/", "COURSE_DIR", "inbound/")
CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
CODE_BLOCK = re.compile(r"^(```|~~~)[^\n]*\n(.*?)^\1", re.MULTILINE | re.DOTALL)
WORD = re.compile(r"[A-Za-z_.<][\w.<>*-]*/[\w./<>*-]*")
EXTENSION = re.compile(r"\.(py|md|json|bib|yml|toml|txt|ipynb|npz|cff|sh)$")


def code_texts(text: str):
    """The code of a page: its code blocks, then its code spans outside them."""
    blocks = list(CODE_BLOCK.finditer(text))
    yield from (block.group(2) for block in blocks)
    outside = CODE_BLOCK.sub("", text)
    yield from (span.group(1) for span in CODE_SPAN.finditer(outside))


def named_paths(text: str):
    """(path, folders it may lie in) for every repository path the code of ``text`` names.

    The folders are the root and, in a tree, the folders that start earlier lines.
    """
    for code in code_texts(text):
        folders = [""]
        for line in code.splitlines():
            for position, word in enumerate(line.split()):
                word = word.strip("'\"(),;:")
                if not WORD.fullmatch(word) or "://" in word or word.startswith(GENERATED) \
                        or ".zip/" in word:   # a file inside an instructor's upload
                    continue
                if EXTENSION.search(word) or word.endswith("/"):
                    yield word, tuple(folders)
                if position == 0 and line.startswith(word) and word.endswith("/"):
                    folders.append(word)


def exists(path: str, folders=("",)) -> bool:
    pattern = re.sub(r"NN_\w+", "[0-9][0-9]_*", re.sub(r"<[^>]*>", "*", path)).rstrip("/")
    for folder in folders:
        if pattern != path.rstrip("/") or "*" in pattern:
            if any(ROOT.glob(folder + pattern)):
                return True
        elif (ROOT / folder / pattern).exists():
            return True
    return False


def missing_paths(text: str) -> list[str]:
    return [path for path, folders in named_paths(text) if not exists(path, folders)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_named_paths_exist(page):
    missing = missing_paths(page.read_text())
    assert not missing, f"{page.name} names paths that do not exist: {missing}"


@pytest.mark.parametrize("text", [
    "pick `exercises/<assignment>/<assignment>.ipynb` in Colab",      # a placeholder
    "`.venv/bin/jupyter lab exercises/` opens the notebooks",         # a path inside a command
    "```bash\npython -m course_authoring.exercises   # into exercises/\n```\n",  # a comment
    "the chapters are `book/chapter/NN_topic.md`",                     # NN, in a wrong folder
])
def test_a_path_that_does_not_exist_is_found(text):
    assert missing_paths(text)


def test_the_paths_that_exist_are_found_and_pass():
    text = ("`book/exercises/<assignment>/<assignment>.ipynb`, `.venv/bin/jupyter lab book/exercises/`,"
            " `book/chapters/NN_topic.md`\n```bash\nmake   # writes _build/html/ from book/_toc.yml\n```\n")
    assert sorted(path for path, _ in named_paths(text)) == sorted([
        "book/exercises/<assignment>/<assignment>.ipynb", "book/exercises/", "book/chapters/NN_topic.md",
        "book/_toc.yml"])
    assert missing_paths(text) == []


def test_a_tree_names_paths_in_its_folders():
    tree = "```\nbook/        the book: chapters/ and exercises/\nscripts/     chapters/ are not here\n```\n"
    assert missing_paths(tree) == []
    assert missing_paths("```\nscripts/     what builds: chapters/\n```\n") == ["chapters/"]
