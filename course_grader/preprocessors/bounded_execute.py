"""BoundedExecute: nbgrader's ``Execute``, in the sandbox, with limits that hold for the whole notebook.

Every notebook runs in the sandboxed kernel (:mod:`course_grader.sandbox`)
under a wall-clock limit for the *whole* notebook, a per-cell limit and an
output cap.  A kernel that dies (``os._exit``, memory) or stops answering is
restarted, the earlier cells are replayed, and grading goes on: the student
loses the cell that killed it, and every cell that could not run gets an
explicit error, never silent full marks.  Hidden tests are cut out of the test
cells before the kernel starts (:func:`course_grader.hidden_tests.withhold_hidden_tests`)
and put back afterwards, so the instructor sees the whole test.
"""

from __future__ import annotations

import asyncio
import copy
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from queue import Empty
from time import monotonic

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner
from jupyter_core.utils import ensure_async, run_sync
from nbclient.client import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import run_hook
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import DottedObjectName, Type, Unicode

from .. import hidden_tests, instructor_cells, sandbox
from ..cells import KERNEL_DIED, NOT_RUN, TIME_LIMIT, error_output, has_error
from ..kernel_client import PromptKernelClient
from ..report import GradingReport
from .config import DEADLINE, GradingLimits, GradingPolicy

KERNELS_DIR = str(Path(__file__).resolve().parent.parent / "kernels")


class _OutOfTime(Exception):
    pass


class _Unresponsive(Exception):
    pass


class ZygoteKernelProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, except that a sandboxed kernel whose worker has a zygote
    is forked by the zygote for this process directly (:class:`course_grader.sandbox.AttachedProgram`),
    with no launcher process (``sandbox.py kernel``) between: the same program, limits and view.
    Any other kernel starts as jupyter_client starts it."""

    async def launch_kernel(self, cmd: list[str], **kwargs):
        if cmd[-2:-1] == ["kernel"] and cmd[-4:-3] == [sandbox.RUN_SELF]:   # the attention-sandbox kernel
            command_line = sandbox.kernel_command(cmd[-1], env=kwargs.get("env"), workdir=kwargs.get("cwd"))
            program = sandbox.AttachedProgram.start(command_line, stderr=2)
            if program is not None:
                program.stdin.close()       # the kernel talks over ZeroMQ only
                self.process, self.pid, self.pgid = program, None, None
                self.cwd = kwargs.get("cwd")
                return self.connection_info
        return await super().launch_kernel(cmd, **kwargs)


class PromptKernelManager(AsyncKernelManager):
    """jupyter_client's manager, which learns that a killed kernel has exited within milliseconds,
    not at its next tenth of a second (a tenth of a second per notebook graded), starts the
    sandboxed kernel from the worker's zygote (:class:`ZygoteKernelProvisioner`), and talks to
    it through a client that never sleeps through a reply (:mod:`course_grader.kernel_client`)."""

    client_class = DottedObjectName("course_grader.kernel_client.PromptKernelClient")
    client_factory = Type(PromptKernelClient, klass=AsyncKernelClient)

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        await super()._async_wait(pollinterval=min(pollinterval, 0.005))

    async def _async_pre_start_kernel(self, **kw):
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            self.provisioner = ZygoteKernelProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec,
                                                       parent=self)
        return await super()._async_pre_start_kernel(**kw)


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
        self.kernel_manager_class = PromptKernelManager   # nbgrader's Execute sets AsyncKernelManager

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

    async def async_start_new_kernel_client(self):
        """nbclient's, with a prompt test of readiness.

        jupyter_client's ``wait_for_ready`` returns only after the kernel's IOPub has been silent
        for 0.2 s (a fifth of a second per notebook graded).  Here the kernel is ready when it has
        answered ``kernel_info`` on the shell channel and IOPub has carried the "idle" status of
        that same request: IOPub is connected, and everything the kernel published before it has
        been read.  The reply is kept (:attr:`_kernel_info`) for the notebook's language.
        """
        assert self.km is not None
        try:
            # ZeroMQ retries a connection to a socket not yet bound every 100 ms; the kernel's
            # sockets (ipc, on this machine) appear within milliseconds of its start.
            self.km.context.setsockopt(zmq.RECONNECT_IVL, 10)
            self.kc = self.km.client()
            await ensure_async(self.kc.start_channels())
            self._kernel_info = await self._async_ready_reply(self.startup_timeout)
        except Exception as e:
            self.log.error(f"Error occurred while starting new kernel client for kernel "
                           f"{getattr(self.km, 'kernel_id', None)}: {e}")
            await self._async_cleanup_kernel()
            raise
        self.kc.allow_stdin = False
        await run_hook(self.on_notebook_start, notebook=self.nb)
        return self.kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    async def _async_ready_reply(self, timeout: float) -> dict:
        """The kernel's ``kernel_info_reply``, once IOPub has shown the request's "idle" status."""
        deadline = monotonic() + timeout
        while True:
            msg_id = self.kc.kernel_info()
            reply = await self._async_next(self.kc.shell_channel, msg_id, 1.0,
                                           lambda m: m["msg_type"] == "kernel_info_reply")
            # A kernel that starts in milliseconds (the sandbox's zygote) can answer before the
            # IOPub socket has connected: its "idle" is lost, and the next request's is not.
            if reply is not None and await self._async_next(
                    self.kc.iopub_channel, msg_id, 0.05,
                    lambda m: m["msg_type"] == "status" and m["content"].get("execution_state") == "idle"):
                return reply
            if not await ensure_async(self.km.is_alive()):
                raise RuntimeError("Kernel died before replying to kernel_info")
            if monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout} seconds")

    @staticmethod
    async def _async_next(channel, msg_id: str, wait: float, wanted):
        """The first message on ``channel`` answering ``msg_id`` that is ``wanted``, or None after ``wait`` s."""
        until = monotonic() + wait
        while (remaining := until - monotonic()) > 0:
            try:
                msg = await ensure_async(channel.get_msg(timeout=remaining))
            except Empty:
                return None
            if msg["parent_header"].get("msg_id") == msg_id and wanted(msg):
                return msg
        return None

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
            "ename": TIME_LIMIT,
            "evalue": f"this cell ran for more than {timeout} s and was interrupted "
                      f"(limits: {self.limits.cell_timeout} s per cell, "
                      f"{self.limits.notebook_timeout} s per notebook)",
            "traceback": [f"{TIME_LIMIT}: this cell ran for more than {timeout} s and was interrupted"],
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
        GradingReport.of(self.resources).event(kind, message, self.nb, index)

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
        report = GradingReport.of(self.resources)
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
        self._restore_instructor_cells(nb, report)
        not_run = instructor_cells.tests_not_run(nb, self.skip_cells_with_tag)
        withheld = hidden_tests.withhold_hidden_tests(nb, report, self.config)
        try:
            self._execute_all()
        finally:
            for index, source in withheld.items():   # the instructor sees the whole test
                self.nb.cells[index].source = source
        for index in instructor_cells.fail_tests_not_run(
                self.nb, not_run, "this test cell was not run, so it scores 0 (the assignment's notebook "
                                  f"tags it {self.skip_cells_with_tag!r}: a test that does not run never passes)"):
            self._event(index, "not_run", "a test cell that the instructor's notebook does not run scores 0")
        self.set_widgets_metadata()
        return self.nb, self.resources

    def _restore_instructor_cells(self, nb, report: GradingReport) -> None:
        """Every cell with one of the assignment's nbgrader ids, and the notebook's metadata, as the
        instructor wrote them (:mod:`course_grader.instructor_cells`): nothing a submission says
        decides whether or how a cell of the instructor's runs."""
        names = (self.resources or {}).get("nbgrader", {})
        if not names.get("db_url"):
            return           # not autograding a submission (nbgrader's gradebook holds the assignment)
        released = instructor_cells.from_gradebook(names["db_url"], names["notebook"], names["assignment"])
        source = instructor_cells.read_source(
            hidden_tests.source_notebook(self.config, names["assignment"], names["notebook"]))
        flag = instructor_cells.restore(nb, released, source).flag()
        if flag:
            report.flag(flag)

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
                    info = self._kernel_info
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
                        if has_error(self.nb.cells[index], TIME_LIMIT):
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
                            TIME_LIMIT, "kernel_unresponsive",
                            f"this cell ran for more than {self.limits.cell_timeout} s and did not stop "
                            "when interrupted")
                    else:
                        ename, kind, why = (
                            KERNEL_DIED, "kernel_died",
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
            self.nb.cells[index].outputs = [error_output(NOT_RUN, why)]
        if indices:
            self._event(indices[0], "not_run", f"{len(indices)} cells did not run: {why}")


def _approx_size(msg) -> int:
    content = msg.get("content", {})
    if msg["msg_type"] == "stream":
        return len(content.get("text", ""))
    data = content.get("data") or {}
    if isinstance(data, dict):
        return 100 + sum(len(v) if isinstance(v, str) else len(str(v)) for v in data.values())
    return 100 + len(str(data))
