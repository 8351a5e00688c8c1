"""A grading worker's own memory stays under the bound the instructor page states, whatever the replies.

The clean re-check reads every reply of the student's process in the grading
worker (``course_grader/recheck/wire_format.py``); the kernel and the re-check's
student process are sandboxed and bounded by their own address-space limit,
the worker is not.  Each submission here is graded alone, through one real
worker of :func:`course_grader.grade.grade`, and the worker's own peak
resident memory is read (``tests/worker_peaks.py``): the honest solution, and
the reply attacks that cost a worker most (``reply_attack_notebooks.py``;
``benchmarks/grader_memory.py`` measures every attack of the course's tests).

Two things are checked: every peak is under the stated bound, and each attack
costs no more than its share of the format's limits above the honest peak,
so that a reader that opens the reply as an archive (``np.load``: 476 MB for
the million-entry archive at ab64776) or copies the frame once more fails
here even where the total would still fit.  The assignment is 9 (BLEU), where
the reply attacks cost a worker most in ``benchmarks/grader_memory.py``.
"""

import os

import pytest

from grading_support import LIMITS, ROOT, cell_scores, write
from reply_attack_notebooks import MAX_FRAME_BYTES, reply_attack_submissions
from worker_peaks import WorkerPeaks

A = "a9_bleu"
MIB = 2 ** 20
#: The bound on one grading worker's resident memory that ``book/grading_sandbox.md`` states, MiB.
WORKER_BOUND_MIB = 768
FRAME_MIB = MAX_FRAME_BYTES // MIB

#: What each attack may add to the honest worker's peak, MiB (measured on 2 busy cores: +44, +201, +455).
ALLOWANCE_MIB = {
    # refused once its header is read: at most the frame, never an object per archive member
    "archive": FRAME_MIB,
    # the largest reply a test's name holds, the next one being read (one buffer each: the arrays
    # share it), and what their headers build
    "largest-values": 4 * FRAME_MIB,
    # the same, with a header of 4 MiB of blanks read while one is held: only the bound
    "held-and-widest": WORKER_BOUND_MIB,
}


def _grade_alone(folder, student, notebook):
    from course_grader import grade

    write(notebook, folder / "inbox" / f"{student}.ipynb")
    with WorkerPeaks(os.getpid()) as peaks:
        report = grade.grade(folder / "inbox", A, course_dir=folder / "course", workers=1, **LIMITS, quiet=True,
                             feedback=False, config_file=ROOT / "nbgrader_config.py")
    report["course"] = folder / "course"
    assert len(peaks.peaks) == 1, peaks.peaks          # one worker, watched from start to end
    return report, max(peaks.peaks.values()) / MIB


@pytest.fixture(scope="module")
def peaks(tmp_path_factory):
    from grading_support import solved_notebook

    found = {}
    submissions = {"honest": solved_notebook(A), **reply_attack_submissions(A, list(ALLOWANCE_MIB))}
    for student, notebook in submissions.items():
        report, peak = _grade_alone(tmp_path_factory.mktemp(student), student, notebook)
        found[student.removeprefix("reply-")] = (report, peak)
    return found


def test_the_attacks_are_graded_and_earn_nothing(peaks):
    report, _ = peaks["honest"]
    assert report["failed"] == 0 and sum(cell_scores(report, "honest").values()) > 0
    for attack in ALLOWANCE_MIB:
        report, _ = peaks[attack]
        assert report["failed"] == 0 and set(cell_scores(report, f"reply-{attack}").values()) == {0.0}, attack


def test_a_worker_stays_under_the_stated_bound(peaks):
    for name, (_, peak) in peaks.items():
        assert peak < WORKER_BOUND_MIB, f"{name}: {peak:.0f} MiB"


@pytest.mark.parametrize("attack", list(ALLOWANCE_MIB))
def test_an_attack_costs_at_most_its_share_of_the_limits(peaks, attack):
    honest, peak = peaks["honest"][1], peaks[attack][1]
    assert peak - honest < ALLOWANCE_MIB[attack], f"{attack}: {peak:.0f} MiB, honest {honest:.0f} MiB"


def test_the_instructor_page_states_the_bound():
    page = (ROOT / "book" / "grading_sandbox.md").read_text()
    assert f"{WORKER_BOUND_MIB} MiB" in page and "benchmarks/grader_memory.py" in page
