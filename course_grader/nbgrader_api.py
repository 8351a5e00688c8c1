"""nbgrader, set up for grading: the course's configuration, the API on a course directory, the assignment.

Two speed-ups replace nbgrader internals that are slow and give the same
answer: the gradebook schema's version is read in-process instead of by
running ``alembic`` in a subprocess, and nbconvert's compiled feedback
templates are kept for a worker's life.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: The course's nbgrader configuration: ``nbgrader_config.py`` in the folder grading runs from,
#: as for nbgrader's own commands.
CONFIG_FILE = "nbgrader_config.py"


def alembic_head() -> str:
    """The gradebook schema's version, read in-process.

    nbgrader finds it by running the ``alembic`` command in a subprocess each time
    it creates a gradebook, which takes seconds; the answer is the same."""
    import nbgrader
    from alembic.config import Config as AlembicConfig
    from alembic.script import ScriptDirectory

    config = AlembicConfig()
    config.set_main_option("script_location", str(Path(nbgrader.__file__).parent / "alembic"))
    return ScriptDirectory.from_config(config).get_current_head()


_NBGRADER_ALEMBIC_HEAD = []


def nbgraders_alembic_head() -> str:
    """nbgrader's own (subprocess) answer, for comparison."""
    import nbgrader.api

    return (_NBGRADER_ALEMBIC_HEAD or [nbgrader.api.get_alembic_version])[0]()


def use_fast_alembic_head():
    import nbgrader.api

    if nbgrader.api.get_alembic_version is not alembic_head:
        _NBGRADER_ALEMBIC_HEAD[:] = [nbgrader.api.get_alembic_version]
        nbgrader.api.get_alembic_version = alembic_head


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


def reuse_compiled_templates():
    """Feedback: nbgrader builds a new HTML exporter per student, which compiles nbconvert's
    Jinja templates again each time; keep their bytecode in memory for the worker's life.
    (An optimisation only: if nbconvert's internals differ, nothing changes.)"""
    try:
        import jinja2
        from nbconvert.exporters.templateexporter import TemplateExporter
    except ImportError:
        return
    if getattr(TemplateExporter._create_environment, "reuses_bytecode", False):
        return    # already (a second cache would start empty)

    class MemoryCache(jinja2.BytecodeCache):
        store: dict = {}

        def load_bytecode(self, bucket):
            if bucket.key in self.store:
                bucket.bytecode_from_string(self.store[bucket.key])

        def dump_bytecode(self, bucket):
            self.store[bucket.key] = bucket.bytecode_to_string()

    original = TemplateExporter._create_environment

    def create_environment(self):
        environment = original(self)
        environment.bytecode_cache = MemoryCache()
        return environment

    create_environment.reuses_bytecode = True
    TemplateExporter._create_environment = create_environment


def reuse_gradebook_engines(scratch: bool = False):
    """A worker opens nbgrader's ``Gradebook`` a dozen times per submission, and each opening
    creates a new SQLAlchemy engine (so every query is compiled again), connects to SQLite, checks
    every table of the schema and the course's row, and disconnects.  For the worker's life, keep
    one engine per SQLite database with its connection, check the schema with one query (nbgrader's
    own check where a table is missing), and check a file's schema and course once.  Queries,
    transactions and what is written stay nbgrader's.  (An optimisation only: if nbgrader's
    internals differ, nothing changes.)

    ``scratch``: the gradebooks are scratch copies (a worker's shard, merged into the course's
    student by student), so SQLite hands each commit to the operating system without waiting for the
    disk (``synchronous = OFF``; nbgrader commits two dozen times per submission).  What was
    committed survives the worker's own crash; only a crash of the machine could lose it, and
    then the run is redone anyway."""
    import nbgrader.api as gradebook_api
    from sqlalchemy import event

    if getattr(gradebook_api.create_engine, "reused_engines", False):
        return

    def without_waiting_for_the_disk(connection, record):
        connection.execute("PRAGMA synchronous = OFF")

    engines: dict = {}
    original_create_engine = gradebook_api.create_engine

    def create_engine(url, *args, **kwargs):
        if not str(url).startswith("sqlite:///"):
            return original_create_engine(url, *args, **kwargs)
        key = (str(url), args, tuple(sorted(kwargs.items())))
        if key not in engines:
            engines[key] = original_create_engine(url, *args, **kwargs)
            if scratch:
                event.listen(engines[key], "connect", without_waiting_for_the_disk)
        return engines[key]

    create_engine.reused_engines = True
    metadata = gradebook_api.Base.metadata
    original_create_all = metadata.create_all

    def create_all(bind=None, **kwargs):
        """nbgrader's schema check, unless one query shows every table already there."""
        if bind is not None and str(bind.url).startswith("sqlite:///"):
            from sqlalchemy import text

            with bind.connect() as connection:
                present = {row[0] for row in connection.execute(
                    text("SELECT name FROM sqlite_master WHERE type = 'table'"))}
            if set(metadata.tables) <= present:
                return
        original_create_all(bind=bind, **kwargs)

    gradebook_api.create_engine = create_engine
    metadata.create_all = create_all

    # Opening a gradebook this worker has opened before (the same file: same inode), for the same
    # course: its tables and course row are there (nbgrader never removes them), so only the session
    # is made; its connection stays open in the engine's pool between openings.  A file replaced at
    # the same path is opened afresh, its pooled connections to the old file closed.
    Gradebook = gradebook_api.Gradebook
    original_init, original_close = Gradebook.__init__, Gradebook.close
    opened: dict = {}     # (url, course id) -> the file's (device, inode) when it was last checked

    def identity(url: str):
        try:
            facts = os.stat(url[len("sqlite:///"):])
        except OSError:
            return None
        return facts.st_dev, facts.st_ino

    def __init__(self, db_url, course_id="default_course", authenticator=None):
        url = str(db_url)
        if not url.startswith("sqlite:///"):
            return original_init(self, db_url, course_id, authenticator)
        known = identity(url)
        if known is None or opened.get((url, course_id)) != known:
            engine = create_engine(db_url, echo=False, future=True)
            engine.dispose()          # connections to a file that is no longer at this path
            original_init(self, db_url, course_id, authenticator)
            opened[(url, course_id)] = identity(url)
            return
        self.engine = create_engine(db_url, echo=False, future=True)
        self.db = gradebook_api.scoped_session(gradebook_api.sessionmaker(autoflush=True, bind=self.engine,
                                                                          future=True))
        self.course_id, self.authenticator = course_id, authenticator

    def close(self):
        if str(self.engine.url).startswith("sqlite:///"):
            self.db.remove()          # the connection goes back to the pool
        else:
            original_close(self)

    Gradebook.__init__, Gradebook.close = __init__, close


def reuse_gradebook_lookups():
    """nbgrader's preprocessors look up each cell's grade, comment, source cell and graded cell
    with a query of up to six joins each: a few dozen per notebook and step.  Within one opening of
    a ``Gradebook`` (one session), the first lookup of a notebook loads all of that kind in one or
    two queries, and the others are answered from it: the same objects the queries return.  A
    name not found there is asked of nbgrader as before (its answer, or its ``MissingEntry``).
    (An optimisation only: if nbgrader's internals differ, nothing changes.)"""
    import nbgrader.api as gradebook_api

    Gradebook = gradebook_api.Gradebook
    if getattr(Gradebook.find_grade, "reuses_lookups", False):
        return
    GradeCell, SolutionCell, TaskCell = gradebook_api.GradeCell, gradebook_api.SolutionCell, gradebook_api.TaskCell
    originals = {name: getattr(Gradebook, name) for name in
                 ("find_grade", "find_comment", "find_source_cell", "find_graded_cell", "close")}

    def table(gradebook, key, load) -> dict:
        loaded = gradebook.__dict__.setdefault("_loaded_lookups", {})
        if key not in loaded:
            try:
                loaded[key] = load()
            except gradebook_api.MissingEntry:
                loaded[key] = {}
        return loaded[key]

    def by_cell_name(items, cell_of, preferred, other) -> dict:
        """``{cell name: item}``, a ``preferred`` cell's item winning over an ``other``'s (nbgrader's
        queries ask for the preferred kind first)."""
        found = {}
        for kind in (other, preferred):
            found.update({cell_of(item).name: item for item in items if isinstance(cell_of(item), kind)})
        return found

    def submitted(gradebook, notebook, assignment, student) -> dict:
        def load():
            nb = gradebook.find_submission_notebook(notebook, assignment, student)
            nb.notebook._base_cells   # the cells, in one query: each grade's and comment's cell is then known
            return {"notebook": nb}
        return table(gradebook, ("submitted", notebook, assignment, student), load).get("notebook")

    def find_grade(self, grade_cell, notebook, assignment, student):
        grades = table(self, ("grade", notebook, assignment, student), lambda: by_cell_name(
            getattr(submitted(self, notebook, assignment, student), "grades", []), lambda g: g.cell,
            GradeCell, TaskCell))
        return grades.get(grade_cell) or originals["find_grade"](self, grade_cell, notebook, assignment, student)

    def find_comment(self, solution_cell, notebook, assignment, student):
        comments = table(self, ("comment", notebook, assignment, student), lambda: by_cell_name(
            getattr(submitted(self, notebook, assignment, student), "comments", []), lambda c: c.cell,
            SolutionCell, TaskCell))
        return (comments.get(solution_cell)
                or originals["find_comment"](self, solution_cell, notebook, assignment, student))

    def find_source_cell(self, name, notebook, assignment):
        cells = table(self, ("source", notebook, assignment), lambda: {
            cell.name: cell for cell in self.find_notebook(notebook, assignment).source_cells})
        return cells.get(name) or originals["find_source_cell"](self, name, notebook, assignment)

    def find_graded_cell(self, name, notebook, assignment):
        cells = table(self, ("graded", notebook, assignment), lambda: by_cell_name(
            self.find_notebook(notebook, assignment)._base_cells, lambda c: c, GradeCell, TaskCell))
        return cells.get(name) or originals["find_graded_cell"](self, name, notebook, assignment)

    def close(self):
        self.__dict__.pop("_loaded_lookups", None)    # its objects belong to the session that ends here
        originals["close"](self)

    for function in (find_grade, find_comment, find_source_cell, find_graded_cell):
        function.reuses_lookups = True
        setattr(Gradebook, function.__name__, function)
    Gradebook.close = close


def check_metadata_with_one_validator():
    """nbgrader checks each cell's nbgrader metadata with ``jsonschema.validate``, which first checks
    the schema itself against JSON Schema's meta-schema (nine tenths of its time, for every cell of
    every notebook).  Here the schema is checked once (per schema text) and its validator reused;
    a cell's metadata gets the same verdict and the same error (``best_match``, as ``validate``)."""
    import json
    import types

    import jsonschema
    from nbgrader.nbgraderformat import common

    if getattr(common.jsonschema, "reuses_validators", False):
        return
    validators: dict = {}

    def validate(instance, schema):
        key = json.dumps(schema, sort_keys=True)
        validator = validators.get(key)
        if validator is None:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            validator = validators[key] = cls(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    common.jsonschema = types.SimpleNamespace(validate=validate, reuses_validators=True)


def reuse_highlighting(size: int = 4096):
    """Feedback pages highlight every code cell with Pygments; most of a class's cells (the given
    code, the tests) are the same text for every student.  Keep the last ``size`` results: the
    highlighted HTML depends only on the source, the language, the cell's magics language and
    the formatter's options."""
    from collections import OrderedDict

    from nbconvert.filters.highlight import Highlight2HTML

    original = Highlight2HTML.__call__
    if getattr(original, "reuses_results", False):
        return
    done: OrderedDict = OrderedDict()

    def highlight(self, source, language=None, metadata=None):
        magics = metadata.get("magics_language") if metadata else None
        key = (source, language or self.pygments_lexer, magics,
               repr(sorted(self.extra_formatter_options.items())))
        if key in done:
            done.move_to_end(key)
            return done[key]
        html = done[key] = original(self, source, language, metadata)
        if len(done) > size:
            done.popitem(last=False)
        return html

    highlight.reuses_results = True
    Highlight2HTML.__call__ = highlight
