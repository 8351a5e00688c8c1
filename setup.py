"""The package's build, as pyproject.toml describes it, plus the course practice feedback reads.

Practice feedback (``course_grader.practice``) runs an assignment's hidden tests
and catalogue of mistakes on a student's own notebook, wherever the course is
installed; so the package carries, as ``course_grader/practice_course/``, the
course's ``nbgrader_config.py`` and the assignments' source folders
(``solutions/``: the reference solutions, the hidden tests, the catalogues).
A course that keeps its solutions private sets ``practice-feedback = false``
under ``[tool.course-grader]`` in pyproject.toml: then nothing of them is
installed.
"""

import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLE = Path("course_grader") / "practice_course"


#: ``[tool.course-grader] practice-feedback`` (on unless it says false): the rule practice itself
#: reads it by (``course_grader.practice.enabled``; its module needs only the standard library at import)
practice_enabled = runpy.run_path(str(ROOT / "course_grader" / "practice.py"))["enabled"]


def practice_files(root: Path) -> list[tuple[Path, Path]]:
    """``(source, path inside the package)`` of everything practice feedback needs; none when it is off."""
    if not practice_enabled((root / "pyproject.toml").read_text()):
        return []
    files = [(root / "nbgrader_config.py", BUNDLE / "nbgrader_config.py")]
    for path in sorted((root / "solutions").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and ".ipynb_checkpoints" not in path.parts:
            files.append((path, BUNDLE / path.relative_to(root)))
    return files


class BuildWithPracticeCourse(build_py):
    def run(self):
        super().run()
        for source, inside in practice_files(ROOT):
            target = Path(self.build_lib) / inside
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


if __name__ == "__main__":
    setup(cmdclass={"build_py": BuildWithPracticeCourse})
