"""Package trained runs of the course seed, so that a cold build loads them instead of training.

After ``make book``, with the names the chapters give ``trained_model``::

    .venv/bin/python scripts/package_runs.py rnn-no-attention ch14-vit ...

copies the cache entries that the build asked for under those names into
``attention_course/data/runs/`` and removes older packaged entries of the same
names (:mod:`attention_course.training.packaged_runs`).  With ``--again``, the
names already packaged: what to run after changing a packaged run's recipe
(the book's tests say when that is needed).  Package only runs that take long
to train and little room to keep: every entry is part of the repository.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("ATTENTION_COURSE_CACHE", str(ROOT / "_build" / "course_cache"))

from attention_course.training import packaged_runs  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="run names, as the chapters give them to trained_model")
    parser.add_argument("--again", action="store_true", help="also every name already packaged")
    args = parser.parse_args(argv)
    names = list(args.names)
    if args.again:
        names += [packaged_runs.ENTRY.fullmatch(entry.name)["name"]
                  for entry in packaged_runs.packaged_entries()]
    names = sorted(set(names))
    if not names:
        parser.error("name the runs to package, or pass --again")
    try:
        written = packaged_runs.package(names)
    except (LookupError, FileNotFoundError) as error:
        print(f"package_runs: {error}", file=sys.stderr)
        return 2
    for entry in packaged_runs.packaged_entries():
        size = sum(file.stat().st_size for file in entry.iterdir())
        mark = "new" if entry in written else "   "
        print(f"{mark} {entry.relative_to(ROOT)}  {size / 2**20:.1f} MiB")
    total = sum(file.stat().st_size for entry in packaged_runs.packaged_entries()
                for file in entry.iterdir())
    print(f"{len(packaged_runs.packaged_entries())} packaged runs, {total / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
