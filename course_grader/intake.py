"""Submissions in: a folder or an LMS zip to one notebook per student, staged in nbgrader's layout.

A file that cannot be read as a notebook is kept for the instructor and
graded as the blank exercise, with a note saying why.
"""

from __future__ import annotations

import os
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .report import notes_cell

IGNORED_PARTS = {"__MACOSX", ".ipynb_checkpoints"}

MAX_NOTEBOOK_BYTES = 100 * 2 ** 20


@dataclass
class Submission:
    student: str
    path: str                      # where the student's file was found
    notes: list = field(default_factory=list)


def clean_student_id(raw: str) -> str:
    student = re.sub(r"[^A-Za-z0-9._@-]+", "_", raw).strip("._-")
    if not student:
        raise ValueError(f"cannot make a student id out of {raw!r}")
    return student


def find_submissions(source: Path, notebook_name: str, student_regex: str | None,
                     scratch: Path) -> tuple[list[Submission], list[str]]:
    """One notebook per student, from a folder or a zip."""
    warnings = []
    if source.is_file() and zipfile.is_zipfile(source):
        root = scratch / "unzipped"
        root.mkdir(parents=True)
        with zipfile.ZipFile(source) as archive:
            for member in archive.infolist():
                parts = Path(member.filename).parts
                if (member.is_dir() or not member.filename.endswith(".ipynb") or member.filename.startswith("/")
                        or ".." in parts or IGNORED_PARTS & set(parts)):
                    continue
                if member.file_size > MAX_NOTEBOOK_BYTES:
                    warnings.append(f"skipped {member.filename}: larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
                    continue
                target = root.joinpath(*parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    elif source.is_dir():
        root = source
    else:
        raise SystemExit(f"{source} is neither a folder nor a zip file")
    pattern = re.compile(student_regex) if student_regex else None
    found: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*.ipynb")):
        relative = path.relative_to(root)
        if IGNORED_PARTS & set(relative.parts) or any(p.startswith(".") for p in relative.parts):
            continue
        if pattern:
            match = pattern.search(relative.as_posix())
            if not match:
                warnings.append(f"skipped {relative}: --student-regex does not match it")
                continue
            raw = match.group("student")
        else:
            raw = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        found.setdefault(clean_student_id(raw), []).append(path)
    submissions = []
    for student, paths in sorted(found.items()):
        chosen = paths[0]
        if len(paths) > 1:
            named = [p for p in paths if p.name == notebook_name]
            chosen = named[0] if named else max(paths, key=lambda p: p.stat().st_mtime)
            warnings.append(f"{student}: {len(paths)} notebooks; graded {chosen.name}")
        submissions.append(Submission(student, str(chosen)))
    return submissions, warnings


def stage_submission(sub: Submission, course_dir: Path, assignment: str, notebook: str,
                     release: Path) -> str:
    """Copy into submitted/<student>/<assignment>/; an unreadable file becomes the blank exercise."""
    import nbformat

    target = course_dir / "submitted" / sub.student / assignment
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    destination = target / f"{notebook}.ipynb"
    try:
        if os.path.getsize(sub.path) > MAX_NOTEBOOK_BYTES:
            raise ValueError(f"the file is larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
        nb = nbformat.read(sub.path, as_version=4)
        nbformat.validate(nb)
        shutil.copyfile(sub.path, destination)
        return "graded"
    except Exception as error:  # noqa: BLE001 - any unreadable file is handled the same way
        reason = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
        shutil.copyfile(sub.path, target / f".unreadable-{notebook}.ipynb")  # kept for the instructor
        write_blank(release, destination, [
            "The file you handed in could not be read as a Jupyter notebook "
            f"({reason}). It was graded as the unchanged exercise, which scores 0 points."])
        sub.notes.append(f"unreadable notebook ({reason}); graded as the blank exercise")
        return "unreadable"


def write_blank(release: Path, destination: Path, notes: list[str]):
    import nbformat

    nb = nbformat.read(release, as_version=4)
    nb.cells.insert(0, notes_cell(notes, nb.nbformat_minor))
    nbformat.write(nb, destination)
