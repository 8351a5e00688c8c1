"""nbgrader preprocessors that make autograding bounded, fair and hard to fool.

the course's ``nbgrader_config.py`` puts them into nbgrader's own pipeline, so
plain ``nbgrader autograde`` and ``nbgrader generate_feedback`` use them too:

* :class:`BoundedExecute` (replaces nbgrader's ``Execute``): every notebook runs
  in the sandboxed kernel (:mod:`course_grader.sandbox`) under a wall-clock limit for
  the *whole* notebook, a per-cell limit and an output cap.  A kernel that dies
  (``os._exit``, memory) or stops answering is restarted, the earlier cells are
  replayed, and grading goes on: the student loses the cell that killed it, and
  every cell that could not run gets an explicit error, never silent full marks.
* :class:`ScoreWithoutStderr`: nbgrader scores a test cell with *any* stderr
  output as 0; a NumPy or TensorFlow warning must not zero a correct answer.
  Also turns an ``execute_result`` in a test cell into plain display output, so
  no submission can forge nbgrader's "partial credit" value.
* :class:`CleanRecheck`: every test that passed inside the notebook is run again
  with the student's code in a separate sandboxed process and the test code in
  the grader (:mod:`course_grader.recheck`); a test that only passes inside the
  notebook fails, and the submission is flagged for review.

Hidden tests never run in the student's kernel: :class:`BoundedExecute` cuts
them out of the test cells before the kernel starts
(:func:`withhold_hidden_tests`) and :class:`CleanRecheck` runs the whole test
cell in the grader; a hidden test that fails there scores 0 with a message
that names the test's own complaint, never its source or its data
(:func:`course_grader.recheck.hidden_failure_message`).

Everything that happens to a submission (timeouts, kernel deaths, flags) goes
into the notebook's grading report (:func:`course_grader.report.grading_report`);
:class:`course_grader.report.WriteGradingReport`, next in the pipeline, writes
it beside the autograded notebook and as a "Grading notes" cell at the top of
it, so it shows in the formgrader and in the student's feedback.
"""

from __future__ import annotations

import ast
import asyncio
import copy
import os
import re
import shutil
import tempfile
from pathlib import Path
from queue import Empty
from time import monotonic

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_core.utils import ensure_async, run_sync
from nbclient.client import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat.notebooknode import NotebookNode
from traitlets import Bool, Dict, Integer, List, Unicode, default
from traitlets.config import LoggingConfigurable

from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.preprocessors import Execute, NbGraderPreprocessor

from . import hidden_tests
from . import limits as default_limits
from . import mistakes, recheck, sandbox
from .report import grading_report, note_for_review

KERNELS_DIR = str(Path(__file__).resolve().parent / "kernels")
#: the error a hidden test that fails in the clean re-check leaves in its cell (it scores 0)
HIDDEN_FAILED = "HiddenTestFailed"
#: nbgrader's resources key for the submission's deadline (time.monotonic(), this process)
DEADLINE = "grading_deadline"
#: Catalogues of mistakes, built once per process: (source notebook, its mtime) -> Diagnoser
_DIAGNOSERS: dict = {}


class GradingLimits(LoggingConfigurable):
    """The limits every submission runs under (``c.GradingLimits.*`` in the config)."""

    cell_timeout = Integer(default_limits.CELL_SECONDS, help="Seconds one cell may run.").tag(config=True)
    notebook_timeout = Integer(default_limits.NOTEBOOK_SECONDS,
                               help="Seconds the whole notebook may run.").tag(config=True)
    memory_mb = Integer(default_limits.MEMORY_MB, help="Address space of the student's processes, MiB.").tag(config=True)
    max_output_bytes = Integer(default_limits.MAX_OUTPUT_BYTES, help="Output kept per notebook.").tag(config=True)
    flood_bytes = Integer(default_limits.FLOOD_BYTES,
                          help="Output after which a cell is interrupted.").tag(config=True)
    max_restarts = Integer(default_limits.MAX_RESTARTS, help="Kernel restarts per notebook.").tag(config=True)

    def sandbox_limits(self, wall_seconds: float) -> dict:
        return {"memory_mb": self.memory_mb,
                "cpu_seconds": self.notebook_timeout + default_limits.KERNEL_CPU_SLACK_SECONDS,
                "wall_seconds": int(wall_seconds) + default_limits.KERNEL_WALL_SLACK_SECONDS}


class GradingPolicy(LoggingConfigurable):
    """What a submission may use (``c.GradingPolicy.*`` in the config)."""

    forbidden_modules = Dict(
        {}, help="Modules a submission may not import, per assignment id; the key '*' applies to every "
                 "assignment without its own entry.  Enforced by the sandbox's view of the Python "
                 "installation (sandbox.command(forbid=...)), in the notebook and in the re-check.",
    ).tag(config=True)

    def forbidden(self, assignment: str) -> list[str]:
        modules = self.forbidden_modules
        return list(modules.get(assignment, modules.get("*", [])))


def error_output(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue,
                        traceback=[f"\x1b[0;31m{ename}\x1b[0m: {evalue}"])


def _grade_id(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def _is_test(cell) -> bool:
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def withhold_hidden_tests(nb, resources, config=None) -> dict[int, str]:
    """Cut every hidden-test region out of the test cells; returns ``{cell index: full source}``.

    Runs before the student's kernel starts, so that no hidden test, and none
    of its data, ever enters the student's process: :class:`CleanRecheck` runs
    the whole test cell later, in the grader, against the student's functions.
    The cells' ids go into the report as *pending*; CleanRecheck settles them,
    and :class:`~course_grader.report.WriteGradingReport` scores any it did not
    settle as failed (a pipeline without CleanRecheck cannot award hidden points).
    """
    marks = hidden_tests.delimiters(config)
    report = grading_report(resources)
    withheld = {}
    for index, cell in enumerate(nb.cells):
        if not _is_test(cell) or not hidden_tests.has_markers(cell.source, marks):
            continue
        split = hidden_tests.withhold(cell.source, marks)
        if split.problem:           # the whole cell is withheld: the instructor should fix the markers
            report["events"].append({
                "cell": index, "grade_id": _grade_id(cell), "kind": "hidden_markers",
                "message": f"the hidden-test markers do not pair up ({split.problem}), so the whole "
                           "cell ran only in the grader"})
        withheld[index] = cell.source
        cell.source = split.visible
    report["hidden_pending"] = sorted(_grade_id(nb.cells[i]) for i in withheld)
    return withheld


# ---------------------------------------------------------------------------
# Sanitizing
# ---------------------------------------------------------------------------

class RepairCellMetadata(NbGraderPreprocessor):
    """nbgrader metadata that nbgrader cannot read is repaired or dropped, so the notebook is graded.

    A student's editor (or the student) can leave a cell's nbgrader metadata
    malformed: not a mapping, points that are not a number, an id that is a
    list, a schema version nbgrader does not know.  nbgrader then refuses the
    whole notebook.  Here a cell whose id is one of the assignment's gets that
    cell's metadata as released (from the gradebook; nothing else of the
    student's is trusted anyway), and any other malformed metadata is dropped,
    which makes the cell the student's own.  Each repair is noted.
    """

    def preprocess(self, nb, resources):
        names = resources["nbgrader"]
        with Gradebook(names["db_url"]) as gb:
            notebook = gb.find_notebook(names["notebook"], names["assignment"])
            points = {c.name: c.max_score for c in notebook.grade_cells}
            solutions = {c.name for c in notebook.solution_cells}
            tasks = {c.name for c in notebook.task_cells}
            sources = {c.name: (c.cell_type, c.locked) for c in notebook.source_cells}
        repaired = []
        for index, cell in enumerate(nb.cells):
            if "nbgrader" not in cell.metadata:
                continue
            info = cell.metadata["nbgrader"]
            if _well_formed(info):
                continue          # nbgrader's own checks take it from here
            grade_id = info.get("grade_id") if isinstance(info, dict) else None
            if isinstance(grade_id, str) and sources.get(grade_id, (None,))[0] == cell.cell_type:
                released = {"grade": grade_id in points, "grade_id": grade_id,
                            "locked": bool(sources[grade_id][1]), "schema_version": 3,
                            "solution": grade_id in solutions, "task": grade_id in tasks}
                if grade_id in points:
                    released["points"] = points[grade_id]
                cell.metadata["nbgrader"] = NotebookNode(released)
                repaired.append(f"{grade_id} (restored as released)")
            else:
                del cell.metadata["nbgrader"]
                repaired.append(f"cell {index} (dropped: now the student's own)")
        if repaired:
            note_for_review(nb, "malformed nbgrader metadata was repaired: " + ", ".join(repaired[:8]))
        return nb, resources


def _well_formed(info) -> bool:
    """nbgrader metadata with the types nbgrader reads (schema 3)."""
    if not isinstance(info, dict) or info.get("schema_version", 3) != 3:
        return False
    if any(not isinstance(info.get(k, False), bool) for k in ("grade", "solution", "locked", "task")):
        return False
    if not isinstance(info.get("grade_id", ""), str):
        return False
    if info.get("grade") and not isinstance(info.get("points"), (int, float)):
        return False
    return True


class ForgetUnknownCells(NbGraderPreprocessor):
    """Cells whose nbgrader id is not the assignment's lose their nbgrader metadata.

    A submission may rename cell ids.  nbgrader then drops the id but keeps the
    rest of the metadata, and restoring deleted tests
    (``OverwriteCells.add_missing_cells``) trips over the id-less cell.  Here the
    cell simply becomes an ordinary cell of the student's (its code still runs),
    and the real test cells come back as missing ones.
    """

    def preprocess(self, nb, resources):
        names = resources["nbgrader"]
        with Gradebook(names["db_url"]) as gb:
            known = {c.name for c in gb.find_notebook(names["notebook"], names["assignment"]).source_cells}
        renamed = []
        for cell in nb.cells:
            info = cell.metadata.get("nbgrader")
            if info is not None and info.get("grade_id") not in known:
                renamed.append(str(info.get("grade_id")))
                del cell.metadata["nbgrader"]
        if renamed:
            note_for_review(nb, f"cells with unknown nbgrader ids were treated as the student's own: "
                                f"{', '.join(renamed[:8])}")
        return nb, resources


# ---------------------------------------------------------------------------
# Execution
# ---------------------------------------------------------------------------

class _OutOfTime(Exception):
    pass


class _Unresponsive(Exception):
    pass


class BoundedExecute(Execute):
    """nbgrader's ``Execute``, in the sandbox, with limits that hold for the whole notebook."""

    sandbox_kernel = Unicode(
        "attention-sandbox",
        help="Kernel that runs every submission (from course_grader/kernels/); '' = the notebook's own, "
             "without any sandbox.").tag(config=True)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.limits = GradingLimits(parent=self)
        self.shutdown_kernel = "immediate"   # nothing to flush; do not wait for a polite exit

    # -- the kernel -----------------------------------------------------------

    def create_kernel_manager(self):
        if not self.sandbox_kernel:
            return super().create_kernel_manager()
        self._ipc_dir = tempfile.mkdtemp(prefix="ag-ipc-")
        self.km = self.kernel_manager_class(
            kernel_name=self.sandbox_kernel, transport="ipc", ip=os.path.join(self._ipc_dir, "k"),
            kernel_spec_manager=KernelSpecManager(kernel_dirs=[KERNELS_DIR]), config=self.config)
        return self.km

    async def async_start_new_kernel(self, **kwargs):
        env = dict(os.environ)
        remaining = max(1.0, self._deadline - monotonic())
        for key, value in self.limits.sandbox_limits(remaining).items():
            env[f"{sandbox.ENV_PREFIX}_{key.upper()}"] = str(value)
        assignment = (self.resources or {}).get("nbgrader", {}).get("assignment", "")
        env[f"{sandbox.ENV_PREFIX}_FORBID"] = ",".join(GradingPolicy(parent=self).forbidden(assignment))
        env.pop("JPY_PARENT_PID", None)
        kwargs["env"] = env
        await super().async_start_new_kernel(**kwargs)

    start_new_kernel = run_sync(async_start_new_kernel)

    def _forget_kernel_files(self):
        directory = getattr(self, "_ipc_dir", None)
        if directory:
            shutil.rmtree(directory, ignore_errors=True)
            self._ipc_dir = None

    # -- limits ---------------------------------------------------------------

    def _get_timeout(self, cell):
        remaining = self._deadline - monotonic()
        timeout = max(1, int(min(self.limits.cell_timeout, remaining)))
        self.error_on_timeout = {
            "ename": "TimeLimitError",
            "evalue": f"this cell ran for more than {timeout} s and was interrupted "
                      f"(limits: {self.limits.cell_timeout} s per cell, "
                      f"{self.limits.notebook_timeout} s per notebook)",
            "traceback": [f"TimeLimitError: this cell ran for more than {timeout} s and was interrupted"],
        }
        return timeout

    def process_message(self, msg, cell, cell_index):
        msg_type = msg["msg_type"]
        if msg_type in ("stream", "display_data", "execute_result", "update_display_data") \
                or msg_type.startswith("comm"):
            size = _approx_size(msg)
            self._cell_bytes += size
            if self._cell_bytes > self.limits.flood_bytes and not self._flood_interrupted:
                self._flood_interrupted = True
                self._event(cell_index, "output_flood",
                            f"more than {self.limits.flood_bytes // 10**6} MB of output: interrupted")
                asyncio.ensure_future(ensure_async(self.km.interrupt_kernel()))
            if self._kept_bytes + size > self.limits.max_output_bytes:
                if not self._truncation_noted:
                    self._truncation_noted = True
                    cell.outputs.append(NotebookNode(
                        output_type="stream", name="stdout",
                        text=f"\n[output truncated: the notebook may keep at most "
                             f"{self.limits.max_output_bytes // 1000} kB of output]\n"))
                return None
            self._kept_bytes += size
        return super().process_message(msg, cell, cell_index)

    async def _async_responsive(self, timeout: float = 5.0) -> bool:
        msg_id = self.kc.kernel_info()
        deadline = monotonic() + timeout
        while True:
            remaining = deadline - monotonic()
            if remaining <= 0:
                return False
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=remaining))
            except Empty:
                return False
            if msg["parent_header"].get("msg_id") == msg_id:
                return True

    responsive = run_sync(_async_responsive)

    # -- bookkeeping ----------------------------------------------------------

    def _event(self, index, kind, message):
        cell = self.nb.cells[index] if index is not None else None
        grading_report(self.resources)["events"].append({
            "cell": index, "grade_id": _grade_id(cell) if cell is not None else "",
            "kind": kind, "message": message})

    def _start_cell(self, index):
        self._current = index
        self._cell_bytes = 0
        self._flood_interrupted = False
        self._truncation_noted = False

    # -- the notebook ---------------------------------------------------------

    def preprocess(self, nb, resources=None, km=None):
        NotebookClient.__init__(self, nb, km)
        self.reset_execution_trackers()
        self._check_assign_resources(resources)
        self.resources = self.resources if self.resources is not None else {}
        grading_report(self.resources)
        self._deadline = monotonic() + self.limits.notebook_timeout
        # One budget per submission: the clean re-check gets what the notebook's run left.
        self.resources[DEADLINE] = self._deadline
        self._kept_bytes = 0
        self._start_cell(None)
        workdir = self.resources.get("metadata", {}).get("path")
        if workdir and self.sandbox_kernel:
            _, left_out = sandbox.working_files(workdir)
            if left_out:   # the sandbox's in-memory budget: say so, do not skip silently
                self._event(None, "files_left_out",
                            f"files the code cannot read in the sandbox (beyond its "
                            f"{sandbox.limits_from_env()['tmp_mb'] // 2} MiB for handed-in files): "
                            + ", ".join(left_out[:5]) + (" ..." if len(left_out) > 5 else ""))
        withheld = withhold_hidden_tests(nb, self.resources, self.config)
        try:
            self._execute_all()
        finally:
            for index, source in withheld.items():   # the instructor sees the whole test
                self.nb.cells[index].source = source
        self.set_widgets_metadata()
        return self.nb, self.resources

    def _execute_all(self):
        """Run every code cell, restarting a dead or hung kernel, within the notebook's limits."""
        pending = [i for i, c in enumerate(self.nb.cells) if c.cell_type == "code" and c.source.strip()]
        done: list[int] = []
        no_replay: set[int] = set()
        restarts = 0
        while pending:
            self._current = None
            try:
                with self.setup_kernel():
                    info = self.wait_for_reply(self.kc.kernel_info())
                    self.nb.metadata["language_info"] = info["content"]["language_info"]
                    if restarts:
                        self._replay([i for i in done if i not in no_replay])
                    while pending:
                        index = pending[0]
                        if self._deadline - monotonic() < 1:
                            raise _OutOfTime
                        self._start_cell(index)
                        self.preprocess_cell(self.nb.cells[index], self.resources, index)
                        pending.pop(0)
                        done.append(index)
                        self._current = None
                        if _has_error(self.nb.cells[index], "TimeLimitError"):
                            no_replay.add(index)
                            self._event(index, "cell_timeout", "the cell reached its time limit")
                            if not self.responsive():
                                raise _Unresponsive
            except (DeadKernelError, CellTimeoutError, _Unresponsive) as error:
                restarts += 1
                index = self._current
                hung = isinstance(error, (CellTimeoutError, _Unresponsive))
                if index is not None and pending and pending[0] == index:
                    pending.pop(0)
                    done.append(index)
                    no_replay.add(index)
                    if hung:
                        ename, kind, why = (
                            "TimeLimitError", "kernel_unresponsive",
                            f"this cell ran for more than {self.limits.cell_timeout} s and did not stop "
                            "when interrupted")
                    else:
                        ename, kind, why = (
                            "KernelDied", "kernel_died",
                            "the Python process running the notebook died while running this cell (it "
                            f"exceeded the memory limit of {self.limits.memory_mb} MiB, was killed, or exited)")
                    self.nb.cells[index].outputs.append(error_output(
                        ename, f"{why}. The kernel was restarted and the cells before this one were run "
                               "again; later cells ran in the new kernel."))
                    self._event(index, kind, why)
                elif hung:
                    self._event(done[-1] if done else None, "kernel_unresponsive",
                                "the kernel did not recover from an interrupt and was restarted")
                else:
                    self._event(None, "kernel_died", "the kernel died between cells")
                if restarts > self.limits.max_restarts:
                    self._mark_not_run(pending, f"the kernel died {restarts} times; grading stopped")
                    pending = []
            except _OutOfTime:
                self._mark_not_run(pending, f"the notebook reached its time limit of "
                                            f"{self.limits.notebook_timeout} s before this cell ran")
                pending = []
            finally:
                self._forget_kernel_files()

    def _replay(self, indices):
        """Run earlier cells again in a fresh kernel, for their definitions; keep the old outputs."""
        for index in indices:
            if self._deadline - monotonic() < 1:
                raise _OutOfTime
            original = self.nb.cells[index]
            self._start_cell(None)
            self._kept_bytes, kept = 0, self._kept_bytes
            try:
                self.execute_cell(copy.deepcopy(original), index, store_history=False)
            finally:
                self.nb.cells[index] = original
                self._kept_bytes = kept

    def _mark_not_run(self, indices, why):
        for index in indices:
            self.nb.cells[index].outputs = [error_output("NotRun", why)]
        if indices:
            self._event(indices[0], "not_run", f"{len(indices)} cells did not run: {why}")


def _has_error(cell, ename) -> bool:
    return any(o.get("output_type") == "error" and o.get("ename") == ename for o in cell.get("outputs", []))


def _approx_size(msg) -> int:
    content = msg.get("content", {})
    if msg["msg_type"] == "stream":
        return len(content.get("text", ""))
    data = content.get("data") or {}
    if isinstance(data, dict):
        return 100 + sum(len(v) if isinstance(v, str) else len(str(v)) for v in data.values())
    return 100 + len(str(data))


# ---------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------

class ScoreWithoutStderr(NbGraderPreprocessor):
    """In test cells, stderr is shown but not counted as failure; execute results are not scores."""

    allow_partial_credit = Bool(
        False, help="Let a test cell's last value be read as a partial score (nbgrader's feature). "
                    "Off: a submission could forge it.").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if not _is_test(cell):
            return cell, resources
        outputs = []
        for output in cell.outputs:
            if output.output_type == "stream" and output.name == "stderr":
                output = NotebookNode(output_type="stream", name="stdout",
                                      text="[stderr, not counted as a failure]\n" + output.text)
            elif output.output_type == "execute_result" and not self.allow_partial_credit:
                output = NotebookNode(output_type="display_data", data=output.get("data", {}),
                                      metadata=output.get("metadata", {}))
            outputs.append(output)
        cell.outputs = outputs
        return cell, resources


# Things a solution has no business doing: replacing test helpers, hooking IPython,
# leaving the process.  Matching one flags the submission for review (no points change).
TAMPERING_PATTERNS = [
    (r"\b(np|numpy)\s*\.\s*testing\s*\.\s*\w+\s*=(?!=)", "replaces a numpy.testing function"),
    (r"\b(np|numpy)\s*\.\s*(allclose|isclose|array_equal|all|any|abs|max)\s*=(?!=)", "replaces a NumPy function"),
    (r"\bbuiltins\b|__builtins__", "touches Python's builtins"),
    (r"\.events\s*\.\s*register|input_transformers|ast_transformers|set_custom_exc|showtraceback"
     r"|\brun_cell\s*=|\.displayhook|sys\s*\.\s*(excepthook|settrace|setprofile|modules)",
     "hooks into IPython or the interpreter"),
    (r"\bAssertionError\s*=(?!=)|\bassert_\w+\s*=(?!=)|\bcheck_\w+\s*=(?!=)", "replaces a test helper"),
    (r"\bos\s*\.\s*(_exit|kill|fork|setsid)\b|\bsignal\s*\.\s*(signal|alarm|setitimer)\b|\bctypes\b",
     "controls processes or signals"),
    (r"gradebook|\.\./\.\.|/submitted/|/autograded/|/solutions/", "refers to grading files"),
]


class CleanRecheck(NbGraderPreprocessor):
    """Tests that pass inside the notebook must also pass with the student's code in a clean process."""

    patterns = List(help="(regex, reason) pairs that flag a submission for review.").tag(config=True)

    @default("patterns")
    def _patterns_default(self):
        return TAMPERING_PATTERNS

    def preprocess(self, nb, resources):
        report = grading_report(resources)
        self.limits = GradingLimits(parent=self)
        names = resources["nbgrader"]
        with Gradebook(names["db_url"]) as gb:
            source_nb = gb.find_notebook(names["notebook"], names["assignment"])
            sources = {cell.name: cell for cell in source_nb.source_cells}
            tests = {cell.name for cell in source_nb.grade_cells} - {c.name for c in source_nb.solution_cells}
            solutions = [sources[c.name].source for c in source_nb.solution_cells
                         if c.name in sources and sources[c.name].cell_type == "code"]
            cells = self._classify(nb, sources, tests, hidden_tests.delimiters(self.config))
        # The assignment's names: what the instructor's solution cells define.  The gradebook keeps
        # the released version of those cells, which for a whole-cell solution (no BEGIN SOLUTION
        # markers) is only `raise NotImplementedError()`; the source notebook has the real ones.
        api = sorted(_defined_names(solutions + self._source_solutions(names)))
        student_code = "\n".join(c.source for c in cells if c.kind == "student")
        for pattern, reason in self.patterns:
            match = re.search(pattern, student_code)
            if match:
                report["flags"].append(f"the code {reason} ({match.group(0).strip()!r})")
        passed = {c.index for c in cells if c.kind == "test" and not utils.has_failed(nb.cells[c.index])}
        budget = resources.get(DEADLINE, monotonic() + self.limits.notebook_timeout) - monotonic()
        if passed:
            workdir = resources.get("metadata", {}).get("path") or os.getcwd()
            slot = os.environ.get(f"{sandbox.ENV_PREFIX}_SLOT")
            verdicts = recheck.rerun(
                cells, api, workdir, passed, limits={"memory_mb": self.limits.memory_mb},
                slot=int(slot) if slot else None, cell_timeout=self.limits.cell_timeout,
                notebook_timeout=max(0.0, budget),
                forbid=GradingPolicy(parent=self).forbidden(names["assignment"]),
                grader_names=self._grader_names(names) if any(c.hidden for c in cells) else None,
                diagnoser=self._diagnoser(names) if any(c.hidden for c in cells) else None)
            for index, found in sorted(verdicts.diagnoses.items()):
                report.setdefault("diagnoses", []).append(
                    {"cell": index, "grade_id": _grade_id(nb.cells[index]), "mistakes": found})
            for index, reason in sorted(verdicts.failures.items()):
                cell = nb.cells[index]
                if index in verdicts.out_of_time:   # slow, not tampering
                    cell.outputs.insert(0, error_output(
                        "TimeLimitError", f"the submission's time budget of {self.limits.notebook_timeout} s "
                                          "(for running the notebook and re-checking its tests) ran out before "
                                          f"this test was re-checked, so it scores 0 ({reason})"))
                    report["events"].append({"cell": index, "grade_id": _grade_id(cell), "kind": "budget",
                                             "message": "the time budget ran out in the clean re-check"})
                    continue
                if index in verdicts.hidden:   # an honest wrong answer, not tampering
                    cell.outputs.insert(0, error_output(HIDDEN_FAILED, reason))
                    continue
                cell.outputs.insert(0, error_output(
                    "CleanRerunFailed",
                    "this test passed inside the notebook but FAILED when re-run with your code in a "
                    f"separate, clean process, so it scores 0 ({reason})"))
                report["flags"].append(f"test {_grade_id(cell)!r} passes only inside the notebook: {reason}")
            for index, why in sorted(verdicts.unverifiable.items()):
                cell = nb.cells[index]
                if any(c.index == index and c.hidden for c in cells):
                    # no result from the notebook to fall back on: zero, and a human should look
                    cell.outputs.insert(0, error_output(
                        HIDDEN_FAILED, f"the grader could not run this hidden test against your code ({why})"))
                    report["flags"].append(f"hidden test {_grade_id(cell)!r} could not be re-checked: {why}")
                else:   # the in-notebook result stands; the instructor's report says so
                    report["events"].append({
                        "cell": index, "grade_id": _grade_id(cell), "kind": "not_rechecked",
                        "message": f"not re-checked ({why}); the result in the notebook stands"})
            report["recheck_seconds"] = round(verdicts.seconds, 2)
            for index, what in verdicts.events:
                report["events"].append({"cell": index, "grade_id": _grade_id(nb.cells[index]),
                                         "kind": "clean_rerun", "message": what})
        # Every withheld hidden test has now run here, or its cell failed in the notebook already.
        report["hidden_pending"] = []
        return nb, resources

    def _source_notebook(self, names: dict) -> Path:
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(config=self.config)
        return Path(coursedir.format_path(coursedir.source_directory, ".", names["assignment"]),
                    f"{names['notebook']}.ipynb")

    def _source_solutions(self, names: dict) -> list[str]:
        """The source notebook's solution cells (the instructor's code), if it can be read."""
        import nbformat

        try:
            nb = nbformat.read(self._source_notebook(names), as_version=4)
        except (OSError, ValueError):
            return []
        return [cell.source for cell in nb.cells
                if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution")]

    def _diagnoser(self, names: dict):
        """The assignment's catalogue of mistakes (:mod:`.mistakes`), or None if it has none.

        A catalogue that cannot be used (an edit that no longer fits the solution)
        is logged and left out: a diagnosis is a hint, and never stops grading.
        """
        source = self._source_notebook(names)
        catalogue_file = source.parent / mistakes.CATALOGUE_FILE
        key = tuple((str(path), path.stat().st_mtime_ns if path.is_file() else None)
                    for path in (source, catalogue_file))
        if key not in _DIAGNOSERS:
            try:
                catalogue = mistakes.load_catalogue(source.parent) if source.is_file() else []
                _DIAGNOSERS[key] = mistakes.Diagnoser(source, catalogue) if catalogue else None
            except Exception as error:  # noqa: BLE001 - the instructor's file, not the student's
                self.log.warning(f"{catalogue_file}: not used to name mistakes in the feedback ({error})")
                _DIAGNOSERS[key] = None
        return _DIAGNOSERS[key]

    def _grader_names(self, names: dict):
        """``cell -> {"reference": ..., "grading_rng": ...}`` for the hidden tests (:mod:`.hidden_tests`)."""
        from nbgrader.coursedir import CourseDirectory

        coursedir = CourseDirectory(config=self.config)
        reference = hidden_tests.reference_solution(self._source_notebook(names))
        secret = hidden_tests.HiddenTests(parent=self).course_secret(coursedir.root)
        context = (names["assignment"], names["notebook"], names.get("student", ""))

        def grader_names(cell):
            return {"reference": reference,
                    "grading_rng": hidden_tests.rng_factory(secret, context[0], context[1], cell.label,
                                                            context[2])}

        return grader_names

    @staticmethod
    def _classify(nb, sources, tests, marks: hidden_tests.Delimiters) -> list:
        """Instructor cells are trusted only if their source is exactly the gradebook's.

        A test cell's hidden regions are found under the course's markers (``marks``), the ones
        :func:`withhold_hidden_tests` withheld it under.
        """
        cells = []
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or not cell.source.strip():
                continue
            grade_id = _grade_id(cell)
            source_cell = sources.get(grade_id)
            if grade_id in tests and _is_test(cell) and source_cell is not None:
                cells.append(recheck.Cell(index, "test", source_cell.source, grade_id,
                                          hidden_tests.withhold(source_cell.source, marks).regions))
            elif (source_cell is not None and source_cell.locked and not utils.is_solution(cell)
                  and not utils.is_grade(cell) and cell.source == source_cell.source):
                cells.append(recheck.Cell(index, "setup", source_cell.source, grade_id))
            else:
                cells.append(recheck.Cell(index, "student", cell.source, grade_id or f"cell {index}"))
        return cells


def _defined_names(sources) -> set[str]:
    """Top-level names the instructor's solution cells define: the assignment's API."""
    names = set()
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return {n for n in names if not n.startswith("__")}
