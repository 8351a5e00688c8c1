"""Grade a folder or zip of submissions in one command: gradebook, grades CSV, feedback.

    python -m course_grader SUBMISSIONS --assignment a1_softmax_additive

``SUBMISSIONS`` is a folder or a ``.zip`` as a learning-management system exports
it: a folder per student (``<student>/<notebook>.ipynb``, with any other files
they hand in), or, for a one-notebook assignment, ``<student>.ipynb``;
``--student-regex`` reads the student's id from other naming schemes (a flat
export of several notebooks: ``alice_problem1.ipynb``, ``alice_problem2.ipynb``).
The command

1. finds the submissions, then puts the assignment (from the course's source
   folder, ``solutions/`` here, ``--source-dir`` for another course) into the
   course's gradebook and each submission into
   ``submitted/<student>/<assignment>/`` -- nbgrader's own layout, so
   ``nbgrader autograde``, ``generate_feedback``, ``export`` and the formgrader
   work on the same course directory afterwards;
2. autogrades the submissions **in parallel**, one worker process per core (one more for a big batch);
   each worker has its own copy ("shard") of the gradebook, because nbgrader's
   SQLite gradebook is not safe for concurrent writers, and each student is
   merged into the course's gradebook (one writer) as soon as they are graded;
3. writes per-student feedback (HTML, hidden tests stripped), a grades CSV
   (``nbgrader export``'s format) and ``grading-<assignment>.json`` with what
   happened to each submission, and prints a summary.

How it grades (the course, the limits, the workers, the secret, ...) is one
:class:`~course_grader.options.GradingOptions`, which the command line is built from.

Every notebook runs in the grading sandbox under time and memory limits (see
:mod:`course_grader.sandbox`); a submission that crashes, hangs, floods output or
tampers with tests costs that student points, never the run.  A notebook that
cannot even be read is graded as the blank exercise (0 points) with a note in
its feedback.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import dataclasses
import time
from pathlib import Path

from . import hidden_tests, sandbox
from .course_directory import FirstWrites, nbgrader_command, write_configuration
from .gradebook import copy_student_folders, export_csv, merge_shard
from .intake import check_source, find_submissions, stage_submission
from .nbgrader_api import assignment_notebooks, load_config, prepare_assignment
from .nbgrader_patches import use_fast_alembic_head
from .options import GradingOptions
from .report import terminal_text
from .workers import run_workers, start_worker_server, worker_count


def grade(source: Path, assignment: str, options: GradingOptions | None = None, **settings) -> dict:
    """Everything the command does; returns the run's report (also written as JSON).

    ``options`` (:class:`~course_grader.options.GradingOptions`, each option
    with its help text), or the same given as keywords
    (``grade(source, "a1", workers=2, cell_timeout=20)``); keywords win.

    ``new_secret``: grade even though the course directory's students of the assignment were graded
    with another hidden-test secret (:func:`check_same_secret` stops the run otherwise).

    ``python``, the course environment's interpreter, runs the students'
    notebooks and the re-check's student process in the sandbox (default: the
    grader's own); ``course_config`` is the other course's own
    ``nbgrader_config.py``, read on top of ``config_file``
    (:func:`course_grader.nbgrader_api.load_config`).
    """
    options = dataclasses.replace(options or GradingOptions(), **settings)
    variable = f"{sandbox.ENV_PREFIX}_PYTHON"
    previous = os.environ.get(variable)
    if options.python is not None:   # checked before anything is written; the workers' kernels inherit it
        os.environ[variable] = sandbox.check_students_python(options.python)
    try:
        # Sandbox user ids of this run's own: another run on this machine never shares them (sandbox.UidBlock)
        with sandbox.UidBlock.reserve():
            return _grade(source, assignment, options)
    finally:
        if previous is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = previous


def _grade(source, assignment, options: GradingOptions) -> dict:
    """:func:`grade`, in the students' interpreter.

    ``shard=(k, n)`` grades only the k-th of n slices of the students (by a
    hash of their ids: the same slices on every machine), for a cluster's
    array job; :func:`merge` then combines the slices' course directories.

    ``config_file`` is the course's ``nbgrader_config.py`` (default: the one in
    the current folder); ``course_dir`` defaults to its ``CourseDirectory.root``;
    ``source_dir`` and ``course_id`` override its own.
    """
    started = time.monotonic()
    config = load_config(options.course_dir, options.limits, options.config_file, options.course,
                         options.course_config)
    # Strict mode where isolation is impossible stops here, before anything is written: building a
    # sandbox command is where the sandbox says so (SandboxUnavailable).
    sandbox.command([sys.executable, "-c", "pass"], os.getcwd())
    # Everything that can be wrong with the command line is checked before anything is written:
    # a mistyped assignment or submissions path creates no course directory and no secret.
    names = assignment_notebooks(config, assignment)
    check_source(Path(source))
    start_worker_server()     # warms up while the assignment is prepared
    course_dir = Path(config.CourseDirectory.root)
    created = [folder for folder in (course_dir, *course_dir.parents) if not folder.exists()]
    course_dir.mkdir(parents=True, exist_ok=True)
    say = (lambda *a: None) if options.quiet else (lambda *a: print(*a, file=sys.stderr, flush=True))
    phases = {}
    mark = time.monotonic()

    def phase(name):
        nonlocal mark
        now = time.monotonic()
        phases[name] = round(now - mark, 2)
        mark = now

    # Find the submissions before the gradebook (or the secret) is touched: nothing to grade, nothing changed.
    run_dir = Path(tempfile.mkdtemp(prefix=f".grading-{assignment}-", dir=course_dir))
    try:
        submissions, warnings, account = find_submissions(Path(source), names, options.student_regex,
                                                          run_dir / "upload", answers_in(config, assignment, names))
        for warning in warnings:
            say(f"warning: {terminal_text(warning)}")
        if not any(sub.notebooks for sub in submissions):
            shutil.rmtree(run_dir, ignore_errors=True)
            for folder in created:             # the folders this run made, now empty again
                folder.rmdir()
            raise SystemExit(f"no notebooks of {assignment} ({', '.join(n + '.ipynb' for n in names)}) "
                             f"found in {source}")
        phase("find submissions")
        # Another secret than the one the gradebook's students were graded with: said before anything is written.
        secret, secret_file = this_runs_secret(config, course_dir, options.secret_seed)
        check_same_secret(course_dir, assignment, secret, options.new_secret, say)
        say(sandbox.describe())
        say(describe_policy(config, assignment))
        self_test(course_dir)
        # What is written before the first student is graded is put back if preparing fails: no
        # half-written gradebook, no secret of a run that graded nothing (course_directory.py).
        first_writes = FirstWrites(course_dir, [course_dir / "gradebook.db", secret_file,
                                                course_dir / SECRETS_RECORD], run_dir, created)
        try:
            if secret is None:     # read (or create) once here: the workers grade in shards of the course directory
                secret = hidden_tests.read_or_create_secret(secret_file)
                say(f"hidden tests draw their inputs from a new secret in {secret_file}: keep it private, "
                    "and keep it to grade this term's submissions again")
            config.HiddenTests.secret = secret
            record_secret(course_dir, assignment, secret)
            use_fast_alembic_head()
            phase("start-up (sandbox self-test, nbgrader configuration)")
            if options.shard is not None:
                submissions = [sub for sub in submissions if in_shard(sub.student, *options.shard)]
            releases = prepare_assignment(config, course_dir, assignment)
        except BaseException:
            first_writes.undo()
            raise
        configuration = write_configuration(course_dir, config_file=options.config_file,
                                            course=options.course, course_config=options.course_config,
                                            limits=options.limits)
        phase("prepare assignment")
        say(f"grading {len(submissions)} submissions of {assignment} ({len(releases)} notebook"
            f"{'s' if len(releases) > 1 else ''} each) with "
            f"{worker_count(options.workers, len(submissions))} workers")
        statuses = {sub.student: stage_submission(sub, course_dir, assignment, releases)
                    for sub in submissions}
        phase("stage submissions")
        results = run_workers(submissions, config, course_dir, run_dir, assignment, releases,
                              options.workers, options.feedback, options.quiet, phase) if submissions else {}
        for student, status in statuses.items():
            if status in ("unreadable", "no notebook") and results[student]["status"] == "graded":
                results[student]["status"] = status
        for sub in submissions:   # the id as the collection gave it, beside the safe one graded under
            if sub.given_id:
                results[sub.student]["given_id"] = sub.given_id
            results[sub.student]["handed_in"] = handed_in(sub)
        csv_path = options.csv_path or course_dir / f"grades-{assignment}.csv"
        export_csv(config, course_dir, assignment, csv_path,
                   {sub.student: results[sub.student]["handed_in"] for sub in submissions},
                   {sub.student: results[sub.student]["flags"] for sub in submissions})
        phase("export CSV")
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
    seconds = time.monotonic() - started
    ordered = [results[s.student] for s in submissions]
    report = {
        "assignment": assignment, "course_dir": str(course_dir), "grades_csv": str(csv_path),
        "sandbox": sandbox.describe(), "seconds": round(seconds, 1),
        "submissions_per_minute": round(60 * len(ordered) / seconds, 1),
        "shard": list(options.shard) if options.shard else None, "policy": describe_policy(config, assignment),
        "fingerprints": fingerprints(config, assignment, names),
        "graded": sum(r["status"] == "graded" for r in ordered),
        "unreadable": sum(r["status"] == "unreadable" for r in ordered),
        "failed": sum(r["status"] == "failed" for r in ordered),
        "not_graded": sum(r["status"] == "not graded" for r in ordered),   # grading was stopped
        "no_notebook": sum(r["status"] == "no notebook" for r in ordered),  # nothing gradable handed in
        "upload": account.verdicts,      # every file and folder of the upload: graded as whose, or why not
        "flagged": sum(bool(r["flags"]) for r in ordered), "phases_seconds": phases, "results": ordered,
        "student_ids": {s.student: s.given_id for s in submissions if s.given_id},
        "warnings": warnings,
        "to_grade_by_hand": sum(r.get("to_grade_by_hand", 0) for r in ordered),
        "feedback_command": nbgrader_command(course_dir, configuration, "generate_feedback", assignment,
                                             "--force"),
        "limits": run_limits(config),
        "time_limited": sorted(r["student"] for r in ordered if r.get("time_limits")),
    }
    (course_dir / f"grading-{assignment}.json").write_text(json.dumps(report, indent=1))
    return report


def secret_fingerprint(secret: str) -> str:
    """A fingerprint of the hidden tests' secret that reveals nothing of it."""
    import hashlib

    return hashlib.sha256(b"course-grader secret\n" + str(secret).encode()).hexdigest()[:16]


def fingerprints(config, assignment: str, notebooks: list[str]) -> dict[str, str]:
    """What a run graded with, as fingerprints that reveal nothing: the hidden tests' secret, and the
    assignment's source notebooks (its version).  ``merge`` refuses shards whose fingerprints differ."""
    import hashlib

    source = hashlib.sha256()
    for name in sorted(notebooks):
        source.update(name.encode() + b"\n")
        source.update(hidden_tests.source_notebook(config, assignment, name).read_bytes())
    return {"secret": secret_fingerprint(config.HiddenTests.secret), "source": source.hexdigest()[:16]}


#: The course directory's record of the secret each assignment was graded with (fingerprints only)
SECRETS_RECORD = ".hidden-tests-fingerprints.json"


def this_runs_secret(config, course_dir: Path, secret_seed: str | None) -> tuple[str | None, Path]:
    """The secret this run grades with, and the secret file; None if the file is still to be made
    (the rule: :meth:`course_grader.hidden_tests.HiddenTests.run_secret`)."""
    return hidden_tests.HiddenTests(config=config).run_secret(course_dir, secret_seed)


def check_same_secret(course_dir: Path, assignment: str, secret: str | None, new_secret: bool, say) -> None:
    """Stop, before anything is written, a run whose secret is not the one the course directory's
    students of ``assignment`` were graded with (``new_secret``: grade anew, and say so).

    Their hidden tests drew their inputs from that secret; a regrade with another would grade some
    students of one gradebook on other inputs than the rest (as merging such shards would)."""
    record = _secrets_record(course_dir).get(assignment)
    earlier = any((course_dir / "autograded").glob(f"*/{assignment}"))
    if record is None:
        if earlier:
            say(f"warning: the gradebook holds earlier grades of {assignment} and no record of the secret "
                "they were graded with: if it was another, their hidden tests drew other inputs")
        return
    if secret is not None and secret_fingerprint(secret) == record:
        return
    why = ("its secret file is gone, and a new one would be made" if secret is None
           else "this run's secret (--secret-seed, c.HiddenTests or the secret file) is another")
    if not new_secret:
        raise SystemExit(f"{assignment} was graded in {course_dir} with another hidden-test secret than this "
                         f"run's ({why}): regrade with that secret, so that every student's hidden tests draw "
                         "from one secret, or pass --new-secret to grade with this one (students not graded "
                         "again keep grades drawn from the old one); nothing was written")
    say(f"warning: grading {assignment} with a new hidden-test secret ({why}); students not graded again "
        "keep the grades their hidden tests gave with the old one")


def record_secret(course_dir: Path, assignment: str, secret: str) -> None:
    """Record, in the course directory, the fingerprint of the secret ``assignment`` is graded with."""
    record = _secrets_record(course_dir)
    record[assignment] = secret_fingerprint(secret)
    (course_dir / SECRETS_RECORD).write_text(json.dumps(record, indent=1, sort_keys=True))


def _secrets_record(course_dir: Path) -> dict:
    try:
        record = json.loads((course_dir / SECRETS_RECORD).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def handed_in(sub) -> str:
    """What of a student's hand-in was graded, by its path in the upload (or why nothing was)."""
    if not sub.notebooks:
        return f"nothing gradable: {sub.nothing_gradable}"
    return "; ".join(sub.shown[name] for name in sorted(sub.shown))


def answers_in(config, assignment: str, names: list[str]):
    """``worked(path, name)``: whether a notebook file holds answers, that is, a solution cell that
    differs from the released exercise's (False for the blank exercise, or a file that cannot be read)."""
    from .intake import UnreadableNotebook, read_submission
    from .nbgrader_api import released_solutions

    released = released_solutions(config, assignment, names)

    def worked(path, name) -> bool:
        try:
            nb, _, _ = read_submission(Path(path))
        except UnreadableNotebook:
            return False
        blank = released.get(name, {})
        return any(cell.source != blank[gid] for cell in nb.cells
                   if (gid := cell.metadata.get("nbgrader", {}).get("grade_id")) in blank)

    return worked


def run_limits(config) -> dict:
    """The limits this run graded under (``GradingLimits``: the configuration's, or the command's options)."""
    from .preprocessors.config import GradingLimits

    limits = GradingLimits(config=config)
    return {key: getattr(limits, key) for key in ("cell_timeout", "notebook_timeout", "memory_mb")}


def describe_policy(config, assignment: str) -> str:
    """One line an instructor can read: how this configuration grades, where it differs from nbgrader's defaults."""
    from .preprocessors import GradingPolicy, ScoreWithoutStderr

    policy = GradingPolicy(config=config)
    forbidden = ", ".join(policy.forbidden(assignment)) or "nothing"
    partial = "on" if ScoreWithoutStderr(config=config).allow_partial_credit else "off"
    interpreter = "" if sandbox.students_python() == sys.executable else f" ({sandbox.students_python()})"
    return (f"grading: every notebook in the sandbox's Python kernel{interpreter} (whatever kernel it declares); "
            "hidden tests only in the grader; stderr in a test cell does not fail it; "
            f"partial credit {partial}; forbidden imports: {forbidden}")


def in_shard(student: str, k: int, n: int) -> bool:
    """Whether ``student`` is in the k-th (1-based) of n slices: a hash, so the same on every machine."""
    import hashlib

    return int(hashlib.sha256(student.encode()).hexdigest()[:12], 16) % n == k - 1


def merge(shard_dirs: list[Path], assignment: str, course_dir: Path | None = None,
          config_file: Path | None = None, csv_path: Path | None = None,
          course: dict | None = None, course_config: Path | None = None) -> dict:
    """Combine the course directories of sharded runs into one: gradebook, files, CSV, report.

    Each shard is a course directory a ``--shard K/N`` run wrote.  Its students'
    grades, comments and flags go into this course's gradebook (one writer),
    their submitted and autograded notebooks and feedback into its folders.
    A student in two shards is an error (the runs overlapped), before anything
    is written.
    """
    config = load_config(course_dir, None, config_file, course, course_config)
    course_dir = Path(config.CourseDirectory.root)
    reports, seen = [], {}
    for shard_dir in map(Path, shard_dirs):
        path = shard_dir / f"grading-{assignment}.json"
        if not path.is_file():
            raise SystemExit(f"{shard_dir} is not a graded shard of {assignment}: no {path.name}")
        report = json.loads(path.read_text())
        _check_fingerprints(shard_dir, report, reports, config, assignment)
        for result in report["results"]:
            if result["student"] in seen:
                raise SystemExit(f"{result['student']} is in two shards, {seen[result['student']]} and "
                                 f"{shard_dir}: the shards overlap; nothing was merged")
            seen[result["student"]] = shard_dir
        reports.append((shard_dir, report))
    course_dir.mkdir(parents=True, exist_ok=True)
    use_fast_alembic_head()
    prepare_assignment(config, course_dir, assignment)
    master = f"sqlite:///{course_dir / 'gradebook.db'}"
    results = []
    for shard_dir, report in reports:
        students = [r["student"] for r in report["results"]]
        merge_shard(master, f"sqlite:///{shard_dir / 'gradebook.db'}", assignment, students)
        copy_student_folders(shard_dir, course_dir, assignment, students)
        results += report["results"]
    configuration = write_configuration(course_dir, config_file=config_file, course=course,
                                        course_config=course_config, limits=None)
    csv_path = csv_path or course_dir / f"grades-{assignment}.csv"
    export_csv(config, course_dir, assignment, csv_path,
               {r["student"]: r["handed_in"] for r in results if "handed_in" in r},
               {r["student"]: r.get("flags", []) for r in results})
    results.sort(key=lambda r: r["student"])
    merged = {
        "assignment": assignment, "course_dir": str(course_dir), "grades_csv": str(csv_path),
        "merged_from": [str(d) for d, _ in reports],
        "graded": sum(r["status"] == "graded" for r in results),
        "unreadable": sum(r["status"] == "unreadable" for r in results),
        "failed": sum(r["status"] == "failed" for r in results),
        "no_notebook": sum(r["status"] == "no notebook" for r in results),
        "flagged": sum(bool(r["flags"]) for r in results), "results": results,
        "upload": {path: verdict for _, report in reports for path, verdict in report.get("upload", {}).items()},
        "feedback_command": nbgrader_command(course_dir, configuration, "generate_feedback", assignment,
                                             "--force"),
    }
    (course_dir / f"grading-{assignment}.json").write_text(json.dumps(merged, indent=1))
    return merged


def _check_fingerprints(shard_dir: Path, report: dict, earlier: list, config, assignment: str) -> None:
    """Refuse, before anything is written, a shard graded with another secret or another version of the
    assignment than the shards before it (or, for the version, than the source notebooks here)."""
    found = report.get("fingerprints")
    if not isinstance(found, dict) or not {"secret", "source"} <= set(found):
        raise SystemExit(f"{shard_dir} records no fingerprint of its secret and source notebooks (graded by "
                         "an older version of the grader?): grade it again; nothing was merged")
    first_dir, first = (earlier[0][0], earlier[0][1]["fingerprints"]) if earlier else (None, None)
    if first is not None and found["secret"] != first["secret"]:
        raise SystemExit(f"{shard_dir} was graded with another hidden-test secret than {first_dir}: give every "
                         "shard of a run the same --secret-seed (or secret file) and grade it again; "
                         "nothing was merged")
    here = fingerprints(config, assignment, assignment_notebooks(config, assignment))["source"]
    if found["source"] != here:
        raise SystemExit(f"{shard_dir} graded another version of {assignment} than the source notebooks here "
                         f"({Path(config.CourseDirectory.source_directory) / assignment}): grade it again with "
                         "these; nothing was merged")


def self_test(course_dir: Path):
    """Run one trivial program in the sandbox; a broken sandbox must stop grading, loudly."""
    import subprocess

    with tempfile.TemporaryDirectory(dir=course_dir) as scratch:
        cmd = sandbox.command([sys.executable, "-I", "-S", "-c", "print('ok')"], scratch)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0 or "ok" not in done.stdout:
        raise SystemExit("the grading sandbox does not work here:\n" + done.stderr[-2000:] +
                         f"\nSet {sandbox.ENV_PREFIX}=off to grade WITHOUT isolation (not recommended).")
