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
