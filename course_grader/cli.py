"""The grading command's arguments and its summary: ``python -m course_grader SUBMISSIONS --assignment A``."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import grade as grading
from .report import terminal_text
from .sandbox import SandboxUnavailable


def print_summary(report: dict):
    results = report["results"]
    print(f"\n{report['assignment']}: {report['graded']} graded, {report['unreadable']} unreadable, "
          f"{report['failed']} failed, "
          f"{report['flagged']} flagged, in {report['seconds']:.0f} s "
          f"({report['submissions_per_minute']:.1f} submissions per minute)")
    width = max(len(terminal_text(r["student"])) for r in results)
    for r in results:   # everything quoted from a submission is escaped: it cannot forge a line
        manual = r.get("manual_points", 0)
        line = (f"  {terminal_text(r['student']):<{width}}  {r['score']:5.1f} / {r['max_score'] - manual:4.1f}"
                f"{' autograded' if manual else ''}  {r['status']}")
        if manual:
            line += f"  (+ {manual:g} points to grade by hand)"
        if r.get("given_id"):
            line += f"  (in the collection: {terminal_text(r['given_id'])})"
        extra = r["notes"] + [f"flag: {f}" for f in r["flags"]] + r["events"]
        print(line + ("  -- " + terminal_text("; ".join(extra)) if extra else ""))
    manual = sum(r.get("manual_points", 0) for r in results)
    if manual:
        print(f"{manual:g} points in all are graded by hand: grade them in nbgrader's formgrader, then "
              f"run `nbgrader generate_feedback {report['assignment']} --force` (instructors.md)")
    print("time: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in report["phases_seconds"].items()))
    print(f"grades: {report['grades_csv']}")
    print(f"feedback: {report['course_dir']}/feedback/<student>/{report['assignment']}/")
    print(f"gradebook: {report['course_dir']}/gradebook.db (nbgrader formgrader and export work on it)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=grading.__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", type=Path, help="folder or .zip of submitted notebooks")
    parser.add_argument("--assignment", required=True, help="assignment id: a folder of the source directory (solutions/ in this course)")
    parser.add_argument("--config", type=Path, default=None,
                        help="the course's nbgrader configuration (default: ./nbgrader_config.py)")
    parser.add_argument("--source-dir", type=Path, default=None,
                        help="the course's nbgrader source folder, one subfolder per assignment "
                             "(default: the configuration's CourseDirectory.source_directory)")
    parser.add_argument("--course-id", default=None, help="nbgrader course id (default: the configuration's)")
    parser.add_argument("--course-dir", type=Path, default=None,
                        help="nbgrader course directory for the gradebook and results "
                             "(default: the configuration's CourseDirectory.root)")
    parser.add_argument("--workers", type=int, default=None, help="parallel workers (default: one per core)")
    parser.add_argument("--student-regex", default=None,
                        help="regex with a (?P<student>...) group, matched against each notebook's path "
                             "inside SUBMISSIONS; e.g. '^(?P<student>[^_]+)_' for Canvas downloads")
    parser.add_argument("--cell-timeout", type=int, default=None, help="seconds per cell")
    parser.add_argument("--notebook-timeout", type=int, default=None, help="seconds per notebook")
    parser.add_argument("--memory-mb", type=int, default=None, help="memory per submission, MiB")
    parser.add_argument("--csv", type=Path, default=None, help="grades CSV (default: COURSE_DIR/grades-ASSIGNMENT.csv)")
    parser.add_argument("--no-feedback", action="store_true", help="skip the feedback HTML")
    parser.add_argument("--secret-seed", default=None,
                        help="the secret hidden tests draw their inputs from (default: the file "
                             ".hidden-tests-secret in the course directory, created if missing)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    args = parser.parse_args(argv)
    limits = {"cell_timeout": args.cell_timeout, "notebook_timeout": args.notebook_timeout,
              "memory_mb": args.memory_mb}
    try:
        report = grading.grade(args.submissions, args.assignment, args.course_dir, args.workers,
                               args.student_regex, not args.no_feedback, limits, args.csv, args.quiet,
                               args.config, args.secret_seed,
                               {"source_directory": args.source_dir.resolve() if args.source_dir else None,
                                "course_id": args.course_id})
    except SandboxUnavailable as error:
        raise SystemExit(f"not grading: {error}") from None
    if not args.quiet:
        print_summary(report)
    # Every submission graded (possibly as the blank exercise, with a note): success.  Non-zero
    # only when the run could not grade someone at all.
    return 0 if report["failed"] == 0 else 1
