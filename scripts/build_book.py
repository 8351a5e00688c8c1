"""Build the book strictly: every chapter executed, any warning or cell error fails.

Run by ``make book``.  Jupyter Book's execution cache (``_build/.jupyter_cache``)
re-runs a chapter only when its code cells change; it cannot see a change in
the ``attention_course`` package that the chapters import.  So this script
keys the cache on the package too: when any package file changed since the
last build, the cached outputs are dropped and every chapter runs again.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
EXECUTION_CACHE = BUILD / ".jupyter_cache"
PACKAGE_STAMP = BUILD / ".package-hash"


def package_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted((ROOT / "attention_course").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def main() -> int:
    current = package_hash()
    if EXECUTION_CACHE.exists() and (not PACKAGE_STAMP.exists()
                                     or PACKAGE_STAMP.read_text() != current):
        print("attention_course changed since the last build: re-executing every chapter")
        shutil.rmtree(EXECUTION_CACHE)
        # Sphinx re-reads (and so re-executes) only the sources it thinks changed;
        # dropping its saved environment makes it read every chapter again.
        shutil.rmtree(BUILD / ".doctrees", ignore_errors=True)
    # From here on, whatever enters the cache was executed with this package.
    BUILD.mkdir(exist_ok=True)
    PACKAGE_STAMP.write_text(current)
    started = time.perf_counter()
    command = [str(Path(sys.executable).with_name("jupyter-book")), "build", str(ROOT),
               "-W", "-n", "--keep-going"]
    code = subprocess.call(command, cwd=ROOT)
    seconds = time.perf_counter() - started
    print(f"book build {'succeeded' if code == 0 else 'FAILED'} in {seconds:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
