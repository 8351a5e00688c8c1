"""Submissions in: a folder or an LMS zip to each student's notebooks (and files), staged in nbgrader's layout.

An assignment may have several notebooks.  A student's files are matched to
them by name: ``problem1.ipynb`` in the student's folder, or, in a flat export
read with ``--student-regex``, a file whose name ends with the notebook's
(``alice_problem1.ipynb``).  A notebook that was not handed in, or that cannot
be read, is graded as the blank exercise, with a note saying why; the file is
kept for the instructor.  Other files in a student's folder (data, images) go
with the notebooks, up to ``limits.FILES_PER_STUDENT_BYTES``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import time
import warnings
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from . import limits
from .report import notes_cell

IGNORED_PARTS = {"__MACOSX", ".ipynb_checkpoints"}

MAX_NOTEBOOK_BYTES = limits.NOTEBOOK_BYTES
MAX_FILES_BYTES = limits.FILES_PER_STUDENT_BYTES


@dataclass
class Submission:
    student: str                   # the id in the gradebook: a safe folder name (student_id)
    notebooks: dict                # notebook name -> the student's file for it
    notes: list = field(default_factory=list)
    given_id: str = ""             # the id as the collection gives it (any Unicode), when it differs
    folder: str = ""               # the student's own folder in the collection, if there is one


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


def check_source(source: Path):
    """Stop, before anything is written, if ``source`` is neither a folder nor a zip of notebooks."""
    if source.is_file() and zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            notebooks = any(name.endswith(".ipynb") and not IGNORED_PARTS & set(Path(name).parts)
                            for name in archive.namelist())
    elif source.is_dir():
        notebooks = any(True for _ in _notebooks(source, []))
    elif source.exists():
        raise SystemExit(f"{source} is neither a folder nor a zip file")
    else:
        raise SystemExit(f"{source} does not exist: give the folder or .zip of submitted notebooks")
    if not notebooks:
        raise SystemExit(f"{source} holds no notebook (.ipynb)")


def find_submissions(source: Path, notebook_names: list[str], student_regex: str | None,
                     scratch: Path) -> tuple[list[Submission], list[str]]:
    """Each student's file for each of the assignment's notebooks, from a folder or a zip.

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
    folders: dict[str, Path] = {}
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
        if len(relative.parts) > 1:
            folders[student] = root / relative.parts[0]
    submissions = []
    for student, paths in sorted(found.items()):
        notes = []
        chosen = _match_notebooks(student, paths, notebook_names, warnings, notes)
        if not chosen:
            continue
        given = given_ids[student]
        submissions.append(Submission(student, {name: str(path) for name, path in chosen.items()}, notes,
                                      given_id=given if given != student else "",
                                      folder=str(folders.get(student, ""))))
    return submissions, warnings


def _match_notebooks(student: str, paths: list[Path], names: list[str], warnings: list,
                     notes: list) -> dict[str, Path]:
    """``{notebook name: file}`` for one student's files; ``notes`` says which of several was graded, and why."""
    def when(path: Path) -> str:
        import datetime

        return datetime.datetime.fromtimestamp(path.lstat().st_mtime).strftime("%Y-%m-%d %H:%M")

    def choice(name: str, chosen: Path, why: str, others: list[Path]):
        not_graded = ", ".join(f"{p.name} ({when(p)})" for p in others)
        notes.append(f"{len(others) + 1} files for {name}.ipynb: graded {chosen.name} ({when(chosen)}), {why}; "
                     f"not graded: {not_graded}")
        warnings.append(f"{student}: " + notes[-1])

    if len(names) == 1:      # one notebook: any file is it, the one with its name first, else the newest
        name = names[0]
        if len(paths) == 1:
            return {name: paths[0]}
        named = [p for p in paths if p.stem == name]
        newest = max(named or paths, key=lambda p: p.lstat().st_mtime)
        why = ("the one named as the assignment's notebook" if len(named) == 1
               else "the one modified last" + (" of those named as the notebook" if named else ""))
        choice(name, newest, why, [p for p in paths if p != newest])
        return {name: newest}
    candidates: dict[str, list[Path]] = {}
    for path in sorted(paths, key=lambda p: p.lstat().st_mtime):
        # the longest name the file's name ends with: problem10 before problem1
        matches = [n for n in names if path.stem == n or path.stem.endswith(("_" + n, "-" + n, " " + n))]
        if not matches:
            warnings.append(f"{student}: skipped {path.name}: it is none of the notebooks {', '.join(names)}")
            continue
        candidates.setdefault(max(matches, key=len), []).append(path)
    chosen: dict[str, Path] = {}
    for name, files in sorted(candidates.items()):
        chosen[name] = files[-1]          # the newest of several wins
        if len(files) > 1:
            choice(name, files[-1], "the one modified last", files[:-1])
    return chosen


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
            notebook = member.filename.endswith(".ipynb")
            if (member.is_dir() or member.filename.startswith("/") or ".." in parts
                    or IGNORED_PARTS & set(parts) or (not notebook and len(parts) < 2)):
                continue          # (files other than notebooks travel only in a student's folder)
            limit = MAX_NOTEBOOK_BYTES if notebook else MAX_FILES_BYTES
            if member.file_size > limit:
                warnings.append(f"skipped {member.filename}: larger than {limit >> 20} MB")
                continue
            target = root.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with archive.open(member) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                # the time the export gives the file: of a student's several files, the newest is graded
                stamp = time.mktime((*member.date_time, 0, 0, -1))
                os.utime(target, (stamp, stamp))
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
                target.unlink(missing_ok=True)
                warnings.append(f"skipped {member.filename}: damaged in the archive ({error})")


def stage_submission(sub: Submission, course_dir: Path, assignment: str, releases: dict[str, Path]) -> str:
    """Copy into submitted/<student>/<assignment>/: ``"graded"``, or ``"unreadable"`` if a notebook was.

    A notebook not handed in, or unreadable, becomes the blank exercise with a
    note; the student's other files (in their own folder) go beside the notebooks.
    """
    target = course_dir / "submitted" / sub.student / assignment
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    if sub.folder:
        _copy_files(Path(sub.folder), target, sub)
    status = "graded"
    for name, release in releases.items():
        destination = target / f"{name}.ipynb"
        if name not in sub.notebooks:
            write_blank(release, destination, [
                f"No {name}.ipynb was handed in. It was graded as the unchanged exercise, which scores 0 points."])
            sub.notes.append(f"{name}.ipynb not handed in; graded as the blank exercise")
            continue
        if not _stage_notebook(sub, sub.notebooks[name], name, release, target):
            status = "unreadable"
    return status


def _stage_notebook(sub: Submission, path: str, name: str, release: Path, target: Path) -> bool:
    import nbformat

    destination = target / f"{name}.ipynb"
    try:
        nb, repairs, notes = read_submission(Path(path))
    except UnreadableNotebook as error:
        with contextlib.suppress(OSError):   # kept for the instructor
            shutil.copyfile(path, target / f".unreadable-{name}.ipynb")
        write_blank(release, destination, [
            "The file you handed in could not be read as a Jupyter notebook "
            f"({error}). It was graded as the unchanged exercise, which scores 0 points."])
        sub.notes.append(f"unreadable notebook {name}.ipynb ({error}); graded as the blank exercise")
        return False
    sub.notes += [f"{name}.ipynb {note}" for note in notes]
    if repairs:
        sub.notes.append(f"{name}.ipynb repaired as Jupyter opens it: {'; '.join(repairs)}")
        nbformat.write(nb, destination)
    else:
        shutil.copyfile(path, destination)   # byte for byte: an ordinary notebook is graded as handed in
    return True


class UnreadableNotebook(ValueError):
    """A file that cannot be graded as a notebook; the message says why, in a few words."""


def read_submission(path: Path):
    """``(notebook, repairs, notes)`` for a student's notebook file, or :class:`UnreadableNotebook`.

    The one way a student's notebook is read, by grading and by practice feedback alike
    (:mod:`course_grader.practice`), so that both give a notebook the same verdict:

    * a file larger than :data:`MAX_NOTEBOOK_BYTES`, not JSON, not a notebook nbformat reads (``nbformat`` and
      ``nbformat_minor`` whole numbers), or with a cell nbgrader cannot grade (no ``source``, an
      unknown ``cell_type``, ``metadata`` that is not a mapping) is unreadable, and graded as the
      blank exercise;
    * slips Jupyter opens without a word are repaired (:func:`read_repaired`);
    * ``notes`` say what the instructor should know: a kernel other than Python (the notebook
      runs in the sandbox's Python kernel anyway), a failed strict validation (graded anyway, as
      nbgrader grades it).
    """
    import nbformat

    try:
        if os.path.getsize(path) > MAX_NOTEBOOK_BYTES:
            raise UnreadableNotebook(f"the file is larger than {MAX_NOTEBOOK_BYTES >> 20} MB")
        nb, repairs = read_repaired(Path(path))
    except UnreadableNotebook:
        raise
    except Exception as error:  # noqa: BLE001 - any unreadable file is handled the same way
        raise UnreadableNotebook(f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}")
    notes = []
    kernel = nb.metadata.get("kernelspec", {})
    if isinstance(kernel, dict) and kernel.get("name") not in (None, "python3", "python"):
        notes.append(f"declares the kernel {str(kernel.get('name'))[:40]!r}; "
                     "it was run in the grading sandbox's Python kernel")
    try:
        nbformat.validate(nb)
    except nbformat.ValidationError as error:
        # nbgrader grades such a notebook (tools like papermill and jupytext can write one); so do we.
        notes.append(f"does not pass nbformat's validation ({str(error).splitlines()[0][:200]}); graded anyway")
    return nb, repairs, notes


#: The cell types nbformat 4 has
CELL_TYPES = ("code", "markdown", "raw")


def check_header(data) -> None:
    """Raise :class:`UnreadableNotebook` unless ``data`` (a file's JSON) is a notebook whose format
    nbformat can read: what would stop nbformat with a bare error, said in a few words."""
    if not isinstance(data, dict):
        raise UnreadableNotebook("the file is JSON, but not a notebook (not a mapping)")
    for key in ("nbformat", "nbformat_minor"):
        if type(data.get(key)) is not int:
            raise UnreadableNotebook(f"its {key!r} is {str(data.get(key))[:20]!r}, not a whole number")
    if data["nbformat"] not in (3, 4):
        raise UnreadableNotebook(f"it is a notebook of nbformat {data['nbformat']}, which Jupyter no longer reads")


def check_cells(nb) -> None:
    """Raise :class:`UnreadableNotebook` unless every cell of ``nb`` (nbformat 4) is one nbgrader can
    grade: a known type, source text, metadata that is a mapping."""
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise UnreadableNotebook("it has no list of cells")
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") not in CELL_TYPES:
            raise UnreadableNotebook(f"cell {index} is not a code, Markdown or raw cell")
        source = cell.get("source")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            raise UnreadableNotebook(f"cell {index} has no source text")
        if not isinstance(cell.get("metadata", {}), dict):
            raise UnreadableNotebook(f"cell {index}'s metadata is not a mapping")


#: A cell id as nbformat 4.5 defines it.
CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def read_repaired(path: Path):
    """The notebook at ``path``, and what had to be repaired to read it as Jupyter does.

    Slips that Jupyter's own tools open without a word, repaired the same way:

    * a UTF-8 byte-order mark (Windows editors write one) is dropped;
    * a lone surrogate in a string (``"\\ud800"``, valid JSON, but not
      encodable as UTF-8: nothing could write the notebook again) becomes
      U+FFFD, as the browser does when JupyterLab saves the notebook;
    * a cell id that is not one (not 1 to 64 letters, digits, ``-`` or ``_``),
      or that another cell already has, is replaced by a new one, as nbformat
      does for duplicate ids.
    """
    import nbformat
    from nbformat.corpus.words import generate_corpus_id

    repairs = []
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
        repairs.append("a UTF-8 byte-order mark removed")
    text = data.decode("utf-8")
    raw = json.loads(text)
    check_header(raw)
    if raw["nbformat"] == 4:
        check_cells(raw)         # before nbformat logs its own complaint about it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # nbformat warns about what validate() reports
        nb = nbformat.reads(text, as_version=4)
    check_cells(nb)              # (a notebook of format 3, as nbformat converts it)
    surrogates = 0

    def clean(value):
        nonlocal surrogates
        if isinstance(value, str):
            value, count = LONE_SURROGATE.subn("\ufffd", value)
            surrogates += count
            return value
        if isinstance(value, list):
            return [clean(item) for item in value]
        if isinstance(value, dict):
            return type(value)((clean(key), clean(item)) for key, item in value.items())
        return value

    nb = clean(nb)
    if surrogates:
        repairs.append(f"{surrogates} lone surrogate character{'s' if surrogates > 1 else ''} "
                       "(not encodable as UTF-8) replaced by U+FFFD")
    seen, renamed = set(), 0
    for cell in nb.cells:
        if not isinstance(cell, dict) or "id" not in cell:
            continue
        if not (isinstance(cell["id"], str) and CELL_ID.fullmatch(cell["id"])) or cell["id"] in seen:
            cell["id"] = generate_corpus_id()
            renamed += 1
        seen.add(cell["id"])
    if renamed:
        repairs.append(f"{renamed} invalid or repeated cell id{'s' if renamed > 1 else ''} replaced")
    return nb, repairs


def _copy_files(folder: Path, target: Path, sub: Submission):
    left_out = copy_student_files(folder, target)
    if left_out:
        sub.notes.append(f"files beyond {MAX_FILES_BYTES >> 20} MB in all were left out: {', '.join(left_out[:5])}")


def copy_student_files(folder: Path, target: Path, max_files: int = 10_000) -> list[str]:
    """The student's files other than notebooks, regular files only, up to MAX_FILES_BYTES in all
    (and ``max_files`` looked at); returns the paths left out."""
    budget, left_out = MAX_FILES_BYTES, []
    found = list(itertools.islice(folder.rglob("*"), max_files + 1))
    if len(found) > max_files:
        left_out.append(f"everything beyond the first {max_files} entries of the folder")
    for path in sorted(found[:max_files]):
        relative = path.relative_to(folder)
        if (path.suffix == ".ipynb" or path.is_symlink() or not path.is_file()
                or any(part.startswith(".") or part in IGNORED_PARTS for part in relative.parts)):
            continue
        size = path.stat().st_size
        if size > budget:
            left_out.append(str(relative))
            continue
        budget -= size
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / relative)
    return left_out


def write_blank(release: Path, destination: Path, notes: list[str]):
    import nbformat

    nb = nbformat.read(release, as_version=4)
    nb.cells.insert(0, notes_cell(notes, nb.nbformat_minor))
    nbformat.write(nb, destination)
