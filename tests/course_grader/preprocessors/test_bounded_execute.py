"""BoundedExecute, with a plain kernel (``sandbox_kernel=""``): limits for the whole notebook, a dead
kernel survived, hidden tests never in the kernel.  (The sandboxed kernel: tests/course_grader/test_sandbox.py
and the pipeline tests.)"""

import nbformat
from conftest import code, released
from event_loops import run_coroutine
from traitlets.config import Config

from course_grader import cells
from course_grader.preprocessors import BoundedExecute
from course_grader.preprocessors.config import DEADLINE
from course_grader.report import GradingReport


def _run(nb, resources, **limits):
    config = Config()
    config.BoundedExecute.sandbox_kernel = ""
    for name, value in limits.items():
        setattr(config.GradingLimits, name, value)
    return BoundedExecute(config=config).preprocess(nb, resources)


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def test_a_cell_that_kills_the_kernel_loses_only_itself(resources):
    nb = released()
    nb.cells[1].source = "def double(x):\n    return 2 * x"
    nb.cells.insert(2, nbformat.v4.new_code_cell("import os\nos._exit(1)"))
    nb.cells.insert(3, nbformat.v4.new_code_cell("print(double(21))"))
    nb.cells[4].source = "assert double(2) == 4"      # a test cell without hidden tests
    nb, res = _run(nb, resources())
    assert cells.has_error(nb.cells[2], cells.KERNEL_DIED)
    assert _text(nb.cells[3]) == "42\n"                # the kernel was restarted, the definition replayed
    assert not any(o.output_type == "error" for o in nb.cells[4].outputs)
    assert [e.kind for e in GradingReport.of(res).events] == ["kernel_died"]
    assert DEADLINE in res                             # the clean re-check gets what is left of the budget


def test_hidden_tests_never_enter_the_kernel_and_come_back_for_the_instructor(resources, tmp_path):
    nb = released()
    nb.cells[1].source = "def double(x):\n    return 2 * x"
    spy = "open('hidden-ran', 'w').close()"
    nb.cells[2] = code(f"assert double(2) == 4\n### BEGIN HIDDEN TESTS\n{spy}\n### END HIDDEN TESTS", "test",
                       grade=True, locked=True, points=2)
    nb.cells.append(nbformat.v4.new_code_cell("print(sorted(k for k in globals() if not k.startswith('_')))"))
    nb, res = _run(nb, resources())
    assert not (tmp_path / "hidden-ran").exists()
    assert spy in nb.cells[2].source                   # the whole test, as the instructor wrote it
    assert GradingReport.of(res).hidden_pending == ["test"]


def test_the_notebooks_time_limit_holds_for_the_whole_notebook(resources):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\ntime.sleep(60)"),
                                         nbformat.v4.new_code_cell("print('too late')")],
                                  metadata=released().metadata)
    # The notebook's deadline starts before its kernel does: 10 s leaves a busy machine time to start one
    nb, res = _run(nb, resources(), cell_timeout=30, notebook_timeout=10)
    assert cells.has_error(nb.cells[0], cells.TIME_LIMIT)
    assert cells.has_error(nb.cells[1], cells.NOT_RUN) and _text(nb.cells[1]) == ""
    assert {"cell_timeout", "not_run"} <= {e.kind for e in GradingReport.of(res).events}



def test_a_kernel_is_ready_once_it_has_answered_and_its_iopub_has_caught_up(resources):
    """Every notebook starts in a fresh kernel; what the first cell prints the moment the kernel is
    ready is never lost, start after start, and the notebook records the kernel's language."""
    for _ in range(4):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('first')")])
        nb, _ = _run(nb, resources())
        assert _text(nb.cells[0]) == "first\n"
        assert nb.metadata["language_info"]["name"] == "python"


def test_readiness_reads_only_the_answers_to_its_own_request():
    """A late reply to an earlier request, or another request's "idle", is not readiness."""
    from queue import Empty

    class Channel:
        def __init__(self, messages):
            self.messages = list(messages)

        async def get_msg(self, timeout=None):
            if not self.messages:
                raise Empty
            return self.messages.pop(0)

    def message(msg_type, parent, **content):
        return {"msg_type": msg_type, "parent_header": {"msg_id": parent}, "content": content}

    class Client:
        shell_channel = Channel([message("kernel_info_reply", "old", stale=True),
                                 message("execute_reply", "mine"), message("kernel_info_reply", "mine")])
        iopub_channel = Channel([message("status", "old", execution_state="idle"),
                                 message("status", "mine", execution_state="busy"),
                                 message("status", "mine", execution_state="idle")])

        def kernel_info(self):
            return "mine"

    execute = BoundedExecute()
    execute.kc = Client()
    reply = run_coroutine(execute._async_ready_reply(timeout=5))
    assert reply == message("kernel_info_reply", "mine")
    assert execute.kc.shell_channel.messages == [] and execute.kc.iopub_channel.messages == []


def test_a_killed_kernel_is_known_gone_within_milliseconds(monkeypatch):
    """jupyter_client polls a killed kernel every 0.1 s; the grading kernel's manager every 5 ms."""

    from course_grader.preprocessors import bounded_execute
    from course_grader.preprocessors.bounded_execute import PromptKernelManager

    assert BoundedExecute().kernel_manager_class is PromptKernelManager
    alive, pauses = [True, True, False], []

    async def is_alive(self):
        return alive.pop(0)

    async def sleep(seconds):
        pauses.append(seconds)

    monkeypatch.setattr(PromptKernelManager, "_async_is_alive", is_alive)
    monkeypatch.setattr(bounded_execute.asyncio, "sleep", sleep)
    run_coroutine(PromptKernelManager()._async_wait())
    assert pauses == [0.005, 0.005]
