"""What an open project carries: its licences, how to cite it, its changelog, its FAQ.

``LICENSE`` (the code's, MIT, as ``pyproject.toml`` says), ``LICENSE-TEXT.md`` (the
book's text, CC BY 4.0, which the site's footer names), ``CITATION.cff`` (Citation
File Format 1.2.0), ``CHANGELOG.md`` (Keep a Changelog) and the book's FAQ page,
whose every command, file and variable exists in the repository.
(``cffconvert``, the format's own validator, requires jsonschema < 4, which the
book's pinned Jupyter stack cannot install beside it: the format's rules that
apply to this file are checked here instead.)
"""

from __future__ import annotations

import re
import tomllib
from datetime import date
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CONFIG = yaml.safe_load((BOOK / "_config.yml").read_text())
AUTHORS = "the Attention & Transformers course authors"
CC_BY = "https://creativecommons.org/licenses/by/4.0/"

# Citation File Format 1.2.0: its top-level keys, those it requires, and its work types.
CFF_KEYS = {"abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi",
            "identifiers", "keywords", "license", "license-url", "message", "preferred-citation",
            "references", "repository", "repository-artifact", "repository-code", "title", "type",
            "url", "version"}
CFF_REQUIRED = {"cff-version", "message", "title", "authors"}
# Keep a Changelog: the kinds of change a release lists.
CHANGE_KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def test_the_code_licence_is_mit_as_pyproject_says():
    text = (ROOT / "LICENSE").read_text()
    assert PROJECT["license"] == "MIT"
    assert text.splitlines()[0] == "MIT License"
    assert re.search(rf"^Copyright \(c\) \d{{4}} {re.escape(AUTHORS)}$", text, re.MULTILINE)
    for sentence in ("Permission is hereby granted, free of charge, to any person obtaining a copy",
                     "The above copyright notice and this permission notice shall be included in all",
                     'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR'):
        assert sentence in text


def test_the_book_text_licence_is_cc_by_and_the_footer_names_both():
    text = (ROOT / "LICENSE-TEXT.md").read_text()
    assert "CC BY 4.0" in text and CC_BY in text and "`LICENSE`" in text and AUTHORS in text
    footer = CONFIG["html"]["extra_footer"]
    assert "CC BY 4.0" in footer and f'href="{CC_BY}"' in footer
    assert f'href="{CONFIG["repository"]["url"]}/blob/main/LICENSE"' in footer and "MIT License" in footer


def test_citation_file_is_valid_cff_1_2_0():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert set(citation) <= CFF_KEYS and CFF_REQUIRED <= set(citation)
    assert citation["cff-version"] == "1.2.0"
    assert citation["type"] in ("software", "dataset")
    assert all(isinstance(citation[key], str) and citation[key].strip()
               for key in ("message", "title", "abstract", "version"))
    assert citation["authors"] and all(
        isinstance(a, dict) and ("name" in a or "family-names" in a) for a in citation["authors"])
    assert all(isinstance(k, str) and k for k in citation["keywords"])
    # what it says agrees with the project
    assert citation["title"] == CONFIG["title"]
    assert citation["authors"][0]["name"].lower() == AUTHORS.lower()
    assert citation["version"] == PROJECT["version"]
    assert citation["license"] == [PROJECT["license"], "CC-BY-4.0"]   # SPDX identifiers
    assert citation["repository-code"] == CONFIG["repository"]["url"]
    assert citation["url"] == CONFIG["html"]["baseurl"]


def test_changelog_keeps_a_changelog():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n") and "https://keepachangelog.com/en/1.1.0/" in text
    releases = re.findall(r"^## (.*)$", text, re.MULTILINE)
    assert releases and releases[0] == "[Unreleased]"
    for release in releases[1:]:
        found = re.fullmatch(r"\[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})", release)
        assert found, f"a release is '## [x.y.z] - YYYY-MM-DD', not {release!r}"
        date.fromisoformat(found[2])
    for section in re.split(r"^### ", text, flags=re.MULTILINE)[1:]:
        kind, _, body = section.partition("\n")
        assert kind in CHANGE_KINDS, kind
        assert re.search(r"^- \S", body.split("\n## ")[0], re.MULTILINE), f"an empty '{kind}'"


FAQ = BOOK / "faq.md"


def test_faq_is_a_short_page_of_the_book_on_what_goes_wrong():
    text = FAQ.read_text()
    assert "file: faq" in (BOOK / "_toc.yml").read_text()
    assert len(text.split()) < 1500
    headings = " ".join(re.findall(r"^## (.*)$", text, re.MULTILINE)).lower()
    for topic in ("slow", "not as in the book", "colab", "windows", "chromium", "grad"):
        assert topic in headings, topic


def repository_text() -> str:
    files = [*ROOT.glob("*/**/*.py"), *ROOT.glob("scripts/*.sh"), ROOT / "Makefile"]
    return "\n".join(p.read_text() for p in files
                     if not p.relative_to(ROOT).parts[0].startswith((".", "_build", "tests")))


def test_faq_names_only_what_exists():
    """Its environment variables are read by the code, its make targets are the Makefile's,
    and the line a chapter prints for a claim that does not hold is the one the code prints."""
    text, code = FAQ.read_text(), repository_text()
    variables = set(re.findall(r"`([A-Z][A-Z0-9]*_[A-Z0-9_]+|CHROMIUM)\b", text))
    assert {"ATTENTION_COURSE_CACHE", "ATTENTION_COURSE_SEED", "CHROMIUM", "ATTENTION_SANDBOX"} <= variables
    for variable in variables:
        assert re.search(rf"""["'{{$]{variable}\b""", code), f"no code reads ${variable}"
    makefile = (ROOT / "Makefile").read_text()
    for target in set(re.findall(r"`make (\w+)", text)):
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), f"no make target {target}"
    quoted = re.search(r'"(Not as in the book:)"', text)[1]
    assert f'"{quoted}' in (ROOT / "attention_course" / "chapter_tools" / "claims.py").read_text()
    assert "~/.cache/attention-course" in text and '".cache" / "attention-course"' in code


@pytest.mark.parametrize("name", ["LICENSE", "LICENSE-TEXT.md", "CITATION.cff", "CHANGELOG.md"])
def test_the_readme_names_the_project_files(name):
    assert f"`{name}`" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("path", ["grades.csv", "grading/grades.csv", "grades-a1_seq2seq.csv",
                                  "solutions/grades.csv", "grading/gradebook.db"])
def test_no_grades_file_can_be_committed_by_accident(path):
    """``nbgrader export`` writes ``grades.csv`` (names and scores) where it runs: never into git."""
    import subprocess

    ignored = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT)
    assert ignored.returncode == 0, f"{path} is not ignored by .gitignore"


def test_one_conftest_module_for_the_tests_that_import_from_it():
    """pytest imports every ``conftest.py`` as the module ``conftest``: ``from conftest import
    tolerance`` in a test reads whichever was imported last. A conftest.py collected before a test
    that imports from the top one broke a whole module once (tests/attention_course/training/);
    fixtures shared by a few files live in a module of their own (``from run_keys import run_key``).
    The one other conftest.py serves the tests beside it, collected after every test that imports
    from the top one."""
    found = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "tests").rglob("conftest.py"))
    assert found == ["tests/conftest.py", "tests/course_grader/preprocessors/conftest.py"], found
    importers = [path for path in (ROOT / "tests").rglob("test_*.py")
                 if re.search(r"^from conftest import", path.read_text(), re.M)]
    late = ROOT / "tests" / "course_grader" / "preprocessors"
    for path in importers:
        assert (path.parent == late) or str(path.relative_to(ROOT)) < str(late.relative_to(ROOT)), path
