"""The clean re-check: every test that passed in the notebook, run again with the student's code apart.

Inside a notebook, the student's code and the tests share one Python process,
so the student's code can switch the tests off.  The re-check runs the
student's cells in a second, sandboxed process and the tests in the grader,
and only plain data crosses between the two.  Its parts, in the order a test
meets them:

* :mod:`~course_grader.recheck.grader_loop` -- the grader's loop
  (:func:`~course_grader.recheck.grader_loop.rerun`): the cells in order, the
  student's in the student's process, the tests here, and each test's verdict;
* :mod:`~course_grader.recheck.test_namespace` -- the notebook's one namespace as
  the tests see it: the student's names read from the student's process when
  a test reads them, a test's names lent to the student's code, and what is
  never lent (a hidden test's expected values);
* :mod:`~course_grader.recheck.mirroring` and :mod:`~course_grader.recheck.sharing`
  -- values both processes hold (a call's arguments, a lent value, a student's
  list a test read, the global random generators' state) kept in step, in place;
* :mod:`~course_grader.recheck.transport` -- the grader's end of the pipe: it
  starts the student's process in the sandbox, carries requests and replies,
  and holds what lives there as :class:`~course_grader.recheck.transport.Remote`
  handles, which never judge themselves;
* :mod:`~course_grader.recheck.student_program` -- the program that runs in the
  sandbox: an IPython shell holding the student's cells, answering requests;
* :mod:`~course_grader.recheck.wire_format` -- the one strict format of every
  message between the two, bounded before anything is built from it (sent as
  source with the student's program, and mirroring's: the sandbox has no
  package to import);
* :mod:`~course_grader.recheck.written_files` -- the files the student's code
  wrote, brought beside the tests;
* :mod:`~course_grader.recheck.call_recording` -- the calls a hidden test makes
  of the student's functions, kept for :mod:`course_grader.mistakes`.

The nbgrader preprocessor that runs it for each notebook is
:class:`course_grader.preprocessors.CleanRecheck`.  This package imports
nothing of its own here, so that importing one part never imports another.
"""
