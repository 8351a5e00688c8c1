"""``make test`` sets itself up: it finds a Chromium for the browser tests and Slurm for the cluster
test, or says at once what to install."""

import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "ensure_chromium.sh"
SLURM_SCRIPT = ROOT / "scripts" / "ensure_slurm.sh"
SLURM_PROGRAMS = ("sbatch", "squeue", "scontrol", "sinfo", "munged", "slurmctld", "slurmd")


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def run(tmp_path, script=SCRIPT, **env):
    """The script with a PATH of only ``tmp_path/bin`` (no browser, an unprivileged ``id``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    executable(bin_dir / "id", "#!/bin/sh\necho 1000\n")
    return subprocess.run(["/bin/bash", str(script)], env={"PATH": str(bin_dir), **env},
                          capture_output=True, text=True, timeout=30)


def test_without_a_browser_it_stops_at_once_with_one_line_saying_what_to_install(tmp_path):
    # "at once": before anything is built or installed (the check is make test's first
    # prerequisite, and this user may not install); not a timed assertion.
    done = run(tmp_path)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Chromium" in lines[0] and "apt-get install chromium" in lines[0]
    assert "CHROMIUM=" in lines[0]
    assert done.stdout == ""    # no installation was attempted


def test_a_browser_named_by_chromium_or_on_the_path_is_enough(tmp_path):
    browser = executable(tmp_path / "my-chrome", "#!/bin/sh\n")
    assert run(tmp_path, CHROMIUM=str(browser)).returncode == 0
    executable(tmp_path / "bin" / "chromium", "#!/bin/sh\n")
    done = run(tmp_path)
    assert done.returncode == 0 and done.stderr == ""


def test_without_slurm_it_stops_at_once_with_one_line_saying_what_to_install(tmp_path):
    done = run(tmp_path, SLURM_SCRIPT, SBIN=str(tmp_path))
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert "Slurm" in line and "apt-get install slurmctld slurmd slurm-client munge" in line


def test_slurm_and_munge_on_the_path_are_enough(tmp_path):
    (tmp_path / "bin").mkdir()
    for program in SLURM_PROGRAMS[:-1]:
        executable(tmp_path / "bin" / program, "#!/bin/sh\n")
    assert run(tmp_path, SLURM_SCRIPT, SBIN=str(tmp_path)).returncode == 1    # slurmd still missing
    executable(tmp_path / "bin" / "slurmd", "#!/bin/sh\n")
    done = run(tmp_path, SLURM_SCRIPT, SBIN=str(tmp_path))
    assert done.returncode == 0 and done.stderr == ""


def test_make_test_checks_the_browser_and_slurm_before_it_builds_anything():
    makefile = (ROOT / "Makefile").read_text()
    assert "\ntest: browser slurm book\n" in makefile
    assert "scripts/ensure_chromium.sh" in makefile and "scripts/ensure_slurm.sh" in makefile
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("make test") and "apt-get" not in ci   # CI runs just the README's command


def test_make_check_leaves_out_exactly_the_marked_folders_and_needs_no_book_browser_or_slurm():
    """``make check``: the tests that need neither the built book nor root, with no set-up step."""
    import importlib.util
    import re
    import tomllib
    from types import SimpleNamespace

    # tests/conftest.py itself (another folder's conftest may be the module named ``conftest`` here)
    spec = importlib.util.spec_from_file_location("tests_root_conftest", ROOT / "tests" / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)

    dry = subprocess.run(["make", "-n", "check"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    assert "pytest" in dry.stdout and '-m "not needs_book and not needs_root"' in dry.stdout
    assert not re.search(r"build_book|ensure_chromium|ensure_slurm", dry.stdout)
    declared = {line.split(":")[0] for line in
                tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["markers"]}
    assert set(conftest.MARKED_FOLDERS.values()) == declared == {"needs_book", "needs_root"}
    for folder in conftest.MARKED_FOLDERS:
        assert (ROOT / "tests" / folder).is_dir()

    marked = []

    def item(*parts):
        thing = SimpleNamespace(path=ROOT.joinpath("tests", *parts), marks=[])
        thing.add_marker = thing.marks.append
        marked.append(thing)
        return thing

    conftest.pytest_collection_modifyitems(None, [item("site", "test_x.py"), item("course_grader", "test_y.py"),
                                                  item("book", "test_z.py"), item("test_top.py")])
    assert [thing.marks for thing in marked] == [["needs_book"], ["needs_root"], [], []]
