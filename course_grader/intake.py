"""Submissions in: a folder or an LMS zip to one notebook per student, staged in nbgrader's layout.

A file that cannot be read as a notebook is kept for the instructor and
graded as the blank exercise, with a note saying why.
"""

from __future__ import annotations

import contextlib
import os
import re
import warnings
import shutil
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from .report import notes_cell

IGNORED_PARTS = {"__MACOSX", ".ipynb_checkpoints"}

MAX_NOTEBOOK_BYTES = 100 * 2 ** 20


@dataclass
class Submission:
    student: str                   # the id in the gradebook: a safe folder name (student_id)
    path: str                      # where the student's file was found
    notes: list = field(default_factory=list)
    given_id: str = ""             # the id as the collection gives it (any Unicode), when it differs


SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]*")


def student_id(given: str) -> str:
    """A folder- and gradebook-safe id for ``given``, which may be any text an LMS uses.

    An id that is already safe is kept.  Any other becomes its safe letters
    plus a short hash of the whole id, so that two different students never
    get the same id (``john doe`` and ``john_doe``, ``张伟`` and ``李娜``).
    """
    if SAFE_ID.fullmatch(given) and len(given) <= 100:
        return given
    import hashlib

    slug = re.sub(r"[^A-Za-z0-9._@-]+", "_", given).strip("._-@")[:60] or "student"
    return f"{slug}-{hashlib.sha256(given.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def find_submissions(source: Path, notebook_name: str, student_regex: str | None,
                     scratch: Path) -> tuple[list[Submission], list[str]]:
    """One notebook per student, from a folder or a zip.

    Whatever else the collection holds costs only its own entry, with a
    warning: a damaged archive member, a symbolic link (never followed, so
    nothing outside the collection is read), a file too big to be a notebook.
    """
    warnings = []
    if source.is_file() and zipfile.is_zipfile(source):
        root = scratch / "unzipped"
        root.mkdir(parents=True)
        _unzip(source, root, warnings)
    elif source.is_dir():
        root = source
    else:
        raise SystemExit(f"{source} is neither a folder nor a zip file")
    pattern = re.compile(student_regex) if student_regex else None
    found: dict[str, list[Path]] = {}
    given_ids: dict[str, str] = {}
    for path in _notebooks(root, warnings):
        relative = path.relative_to(root)
        if pattern:
            match = pattern.search(relative.as_posix())
            if not match:
                warnings.append(f"skipped {relative}: --student-regex does not match it")
                continue
            given = match.group("student")
        else:
            given = relative.parts[0] if len(relative.parts) > 1 else relative.stem
        student = student_id(given)
        found.setdefault(student, []).append(path)
        given_ids[student] = given
    submissions = []
    for student, paths in sorted(found.items()):
        chosen = paths[0]
        if len(paths) > 1:
            named = [p for p in paths if p.name == notebook_name]
            chosen = named[0] if named else max(paths, key=lambda p: p.lstat().st_mtime)
            warnings.append(f"{student}: {len(paths)} notebooks; graded {chosen.name}")
        given = given_ids[student]
        submissions.append(Submission(student, str(chosen), given_id=given if given != student else ""))
    return submissions, warnings


def _notebooks(root: Path, warnings: list) -> list[Path]:
    """Every ``.ipynb`` under ``root`` that is a regular file, without following links."""
    found = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        for name in list(dirs):
            if name in IGNORED_PARTS or name.startswith("."):
                dirs.remove(name)
            elif (here / name).is_symlink():
                dirs.remove(name)
                warnings.append(f"skipped {(here / name).relative_to(root)}: a symbolic link (not followed)")
        for name in sorted(files):
            path = here / name
            if not name.endswith(".ipynb") or name.startswith("."):
                continue
            if path.is_symlink():
                warnings.append(f"skipped {path.relative_to(root)}: a symbolic link (not followed)")
            elif path.is_file():
                found.append(path)
    return sorted(found)


def _unzip(archive_path: Path, root: Path, warnings: list):
    with zipfile.ZipFile(archive_path) as archive:
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
            try:
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
                target.unlink(missing_ok=True)
                warnings.append(f"skipped {member.filename}: damaged in the archive ({error})")


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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # nbformat warns about what validate() reports below
            nb = nbformat.read(sub.path, as_version=4)
        if not isinstance(nb.get("cells"), list):
            raise ValueError("it has no list of cells")
        try:
            nbformat.validate(nb)
        except nbformat.ValidationError as error:
            # nbgrader grades such a notebook (tools like papermill and jupytext can write one); so do we.
            sub.notes.append(f"the notebook does not pass nbformat's validation "
                             f"({str(error).splitlines()[0][:200]}); graded anyway")
        shutil.copyfile(sub.path, destination)
        return "graded"
    except Exception as error:  # noqa: BLE001 - any unreadable file is handled the same way
        reason = f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"
        with contextlib.suppress(OSError):   # kept for the instructor
            shutil.copyfile(sub.path, target / f".unreadable-{notebook}.ipynb")
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
