"""Other nbgrader courses (tests/course_grader/other_courses/): their students, and both graders' scores.

Each course folder holds ``source/<assignment>/`` as nbgrader expects it.  The
students are generated from the course's own notebooks: the instructor's
solutions written as a student would write them (prints, extra cells, a plot,
magics), partly done, blank, with Markdown added and stale outputs in a
shuffled order, with a ``.py`` file of the student's own that the notebook
imports, and, for assignments of several notebooks, with one notebook missing.
And the honest solution rewritten, as :data:`VARIANTS` says, in each way Python
lets an answer be written that the re-check must follow (issue 54): its names
bound inside blocks, by ``global`` in a function, by walrus, by imports inside
blocks, by ``exec``; its functions reading a global a test cell sets and its
cells reading names an earlier test cell bound; its functions drawing from the
global random generators.  (Filling arguments in place, module state, random
state a test seeds, closures and generators are the answers of
``py_idioms/semantics``, whose tests observe them.)

:func:`graded_assignment` grades one assignment's students twice, once per test
session (under a file lock, as :func:`grading_support.graded_batch` does):

* with **plain nbgrader**: ``generate_assignment`` and ``autograde`` through
  nbgrader's API under nbgrader's default configuration (nothing of this
  course's ``nbgrader_config.py``; each student in a course folder of its own,
  two at a time), only the kernel named: the notebooks' own
  kernelspec may name one that is not installed here (cs1302's ``xpython``),
  so ``Execute.kernel_name = "python3"``, as the course's own configuration
  would set it on a machine without XPython, and the kernel client that does
  not sleep through a widget cell's reply (:mod:`course_grader.kernel_client`);
* with **the grading command**, ``python -m course_grader`` with this
  course's grading pipeline, the other course's own ``nbgrader_config.py`` on
  top where it ships one (``--course-config``), and its source folder and id
  (``--source-dir``/``--course-id``), its report read from the course
  directory (``grading-<assignment>.json``).
"""

from __future__ import annotations

import ast
import copy
import fcntl
import json
import re
import textwrap
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from grading_support import LIMITS, ROOT, shared_root

COURSES = Path(__file__).resolve().parent / "course_grader" / "other_courses"
#: (course, assignment) -> course id, for every assignment of the corpus
ASSIGNMENTS = {(course.name, folder.name): course.name.replace("_", "-")
               for course in sorted(COURSES.iterdir()) if (course / "source").is_dir()
               for folder in sorted((course / "source").iterdir()) if folder.is_dir()}

_SOLUTION_LINE = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def _meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def solution_text(source: str) -> str:
    """A source cell's text with nbgrader's solution delimiters taken out: the instructor's answer."""
    return "\n".join(line for line in source.split("\n") if not _SOLUTION_LINE.match(line))


def _answered(released, source):
    """The released notebook with every answer cell holding the instructor's answer, written as a
    student would: a print of their own before the code (not before a cell magic)."""
    nb = copy.deepcopy(released)
    answers = {_meta(c).get("grade_id"): c.source for c in source.cells if _meta(c).get("solution")}
    for cell in nb.cells:
        if _meta(cell).get("solution"):
            answer = solution_text(answers[_meta(cell)["grade_id"]])
            if cell.cell_type == "code" and not answer.lstrip().startswith("%%"):
                answer = f"print('working on {_meta(cell)['grade_id']}')\n" + answer
            cell.source = answer
    return nb


def _student_extras():
    """What a student adds at the end: a cell magic, a line magic, a plot."""
    return [nbformat.v4.new_code_cell("%%time\nprint('all my work is above')"),
            nbformat.v4.new_code_cell("%timeit -n 1 -r 1 sum(range(100))"),
            nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\n"
                                      "plt.title('my own check')\nplt.show()")]


def _first_answer_cell(nb, starts=("def ", "class ")):
    for cell in nb.cells:
        meta = _meta(cell)
        if cell.cell_type == "code" and meta.get("solution") and not meta.get("grade"):
            if starts is None or cell.source.split("print(", 1)[-1].split("\n", 1)[-1].startswith(starts):
                return cell
    return None


# -- the honest solution, rewritten (issue 54) ------------------------------------------------------------

#: The rewritten students and the patterns each applies to every answer cell it can (a cell that is not
#: plain Python, such as a cell magic, is left as it is).
VARIANTS = {
    "bound_in_blocks": "every answer inside an if, try, with, for and while body (nested)",
    "bound_in_a_function": "every answer in a function that declares its names global, its assignments as "
                           "walrus expressions and its imports inside blocks",
    "bound_by_exec": "every answer run by exec",
    "reads_test_globals": "each function that a test cell calls after binding a name reads that name as a "
                          "global; the first answer after a test cell reads a name the test bound; every "
                          "function draws from the global random generators",
}


def _python(source: str):
    """The cell's syntax tree, if it is plain Python (not IPython syntax)."""
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


def bound_in_blocks(source: str) -> str:
    body = textwrap.indent(source, "                ")
    return ("import contextlib as _contextlib\nif True:\n    try:\n        with _contextlib.nullcontext():\n"
            "            for _once in range(1):\n                _again = True\n                while _again:\n"
            "                    _again = False\n" + textwrap.indent(body, "    ") +
            "\n    except ZeroDivisionError:\n        raise")


def bound_in_a_function(source: str) -> str | None:
    tree = _python(source)
    if tree is None or any(isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
                           or isinstance(node, (ast.Global, ast.Nonlocal)) for node in tree.body):
        return None
    from course_grader.recheck.test_namespace import bound_names

    names = sorted(bound_names(source))
    body = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            node = ast.Expr(ast.NamedExpr(ast.Name(node.targets[0].id, ast.Store()), node.value))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            node = ast.If(ast.Constant(True), [node], [])
        body.append(node)
    code = ast.unparse(ast.fix_missing_locations(ast.Module(body, [])))
    declared = f"    global {', '.join(names)}\n" if names else ""
    return f"def _answer():\n{declared}{textwrap.indent(code, '    ')}\n\n\n_answer()"


def bound_by_exec(source: str) -> str | None:
    if _python(source) is None:
        return None
    return f"exec(compile({source!r}, '<my answer>', 'exec'))"


def _function_reads(source: str, reads: dict[str, str]) -> str | None:
    """``source`` with each top-level function ``f`` of ``reads`` reading the global ``reads[f]`` first,
    and every top-level function drawing one number from each global random generator."""
    tree = _python(source)
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)] if tree else []
    if not functions:
        return None
    for node in functions:
        first = 1 if (node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)) else 0
        added = ast.parse("__import__('random').random()\n__import__('numpy').random.random()").body
        if node.name in reads:
            added.insert(0, ast.Expr(ast.Name(reads[node.name], ast.Load())))
        node.body[first:first] = added
    return ast.unparse(ast.fix_missing_locations(tree))


#: What a test cell may build that the re-check cannot give the student's code (not plain data): a name
#: bound from one of these is never the one a rewritten function reads (issue 54's design gives that up).
NOT_PLAIN = {"pd", "pandas", "DataFrame", "Series"}


def _test_globals(source_nb) -> tuple[dict[str, str], dict[int, str]]:
    """From the source notebook: ``{function: name}``, a name a test cell binds before its first call of
    the function (which no earlier cell mentions), and ``{index of the first answer cell after a test
    cell: a name that test binds}``: what the rewritten student reads of the tests' names."""
    from course_grader.hidden_tests import delimiters, hidden_regions
    from course_grader.recheck.test_namespace import bound_names

    marks = delimiters()
    defined, seen, reads, after = set(), set(), {}, {}
    pending = None
    for index, cell in enumerate(source_nb.cells):
        meta = _meta(cell)
        tree = _python(solution_text(cell.source)) if cell.cell_type == "code" else None
        if tree is None:
            continue
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        if meta.get("solution"):
            if pending is not None:
                after[index], pending = pending, None
            defined |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef)} - seen
            seen |= names - bound_names(solution_text(cell.source))
            continue
        if meta.get("grade"):
            hidden = {line for first, last in hidden_regions(cell.source, marks) for line in range(first, last + 1)}
            bound: list[tuple[str, bool]] = []      # (name, bound in a hidden region), in order
            for statement in tree.body:
                for node in ast.walk(statement):
                    called = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None
                    if called in defined and called not in seen:      # its first call: read a name bound before
                        usable = [name for name, in_hidden in bound if not in_hidden or statement.lineno in hidden]
                        if usable:
                            reads[called] = usable[-1]
                        seen.add(called)
                if (isinstance(statement, ast.Assign) and all(isinstance(t, ast.Name) for t in statement.targets)
                        and not {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)} & NOT_PLAIN):
                    bound += [(t.id, statement.lineno in hidden) for t in statement.targets]
            visible = [name for name, in_hidden in bound if not in_hidden]
            pending = visible[0] if visible else pending
        seen |= names
    return reads, after


def rewritten(correct: dict, source_dir: Path, variant: str) -> tuple[dict, int]:
    """The correct student's notebooks rewritten as ``variant`` says (:data:`VARIANTS`), and how many
    cells were rewritten."""
    notebooks, changed = copy.deepcopy(correct), 0
    for name, nb in notebooks.items():
        source_nb = nbformat.read(source_dir / name, as_version=4)
        reads, after = _test_globals(source_nb) if variant == "reads_test_globals" else ({}, {})
        positions = {_meta(c).get("grade_id"): i for i, c in enumerate(source_nb.cells) if _meta(c).get("grade_id")}
        for cell in nb.cells:
            meta = _meta(cell)
            if cell.cell_type != "code" or not meta.get("solution") or meta.get("grade"):
                continue
            if variant == "reads_test_globals":
                new = _function_reads(cell.source, reads)
                read_first = after.get(positions.get(meta.get("grade_id")))
                if read_first is not None and _python(cell.source) is not None:
                    new = f"_seen_in_a_test = {read_first}\n" + (new if new is not None else cell.source)
            elif _python(cell.source) is None:
                new = None
            else:
                new = {"bound_in_blocks": bound_in_blocks, "bound_in_a_function": bound_in_a_function,
                       "bound_by_exec": bound_by_exec}[variant](cell.source)
            if new is not None and new != cell.source:
                cell.source, changed = new, changed + 1
    return notebooks, changed


def students(course: str, assignment: str, released: Path) -> dict[str, dict[str, object]]:
    """``{student: {relative path: notebook or bytes}}``: every honest kind of submission."""
    source_dir = COURSES / course / "source" / assignment
    names = sorted(p.name for p in source_dir.glob("*.ipynb"))
    files = {str(p.relative_to(released)): p.read_bytes() for p in sorted(released.rglob("*"))
             if p.is_file() and p.suffix != ".ipynb"}
    blank = {name: nbformat.read(released / name, as_version=4) for name in names}
    correct = {name: _answered(blank[name], nbformat.read(source_dir / name, as_version=4)) for name in names}
    for nb in correct.values():
        nb.cells.extend(_student_extras())

    partly = copy.deepcopy(correct)
    # The first answer left as released (not done), the rest answered: some tests fail, others pass
    name, cell = next((name, c) for name in names if (c := _first_answer_cell(partly[name], starts=None)))
    cell.source = next(c.source for c in blank[name].cells if _meta(c).get("grade_id") == _meta(cell)["grade_id"])

    shuffled = copy.deepcopy(correct)
    for nb in shuffled.values():
        nb.cells.insert(0, nbformat.v4.new_markdown_cell("**My notes.** I ran the cells out of order."))
        nb.cells.insert(len(nb.cells) // 2, nbformat.v4.new_markdown_cell("A *remark* of mine, $x^2$."))
        code_cells = [c for c in nb.cells if c.cell_type == "code"]
        for count, cell in zip(range(len(code_cells), 0, -1), code_cells):   # run last-to-first
            cell.execution_count = count
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"stale output {count}\n")]

    own_file = copy.deepcopy(correct)
    first = names[0]   # one function or class moved into a module of the student's own, else a helper of theirs
    cell = _first_answer_cell(own_file[first])
    helpers = "".join(f"from {p.stem} import *\n" for p in sorted(source_dir.glob("*.py")))
    if cell is not None:
        own_files = {"my_answers.py": ("import math\nimport numpy as np\n" + helpers + "\n\n" +
                                       cell.source + "\n").encode()}
        cell.source = "from my_answers import *"
    else:
        own_files = {"my_answers.py": b"def summary():\n    return 'my own summary'\n"}
        own_file[first].cells.append(nbformat.v4.new_code_cell("from my_answers import summary\nprint(summary())"))

    submissions = {"correct": ({**files}, correct), "partly_done": ({**files}, partly),
                   "blank": ({**files}, blank), "notes_and_stale_outputs": ({**files}, shuffled),
                   "own_module": ({**files, **own_files}, own_file)}
    if len(names) > 1:
        missing = dict(correct)
        del missing[names[-1]]
        submissions["one_notebook_missing"] = ({**files}, missing)
    for variant in VARIANTS:
        notebooks, changed = rewritten(correct, source_dir, variant)
        if changed:
            submissions[variant] = ({**files}, notebooks)
    return {student: {**extra, **notebooks} for student, (extra, notebooks) in submissions.items()}


def as_jupyter_saves_it(nb):
    """A notebook with cells added (which carry ids) saved as Jupyter saves it: format 4.5, every cell with an id."""
    if nb.nbformat_minor < 5 and any("id" in cell for cell in nb.cells):
        nb.nbformat_minor = 5
        for cell in nb.cells:
            cell.setdefault("id", nbformat.v4.new_code_cell().id)
    return nb


def write_student(folder: Path, content: dict):
    for relative, item in content.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(item, bytes):
            path.write_bytes(item)
        else:
            nbformat.write(as_jupyter_saves_it(copy.deepcopy(item)), path)


def cell_scores(db: Path, assignment: str, student_ids) -> dict[str, dict[str, float]]:
    """``{student: {"notebook/grade_id": score}}`` from an nbgrader gradebook (None: not graded)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{db}") as gb:
        return {student: {f"{nb.name}/{g.name}": g.score for nb in gb.find_submission(assignment, student).notebooks
                          for g in nb.grades}
                for student in student_ids}


def _plain_config(course: str, assignment: str, kernel_name: str = "python3"):
    from traitlets.config import Config

    config = Config()
    config.CourseDirectory.source_directory = str(COURSES / course / "source")
    config.CourseDirectory.course_id = ASSIGNMENTS[(course, assignment)]
    config.Execute.kernel_name = kernel_name
    # nbgrader's time limits (30 s a cell, 60 s to start a kernel, 4 s for IOPub to catch up) are for
    # a quiet machine; under the whole suite, or a slower CPU, the reference failed a student on them
    # now and then. Those are the machine's limits, not a grading rule: the reference gets room.
    config.Execute.timeout = 600
    config.Execute.startup_timeout = 600
    config.Execute.iopub_timeout = 60
    # nbclient can sleep through a widget cell's reply to the end of Execute.timeout (the reply
    # is then found and the cell scores as it should, jupyter/nbclient#312): in every run of the
    # whole suite, cs1302's Lab3b (three ``interact`` cells) lost 600-1,200 s so. The grader's
    # own client waits in slices (course_grader/kernel_client.py); the reference gets it too.
    config.AsyncKernelManager.client_class = "course_grader.kernel_client.PromptKernelClient"
    return config


#: what nbgrader logs when a kernel died or hung before running any cell: the machine's failure
#: (under the whole suite, a kernel died so once in a few runs), not a grading outcome; tried again
KERNEL_NEVER_STARTED = ("Kernel died before replying to kernel_info", "Kernel didn't respond in")


def _plain_student(course: str, assignment: str, root: str, student: str, tries: int = 3,
                   kernel_name: str = "python3") -> dict:
    """Plain nbgrader's ``autograde`` of one student, in a course folder of the student's own (run in
    a worker process of its own: the kernels' standard error, which says why one died, is kept)."""
    import os
    import tempfile

    from course_grader.nbgrader_api import make_api

    for attempt in range(1, tries + 1):
        with tempfile.TemporaryFile() as kernels_stderr:
            saved = os.dup(2)
            os.dup2(kernels_stderr.fileno(), 2)     # a kernel inherits this process's standard error
            try:
                outcome = make_api(_plain_config(course, assignment, kernel_name), Path(root)).autograde(
                    assignment, student, force=True, create=True)
            finally:
                os.dup2(saved, 2)
                os.close(saved)
            kernels_stderr.seek(0)
            stderr = kernels_stderr.read().decode(errors="replace")
        # nbgrader's exception says only "see the above traceback": the cause is in its log
        log = (outcome.get("log") or "") + str(outcome.get("error") or "")
        if outcome["success"] or not any(sign in log for sign in KERNEL_NEVER_STARTED):
            break
    kernel_lines = "\n".join(line for line in stderr.splitlines() if "running over TCP" not in line)
    return {"success": outcome["success"], "attempts": attempt,
            "error": log[-4000:] + ("\nthe kernels' standard error:\n" + kernel_lines[-2000:]
                                    if not outcome["success"] else "")}


def _grade(folder: Path, course: str, assignment: str) -> dict:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from course_grader.nbgrader_api import make_api

    plain_root = folder / "plain"
    api = make_api(_plain_config(course, assignment), plain_root)   # nbgrader's API, its defaults
    outcome = api.generate_assignment(assignment, force=True, create=True)
    assert outcome["success"], outcome["log"] + str(outcome.get("error"))
    submissions = students(course, assignment, plain_root / "release" / assignment)
    # One course folder per student (nbgrader's SQLite gradebook takes one writer), two at a time:
    # plain nbgrader grades one notebook after the other, and this test's share of the machine is two cores.
    roots = {student: folder / "plain-students" / student for student in submissions}
    for student, content in submissions.items():
        roots[student].mkdir(parents=True)
        shutil.copyfile(plain_root / "gradebook.db", roots[student] / "gradebook.db")
        write_student(roots[student] / "submitted" / student / assignment, content)
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        plain_log = dict(zip(submissions, pool.map(
            _plain_student, *zip(*[(course, assignment, str(roots[s]), s) for s in submissions]))))
    inbox = folder / "inbox"
    for student, content in submissions.items():
        write_student(inbox / student, content)
    # The command as an instructor runs it, the other course's own configuration on top where it ships one
    their_config = COURSES / course / "nbgrader_config.py"
    command = [sys.executable, "-m", "course_grader", str(inbox), "--assignment", assignment,
               "--config", str(ROOT / "nbgrader_config.py"), "--source-dir", str(COURSES / course / "source"),
               "--course-id", ASSIGNMENTS[(course, assignment)], "--course-dir", str(folder / "course"),
               "--workers", "2", "--quiet", *(["--course-config", str(their_config)] if their_config.is_file() else []),
               *(f"--{name.replace('_', '-')}={value}" for name, value in LIMITS.items())]
    run = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=1800)
    assert run.returncode in (0, 1), run.stderr[-3000:]     # 1: someone failed, which the tests report
    report = json.loads((folder / "course" / f"grading-{assignment}.json").read_text())
    plain = {}
    for student in submissions:
        plain.update(cell_scores(roots[student] / "gradebook.db", assignment, [student]))
    return {"students": sorted(submissions), "plain_log": plain_log, "report": report, "plain": plain,
            "ours": cell_scores(folder / "course" / "gradebook.db", assignment, submissions)}


def graded_assignment(tmp_path_factory, course: str, assignment: str) -> dict:
    """Both graders' per-cell scores and the command's report for one assignment, once per session."""
    root = shared_root(tmp_path_factory)
    folder = root / f"other-{course}-{assignment}".replace(" ", "_")
    with open(str(folder) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result_file = folder / "result.json"
        if not result_file.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            result_file.write_text(json.dumps(_grade(folder, course, assignment)))
        result = json.loads(result_file.read_text())
    result["folder"] = folder
    return result
