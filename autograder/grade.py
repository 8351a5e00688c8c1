"""Grade a folder or zip of submissions in one command: gradebook, grades CSV, feedback.

    python autograder/grade.py SUBMISSIONS --assignment a1_softmax_additive

``SUBMISSIONS`` is a folder or a ``.zip`` as a learning-management system exports
it: one notebook per student, either as ``<student>.ipynb`` or in a folder per
student (``<student>/<anything>.ipynb``); ``--student-regex`` reads the student's
id from other naming schemes.  The command

1. puts the assignment (from ``solutions/``) into the course's gradebook and
   each submission into ``submitted/<student>/<assignment>/`` -- nbgrader's own
   layout, so ``nbgrader autograde``, ``generate_feedback``, ``export`` and the
   formgrader work on the same course directory afterwards;
2. autogrades the submissions **in parallel**, one worker process per core;
   each worker has its own copy ("shard") of the gradebook, because nbgrader's
   SQLite gradebook is not safe for concurrent writers, and the shards are
   merged into the course's gradebook at the end (one writer);
3. writes per-student feedback (HTML, hidden tests stripped), a grades CSV
   (``nbgrader export``'s format) and ``grading-<assignment>.json`` with what
   happened to each submission, and prints a summary.

Every notebook runs in the grading sandbox under time and memory limits (see
``autograder/sandbox.py``); a submission that crashes, hangs, floods output or
tampers with tests costs that student points, never the run.  A notebook that
cannot even be read is graded as the blank exercise (0 points) with a note in
its feedback.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))

from autograder import limits as default_limits  # noqa: E402
from autograder import sandbox  # noqa: E402

# nbgrader runs the `alembic` command when it creates a gradebook: it lives next to this Python.
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

IGNORED_PARTS = {"__MACOSX", ".ipynb_checkpoints"}
MAX_NOTEBOOK_BYTES = 100 * 2 ** 20


@dataclass
class Submission:
    student: str
    path: str                      # where the student's file was found
    notes: list = field(default_factory=list)


@dataclass
class Result:
    student: str
    status: str = "graded"         # graded | unreadable | failed
    score: float = 0.0
    max_score: float = 0.0
    seconds: float = 0.0
    flags: list = field(default_factory=list)
    events: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    feedback: str = ""


# ---------------------------------------------------------------------------
# Finding the submissions
# ---------------------------------------------------------------------------

def clean_student_id(raw: str) -> str:
    student = re.sub(r"[^A-Za-z0-9._@-]+", "_", raw).strip("._-")
    if not student:
        raise ValueError(f"cannot make a student id out of {raw!r}")
    return student


def find_submissions(source: Path, notebook_name: str, student_regex: str | None,
                     scratch: Path) -> tuple[list[Submission], list[str]]:
    """One notebook per student, from a folder or a zip."""
    warnings = []
    if source.is_file() and zipfile.is_zipfile(source):
        root = scratch / "unzipped"
        root.mkdir(parents=True)
        with zipfile.ZipFile(source) as archive:
            for member in archive.infolist():
                parts = Path(member.filename).parts
                if (member.is_dir() or not member.filename.endswith(".ipynb") or member.filename.startswith("/")
                        or ".." in parts or IGNORED_PARTS & set(parts)):
                    continue
                if member.file_size > MAX_NOTEBOOK_BYTES:
                    warnings.append(f"skipped {member.filename}: larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
                    continue
                target = root.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    elif source.is_dir():
        root = source
    else:
        raise SystemExit(f"{source} is neither a folder nor a zip file")
    pattern = re.compile(student_regex) if student_regex else None
    found: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*.ipynb")):
        relative = path.relative_to(root)
        if IGNORED_PARTS & set(relative.parts) or any(p.startswith(".") for p in relative.parts):
            continue
        if pattern:
            match = pattern.search(relative.as_posix())
            if not match:
                warnings.append(f"skipped {relative}: --student-regex does not match it")
                continue
            raw = match.group("student")
        else:
            raw = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        found.setdefault(clean_student_id(raw), []).append(path)
    submissions = []
    for student, paths in sorted(found.items()):
        chosen = paths[0]
        if len(paths) > 1:
            named = [p for p in paths if p.name == notebook_name]
            chosen = named[0] if named else max(paths, key=lambda p: p.stat().st_mtime)
            warnings.append(f"{student}: {len(paths)} notebooks; graded {chosen.name}")
        submissions.append(Submission(student, str(chosen)))
    return submissions, warnings


# ---------------------------------------------------------------------------
# nbgrader, configured as in autograder/nbgrader_config.py
# ---------------------------------------------------------------------------

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


def load_config(course_dir: Path, limits: dict):
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(HERE)).load_config()
    config.CourseDirectory.root = str(course_dir)
    for key, value in limits.items():
        if value is not None:
            setattr(config.GradingLimits, key, value)
    return config


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
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    api.log.handlers = []
    api.log.propagate = False
    api.log.setLevel(logging.INFO)
    return api


def prepare_assignment(config, course_dir: Path, assignment: str) -> tuple[str, Path]:
    """The assignment in the course's gradebook; returns its notebook name and released copy."""
    from nbgrader.api import Gradebook

    api = make_api(config, course_dir)
    api.coursedir.release_directory = str(course_dir / ".release")
    result = api.generate_assignment(assignment, force=True, create=True)
    if not result["success"]:
        raise SystemExit(f"could not prepare assignment {assignment!r}:\n{result.get('log', '')}\n"
                         f"{result.get('error', '')}")
    with Gradebook(api.coursedir.db_url) as gb:
        notebooks = [nb.name for nb in gb.find_assignment(assignment).notebooks]
    if len(notebooks) != 1:
        raise SystemExit(f"{assignment} has {len(notebooks)} notebooks; this command grades "
                         "one notebook per student")
    release = course_dir / ".release" / assignment / f"{notebooks[0]}.ipynb"
    return notebooks[0], release


def stage_submission(sub: Submission, course_dir: Path, assignment: str, notebook: str,
                     release: Path) -> str:
    """Copy into submitted/<student>/<assignment>/; an unreadable file becomes the blank exercise."""
    import nbformat

    target = course_dir / "submitted" / sub.student / assignment
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    destination = target / f"{notebook}.ipynb"
    try:
        if os.path.getsize(sub.path) > MAX_NOTEBOOK_BYTES:
            raise ValueError(f"the file is larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
        nb = nbformat.read(sub.path, as_version=4)
        nbformat.validate(nb)
        shutil.copyfile(sub.path, destination)
        return "graded"
    except Exception as error:  # noqa: BLE001 - any unreadable file is handled the same way
        reason = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
        shutil.copyfile(sub.path, target / f".unreadable-{notebook}.ipynb")  # kept for the instructor
        write_blank(release, destination, [
            "The file you handed in could not be read as a Jupyter notebook "
            f"({reason}). It was graded as the unchanged exercise, which scores 0 points."])
        sub.notes.append(f"unreadable notebook ({reason}); graded as the blank exercise")
        return "unreadable"


def write_blank(release: Path, destination: Path, notes: list[str]):
    import nbformat

    nb = nbformat.read(release, as_version=4)
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        "**Grading notes** (added by the autograder)\n\n" + "\n".join(f"- {n}" for n in notes)))
    nbformat.write(nb, destination)


# ---------------------------------------------------------------------------
# Workers: one per core, each with its own shard of the gradebook
# ---------------------------------------------------------------------------

def worker(slot: int, shard: str, course_dir: str, assignment: str, notebook: str, release: str,
           config, feedback: bool, tasks, results, log_path: str):
    os.environ[f"{sandbox.ENV_PREFIX}_SLOT"] = str(slot)
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = "1"
    log = open(log_path, "a", buffering=1)
    os.dup2(log.fileno(), 2)         # kernels' and nbgrader's own noise goes to the log, not the terminal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    shard_dir, course = Path(shard), Path(course_dir)
    reuse_compiled_templates()
    api = make_api(config, shard_dir)
    while True:
        task = tasks.get()
        if task is None:
            return
        student, notes = task
        results.put(("started", student, slot))
        started = time.monotonic()
        result = grade_one(api, shard_dir, course, assignment, notebook, Path(release), student,
                           notes, feedback, log)
        result.seconds = round(time.monotonic() - started, 2)
        results.put(("done", asdict(result), slot))


def reuse_compiled_templates():
    """Feedback: nbgrader builds a new HTML exporter per student, which compiles nbconvert's
    Jinja templates again each time; keep their bytecode in memory for the worker's life.
    (An optimisation only: if nbconvert's internals differ, nothing changes.)"""
    try:
        import jinja2
        from nbconvert.exporters.templateexporter import TemplateExporter
    except ImportError:
        return

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

    TemplateExporter._create_environment = create_environment


def grade_one(api, shard: Path, course: Path, assignment: str, notebook: str, release: Path,
              student: str, notes: list, feedback: bool, log) -> Result:
    from nbgrader.api import Gradebook

    result = Result(student, notes=list(notes))
    if any(n.startswith("unreadable") for n in notes):
        result.status = "unreadable"
    submitted = shard / "submitted" / student / assignment
    if submitted.exists():
        shutil.rmtree(submitted)
    shutil.copytree(course / "submitted" / student / assignment, submitted)
    outcome = api.autograde(assignment, student, force=True, create=True)
    log.write(f"=== autograde {student}\n{outcome.get('log', '')}\n{outcome.get('error', '') or ''}\n")
    if not outcome["success"]:
        # nbgrader itself could not process the file (e.g. broken nbgrader metadata):
        # grade the blank exercise so that the student gets 0 and a clear note.
        error = (outcome.get("error") or "").strip().splitlines()
        reason = error[-1][:300] if error else "nbgrader failed"
        result.status = "failed"
        result.notes.append(f"nbgrader could not grade this notebook ({reason}); graded as the blank exercise")
        shutil.rmtree(submitted)
        submitted.mkdir(parents=True)
        write_blank(release, submitted / f"{notebook}.ipynb", [
            "The notebook you handed in could not be graded "
            f"({reason}). It was graded as the unchanged exercise, which scores 0 points."])
        outcome = api.autograde(assignment, student, force=True, create=True)
        log.write(f"=== autograde blank {student}\n{outcome.get('log', '')}\n")
        if not outcome["success"]:
            result.notes.append("grading the blank exercise failed too; see the log")
            return result
    report_path = shard / "autograded" / student / assignment / f".grading-report-{notebook}.json"
    if report_path.exists():
        report = json.loads(report_path.read_text())
        result.flags = report.get("flags", [])
        result.events = [f"{e.get('grade_id') or e.get('cell')}: {e['message']}" for e in report["events"]]
    with Gradebook(api.coursedir.db_url) as gb:
        submission = gb.find_submission(assignment, student)
        result.score, result.max_score = submission.score, submission.max_score
    if feedback:
        outcome = api.generate_feedback(assignment, student, force=True)
        if outcome["success"]:
            result.feedback = str(Path("feedback") / student / assignment / f"{notebook}.html")
        else:
            result.notes.append("feedback could not be generated; see the log")
            log.write(f"=== feedback {student}\n{outcome.get('log', '')}\n{outcome.get('error', '')}\n")
    return result


def merge_shard(master_url: str, shard_url: str, assignment: str, students: list[str]):
    """Copy the shard's grades, comments and flags for ``students`` into the course's gradebook."""
    import warnings

    from nbgrader.api import Gradebook, MissingEntry

    warnings.filterwarnings("ignore", module="nbgrader.api")  # SQLAlchemy 2 notes about nbgrader's own session use
    with Gradebook(master_url) as master, Gradebook(shard_url) as shard:
        for student in students:
            try:
                submission = shard.find_submission(assignment, student)
            except MissingEntry:
                continue
            person = submission.student
            master.update_or_create_student(student, first_name=person.first_name,
                                            last_name=person.last_name, email=person.email,
                                            lms_user_id=person.lms_user_id)
            master.update_or_create_submission(assignment, student, timestamp=submission.timestamp)
            for nb in submission.notebooks:
                target = master.find_submission_notebook(nb.name, assignment, student)
                target.flagged = nb.flagged
                target.late_submission_penalty = nb.late_submission_penalty
                for grade in nb.grades:
                    g = master.find_grade(grade.name, nb.name, assignment, student)
                    g.auto_score, g.manual_score = grade.auto_score, grade.manual_score
                    g.extra_credit, g.needs_manual_grade = grade.extra_credit, grade.needs_manual_grade
                for comment in nb.comments:
                    c = master.find_comment(comment.name, nb.name, assignment, student)
                    c.auto_comment, c.manual_comment = comment.auto_comment, comment.manual_comment
            master.db.commit()


# ---------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------

class Progress:
    def __init__(self, total: int, quiet: bool):
        self.total, self.done, self.failed, self.flagged = total, 0, 0, 0
        self.started = time.monotonic()
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._last_line = -1

    def update(self, result: dict):
        self.done += 1
        self.failed += result["status"] != "graded"
        self.flagged += bool(result["flags"])
        self.show()

    def show(self, final: bool = False):
        if self.quiet:
            return
        elapsed = time.monotonic() - self.started
        width = 30
        filled = int(width * self.done / max(1, self.total))
        line = (f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} graded"
                f"  {self.failed} failed  {self.flagged} flagged  {elapsed:5.0f} s")
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if final else ""))
            sys.stderr.flush()
        else:
            step = max(1, self.total // 10)
            if final or self.done == self.total or self.done // step != self._last_line:
                self._last_line = self.done // step
                print(line, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------

def grade(source: Path, assignment: str, course_dir: Path, workers: int | None = None,
          student_regex: str | None = None, feedback: bool = True, limits: dict | None = None,
          csv_path: Path | None = None, quiet: bool = False) -> dict:
    """Everything the command does; returns the run's report (also written as JSON)."""
    started = time.monotonic()
    course_dir = course_dir.resolve()
    course_dir.mkdir(parents=True, exist_ok=True)
    say = (lambda *a: None) if quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    say(sandbox.describe())
    phases = {}
    mark = time.monotonic()

    def phase(name):
        nonlocal mark
        now = time.monotonic()
        phases[name] = round(now - mark, 2)
        mark = now

    self_test(course_dir)
    config = load_config(course_dir, limits or {})
    use_fast_alembic_head()
    phase("start-up (sandbox self-test, nbgrader configuration)")
    notebook, release = prepare_assignment(config, course_dir, assignment)
    phase("prepare assignment")
    run_dir = Path(tempfile.mkdtemp(prefix=f".grading-{assignment}-", dir=course_dir))
    try:
        submissions, warnings = find_submissions(Path(source), f"{notebook}.ipynb", student_regex, run_dir)
        for warning in warnings:
            say(f"warning: {warning}")
        if not submissions:
            raise SystemExit(f"no notebooks found in {source}")
        say(f"grading {len(submissions)} submissions of {assignment} with "
            f"{min(workers or os.cpu_count() or 1, len(submissions))} workers")
        statuses = {sub.student: stage_submission(sub, course_dir, assignment, notebook, release)
                    for sub in submissions}
        phase("find and stage submissions")
        results = run_workers(submissions, config, course_dir, run_dir, assignment, notebook, release,
                              workers, feedback, quiet, phase)
        for student, status in statuses.items():
            if status == "unreadable" and results[student]["status"] == "graded":
                results[student]["status"] = "unreadable"
        csv_path = csv_path or course_dir / f"grades-{assignment}.csv"
        export_csv(config, course_dir, assignment, csv_path)
        phase("export CSV")
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    seconds = time.monotonic() - started
    ordered = [results[s.student] for s in submissions]
    report = {
        "assignment": assignment, "course_dir": str(course_dir), "grades_csv": str(csv_path),
        "sandbox": sandbox.describe(), "seconds": round(seconds, 1),
        "submissions_per_minute": round(60 * len(ordered) / seconds, 1),
        "graded": sum(r["status"] == "graded" for r in ordered),
        "unreadable": sum(r["status"] == "unreadable" for r in ordered),
        "failed": sum(r["status"] == "failed" for r in ordered),
        "flagged": sum(bool(r["flags"]) for r in ordered), "phases_seconds": phases, "results": ordered,
    }
    (course_dir / f"grading-{assignment}.json").write_text(json.dumps(report, indent=1))
    if not quiet:
        print_summary(report)
    return report


def self_test(course_dir: Path):
    """Run one trivial program in the sandbox; a broken sandbox must stop grading, loudly."""
    import subprocess

    with tempfile.TemporaryDirectory(dir=course_dir) as scratch:
        cmd = sandbox.command([sys.executable, "-I", "-S", "-c", "print('ok')"], scratch)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0 or "ok" not in done.stdout:
        raise SystemExit("the grading sandbox does not work here:\n" + done.stderr[-2000:] +
                         f"\nSet {sandbox.ENV_PREFIX}=off to grade WITHOUT isolation (not recommended).")


def run_workers(submissions, config, course_dir, run_dir, assignment, notebook, release, workers,
                feedback, quiet, phase=lambda name: None) -> dict:
    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    count = max(1, min(workers or os.cpu_count() or 1, len(submissions)))
    (course_dir / "logs").mkdir(exist_ok=True)
    tasks, results = context.Queue(), context.Queue()
    shards, processes, running = [], {}, {}
    for slot in range(count):
        shard = run_dir / f"shard-{slot}"
        shard.mkdir()
        shutil.copyfile(course_dir / "gradebook.db", shard / "gradebook.db")
        shards.append(shard)
    for sub in submissions:
        tasks.put((sub.student, sub.notes))

    def start(slot):
        log_path = course_dir / "logs" / f"grade-{assignment}-worker{slot}.log"
        process = context.Process(target=worker, daemon=True, args=(
            slot, str(shards[slot]), str(course_dir), assignment, notebook, str(release), config,
            feedback, tasks, results, str(log_path)))
        process.start()
        processes[slot] = process

    for slot in range(count):
        start(slot)
    progress = Progress(len(submissions), quiet)
    progress.show()
    finished: dict[str, dict] = {}
    graded_by: dict[int, list[str]] = {slot: [] for slot in range(count)}
    patience = float(config.GradingLimits.get("notebook_timeout", default_limits.NOTEBOOK_SECONDS)) * 3 \
        + default_limits.WORKER_SILENCE_SLACK_SECONDS
    retried: set[str] = set()
    try:
        while len(finished) < len(submissions):
            try:
                kind, payload, slot = results.get(timeout=1.0)
            except Exception:  # queue.Empty
                kind = None
            if kind == "started":
                running[slot] = (payload, time.monotonic())
            elif kind == "done":
                finished[payload["student"]] = payload
                graded_by[slot].append(payload["student"])
                running.pop(slot, None)
                progress.update(payload)
            for slot, process in list(processes.items()):
                stuck = slot in running and time.monotonic() - running[slot][1] > patience
                if process.is_alive() and not stuck:
                    continue
                if stuck:
                    process.kill()
                process.join(timeout=5)
                if slot in running:   # the worker died or hung with a submission in hand
                    student = running.pop(slot)[0]
                    if student in retried:
                        finished[student] = asdict(Result(student, status="failed", notes=[
                            "the grading worker died twice on this submission; not graded"]))
                        progress.update(finished[student])
                    else:
                        retried.add(student)
                        tasks.put((student, ["the first grading attempt crashed the grader; graded again"]))
                if len(finished) < len(submissions):
                    start(slot)
    finally:
        for _ in processes:
            tasks.put(None)
        for process in processes.values():
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
        progress.show(final=True)
    phase("grade in parallel")
    # One writer: merge the shards, then bring their notebooks and feedback home.
    master_url = f"sqlite:///{course_dir / 'gradebook.db'}"
    for slot, shard in enumerate(shards):
        merge_shard(master_url, f"sqlite:///{shard / 'gradebook.db'}", assignment, graded_by[slot])
        for kind in ("autograded", "feedback"):
            for student in graded_by[slot]:
                source = shard / kind / student / assignment
                target = course_dir / kind / student / assignment
                if source.exists():
                    if target.exists():
                        shutil.rmtree(target)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copytree(source, target)
    phase("merge shards")
    return finished


def export_csv(config, course_dir: Path, assignment: str, path: Path):
    from nbgrader.api import Gradebook
    from nbgrader.plugins import CsvExportPlugin

    plugin = CsvExportPlugin(config=config)
    plugin.to = str(path)
    plugin.assignment = [assignment]
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}",
                   config.CourseDirectory.get("course_id", "default_course")) as gb:
        plugin.export(gb)


def print_summary(report: dict):
    results = report["results"]
    print(f"\n{report['assignment']}: {report['graded']} graded, {report['unreadable']} unreadable, "
          f"{report['failed']} failed, "
          f"{report['flagged']} flagged, in {report['seconds']:.0f} s "
          f"({report['submissions_per_minute']:.1f} submissions per minute)")
    width = max(len(r["student"]) for r in results)
    for r in results:
        line = f"  {r['student']:<{width}}  {r['score']:5.1f} / {r['max_score']:4.1f}  {r['status']}"
        extra = r["notes"] + [f"flag: {f}" for f in r["flags"]] + r["events"]
        print(line + ("  -- " + "; ".join(extra) if extra else ""))
    print("time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in report["phases_seconds"].items()))
    print(f"grades: {report['grades_csv']}")
    print(f"feedback: {report['course_dir']}/feedback/<student>/{report['assignment']}/")
    print(f"gradebook: {report['course_dir']}/gradebook.db (nbgrader formgrader and export work on it)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="folder or .zip of submitted notebooks")
    parser.add_argument("--assignment", required=True, help="assignment id, a folder of solutions/")
    parser.add_argument("--course-dir", type=Path, default=HERE,
                        help="nbgrader course directory for the gradebook and results (default: autograder/)")
    parser.add_argument("--workers", type=int, default=None, help="parallel workers (default: one per core)")
    parser.add_argument("--student-regex", default=None,
                        help="regex with a (?P<student>...) group, matched against each notebook's path "
                             "inside SUBMISSIONS; e.g. '^(?P<student>[^_]+)_' for Canvas downloads")
    parser.add_argument("--cell-timeout", type=int, default=None, help="seconds per cell")
    parser.add_argument("--notebook-timeout", type=int, default=None, help="seconds per notebook")
    parser.add_argument("--memory-mb", type=int, default=None, help="memory per submission, MiB")
    parser.add_argument("--csv", type=Path, default=None, help="grades CSV (default: COURSE_DIR/grades-ASSIGNMENT.csv)")
    parser.add_argument("--no-feedback", action="store_true", help="skip the feedback HTML")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    args = parser.parse_args(argv)
    limits = {"cell_timeout": args.cell_timeout, "notebook_timeout": args.notebook_timeout,
              "memory_mb": args.memory_mb}
    report = grade(args.submissions, args.assignment, args.course_dir, args.workers, args.student_regex,
                   not args.no_feedback, limits, args.csv, args.quiet)
    return 0 if report["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
