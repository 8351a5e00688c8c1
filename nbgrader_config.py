"""nbgrader configuration of the course.

Run nbgrader's own commands from the repository's root, where this file is
(``nbgrader generate_assignment a1_softmax_additive``), or the course's grading
command, ``python -m course_grader``, which reads this file too.  The
assignments' sources are ``solutions/`` and their released versions
``book/exercises/`` (pages of the book).  What grading produces (``gradebook.db``, ``submitted/``,
``autograded/``, ``feedback/``, ``logs/``, the grades CSVs) lands in the
course directory, ``grading/`` by default (ignored by git); ``--course-dir``
moves it.

Beyond nbgrader's defaults, every submission is executed in the grading
sandbox with limits for the whole notebook, stderr does not zero a test,
hidden tests run only in the grader (never in the student's kernel), every
test is confirmed in a clean process, and what the submission put in its
outputs and Markdown is sanitised before anyone opens it (see
:mod:`course_grader.preprocessors` and the instructors' guide in the book).
"""

from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor, CoalesceStreamsPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, ClearOutput, DeduplicateIds, IgnorePattern,
    LimitOutput, OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from course_grader.feedback import (
    FeedbackExporter, FeedbackGrades, SanitizeSubmission, safe_links_in_every_html_export)
from course_grader.preprocessors import (
    BoundedExecute, CleanRecheck, ForgetUnknownCells, RepairCellMetadata, ScoreWithoutStderr, WriteGradingReport)

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.CourseDirectory.course_id = "attention-transformers"
HERE = Path(__file__).resolve().parent
c.CourseDirectory.root = str(HERE / "grading")
c.CourseDirectory.source_directory = str(HERE / "solutions")
c.CourseDirectory.release_directory = str(HERE / "book" / "exercises")   # pages of the book
# Each assignment's catalogue of plausible wrong answers (course_grader.mistakes) stays with the
# instructor: generate_assignment does not release it.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "mistakes.py"]

# Deleted test cells come back (edited ones always do, by checksum); renamed ones are the student's.
c.OverwriteCells.add_missing_cells = True
c.Autograde.sanitize_preprocessors = [
    ClearOutput, RepairCellMetadata, DeduplicateIds, ForgetUnknownCells, OverwriteKernelspec, OverwriteCells,
    CheckCellMetadata,
]

c.Autograde.autograde_preprocessors = [
    BoundedExecute,       # sandboxed kernel; per-notebook, per-cell and output limits; survives kernel deaths
    CoalesceStreamsPreprocessor,  # one print, one output: how the kernel's flushes split it varies run to run
    ScoreWithoutStderr,   # warnings on stderr do not zero a test; no forged partial credit
    CleanRecheck,         # tests confirmed with the student's code in a separate, clean process
    WriteGradingReport,   # what happened: a JSON report, a "Grading notes" cell, the gradebook's flag
    SanitizeSubmission,   # the submission's HTML, SVG, scripts and output metadata made inert
    # nbgrader's own steps, in its order: a course's configuration may switch on ClearMetadataPreprocessor
    IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties,
    CheckCellMetadata,
]
c.CoalesceStreamsPreprocessor.enabled = True    # nbconvert's preprocessors are off unless enabled
# FeedbackGrades: nbgrader's GetGrades, and which cells still await a hand grade (the page says so)
c.GenerateFeedback.preprocessors = [
    FeedbackGrades, ClearHiddenTests, SanitizeSubmission, CSSHTMLHeaderPreprocessor,
]
# Markdown's own links and images keep http(s), mailto and relative URLs only: in the feedback,
# and in every page this process renders (the formgrader's).  The feedback page is the course's
# template (course_grader/templates/course_feedback): MathJax inlined, outputs that wrap.
c.GenerateFeedback.exporter_class = FeedbackExporter
safe_links_in_every_html_export()
# Feedback pages are opened by instructors too: nothing from a submission may run in them.
c.SanitizeHTML.enabled = True          # nbconvert's preprocessors are off unless enabled
c.HTMLExporter.sanitize_html = True

# The exercises ask for NumPy: the layers they re-implement cannot be imported while grading
# (nor, for BLEU, the library the course checks its own solution against).
c.GradingPolicy.forbidden_modules = {"*": ["tensorflow", "keras"],
                                     "a9_bleu": ["tensorflow", "keras", "sacrebleu"]}

# Limits per submission: the defaults are in course_grader/limits.py.  Override them for this
# course here (c.GradingLimits.cell_timeout = 60), or for one run with the grading command's
# --cell-timeout, --notebook-timeout and --memory-mb.
