"""BoundedExecute, with a plain kernel (``sandbox_kernel=""``): limits for the whole notebook, a dead
kernel survived, hidden tests never in the kernel.  (The sandboxed kernel: tests/course_grader/test_sandbox.py
and the pipeline tests.)"""

import nbformat
from conftest import code, released
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
    nb, res = _run(nb, resources(), cell_timeout=30, notebook_timeout=4)
    assert cells.has_error(nb.cells[0], cells.TIME_LIMIT)
    assert cells.has_error(nb.cells[1], cells.NOT_RUN) and _text(nb.cells[1]) == ""
    assert {"cell_timeout", "not_run"} <= {e.kind for e in GradingReport.of(res).events}

