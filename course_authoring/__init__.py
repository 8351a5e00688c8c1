"""Authoring the graded work: run when a solution notebook changes, never while grading.

* :mod:`~course_authoring.references` -- the hidden tests' expected values,
  computed with the real Keras layers and written into ``solutions/``;
* :mod:`~course_authoring.assignment_header` -- the cells every assignment
  starts with (instructions, helpers), written into each solution by ``references``;
* :mod:`~course_authoring.exercises` -- ``solutions/`` to the student notebooks
  in ``exercises/``, with ``nbgrader generate_assignment``.

Run them as ``python -m course_authoring.references`` and
``python -m course_authoring.exercises`` from the repository's root.
"""
