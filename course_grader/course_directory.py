"""What a grading run writes into the course directory besides the grades: put back if it stops early,
and the configuration it graded with, for nbgrader's own commands.

Before the first student is graded, a run writes the hidden tests' secret and
its fingerprint, and nbgrader writes the assignment into the gradebook.  If
that fails (a course's configuration names a header nbgrader cannot read, the
source notebook is broken), :class:`FirstWrites` puts every one of those files
back as it was, and removes the folders the run made: no half-written
gradebook, no secret of a run that graded nothing.

After grading, the instructor runs nbgrader's own commands on the course
directory (``generate_feedback`` after grading by hand, ``export``, the
formgrader).  They must use the configuration the run used: this course's
grading pipeline, another course's own configuration on top, the source folder
and course id given on the command line.  :func:`write_configuration` writes
that configuration into the course directory as ``nbgrader_config.py``, the
file nbgrader reads from the folder it runs in, and :func:`nbgrader_command`
prints a command that runs there, with this environment's interpreter, from
wherever the instructor is.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

#: The first line of a configuration this module wrote (one without it is the instructor's: kept)
WRITTEN_BY = "# Written by `python -m course_grader`"
#: Where the configuration goes when the course directory already holds an instructor's own
OWN_CONFIGURATION = "course_grader_config.py"


class FirstWrites:
    """The files a run writes before it grades, kept as they were so that a failure can put them back."""

    def __init__(self, course_dir: Path, files: list[Path], scratch: Path, created: list[Path]):
        self.course_dir, self.created = Path(course_dir), list(created)
        self.folders = [self.course_dir / name for name in (".release", ".exchange")]
        self.folders_before = {folder: folder.exists() for folder in self.folders}
        self.saved: dict[Path, Path | None] = {}
        for number, path in enumerate(files):
            path = Path(path)
            if path.is_file():
                kept = Path(scratch) / f"before-{number}-{path.name}"
                shutil.copy2(path, kept)
                self.saved[path] = kept
            else:
                self.saved[path] = None

    def undo(self) -> None:
        """Every file back as it was, and the folders this run made gone."""
        for path, kept in self.saved.items():
            if kept is None:
                path.unlink(missing_ok=True)
            else:
                shutil.copy2(kept, path)
        for folder in self.folders:
            if not self.folders_before[folder]:
                shutil.rmtree(folder, ignore_errors=True)
        if self.course_dir in self.created:
            shutil.rmtree(self.course_dir, ignore_errors=True)
            for folder in self.created:        # the parents this run made, deepest first, now empty
                if folder != self.course_dir and folder.is_dir() and not any(folder.iterdir()):
                    folder.rmdir()


def write_configuration(course_dir: Path, *, config_file: Path | None, course: dict | None,
                        course_config: Path | None, limits: dict | None) -> Path:
    """Write the run's nbgrader configuration into ``course_dir``; returns the file.

    It is built by the same call the run's was (:func:`course_grader.nbgrader_api.load_config`), so
    the two cannot differ.  An ``nbgrader_config.py`` the instructor put there is kept: then the file
    is :data:`OWN_CONFIGURATION`, which nbgrader's commands are given by name.
    """
    from .nbgrader_api import CONFIG_FILE

    course_dir = Path(course_dir).resolve()
    target = course_dir / "nbgrader_config.py"
    if target.exists() and not target.read_text(errors="replace").startswith(WRITTEN_BY):
        target = course_dir / OWN_CONFIGURATION
    arguments = {"course_dir": str(course_dir),
                 "config_file": str(Path(config_file or CONFIG_FILE).resolve()),
                 "course": {key: str(value) for key, value in (course or {}).items() if value is not None},
                 "course_config": str(Path(course_config).resolve()) if course_config else None,
                 "limits": {key: value for key, value in (limits or {}).items() if value is not None}}
    target.write_text(
        f"{WRITTEN_BY} for nbgrader's own commands on this course directory:\n"
        "# the configuration the run graded with (its pipeline, the course's own configuration on top,\n"
        "# its source folder and course id).  Written again at each run.\n"
        "from course_grader.nbgrader_api import load_config\n\n"
        "c = get_config()  # noqa: F821 (given by traitlets when it reads this file)\n"
        f"c.merge(load_config(**{arguments!r}))\n")
    return target


def nbgrader_command(course_dir: Path, configuration: Path, *words: str) -> str:
    """A shell command that runs ``nbgrader WORDS`` on ``course_dir`` with its written configuration, from
    any folder and without an activated environment (this environment's interpreter, by its path)."""
    course_dir = Path(course_dir).resolve()
    command = [sys.executable, "-m", "nbgrader", *words]
    if configuration.name == OWN_CONFIGURATION:     # beside the instructor's own, named
        command.append(f"--JupyterApp.config_file={configuration.with_suffix('')}")
    return f"cd {shlex.quote(str(course_dir))} && {shlex.join(command)}"
