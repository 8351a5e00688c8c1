"""A grading run's options: each declared once, with its help text; the command line is built from them.

:class:`GradingOptions` is what :func:`course_grader.grade.grade` takes (as
keywords, or as one object); :func:`add_arguments` puts its fields on an
``argparse`` parser (``python -m course_grader --help`` lists them with the
help text written here) and :func:`from_arguments` reads them back.  An option
is added in one place: a field of the class, with its flag and help.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path


def _shard(text: str) -> tuple[int, int]:
    """``K/N`` as ``(K, N)``, with 1 <= K <= N."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--shard takes K/N (e.g. 2/8), not {text!r}") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"--shard {text}: K must be between 1 and N")
    return k, n


def option(flag: str, help: str, default=None, **argparse_keywords):
    """A field that is also a command-line option: its ``flag``, ``help`` and ``argparse`` keywords."""
    return field(default=default, metadata={"flag": flag, "help": help, **argparse_keywords})


@dataclass(frozen=True)
class GradingOptions:
    """How one grading run grades (everything but what it grades: the submissions and the assignment)."""

    # -- which course ----------------------------------------------------------------------------------
    config_file: Path | None = option(
        "--config", "the course's nbgrader configuration (default: ./nbgrader_config.py)", type=Path)
    source_dir: Path | None = option(
        "--source-dir", "the course's nbgrader source folder, one subfolder per assignment "
        "(default: the configuration's CourseDirectory.source_directory)", type=Path)
    course_id: str | None = option("--course-id", "nbgrader course id (default: the configuration's)")
    course_config: Path | None = option(
        "--course-config", "another course's own nbgrader_config.py, read on top of --config: its settings "
        "win, except the grading pipeline (sandbox, re-check, feedback)", type=Path)
    course_dir: Path | None = option(
        "--course-dir", "nbgrader course directory for the gradebook and results "
        "(default: the configuration's CourseDirectory.root)", type=Path)
    csv_path: Path | None = option("--csv", "grades CSV (default: COURSE_DIR/grades-ASSIGNMENT.csv)", type=Path)
    # -- how to grade ----------------------------------------------------------------------------------
    workers: int | None = option(
        "--workers", "parallel workers (default: one per core, one more from 10 submissions per core)", type=int)
    student_regex: str | None = option(
        "--student-regex", "regex with a (?P<student>...) group, matched against each file's path inside "
        "SUBMISSIONS (a zip inside counts as a folder of its name), for names the command does not read "
        "itself; e.g. '^(?P<student>[^_]+)_'")
    cell_timeout: int | None = option("--cell-timeout", "seconds per cell", type=int)
    notebook_timeout: int | None = option("--notebook-timeout", "seconds per notebook", type=int)
    memory_mb: int | None = option("--memory-mb", "memory per submission, MiB", type=int)
    feedback: bool = option("--no-feedback", "skip the feedback HTML", default=True, action="store_false")
    secret_seed: str | None = option(
        "--secret-seed", "the secret hidden tests draw their inputs from (default: the file "
        ".hidden-tests-secret in the course directory, created if missing; give every shard of a run the "
        "same one)")
    new_secret: bool = option(
        "--new-secret", "grade although the course directory's students of the assignment were graded with "
        "another hidden-test secret (without it, such a run stops before writing anything)",
        default=False, action="store_true")
    shard: tuple[int, int] | None = option(
        "--shard", "grade only the K-th of N slices of the students (the same slices on every machine), "
        "into --course-dir; then `merge` the N course directories", type=_shard, metavar="K/N")
    python: str | None = option(
        "--python", "the course environment's interpreter (with ipykernel and numpy), which runs the "
        "students' notebooks in the sandbox (default: the grader's own)", metavar="PYTHON")
    quiet: bool = option("--quiet", "no progress bar or summary", default=False, action="store_true")

    @property
    def limits(self) -> dict:
        """The ``GradingLimits`` this run sets (None: the configuration's)."""
        return {"cell_timeout": self.cell_timeout, "notebook_timeout": self.notebook_timeout,
                "memory_mb": self.memory_mb}

    @property
    def course(self) -> dict:
        """The ``CourseDirectory`` settings this run overrides (None: the configuration's)."""
        return {"source_directory": Path(self.source_dir).resolve() if self.source_dir else None,
                "course_id": self.course_id}


#: Every option's name, in the order ``--help`` lists them
OPTIONS = tuple(spec.name for spec in dataclasses.fields(GradingOptions))
#: The options that say which course (``merge`` takes these too)
COURSE_OPTIONS = ("config_file", "source_dir", "course_id", "course_config", "course_dir", "csv_path")


def add_arguments(parser: argparse.ArgumentParser, names=None) -> None:
    """Put the options ``names`` (default: all) on ``parser``, each with its flag, help and default."""
    for spec in dataclasses.fields(GradingOptions):
        if names is not None and spec.name not in names:
            continue
        keywords = {key: value for key, value in spec.metadata.items() if key != "flag"}
        if "action" not in keywords:          # --course-dir COURSE_DIR, not the field's name
            keywords.setdefault("metavar", spec.metadata["flag"].lstrip("-").upper().replace("-", "_"))
        parser.add_argument(spec.metadata["flag"], dest=spec.name, default=spec.default, **keywords)


def from_arguments(args: argparse.Namespace) -> GradingOptions:
    """The options a parsed command line holds (those :func:`add_arguments` put on its parser)."""
    return GradingOptions(**{spec.name: getattr(args, spec.name) for spec in dataclasses.fields(GradingOptions)
                             if hasattr(args, spec.name)})


def as_arguments(options: GradingOptions) -> list[str]:
    """The command-line words that give ``options`` (paths absolute): what the command would be told."""
    words = []
    for spec in dataclasses.fields(GradingOptions):
        value = getattr(options, spec.name)
        if value == spec.default:
            continue
        flag = spec.metadata["flag"]
        if spec.metadata.get("action") in ("store_true", "store_false"):
            words.append(flag)
        elif spec.name == "shard":
            words += [flag, f"{value[0]}/{value[1]}"]
        else:
            words += [flag, str(Path(value).resolve() if isinstance(value, Path) else value)]
    return words
