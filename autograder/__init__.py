"""The course's autograder: nbgrader, made bounded, parallel and hard to fool.

* ``nbgrader_config.py`` -- the course's nbgrader configuration (this folder is
  the default course directory).
* :mod:`autograder.grade` -- the one command: a folder or zip of submissions in,
  gradebook, grades CSV and feedback out, graded in parallel.
* :mod:`autograder.sandbox` -- runs student code isolated and limited; the
  ``attention-sandbox`` kernel in ``kernels/`` starts IPython through it.
* :mod:`autograder.preprocessors` -- what nbgrader's pipeline runs: bounded
  execution, stderr that does not zero a test, the clean re-run, feedback
  without hidden test code.
* :mod:`autograder.recheck` / :mod:`autograder.recheck_child` -- the clean
  re-run: tests in the grader, student code in a sandboxed process.
* :mod:`autograder.references` -- the tests' expected values, computed with the
  real Keras layers ahead of time and written into ``solutions/``.
* :mod:`autograder.exercises` -- ``solutions/`` to ``exercises/`` with
  ``nbgrader generate_assignment``.
"""
