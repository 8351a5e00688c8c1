"""The folder the re-check's tests run in, with the files the student's code wrote.

In the notebook, a test and the student's code share a working directory: a
test may read a file the student's code wrote (``df.to_csv("other_data.tsv")``,
then ``pd.read_csv("other_data.tsv")``).  In the clean re-check the student's
code writes into the sandbox's copy of the submission's folder, and the tests
run in the grader.  :class:`WrittenFiles` brings those files over: the tests run
in the submission's folder until the student's code writes or removes a file,
then in a copy of it (never the submission itself) with the student's changes.

A path is taken only if it names a file inside the copy: not absolute, no
``..``, no symbolic link on the way.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path, PurePosixPath


class WrittenFiles:
    """Where the tests run: ``workdir``, or a copy of it holding the student's written files."""

    def __init__(self, workdir):
        self.workdir = Path(workdir)
        self.copy: Path | None = None
        self._temporary: tempfile.TemporaryDirectory | None = None

    def apply(self, written: dict[str, bytes], removed: list[str]) -> list[str]:
        """Bring the student's changes over (the copy becomes the working directory); the paths refused."""
        if not written and not removed:
            return []
        if self.copy is None:
            self._temporary = tempfile.TemporaryDirectory(prefix="course-grader-tests-")
            self.copy = Path(self._temporary.name) / "work"
            shutil.copytree(self.workdir, self.copy, symlinks=True, ignore=shutil.ignore_patterns("*.ipynb"))
            os.chdir(self.copy)
        refused = []
        for path, data in written.items():
            target = self._inside(path)
            if target is None:
                refused.append(path)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.is_dir():
                refused.append(path)
                continue
            target.write_bytes(data)
        for path in removed:
            target = self._inside(path)
            if target is not None and target.is_file() and not target.is_symlink():
                target.unlink()
        return refused

    def _inside(self, path: str) -> Path | None:
        relative = PurePosixPath(path)
        if not relative.parts or relative.is_absolute() or ".." in relative.parts:
            return None
        target = self.copy.joinpath(*relative.parts)
        for folder in list(target.parents)[::-1]:     # from the copy down: no symbolic link on the way
            if self.copy in folder.parents and folder.is_symlink():
                return None
        return target

    def close(self) -> None:
        if self._temporary is not None:
            self._temporary.cleanup()
