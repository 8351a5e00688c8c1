"""The course's grader: nbgrader, made bounded, parallel and hard to fool.

The command, ``python -m course_grader SUBMISSIONS --assignment A``
(:mod:`course_grader.cli`), runs :func:`course_grader.grade.grade`, which uses:

* :mod:`~course_grader.intake` -- a folder or LMS zip to one staged notebook per student;
* :mod:`~course_grader.nbgrader_api` -- the course's ``nbgrader_config.py``, nbgrader's API;
* :mod:`~course_grader.workers` -- one worker per core, each grading into its own gradebook shard;
* :mod:`~course_grader.gradebook` -- the shards merged into the course's gradebook; the grades CSV;
* :mod:`~course_grader.progress` -- the progress line.

What nbgrader's pipeline runs on each notebook (named in ``nbgrader_config.py``):

* :mod:`~course_grader.preprocessors` -- bounded execution in the sandbox (hidden tests
  withheld from it), stderr that does not zero a test, the clean re-check, repaired
  metadata, the grading policy;
* :mod:`~course_grader.recheck` -- the clean re-check: tests in the grader,
  student code in a sandboxed process (:mod:`~course_grader.recheck_child`),
  talking the wire format of :mod:`~course_grader.recheck_protocol`;
* :mod:`~course_grader.hidden_tests` -- what hidden tests get from the grader: the
  reference solution and inputs drawn from the course's secret;
* :mod:`~course_grader.sandbox` -- runs student code isolated and limited; the
  ``attention-sandbox`` kernel in ``kernels/`` starts IPython through it;
* :mod:`~course_grader.report` -- one writer of what happened: the JSON report, the notes cell, the flag;
* :mod:`~course_grader.limits` -- every default limit, in one place.

The grader does not import the course's own package: the authoring tools that
do (expected values, student versions) are :mod:`course_authoring`.
"""
