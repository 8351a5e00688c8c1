"""Every run the package ships was asked for by the book's build (issue 55: a cold build's time).

A packaged run (``attention_course/data/runs``) is loaded only while the code
asks for its exact key.  One that no chapter asks for any more (its recipe
changed) would cost every cold build its training time without a word; here
it fails, naming the script that packages it again.
"""

from __future__ import annotations

import os
from pathlib import Path

from attention_course.training import packaged_runs
from built_site import ROOT
from built_site import site  # noqa: F401  (fixture)


def test_every_packaged_run_was_asked_for_by_the_build(site):  # noqa: F811
    # the build's model cache: the Makefile's (or, under CPU=..., the profile's), else its default
    cache = Path(os.environ.get("ATTENTION_COURSE_CACHE", ROOT / "_build" / "course_cache"))
    unasked = packaged_runs.unasked(cache)
    assert not unasked, (
        f"no chapter of the built book asked for the packaged run(s) {unasked}: their recipes changed "
        "since they were packaged. Run `.venv/bin/python scripts/package_runs.py --again` after "
        "`make book`, and commit attention_course/data/runs")
