"""What the grader changes inside nbgrader and the libraries it drives: six speed-ups, same answers.

Each patch replaces or wraps an internal of the pinned versions (requirements.txt)
that is slow for a grader that opens a gradebook dozens of times per
submission and writes a feedback page per student; each gives the answers the
original gives, and each is applied once however often it is called.  What
each one patches, and why:

* :func:`use_fast_alembic_head` replaces ``nbgrader.api.get_alembic_version``,
  which runs the ``alembic`` command in a subprocess for every new gradebook
  (seconds each), by reading the same head in-process;
* :func:`reuse_compiled_templates` wraps nbconvert's
  ``TemplateExporter._create_environment``: nbgrader builds an exporter per
  student, which compiles the Jinja templates again each time;
* :func:`reuse_gradebook_engines` replaces ``nbgrader.api.create_engine``,
  ``Gradebook.__init__``/``close`` and the schema's ``create_all``: each opening
  made a new SQLAlchemy engine and connection and checked every table;
* :func:`reuse_gradebook_lookups` wraps ``Gradebook.find_grade``,
  ``find_comment``, ``find_source_cell`` and ``find_graded_cell``: a query of
  up to six joins per cell and step;
* :func:`check_metadata_with_one_validator` replaces the ``jsonschema`` that
  ``nbgrader.nbgraderformat.common`` calls: ``jsonschema.validate`` checks the
  schema against the meta-schema for every cell (nine tenths of its time);
* :func:`reuse_highlighting` wraps ``Highlight2HTML.__call__``: the given code
  and the tests are the same text in every student's feedback.

Where a patch reaches past a public API, :data:`UPSTREAM` records a fingerprint
of the source of what it replaces, as in the pinned versions;
``tests/course_grader/test_nbgrader_patches.py`` fails when an upgrade changes
one, so that the patch is read again against the new code before it is trusted.
"""

from __future__ import annotations

import hashlib
import inspect
import os
from pathlib import Path

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


def for_workers() -> None:
    """Every patch a grading worker uses (its gradebooks are scratch copies of a shard)."""
    reuse_compiled_templates()
    reuse_gradebook_engines(scratch=True)   # the shard is merged into the course's gradebook
    reuse_gradebook_lookups()
    check_metadata_with_one_validator()
    reuse_highlighting()


#: The upstream code the patches replace or wrap (dotted path -> the first 16 hex digits of the
#: SHA-256 of its source, in the pinned versions): a change means a patch must be read again.
UPSTREAM = {
    "nbgrader.api.get_alembic_version": "40160af67d70e523",
    "nbconvert.exporters.templateexporter.TemplateExporter._create_environment": "b64cb98c0ee3eb82",
    "nbgrader.api.Gradebook.__init__": "c60c420276e8355e",
    "nbgrader.api.Gradebook.close": "089cf56cf4f8a224",
    "nbgrader.api.Gradebook.find_grade": "b1a48e74233391ce",
    "nbgrader.api.Gradebook.find_comment": "bcb9b4f7da3c0752",
    "nbgrader.api.Gradebook.find_source_cell": "0d0ef04711fab86a",
    "nbgrader.api.Gradebook.find_graded_cell": "68291d97eb3cd85b",
    "nbgrader.nbgraderformat.common.BaseMetadataValidator.validate_cell": "e5f97f45a9aba510",
    "nbconvert.filters.highlight.Highlight2HTML.__call__": "576b5d79815a7147",
}


def upstream_object(dotted: str):
    """The object at ``dotted`` (a module, then attributes)."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ModuleNotFoundError(dotted)


def fingerprint(obj) -> str:
    """The first 16 hex digits of the SHA-256 of ``obj``'s source."""
    return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()[:16]
