"""The course's grader: nbgrader, made bounded, parallel and hard to fool.

The command, ``python -m course_grader SUBMISSIONS --assignment A``
(:mod:`course_grader.cli`, its options declared once in :mod:`course_grader.options`),
runs :func:`course_grader.grade.grade`, which uses:

* :mod:`~course_grader.upload` -- every file and folder of a folder or LMS zip: unzipped, given to a
  student or set aside, each with its verdict;
* :mod:`~course_grader.intake` -- each student's chosen files staged, and the one way a student's
  notebook is read (grading and practice alike);
* :mod:`~course_grader.nbgrader_api` -- the course's ``nbgrader_config.py``, nbgrader's API;
  :mod:`~course_grader.nbgrader_patches` -- the speed-ups inside nbgrader and nbconvert, each
  with the upstream code it replaces fingerprinted;
* :mod:`~course_grader.course_directory` -- what a run writes into the course directory besides
  the grades: put back if it stops early, and its configuration for nbgrader's own commands;
* :mod:`~course_grader.workers` -- one worker per core (one more for a big batch), each grading into
  its own gradebook shard; the pool's steps: start, bring home, replace, stop;
* :mod:`~course_grader.gradebook` -- the shards merged into the course's gradebook; the grades CSV;
* :mod:`~course_grader.progress` -- the progress line.

What nbgrader's pipeline runs on each notebook (named in ``nbgrader_config.py``):

* :mod:`~course_grader.preprocessors` -- one preprocessor per module: repaired
  metadata, bounded execution in the sandbox (the instructor's cells first put back as
  :mod:`~course_grader.instructor_cells` says), stderr that does not zero a test,
  the clean re-check, the grading report written; their settings in
  :mod:`~course_grader.preprocessors.config`;
* :mod:`~course_grader.recheck` -- the clean re-check, one package: its loop
  (tests in the grader), the student's process it talks to (the transport,
  the sandboxed program, the wire format), the files brought back, and the
  call recording the catalogue of mistakes uses;
* :mod:`~course_grader.hidden_tests` -- every rule about hidden tests: their
  markers, withholding them from the kernel, what they get from the grader
  (the reference solution, inputs drawn from the course's secret), what their
  failures may say, and a zero for any that nothing ran;
* :mod:`~course_grader.mistakes` -- the catalogue of plausible wrong answers a
  failed hidden test is matched against;
* :mod:`~course_grader.sandbox` -- runs student code isolated and limited; the
  ``attention-sandbox`` kernel in ``kernels/`` starts IPython through it;
* :mod:`~course_grader.report` -- the typed grading report every preprocessor
  records into, and how it is shown (the JSON report, the notes cell);
* :mod:`~course_grader.cells` -- what a cell is to the grader, and the one way
  a failure is written into it;
* :mod:`~course_grader.feedback` -- the submission's HTML made inert in feedback;
* :mod:`~course_grader.limits` -- every default limit, in one place.

The grader does not import the course's own package: the authoring tools that
do (expected values, student versions) are :mod:`course_authoring`.
"""

import sys as _sys

# jsonschema (under nbformat's validator) checks the "iri" string formats with rfc3987-syntax where
# that is installed (jupyter-events asks for it), and rfc3987-syntax builds three Earley parsers as
# it is imported: 1.4 s of every grading process's start-up, workers included.  Nothing the grader
# validates uses those formats (nbformat checks no formats at all), so jsonschema goes without.
_sys.modules.setdefault("rfc3987_syntax", None)
