"""Generate the student notebooks in ``book/exercises/`` from the sources in ``solutions/``.

    python -m course_authoring.exercises         # rewrite every student notebook (then commit them)
    python -m course_authoring.exercises a2_dot_product   # only that one

This is ``nbgrader generate_assignment`` for every assignment, run in a scratch
course directory so that no gradebook is touched; ``tests/course_authoring/test_exercises.py``
runs the same function and fails when ``book/exercises/`` is out of date.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from course_grader.nbgrader_api import load_config, make_api
from course_grader.nbgrader_patches import use_fast_alembic_head

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions"
EXERCISES = ROOT / "book" / "exercises"   # the student notebooks are pages of the book


def assignments() -> list[str]:
    return sorted(p.name for p in SOLUTIONS.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))


def generate(destination: Path, names: list[str] | None = None) -> list[Path]:
    """Release ``names`` (default: all) into ``destination``; returns the notebooks written."""
    destination = Path(destination).resolve()
    with tempfile.TemporaryDirectory(prefix="release-") as scratch:
        config = load_config(Path(scratch), config_file=ROOT / "nbgrader_config.py")
        use_fast_alembic_head()
        config.CourseDirectory.release_directory = str(destination)
        api = make_api(config, Path(scratch))
        for name in names or assignments():
            result = api.generate_assignment(name, force=True, create=True)
            if not result["success"]:
                raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{result.get('log')}"
                                   f"\n{result.get('error')}")
    return sorted(destination.glob("*/*.ipynb"))


if __name__ == "__main__":
    names = sys.argv[1:] or assignments()
    # Only the named assignments are replaced: naming one leaves the others as they are.
    for name in names:
        shutil.rmtree(EXERCISES / name, ignore_errors=True)
    for path in generate(EXERCISES, names):
        print(path.relative_to(ROOT))
