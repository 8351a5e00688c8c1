"""nbgrader configuration of the course.

The course directory is this folder, ``autograder/``: run nbgrader's own
commands from here (``cd autograder && nbgrader generate_assignment a1_softmax_additive``),
or use ``autograder/grade.py``, which reads this file too.  The assignments'
sources are ``solutions/`` and their released versions ``exercises/``; what
grading produces (``gradebook.db``, ``submitted/``, ``autograded/``,
``feedback/``) lands here and is ignored by git.  ``--course-dir`` moves it.

Beyond nbgrader's defaults, every submission is executed in the grading
sandbox with limits for the whole notebook, stderr does not zero a test,
tests are confirmed in a clean process, and feedback hides hidden tests (see
``autograder/preprocessors.py`` and the instructors' guide in the book).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, ClearHiddenTests, ClearOutput, DeduplicateIds, GetGrades,
    IgnorePattern, LimitOutput, OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from autograder.preprocessors import (  # noqa: E402
    BoundedExecute, CleanRecheck, ForgetUnknownCells, HideHiddenTestDetails, ScoreWithoutStderr)

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

c.CourseDirectory.course_id = "attention-transformers"
c.CourseDirectory.root = str(HERE)
c.CourseDirectory.source_directory = str(REPOSITORY / "solutions")
c.CourseDirectory.release_directory = str(REPOSITORY / "exercises")

# Deleted test cells come back (edited ones always do, by checksum); renamed ones are the student's.
c.OverwriteCells.add_missing_cells = True
c.Autograde.sanitize_preprocessors = [
    ClearOutput, DeduplicateIds, ForgetUnknownCells, OverwriteKernelspec, OverwriteCells, CheckCellMetadata,
]

c.Autograde.autograde_preprocessors = [
    BoundedExecute,       # sandboxed kernel; per-notebook, per-cell and output limits; survives kernel deaths
    ScoreWithoutStderr,   # warnings on stderr do not zero a test; no forged partial credit
    CleanRecheck,         # tests confirmed with the student's code in a separate, clean process
    IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties,
    CheckCellMetadata,
]
c.GenerateFeedback.preprocessors = [
    GetGrades, HideHiddenTestDetails, ClearHiddenTests, CSSHTMLHeaderPreprocessor,
]

# Limits per submission: the defaults are in autograder/limits.py.  Override them for this
# course here (c.GradingLimits.cell_timeout = 60), or for one run with grade.py's
# --cell-timeout, --notebook-timeout and --memory-mb.
