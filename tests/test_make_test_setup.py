"""``make test`` sets itself up: it finds a Chromium for the browser tests, or says at once what to install."""

import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "ensure_chromium.sh"


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def run(tmp_path, **env):
    """The script with a PATH of only ``tmp_path/bin`` (no browser, an unprivileged ``id``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    executable(bin_dir / "id", "#!/bin/sh\necho 1000\n")
    return subprocess.run(["/bin/bash", str(SCRIPT)], env={"PATH": str(bin_dir), **env},
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


def test_make_test_checks_the_browser_before_it_builds_anything():
    makefile = (ROOT / "Makefile").read_text()
    assert "\ntest: browser book\n" in makefile
    assert "scripts/ensure_chromium.sh" in makefile
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("make test") and "apt-get" not in ci   # CI runs just the README's command
