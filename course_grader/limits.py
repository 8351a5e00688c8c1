"""Every default limit of grading, in one place.

To change a default for every run, change it here.  A course can override the
per-submission limits in ``nbgrader_config.py`` (``c.GradingLimits.cell_timeout
= 60``), an instructor for one run with ``python -m course_grader --cell-timeout``,
``--notebook-timeout`` and ``--memory-mb``, and the sandbox's resource limits
with ``ATTENTION_SANDBOX_<NAME>`` environment variables (``sandbox.py``).
``book/grading_sandbox.md`` lists what happens when each is reached.
"""

#: Seconds one cell of a submission may run.
CELL_SECONDS = 30
#: Seconds the whole notebook may run (and again for the clean re-check of its tests).
NOTEBOOK_SECONDS = 240
#: Memory of a submission, MiB: its processes' address space plus the files it writes (in memory).
MEMORY_MB = 2048
#: Output kept per notebook, bytes.
MAX_OUTPUT_BYTES = 1_000_000
#: Output after which a cell is interrupted, bytes.
FLOOD_BYTES = 20_000_000
#: Kernel restarts per notebook (after ``os._exit``, a crash, a kernel that ignores interrupts).
MAX_RESTARTS = 3
#: Largest file read as a student's notebook, bytes (a bigger one is graded as the blank, with a note).
NOTEBOOK_BYTES = 100 * 2 ** 20
#: Files a student hands in beside the notebooks, bytes in all (more are left out, with a note).
FILES_PER_STUDENT_BYTES = 20 * 2 ** 20
#: Bytes the zips of an upload may unzip to in all (zips inside zips included); files beyond are not
#: extracted, and the run's account says so.
UPLOAD_BYTES = 4 * 2 ** 30

#: The sandbox's resource limits for any program run in it (``sandbox.command``).
SANDBOX = {
    "memory_mb": MEMORY_MB,  # address space of every process (RLIMIT_AS)
    "cpu_seconds": 600,      # CPU time of every process (RLIMIT_CPU)
    "wall_seconds": 0,       # whole sandbox, enforced by the supervisor; 0 = no deadline
    "processes": 64,         # processes and threads of the sandbox user (RLIMIT_NPROC)
    "file_mb": 64,           # largest file it may write (RLIMIT_FSIZE)
    "tmp_mb": 128,           # in-memory files: /tmp, /dev/shm and the working directory together
                             # (one tmpfs, counted in memory_mb: the address space gets the rest)
    "open_files": 512,       # RLIMIT_NOFILE
}

#: Questions one test may ask of the student's objects in the clean re-check (``len``, an item, an
#: attribute, ``str``, the next value of a generator), each a round trip to the student's process:
#: past this many the test fails, so that an object built to be asked for ever (an always-equal
#: object whose every item is itself) costs a test a few seconds, not its whole time limit.
OBJECT_QUESTIONS_PER_TEST = 10_000

#: A grading kernel's sandbox gets the notebook's time plus this much CPU time, seconds.
KERNEL_CPU_SLACK_SECONDS = 30
#: ... and its supervisor this much wall-clock time beyond the notebook's deadline.
KERNEL_WALL_SLACK_SECONDS = 15
#: The clean re-check's sandbox: wall-clock time beyond the notebook's time, seconds.
RECHECK_WALL_SLACK_SECONDS = 30
#: A grading worker that reports nothing for 3 x the notebook's time + this many seconds is stopped.
WORKER_SILENCE_SLACK_SECONDS = 120
