"""nbgrader, set up for grading: the course's configuration, the API on a course directory, the assignment.

What this course changes inside nbgrader, nbconvert, jsonschema and alembic
(speed-ups that give the same answers) is :mod:`course_grader.nbgrader_patches`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The course's nbgrader configuration: ``nbgrader_config.py`` in the folder grading runs from,
#: as for nbgrader's own commands.
CONFIG_FILE = "nbgrader_config.py"


#: What the grading pipeline is (``section``, ``trait``): kept from the grading configuration when
#: another course's own configuration is read on top of it (``course_config``)
PIPELINE = (("Autograde", "sanitize_preprocessors"), ("Autograde", "autograde_preprocessors"),
            ("GenerateFeedback", "preprocessors"), ("GenerateFeedback", "exporter_class"),
            ("SanitizeHTML", "enabled"), ("HTMLExporter", "sanitize_html"))


def load_config(course_dir: Path | None = None, limits: dict | None = None,
                config_file: Path | None = None, course: dict | None = None, course_config: Path | None = None):
    """The course's nbgrader configuration, with ``limits`` (``GradingLimits`` traits) set.

    ``config_file`` defaults to :data:`CONFIG_FILE` in the current folder;
    ``course_dir`` (where the gradebook and everything nbgrader writes go)
    defaults to the file's ``CourseDirectory.root``.  ``course_config``, another
    course's own ``nbgrader_config.py``, is read on top: its settings (source
    folder, course id, solution delimiters, files not overwritten, its root,
    its grading policy) win, except the grading pipeline (:data:`PIPELINE`);
    this course's forbidden modules do not carry over to it.
    """
    config_file = Path(config_file or CONFIG_FILE).resolve()
    if not config_file.is_file():
        raise SystemExit(f"no nbgrader configuration at {config_file}: run from the course's folder "
                         f"(where {CONFIG_FILE} is) or pass --config")
    config = _read_config(config_file)
    if course_config is not None:
        config = _layered(config, Path(course_config).resolve())
    if course_dir is not None:
        config.CourseDirectory.root = str(Path(course_dir).resolve())
    elif "root" not in config.CourseDirectory:
        raise SystemExit(f"{config_file} sets no CourseDirectory.root: pass --course-dir")
    for key, value in (course or {}).items():   # another course's source folder and id
        if value is not None:
            setattr(config.CourseDirectory, key, str(value))
    # The source folder, if relative, is the course directory's: say so once, absolutely, so that the
    # workers (which grade in shards of the course directory) find it too.
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(config=config)
    config.CourseDirectory.source_directory = str(Path(coursedir.root, coursedir.source_directory).resolve())
    # The grading reports stay the instructor's, whatever the course's own ignore list says
    from .report import REPORT_FILES

    ignored = list(config.CourseDirectory.get("ignore", CourseDirectory.ignore.default_value))
    config.CourseDirectory.ignore = ignored + [REPORT_FILES] * (REPORT_FILES not in ignored)
    limits = limits or {}
    for key, value in limits.items():
        if value is not None:
            setattr(config.GradingLimits, key, value)
    return config


def _read_config(path: Path):
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


def _layered(config, course_config: Path):
    """The grading configuration with another course's own read on top (see :func:`load_config`)."""
    if not course_config.is_file():
        raise SystemExit(f"--course-config {course_config}: no such file")
    try:
        theirs = _read_config(course_config)
    except Exception as error:  # noqa: BLE001 - the instructor's file: say which and why
        raise SystemExit(f"--course-config {course_config} could not be read: {type(error).__name__}: {error}")
    pipeline = {(section, trait): config[section][trait] for section, trait in PIPELINE
                if section in config and trait in config[section]}
    layered = config.copy()
    if "forbidden_modules" not in theirs.get("GradingPolicy", {}):
        layered.GradingPolicy.forbidden_modules = {}
    resolve_course_paths(theirs, course_config)
    layered.merge(theirs)
    for (section, trait), value in pipeline.items():
        layered[section][trait] = value
    return layered


#: The options nbgrader reads as files relative to the course's root (its converters run in that folder):
#: ``(section, trait)``.  The course directory's own folders (submitted, autograded, feedback) are
#: the grading run's, inside ``--course-dir``.
FILES_IN_THE_COURSE_ROOT = (("IncludeHeaderFooter", "header"), ("IncludeHeaderFooter", "footer"))


def resolve_course_paths(theirs, course_config: Path) -> None:
    """Make the path options of another course's own configuration absolute, as nbgrader resolves them
    for that course: its root relative to the folder of its ``nbgrader_config.py`` (where nbgrader runs),
    its source folder and the files of :data:`FILES_IN_THE_COURSE_ROOT` relative to that root.  A file
    that is not there stops the run here, before anything is written, saying which option names it."""
    folders = theirs.CourseDirectory if "CourseDirectory" in theirs else {}
    their_root = (course_config.parent / folders.get("root", ".")).resolve()
    if "root" in folders:
        theirs.CourseDirectory.root = str(their_root)
    if "source_directory" in folders:
        theirs.CourseDirectory.source_directory = str((their_root / folders["source_directory"]).resolve())
    for section, trait in FILES_IN_THE_COURSE_ROOT:
        value = theirs[section][trait] if section in theirs and trait in theirs[section] else ""
        if not value:
            continue
        path = (their_root / value).resolve()
        if not path.is_file():
            raise SystemExit(f"--course-config {course_config}: c.{section}.{trait} = {value!r} names {path}, "
                             "which is not a file (nbgrader reads it relative to the course's root, "
                             f"{their_root}); nothing was written")
        theirs[section][trait] = str(path)


def make_api(config, root: Path):
    import logging

    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    config = config.copy()
    config.CourseDirectory.root = str(root)
    # nbgrader's exchange (release/fetch/submit between accounts) is not used here; point it at a
    # folder of its own so that nbgrader does not complain about a missing system directory.
    (root / ".exchange").mkdir(parents=True, exist_ok=True)
    config.Exchange.root = str(root / ".exchange")
    # nbgrader runs the `alembic` command when it creates a gradebook: it lives next to this Python.
    bin_dir = os.path.dirname(sys.executable)
    if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
    # nbconvert checks the whole notebook against nbformat's schema after each of the pipeline's
    # preprocessors (eight times per notebook and step); once, after the last, gives the same verdict
    # on what is written.
    config.Exporter.optimistic_validation = True
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    api.log.handlers = []
    api.log.propagate = False
    api.log.setLevel(logging.INFO)
    return api


def assignment_notebooks(config, assignment: str) -> list[str]:
    """The names of the assignment's notebooks in the course's source directory (touches nothing)."""
    from nbgrader.coursedir import CourseDirectory

    coursedir = CourseDirectory(config=config)
    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    names = sorted(p.stem for p in source.glob("*.ipynb"))
    if not names:
        folder = source.parent
        known = sorted(p.name for p in folder.iterdir() if p.is_dir() and list(p.glob("*.ipynb"))) \
            if folder.is_dir() else []
        raise SystemExit(f"no assignment {assignment!r}: {source} has no notebook"
                         + (f" (assignments there: {', '.join(known)})" if known else ""))
    return names


def prepare_assignment(config, course_dir: Path, assignment: str) -> dict[str, Path]:
    """The assignment in the course's gradebook; returns ``{notebook name: released copy}``."""
    from nbgrader.api import Gradebook

    assignment_notebooks(config, assignment)
    api = make_api(config, course_dir)
    api.coursedir.release_directory = str(course_dir / ".release")
    result = api.generate_assignment(assignment, force=True, create=True)
    if not result["success"]:
        raise SystemExit(f"could not prepare assignment {assignment!r}:\n{result.get('log', '')}\n"
                         f"{result.get('error', '')}")
    with Gradebook(api.coursedir.db_url) as gb:
        names = sorted(nb.name for nb in gb.find_assignment(assignment).notebooks)
    return {name: course_dir / ".release" / assignment / f"{name}.ipynb" for name in names}


def released_solutions(config, assignment: str, names: list[str]) -> dict[str, dict[str, str]]:
    """``{notebook: {grade id: source}}`` of the solution cells as the exercise releases them: the source
    notebooks' cells with their solutions cleared by nbgrader's own ``ClearSolutions`` (touches nothing).
    A notebook nbgrader cannot clear gives no cells (nothing is then told apart by its answers)."""
    import nbformat
    from nbgrader.preprocessors import ClearSolutions

    from .hidden_tests import source_notebook

    released = {}
    for name in names:
        try:
            nb = nbformat.read(source_notebook(config, assignment, name), as_version=4)
            nb, _ = ClearSolutions(config=config).preprocess(nb, {})
        except Exception:  # noqa: BLE001 - the instructor's notebook: prepare_assignment will say what is wrong
            released[name] = {}
            continue
        released[name] = {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in nb.cells
                          if cell.metadata.get("nbgrader", {}).get("solution")}
    return released


def sanitized(nb, config, names: dict, log=None):
    """``nb`` after the sanitizing pass of ``config``'s autograding (``Autograde.sanitize_preprocessors``),
    run as nbgrader's ``autograde`` runs it: an nbconvert notebook exporter with those preprocessors,
    the notebook checked against nbformat's schema once, after the last (as :func:`make_api` has it).
    ``names`` is nbgrader's ``resources["nbgrader"]``: db_url, assignment, notebook, student.  Raises
    what nbgrader would stop at.  ``log``: where the preprocessors' warnings go (default: nbconvert's).
    """
    import nbformat
    from nbconvert.exporters import NotebookExporter

    config = config.copy()
    config.Exporter.optimistic_validation = True
    exporter = NotebookExporter(config=config, **({"log": log} if log is not None else {}))
    for preprocessor in config.Autograde.sanitize_preprocessors:
        exporter.register_preprocessor(preprocessor)
    output, _ = exporter.from_notebook_node(nb, resources={"nbgrader": dict(names)})
    return nbformat.reads(output, as_version=4)
