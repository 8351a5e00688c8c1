"""The grading command's arguments and its summary: ``python -m course_grader SUBMISSIONS --assignment A``."""

from __future__ import annotations

import argparse
import dataclasses
import signal
from pathlib import Path

from .nbgrader_api import CONFIG_FILE
from .options import COURSE_OPTIONS, OPTIONS, GradingOptions, add_arguments, as_arguments, from_arguments

# Nothing heavy is imported here: nbgrader, nbformat and what they pull in (seconds) only once
# the arguments are read, so that `--help` and a mistyped option answer at once.

PROG = "python -m course_grader"
#: The first paragraph of :mod:`course_grader.grade`'s docstring (kept here so that --help imports nothing).
DESCRIPTION = "Grade a folder or zip of submissions in one command: gradebook, grades CSV, feedback."


def score_line(result: dict) -> str:
    """``score / max`` of every point, and how many of them are still to be graded by hand.

    The same for every student, whatever state their hand-graded cells are in:
    a blank submission (nbgrader scores unchanged written answers 0 itself),
    written answers awaiting a grade, or hand grades already entered.
    """
    line = f"{result['score']:5.1f} / {result['max_score']:4.1f}  {result['status']}"
    waiting = result.get("to_grade_by_hand", 0)
    if waiting:
        line += f"  ({waiting:g} of the points still to grade by hand)"
    return line


#: The share of the graded students (at least two) whose time limits, once reached, the summary opens with
MANY_TIME_LIMITED = 0.1
#: How much longer the limits the summary suggests for grading again are
LONGER_LIMITS = 3


def time_limit_warning(report: dict, rerun: str | None) -> str | None:
    """The summary's first line when many students reached a time limit: how many, under which
    limits, and the command that grades them again with longer ones (None when few did)."""
    limited, results = report.get("time_limited") or [], report["results"]
    if len(limited) < 2 or len(limited) < MANY_TIME_LIMITED * len(results):
        return None
    limits = report.get("limits") or {}
    text = (f"{len(limited)} of {len(results)} students reached a time limit ({limits.get('cell_timeout')} s a "
            f"cell, {limits.get('notebook_timeout')} s a notebook), which on a busy or slow machine a correct "
            "notebook can: their lost points may be the machine's")
    if rerun:
        text += f". Grade them again with longer limits (hand grades are kept):\n  {rerun}"
    return text


def rerun_command(args, options: GradingOptions, limits: dict) -> str:
    """The command this run was, runnable from any folder (every path absolute, this environment's
    interpreter by its path), with the time limits :data:`LONGER_LIMITS` times longer."""
    import shlex
    import sys

    again = dataclasses.replace(
        options, cell_timeout=int(limits["cell_timeout"] * LONGER_LIMITS),
        notebook_timeout=int(limits["notebook_timeout"] * LONGER_LIMITS),
        config_file=(options.config_file or Path(CONFIG_FILE)).resolve(),
        new_secret=False)            # a new secret is asked for once, by the run that makes it
    return shlex.join([sys.executable, "-m", "course_grader", str(Path(args.submissions).resolve()),
                       "--assignment", args.assignment, *as_arguments(again)])


def print_summary(report: dict, rerun: str | None = None):
    from .report import terminal_text

    results = report["results"]
    warning = time_limit_warning(report, rerun)
    if warning:
        print(f"\n{warning}")   # counts, limits and the instructor's own command: nothing of a submission
    print(f"\n{report['assignment']}: {report['graded']} graded, {report['unreadable']} unreadable, "
          + (f"{report['no_notebook']} with no notebook, " if report.get("no_notebook") else "") +
          f"{report['failed']} failed, " + (f"{report['not_graded']} not graded (stopped), "
                                            if report.get("not_graded") else "") +
          f"{report['flagged']} flagged, in {report['seconds']:.0f} s "
          f"({report['submissions_per_minute']:.1f} submissions per minute)")
    width = max(len(terminal_text(r["student"])) for r in results)
    for r in results:   # everything quoted from a submission is escaped: it cannot forge a line
        line = f"  {terminal_text(r['student']):<{width}}  {score_line(r)}"
        if r.get("handed_in"):
            line += f"  from {terminal_text(r['handed_in'])}"
        if r.get("given_id"):
            line += f"  (in the collection: {terminal_text(r['given_id'])})"
        extra = r["notes"] + [f"flag: {f}" for f in r["flags"]] + r["events"]
        print(line + ("  -- " + terminal_text("; ".join(extra)) if extra else ""))
    print_upload(report)
    waiting = sum(r.get("to_grade_by_hand", 0) for r in results)
    # A report of this version says the command in full (runnable as printed); an older one does not
    command = report.get("feedback_command") or f"nbgrader generate_feedback {report['assignment']} --force"
    if waiting:
        print(f"{waiting:g} points in all are still to grade by hand (the CSV's to_grade_by_hand column): "
              f"grade them in nbgrader's formgrader, then run `{terminal_text(command)}` (instructors.md)")
    print("time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in report["phases_seconds"].items()))
    print(f"grades: {report['grades_csv']}")
    print(f"feedback: {report['course_dir']}/feedback/<student>/{report['assignment']}/")
    print(f"gradebook: {report['course_dir']}/gradebook.db (nbgrader formgrader and export work on it)")


def print_upload(report: dict):
    """What of the upload was not graded, each entry by its path and why; the rest counted."""
    from .report import terminal_text

    verdicts = report.get("upload") or {}
    if not verdicts:
        return
    set_aside = [(path, verdict) for path, verdict in verdicts.items() if verdict.startswith("not graded")]
    beside = sum(verdict.startswith("beside") for verdict in verdicts.values())
    if set_aside:
        print(f"not graded ({len(set_aside)} of the upload's {len(verdicts)} files and folders):")
        for path, verdict in set_aside:
            print(f"  {terminal_text(path)}: {terminal_text(verdict[len('not graded: '):])}")
    print(f"the upload: {len(verdicts)} files and folders, {beside} of them beside their student's notebook; "
          f"each one's verdict: {report['course_dir']}/grading-{report['assignment']}.json (upload)")


def _course_options(parser):
    """The options that say which course: the assignment, and its configuration, source folder, id and
    course directory (:data:`course_grader.options.COURSE_OPTIONS`)."""
    parser.add_argument("--assignment", required=True,
                        help="assignment id: a folder of the source directory (solutions/ in this course)")
    add_arguments(parser, COURSE_OPTIONS)


def merge_main(argv) -> int:
    parser = argparse.ArgumentParser(
        prog=f"{PROG} merge",
        description="Combine the course directories of --shard runs into one course directory: "
                    "gradebook, submitted and autograded notebooks, feedback, grades CSV.")
    parser.add_argument("shards", type=Path, nargs="+", help="the shards' course directories")
    _course_options(parser)
    args = parser.parse_args(argv)
    options = from_arguments(args)
    from . import grade as grading

    report = grading.merge(args.shards, args.assignment, options.course_dir, options.config_file,
                           options.csv_path, options.course, options.course_config)
    print(f"{args.assignment}: merged {len(report['results'])} students from {len(args.shards)} shards "
          f"({report['graded']} graded, {report['unreadable']} unreadable, {report['failed']} failed, "
          f"{report['flagged']} flagged); grades: {report['grades_csv']}")
    return 0 if report["failed"] == 0 else 1


def _stop(signum, frame):
    raise KeyboardInterrupt   # SIGTERM stops the run as Ctrl-C does: every child stopped, the graded kept


def main(argv=None):
    import sys

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["merge"]:
        return merge_main(argv[1:])
    if argv[:1] == ["practice"]:
        from .practice import main as practice_main
        return practice_main(argv[1:])
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION,
                                     epilog="python -m course_grader merge SHARD_DIR... --assignment A "
                                            "combines the course directories of --shard runs.\n"
                                            "python -m course_grader practice NOTEBOOK gives a student "
                                            "practice feedback on their own notebook (not a grade).",
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="folder or .zip of submitted notebooks")
    _course_options(parser)
    add_arguments(parser, [name for name in OPTIONS if name not in COURSE_OPTIONS])
    args = parser.parse_args(argv)
    options = from_arguments(args)
    from . import grade as grading
    from .sandbox import SandboxUnavailable

    signal.signal(signal.SIGTERM, _stop)
    try:
        report = grading.grade(args.submissions, args.assignment, options)
    except SandboxUnavailable as error:
        raise SystemExit(f"not grading: {error}") from None
    except KeyboardInterrupt:
        raise SystemExit("grading stopped; the gradebook holds the students graded in full, no one else") from None
    if not options.quiet:
        if report["results"]:
            print_summary(report, rerun_command(args, options, report["limits"]))
        else:
            print(f"{args.assignment}: no students in shard {options.shard[0]}/{options.shard[1]}")
    # Every submission graded (possibly as the blank exercise, with a note): success.  Non-zero
    # only when the run could not grade someone at all, or was stopped (130, as for Ctrl-C).
    if report["not_graded"]:
        return 130
    return 0 if report["failed"] == 0 else 1
