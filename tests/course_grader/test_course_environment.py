"""Another course's own environment and configuration (issue 37, class 6).

A course whose students use packages the grader does not have is graded in its
own virtual environment (``--python``), still in the sandbox; its own
``nbgrader_config.py`` is read on top of the grading pipeline
(``--course-config``), which it cannot switch off.

The course environment here is a virtual environment of its own, holding
ipykernel and NumPy (copied from the grader's, with what they require) and a
package only it has, ``course_env_marker``.
"""

import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import nbformat
import pytest
from packaging.requirements import Requirement

from grading_support import LIMITS, ROOT

SOLUTION = "import course_env_marker\ndef answer():\n    ### BEGIN SOLUTION\n    return course_env_marker.COURSE\n    ### END SOLUTION"
TEST = "assert answer() == 'other course'"


def _requirements_closure(names) -> list:
    """The installed distributions ``names`` need, with everything they require (no extras)."""
    seen, todo = {}, list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[key] = dist
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return list(seen.values())


def course_environment(folder: Path) -> Path:
    """A virtual environment of another course: ipykernel and NumPy, and ``course_env_marker``."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = Path(sysconfig.get_path("purelib", vars={"base": str(folder), "platbase": str(folder)}))
    for dist in _requirements_closure(["ipykernel", "numpy"]):
        root = Path(dist.locate_file(""))
        for file in dist.files or []:
            path = Path(dist.locate_file(file))
            if path.is_file() and root in path.parents:
                target = site / path.relative_to(root)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target)
    (site / "course_env_marker.py").write_text("COURSE = 'other course'\n")
    return folder / "bin" / "python"


def _assignment(source: Path):
    meta = {"grade": False, "solution": True, "locked": False, "task": False, "schema_version": 3}
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("Return the name of the course from `course_env_marker`."),
        nbformat.v4.new_code_cell(SOLUTION, metadata={"nbgrader": dict(meta, grade_id="answer")}),
        nbformat.v4.new_code_cell(TEST, metadata={"nbgrader": dict(meta, solution=False, grade=True, locked=True,
                                                                   grade_id="test_answer", points=2)})])
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (source / "envcheck").mkdir(parents=True)
    nbformat.write(nb, source / "envcheck" / "envcheck.ipynb")


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("course-environment")
    _assignment(tmp / "source")
    nb = nbformat.read(tmp / "source" / "envcheck" / "envcheck.ipynb", as_version=4)
    nb.cells[1].source = SOLUTION.replace("    ### BEGIN SOLUTION\n", "").replace("\n    ### END SOLUTION", "")
    (tmp / "inbox" / "ada").mkdir(parents=True)
    nbformat.write(nb, tmp / "inbox" / "ada" / "envcheck.ipynb")
    return tmp


@pytest.fixture(scope="module")
def course_python(course):
    return course_environment(course / "course-env")


def _grade(course: Path, name: str, **options) -> dict:
    from course_grader import grade

    return grade.grade(course / "inbox", "envcheck", course_dir=course / name, workers=1, **LIMITS, quiet=True,
                       config_file=ROOT / "nbgrader_config.py",
                       source_dir=course / "source", course_id="other", **options)


def test_a_course_is_graded_in_its_own_environment_in_the_sandbox(course, course_python):
    python = course_python
    ours = _grade(course, "in-own-env", python=str(python))
    [result] = ours["results"]
    assert (result["score"], result["flags"]) == (2.0, []), result
    assert str(python) in ours["policy"]
    # In the grader's environment the package does not exist: the same notebook scores 0.
    [result] = _grade(course, "in-graders-env")["results"]
    assert result["score"] == 0.0


def test_each_run_is_graded_in_its_own_environment_not_in_that_of_the_workers_server(course, course_python):
    """The workers are forked from a server process (``course_grader.workers``) that starts once per
    grading process and keeps the environment of its start.  Here it starts while the course's
    interpreter is chosen, as a run with ``--python`` leaves it; a run after it, in the grader's
    own environment, must not grade with the course's interpreter."""
    script = f"""
import json, os
from course_grader import grade, sandbox, workers
variable = sandbox.ENV_PREFIX + "_PYTHON"
os.environ[variable] = {str(course_python)!r}
workers.start_worker_server()
del os.environ[variable]
report = grade.grade({str(course / "inbox")!r}, "envcheck", course_dir={str(course / "after-server")!r}, workers=1,
                     **{LIMITS!r}, quiet=True, config_file={str(ROOT / "nbgrader_config.py")!r},
                     source_dir={str(course / "source")!r}, course_id="other")
print(json.dumps([r["score"] for r in report["results"]]))
"""
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == "[0.0]", run.stdout   # as in the grader's environment


def test_an_interpreter_that_cannot_run_notebooks_is_refused_before_anything_is_written(course, tmp_path):
    from course_grader.sandbox import SandboxUnavailable

    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    for python, says in ((bare / "bin" / "python", "needs ipykernel and numpy"),
                         (tmp_path / "nowhere" / "python", "no such interpreter")):
        with pytest.raises(SandboxUnavailable, match=says):
            _grade(course, "refused", python=str(python))
        assert not (course / "refused").exists()


def test_the_courses_own_configuration_is_read_on_top_of_the_grading_pipeline(tmp_path):
    from course_grader.nbgrader_api import load_config

    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\n"
        "c.CourseDirectory.course_id = 'their-course'\n"
        "c.CourseDirectory.source_directory = 'source'\n"
        "c.ClearSolutions.begin_solution_delimeter = 'BEGIN MY SOLUTION'\n"
        "c.Autograde.exclude_overwriting = {'hw1': ['helpers.py']}\n"
        "c.Autograde.autograde_preprocessors = []\n"          # cannot switch the pipeline off
        "c.Execute.kernel_name = 'xpython'\n")
    ours = load_config(tmp_path / "grading", config_file=ROOT / "nbgrader_config.py")
    config = load_config(tmp_path / "grading", config_file=ROOT / "nbgrader_config.py",
                         course_config=tmp_path / "nbgrader_config.py")
    assert config.CourseDirectory.course_id == "their-course"
    assert config.CourseDirectory.source_directory == str(tmp_path / "source")
    assert config.ClearSolutions.begin_solution_delimeter == "BEGIN MY SOLUTION"
    assert config.Autograde.exclude_overwriting == {"hw1": ["helpers.py"]}
    assert config.Autograde.autograde_preprocessors == ours.Autograde.autograde_preprocessors != []
    assert config.GradingPolicy.forbidden_modules == {}       # this course's policy is not theirs
    assert config.CourseDirectory.root == str((tmp_path / "grading").resolve())
    with pytest.raises(SystemExit, match="no such file"):
        load_config(tmp_path / "grading", config_file=ROOT / "nbgrader_config.py",
                    course_config=tmp_path / "missing.py")
