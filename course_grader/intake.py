"""Submissions in: a folder or an LMS zip to each student's notebooks (and files), staged in nbgrader's layout.

What the upload holds, and whose each file is, is :mod:`course_grader.upload`'s:
every file and folder gets a verdict in the run's account.  Here each
student's chosen files become a :class:`Submission`, staged in nbgrader's
``submitted/<student>/<assignment>/``: a notebook that was not handed in, or
that cannot be read (:func:`read_submission`, the one way a student's notebook
is read, by grading and by practice feedback alike), is graded as the blank
exercise, with a note saying why; the file is kept for the instructor.  A
student who handed in nothing gradable (a PDF, a notebook saved as ``.py``, a
damaged zip) is graded as the blank exercise too, and the note says what they
handed in.  Other files of a student's go beside the notebooks, up to
``limits.FILES_PER_STUDENT_BYTES``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import shutil
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from . import limits, upload
from .report import notes_cell

IGNORED_PARTS = {"__MACOSX", ".ipynb_checkpoints"}

MAX_NOTEBOOK_BYTES = limits.NOTEBOOK_BYTES
MAX_FILES_BYTES = limits.FILES_PER_STUDENT_BYTES


@dataclass
class Submission:
    student: str                   # the id in the gradebook: a safe folder name (student_id)
    notebooks: dict                # notebook name -> the student's file for it (on this machine)
    notes: list = field(default_factory=list)
    given_id: str = ""             # the id as the collection gives it (any Unicode), when it differs
    files: list = field(default_factory=list)      # (path beside the notebooks, file on this machine)
    shown: dict = field(default_factory=dict)      # notebook name -> its file's path in the upload
    nothing_gradable: str = ""     # what they handed in, when no notebook of it can be graded


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
    """Stop, before anything is written, if ``source`` is neither a folder nor a zip that could hold notebooks."""
    def could_hold(name: str) -> bool:
        name = name.casefold()
        return name.endswith(".ipynb") or name.endswith(".zip")

    if source.is_file() and zipfile.is_zipfile(source):
        with zipfile.ZipFile(source) as archive:
            found = any(could_hold(name) for name in archive.namelist())
    elif source.is_dir():
        found = any(could_hold(name) for _, _, files in os.walk(source) for name in files)
    elif source.exists():
        raise SystemExit(f"{source} is neither a folder nor a zip file")
    else:
        raise SystemExit(f"{source} does not exist: give the folder or .zip of submitted notebooks")
    if not found:
        raise SystemExit(f"{source} holds no notebook (.ipynb), nor a zip that could hold one")


def find_submissions(source: Path, notebook_names: list[str], student_regex: str | None,
                     scratch: Path, worked=None) -> tuple[list[Submission], list[str], upload.Account]:
    """Each student's file for each of the assignment's notebooks, from a folder or a zip.

    Returns the submissions, the warnings to say as the run starts (damaged or dangerous
    entries), and the account of every file and folder of the upload
    (:mod:`course_grader.upload`).  ``worked(path, name)`` tells a notebook with answers from
    the blank exercise, where a student handed in several (None: it is not asked).
    """
    if not (source.is_dir() or (source.is_file() and zipfile.is_zipfile(source))):
        raise SystemExit(f"{source} is neither a folder nor a zip file")
    account = upload.Account()
    scratch.mkdir(parents=True, exist_ok=True)
    entries = upload.collect(source, scratch, account)
    owned = upload.attribute(entries, student_regex, notebook_names, account)
    submissions = []
    for given, items in sorted(owned.items()):
        hand_in = upload.choose(given, items, notebook_names, account, worked)
        student = student_id(given)
        submissions.append(Submission(
            student, {name: str(item.entry.path) for name, item in hand_in.notebooks.items()},
            list(hand_in.notes), given_id=given if given != student else "", files=hand_in.files,
            shown={name: item.entry.shown for name, item in hand_in.notebooks.items()},
            nothing_gradable=hand_in.nothing_gradable))
    warnings = list(account.problems)
    warnings += [f"{sub.given_id or sub.student}: {note}" for sub in submissions for note in sub.notes]
    return submissions, warnings, account


def stage_submission(sub: Submission, course_dir: Path, assignment: str, releases: dict[str, Path]) -> str:
    """Copy into submitted/<student>/<assignment>/: ``"graded"``, ``"unreadable"`` if a notebook was,
    or ``"no notebook"`` if the student handed in nothing gradable.

    A notebook not handed in, or unreadable, becomes the blank exercise with a
    note; the student's other files go beside the notebooks.
    """
    target = course_dir / "submitted" / sub.student / assignment
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    for relative, path in sub.files:
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target / relative)
    if not sub.notebooks:
        what = sub.nothing_gradable or "nothing"
        sub.notes.append(f"nothing gradable handed in ({what}); graded as the blank exercise")
        for name, release in releases.items():
            write_blank(release, target / f"{name}.ipynb", [
                f"No notebook that can be graded was handed in: {what}. {name}.ipynb was graded as the "
                "unchanged exercise, which scores 0 points. Hand in the notebook itself (.ipynb)."])
        return "no notebook"
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
