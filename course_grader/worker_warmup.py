"""What a grading worker would otherwise do on its first submission, done once, in the process
the workers are forked from.

The grading command starts its workers from multiprocessing's *forkserver*
(:func:`course_grader.workers.start_worker_server`): a fresh interpreter that
imports this module once (its ``preload``), then forks a worker whenever the
command asks for one.  Importing it does what each worker did before its first
student was graded: nbgrader's, nbconvert's and SQLAlchemy's imports, the
compiled Jinja templates of the feedback page, the Pygments lexer, nbformat's
and nbgrader's schema validators, the regular expressions they compile (about
6 s of CPU per worker, measured, which a forked worker no longer pays).

Nothing here starts a thread, opens a file that stays open, reads a course or
a submission, or starts a kernel: a fork of this process holds no lock and no
student's data.  Something else may start one in this process (a
``sitecustomize``, a library's native pool): the module counts the process's
threads, Python's and native ones, after the warm-up, and where there is more
than one, :data:`FORK_UNSAFE` says so and the workers start as new interpreters
instead (:func:`course_grader.workers.worker`).
"""

from __future__ import annotations

import importlib
import os
import threading

#: What a worker imports (beyond what the rest of this module does), before or during its first submission
MODULES = ("nbgrader.apps.api", "nbgrader.converters.autograde", "course_grader.workers",
           "course_grader.preprocessors.clean_recheck", "jupyter_client.manager")


def warm_up():
    """Import and exercise, on a notebook made up here, what grading and feedback use."""
    for name in MODULES:
        importlib.import_module(name)
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.nbgraderformat import MetadataValidator
    from sqlalchemy.orm import configure_mappers
    from traitlets.config import Config

    from .feedback import FeedbackExporter
    from . import nbgrader_patches

    nbgrader_patches.for_workers()
    configure_mappers()      # nbgrader's gradebook classes

    answer = {"grade": True, "solution": True, "locked": False, "points": 1, "grade_id": "answer",
              "schema_version": 3}
    notebook = new_notebook(
        cells=[new_markdown_cell("A *warm-up* with $\\sqrt{d_k}$ and `code`."),
               new_code_cell("import numpy as np\n\ndef f(x):\n    return np.exp(x) / 2  # a comment\n",
                             metadata={"nbgrader": answer},
                             outputs=[nbformat.v4.new_output("stream", name="stdout", text="1.0\n")])],
        metadata={"language_info": {"name": "python", "pygments_lexer": "ipython3"},
                  "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.validate(nbformat.reads(nbformat.writes(notebook), as_version=4))
    MetadataValidator().validate_nb(notebook)
    resources = {"nbgrader": {"notebook": "warm-up", "score": 1.0, "max_score": 1.0, "late_penalty": 0,
                              "to_grade_by_hand": 0.0}}
    notebook.cells[1].metadata.nbgrader.update(score=1.0, to_grade_by_hand=False)
    # nbgrader's feedback step configures the exporter (its template folders) as it does here
    feedback_config = GenerateFeedback(coursedir=CourseDirectory(config=Config()), config=Config()).config
    FeedbackExporter(config=feedback_config).from_notebook_node(notebook, resources)


def threads_running() -> int:
    """The process's threads, native ones included (``threading`` counts only Python's)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:      # no /proc: Python's threads are all that can be counted
        return threading.active_count()


try:
    warm_up()
except Exception as error:  # noqa: BLE001 - a cold worker still grades right, only slower
    import sys

    WARM_UP_FAILED = f"{type(error).__name__}: {error}"
    print(f"grading workers start cold: their warm-up failed ({WARM_UP_FAILED})", file=sys.stderr)
else:
    WARM_UP_FAILED = None

#: Why workers must not be forked from this process (None: they may).  A fork inherits every
#: other thread's locks as they were, held half-way, and none of the threads.
FORK_UNSAFE = None
if threads_running() != 1:
    FORK_UNSAFE = f"the process the workers are forked from runs {threads_running()} threads, not one"
