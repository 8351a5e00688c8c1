"""Every file and folder of an upload: found, unzipped, given to a student or set aside, and said which.

An upload is a folder or a zip of submissions as an instructor downloads them.
:func:`collect` walks it, opening every zip inside (``.zip`` or ``.ZIP``,
``NAME.ipynb.zip``, a zip of zips) as the folder of its name, up to
:data:`MAX_ZIP_DEPTH` levels and :data:`course_grader.limits.UPLOAD_BYTES` unzipped in all; it
never follows a symbolic link and never writes outside its scratch folder.
:func:`attribute` says whose each file is:

* ``--student-regex``, matched against the path, when the instructor gives one;
* the shapes learning-management systems export, where they differ from a
  folder per student: Moodle (``Jane Smith_4711_assignsubmission_file_/...``,
  folders or flat names), Canvas (``smithjane_LATE_1234_5678_a1.ipynb``),
  Blackboard (``A1_jsmith_attempt_2026-03-01-10-00-00_a1.ipynb``, and its
  receipt ``..._attempt_2026-03-01-10-00-00.txt``) and nbgrader's exchange
  (``jsmith+a1+2026-03-01 10:00:00.000000 UTC+k3x/a1.ipynb``, and its
  ``submitted/<student>/...``); their attempt times decide between attempts;
* otherwise a folder per student (``<student>/<any path>``), or one file per
  student at the top (``<student>.ipynb``, ``<student>.pdf``).  A folder
  around the whole upload (``submissions/...``) is looked through.

:func:`choose` then picks each student's file for each of the assignment's
notebooks (one with answers before a blank or unreadable copy, then the one
named as the notebook, then the one handed in last) and the files that go
beside them.  Every entry gets a verdict in the run's :class:`Account`: whose
notebook it is graded as, whose file it goes beside, or why it is not graded;
a student who handed in nothing gradable is still a student, graded as the
blank exercise with a note that says so.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import time
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from . import limits

#: Zips inside zips opened, at most
MAX_ZIP_DEPTH = 3
#: Entries of an upload looked at, at most (a zip of a million empty files costs only this many)
MAX_ENTRIES = 100_000
#: Folders and files the system or an editor makes, never a student's work
SYSTEM_PARTS = {"__MACOSX": "macOS's archive data", ".ipynb_checkpoints": "Jupyter's checkpoint copies",
                ".DS_Store": "macOS's folder data", "Thumbs.db": "Windows's thumbnails",
                "desktop.ini": "Windows's folder data"}
#: nbgrader's own folders around a collection of students' folders
NBGRADER_WRAPPERS = {"submitted", "inbound"}


@dataclass
class Entry:
    """One file or folder of the upload."""

    shown: str                 # its path in the upload; a zip's members under the zip's own path
    parts: tuple               # the path students are read from: a zip as the folder of its name
    path: Path | None = None   # where its bytes are on this machine (None: a folder, or a file not read)
    mtime: float = 0.0
    folder: bool = False
    problem: str = ""          # why it cannot be graded, found while reading it (damaged, too large)

    @property
    def name(self) -> str:
        return self.parts[-1]

    @property
    def notebook(self) -> bool:
        return not self.folder and self.name.casefold().endswith(".ipynb")

    @property
    def whole_hand_in(self) -> bool:
        """A notebook, or a zip that could not be opened: a student's hand-in wherever it lies."""
        return self.notebook or (not self.folder and _is_zip(self.name))


@dataclass
class Owned:
    """A file of one student's: where it is in their hand-in, and which attempt it belongs to."""

    entry: Entry
    within: tuple              # its path inside the student's hand-in
    attempt: str = ""          # when the LMS says it was handed in (sortable text), where it says so
    how: str = ""              # how its student was read, for the account ("a Canvas file name")


class Account:
    """What became of every entry of the upload: ``{path in the upload: verdict}``, in upload order."""

    def __init__(self):
        self.verdicts: dict[str, str] = {}
        self.problems: list[str] = []       # the entries an instructor should hear of as the run starts

    def say(self, entry_or_shown, verdict: str) -> None:
        shown = entry_or_shown.shown if isinstance(entry_or_shown, Entry) else entry_or_shown
        self.verdicts[shown] = verdict

    def refuse(self, shown: str, why: str) -> None:
        """Not graded, and worth a line as the run starts (a damaged or dangerous entry)."""
        self.say(shown, f"not graded: {why}")
        self.problems.append(f"skipped {shown}: {why}")

    def not_graded(self) -> list[tuple[str, str]]:
        return [(shown, verdict) for shown, verdict in self.verdicts.items() if verdict.startswith("not graded")]


# ---------------------------------------------------------------------------
# Walking the upload
# ---------------------------------------------------------------------------

def collect(source: Path, scratch: Path, account: Account) -> list[Entry]:
    """Every entry of the folder or zip ``source``, zips inside opened (into ``scratch``)."""
    walker = _Walker(scratch, account)
    if source.is_file():
        walker.zip(source, "", (), 0)
    else:
        walker.folder(source, "", ())
    return walker.entries


def zip_folder_name(name: str) -> str:
    """The folder a zip counts as: its name without ``.zip``, and without ``.ipynb`` (``alice.ipynb.zip``)."""
    stem = name[:-4] if name.casefold().endswith(".zip") else name
    return stem[:-6] if stem.casefold().endswith(".ipynb") and len(stem) > 6 else stem


def _is_zip(name: str) -> bool:
    return name.casefold().endswith(".zip")


class _Walker:
    def __init__(self, scratch: Path, account: Account):
        self.scratch, self.account = scratch, account
        self.entries: list[Entry] = []
        self.unzipped = 0          # bytes written into scratch
        self.zips = 0

    def _room(self) -> bool:
        """Whether the upload may have one more entry (:data:`MAX_ENTRIES`)."""
        return len(self.entries) + len(self.account.verdicts) < MAX_ENTRIES

    def folder(self, root: Path, shown: str, parts: tuple) -> None:
        for folder, dirs, files in os.walk(root, followlinks=False):
            here = Path(folder)
            relative = here.relative_to(root).parts
            for name in sorted(dirs):
                if (here / name).is_symlink():
                    dirs.remove(name)
                    self.account.refuse(shown + "/".join((*relative, name)), "a symbolic link (not followed)")
                elif self._room():
                    self.entries.append(Entry(shown + "/".join((*relative, name)), (*parts, *relative, name),
                                              folder=True))
            dirs.sort()
            for name in sorted(files):
                path, where = here / name, shown + "/".join((*relative, name))
                if not self._room():
                    self.account.refuse(where, f"beyond the first {MAX_ENTRIES:,} entries of the upload")
                elif path.is_symlink():
                    self.account.refuse(where, "a symbolic link (not followed)")
                elif not path.is_file():
                    self.account.refuse(where, "not a regular file")
                elif _is_zip(name):
                    self.zip(path, where + "/", (*parts, *relative, zip_folder_name(name)), 1)
                else:
                    self.entries.append(Entry(where, (*parts, *relative, name), path, path.lstat().st_mtime))

    def zip(self, archive_path: Path, shown: str, parts: tuple, depth: int) -> None:
        """The zip's members, as entries under ``shown`` (the zip's own path, "" for the upload itself)."""
        label = shown.rstrip("/") or archive_path.name
        if depth > MAX_ZIP_DEPTH:
            self._unopened(label, parts, f"a zip inside more than {MAX_ZIP_DEPTH} levels of zips (not opened)")
            return
        try:
            archive = zipfile.ZipFile(archive_path)
        except (zipfile.BadZipFile, OSError, ValueError) as error:
            self._unopened(label, parts, f"not a zip file that can be read ({str(error)[:120]})")
            return
        if shown:
            self.account.say(label, "a zip file, opened: its files are listed under it")
            self.entries.append(Entry(label, parts, folder=True))
        self.zips += 1
        target = self.scratch / f"zip-{self.zips}"
        seen_folders, seen_files = set(), set()
        with archive:
            for index, member in enumerate(archive.infolist()):
                name = member.filename.replace("\\", "/")
                inner = PurePosixPath(name).parts
                where = shown + name.rstrip("/")
                if not self._room():
                    self.account.refuse(where, f"beyond the first {MAX_ENTRIES:,} entries of the upload")
                    continue
                if (name.startswith("/") or ".." in inner or not inner
                        or re.match(r"[A-Za-z]:", inner[0] if inner else "")):
                    self.account.refuse(where, "a path that leads outside the archive (not extracted)")
                    continue
                for cut in range(1, len(inner) if not member.is_dir() else len(inner) + 1):
                    folder = inner[:cut]
                    if folder not in seen_folders:
                        seen_folders.add(folder)
                        self.entries.append(Entry(shown + "/".join(folder), (*parts, *folder), folder=True))
                if member.is_dir():
                    continue
                if name in seen_files:           # the same path twice in one archive: both are accounted for
                    where = f"{where} (entry {index + 1} of {label})"
                seen_files.add(name)
                self._member(archive, member, target / str(index) / PurePosixPath(*inner), where,
                             (*parts, *inner), depth)

    def _member(self, archive, member, target: Path, where: str, parts: tuple, depth: int) -> None:
        stamp = time.mktime((*member.date_time, 0, 0, -1))
        entry = Entry(where, parts, None, stamp)
        # a notebook up to what grading reads; a zip as large as the upload's budget; any other
        # file up to what a student's files may take in all
        limit = (limits.NOTEBOOK_BYTES if entry.notebook else limits.UPLOAD_BYTES if _is_zip(entry.name)
                 else limits.FILES_PER_STUDENT_BYTES)
        if member.flag_bits & 0x1:
            entry.problem = "an encrypted file in the archive (not extracted)"
        elif member.file_size > limit:
            entry.problem = f"larger than {limit >> 20} MB (not extracted)"
        elif self.unzipped + member.file_size > limits.UPLOAD_BYTES:
            entry.problem = f"beyond the {limits.UPLOAD_BYTES >> 30} GiB the whole upload may unzip to (not extracted)"
        if entry.problem:
            self.account.problems.append(f"skipped {where}: {entry.problem}")
            self.entries.append(entry)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with archive.open(member) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.utime(target, (stamp, stamp))  # the export's time: of a student's several files, the newest wins
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error, RuntimeError, NotImplementedError) as error:
            target.unlink(missing_ok=True)
            entry.problem = f"damaged in the archive ({str(error)[:120]})"
            self.account.problems.append(f"skipped {where}: {entry.problem}")
            self.entries.append(entry)
            return
        self.unzipped += member.file_size
        if _is_zip(entry.name):
            self.zip(target, where + "/", (*parts[:-1], zip_folder_name(entry.name)), depth + 1)
            return
        entry.path = target
        self.entries.append(entry)

    def _unopened(self, label: str, parts: tuple, why: str) -> None:
        """A zip that was not opened: a file of its student's that cannot be graded."""
        self.account.problems.append(f"skipped {label}: {why}")
        name = PurePosixPath(label).name
        self.entries.append(Entry(label, (*parts[:-1], name) if parts else (name,), None, 0.0, problem=why))


# ---------------------------------------------------------------------------
# Whose each file is
# ---------------------------------------------------------------------------

MOODLE = re.compile(r"^(?P<student>.+?)_(?P<id>\d+)_assign(?:ment)?submission_(?P<plugin>[a-z]+)_(?P<rest>.*)$")
CANVAS = re.compile(r"^(?P<student>[a-z0-9]+)(?:_LATE)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<rest>.+)$")
BLACKBOARD = re.compile(r"^(?P<assignment>.+)_(?P<student>[^_]+)_attempt_"
                        r"(?P<when>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<rest>.+?))?(?P<ext>\.[^._]+)?$")
NBGRADER_EXCHANGE = re.compile(r"^(?P<student>[^+]+)\+(?P<assignment>[^+]+)\+(?P<when>[^+]+)(?:\+[^+]*)?$")


def attribute(entries: list[Entry], regex: str | None, names: list[str],
              account: Account) -> dict[str, list[Owned]]:
    """``{student as the upload names them: their files}``; every entry not given to a student gets its verdict."""
    pattern = re.compile(regex) if regex else None
    files = [e for e in entries if not e.folder and not _set_aside(e, account)]
    depth = 0 if pattern else _wrapper_depth(files, names)
    for entry in entries:
        if entry.folder and len(entry.parts) <= depth:
            account.say(entry, "a folder around the whole upload, looked through")
    flat_notebooks = any(len(e.parts) == depth + 1 and e.notebook for e in files)
    owned: dict[str, list[Owned]] = {}
    top_files = []
    for entry in files:
        found = _owner(entry, entry.parts[depth:], pattern)
        if found is None:
            account.refuse(entry.shown, "--student-regex does not match its path")
            continue
        student, item = found
        if len(entry.parts) == depth + 1 and not entry.whole_hand_in and not item.how and not flat_notebooks:
            top_files.append((student, item))     # whose it is, only if that student is found otherwise
            continue
        owned.setdefault(student, []).append(item)
    for student, item in top_files:
        if student in owned:
            owned[student].append(item)
        else:
            account.say(item.entry, "not graded: a file at the top of the upload, in no student's folder "
                                    "(--student-regex can say whose it is)")
    _folder_verdicts(entries, depth, pattern, owned, account)
    return owned


def _set_aside(entry: Entry, account: Account) -> bool:
    """Whether ``entry`` is what a system or editor made, or hidden; if so it gets its verdict here."""
    for part in entry.parts:
        if part in SYSTEM_PARTS:
            account.say(entry, f"not graded: {SYSTEM_PARTS[part]}")
            return True
        if part.startswith(".") and part.strip("."):
            account.say(entry, "not graded: a hidden file or folder (its name starts with '.')")
            return True
    return False


def _wrapper_depth(files: list[Entry], names: list[str]) -> int:
    """How many folders around the whole upload to look through: while every file is in one folder
    that is nbgrader's own (``submitted``, ``inbound``) or holds more than one folder or notebook,
    none of them named as one of the assignment's notebooks (a student's folder would)."""
    depth, wanted = 0, {name.casefold() for name in names}
    while files and all(len(e.parts) > depth + 1 for e in files):
        tops = {e.parts[depth] for e in files}
        if len(tops) != 1:
            break
        children = {e.parts[depth + 1]: len(e.parts) > depth + 2 or e.notebook for e in files}
        named = any(_stem(child) in wanted for child in children)
        several = sum(children.values()) > 1
        if not (tops & NBGRADER_WRAPPERS or (several and not named)):
            break
        depth += 1
    return depth


def _stem(name: str) -> str:
    """A file's name without its extension, in lower case (``A1.IPYNB`` -> ``a1``)."""
    return (name.rsplit(".", 1)[0] if "." in name.strip(".") else name).casefold()


def _owner(entry: Entry, parts: tuple, pattern) -> tuple[str, Owned] | None:
    """(student, what of theirs) for a file at ``parts`` (its path below any wrapper folder)."""
    if pattern is not None:
        match = pattern.search("/".join(parts))
        if not match:
            return None
        within = parts[1:] if len(parts) > 1 else parts
        return match.group("student"), Owned(entry, within)
    first = parts[0]
    if len(parts) > 1:
        moodle = MOODLE.match(first)
        if moodle:
            return f"{moodle['student']}_{moodle['id']}", Owned(entry, parts[1:], how="a Moodle folder")
        exchange = NBGRADER_EXCHANGE.match(first)
        if exchange:
            return exchange["student"], Owned(entry, parts[1:], exchange["when"], "nbgrader's exchange")
        return first, Owned(entry, parts[1:])
    moodle = MOODLE.match(first)
    if moodle and moodle["rest"]:
        return f"{moodle['student']}_{moodle['id']}", Owned(entry, (moodle["rest"],), how="a Moodle file name")
    blackboard = BLACKBOARD.match(first)
    if blackboard:
        rest = (blackboard["rest"] or "") + (blackboard["ext"] or "")
        item = Owned(entry, (rest or first,), blackboard["when"], "a Blackboard file name")
        if not blackboard["rest"]:
            item.how = "receipt"        # Blackboard's record of the attempt, not the student's file
        return blackboard["student"], item
    canvas = CANVAS.match(first)
    if canvas:
        # Canvas numbers each file it keeps; a resubmission's number is the larger
        return canvas["student"], Owned(entry, (canvas["rest"],), f"{int(canvas['submission']):020d}",
                                        "a Canvas file name")
    stem = first[:-6] if first.casefold().endswith(".ipynb") else first.rsplit(".", 1)[0] if "." in first else first
    return stem or first, Owned(entry, (first,))


def _folder_verdicts(entries, depth: int, pattern, owned: dict, account: Account) -> None:
    for entry in entries:
        # (a zip already has its verdict: opened, and whose each of its files is, said per file)
        if not entry.folder or entry.shown in account.verdicts or len(entry.parts) <= depth:
            continue
        student = entry.parts[depth]
        moodle, exchange = MOODLE.match(student), NBGRADER_EXCHANGE.match(student)
        if pattern is None and moodle:
            student = f"{moodle['student']}_{moodle['id']}"
        elif pattern is None and exchange:
            student = exchange["student"]
        if student in owned:
            where = "folder" if len(entry.parts) == depth + 1 else "a folder inside the hand-in"
            account.say(entry, f"{student}'s {where}" if where == "folder" else f"{where} of {student}")
        else:
            account.say(entry, "a folder with no file of a student's in it")


# ---------------------------------------------------------------------------
# Each student's notebooks, and the files that go with them
# ---------------------------------------------------------------------------

@dataclass
class HandIn:
    """What is graded of one student's: a file per notebook, the files beside them, and what to tell."""

    notebooks: dict = field(default_factory=dict)    # notebook name -> Owned
    files: list = field(default_factory=list)        # (path inside the sandbox's folder, file on this machine)
    notes: list = field(default_factory=list)
    nothing_gradable: str = ""                       # why no notebook of theirs is graded, if none is


def choose(student: str, owned: list[Owned], names: list[str], account: Account, worked=None) -> HandIn:
    """``student``'s file for each of the assignment's ``names`` and the files beside them (see the module).

    ``worked(path, name)``: whether a notebook file holds answers (True), is the blank exercise or
    unreadable (False); None where that cannot be told (then it decides nothing).
    """
    hand_in = HandIn()
    notebooks = [item for item in owned if item.entry.notebook and not item.entry.problem]
    others = [item for item in owned if item not in notebooks]
    candidates = _candidates(student, notebooks, names, account)
    if worked is not None:
        worked = _remembered(worked)
    for name, items in sorted(candidates.items()):
        ranked = sorted(items, key=lambda item: _rank(item, name, worked if len(items) > 1 else None),
                        reverse=True)
        best = ranked[0]
        hand_in.notebooks[name] = best
        account.say(best.entry, f"graded: {student}'s {name}.ipynb" + (f" ({best.how})" if best.how else ""))
        if len(ranked) > 1:
            why = _why(best, ranked[1:], name, worked)
            not_graded = ", ".join(f"{item.entry.shown} ({_when(item)})" for item in ranked[1:])
            hand_in.notes.append(f"{len(ranked)} files for {name}.ipynb: graded {best.entry.shown} "
                                 f"({_when(best)}), {why}; not graded: {not_graded}")
            for item in ranked[1:]:
                account.say(item.entry, f"not graded: another of {student}'s files for {name}.ipynb; "
                                        f"{best.entry.shown} was graded ({why})")
    if not hand_in.notebooks:
        handed = ", ".join(f"{item.entry.shown} ({_not_a_notebook(item)})" for item in owned)
        hand_in.nothing_gradable = handed
        for item in owned:
            account.say(item.entry, f"not graded: {_not_a_notebook(item)}; {student} handed in no notebook "
                                    "that can be graded, and is graded as the blank exercise")
        return hand_in
    _beside(student, others, hand_in, account)
    return hand_in


def _candidates(student: str, notebooks: list[Owned], names: list[str], account: Account) -> dict[str, list]:
    if len(names) == 1:
        return {names[0]: notebooks} if notebooks else {}
    found: dict[str, list] = {}
    for item in notebooks:
        stem = re.sub(r"-\d+$", "", _stem(item.within[-1]))        # Canvas numbers a resubmission: hw-1
        matches = [n for n in names if stem == n.casefold() or stem.endswith(
            tuple(sep + n.casefold() for sep in "_- "))]
        if not matches:
            account.say(item.entry, f"not graded: none of the assignment's notebooks ({', '.join(names)})")
            continue
        found.setdefault(max(matches, key=len), []).append(item)   # problem10 before problem1
    return found


def _remembered(worked):
    """``worked``, asked once per file."""
    known: dict = {}

    def ask(path, name):
        if (path, name) not in known:
            known[path, name] = worked(path, name)
        return known[path, name]

    return ask


def _named(item: Owned, name: str) -> bool:
    """Whether the file is named as the notebook (``hw-1.ipynb`` too: Canvas numbers a resubmission)."""
    return re.sub(r"-\d+$", "", _stem(item.within[-1])) == name.casefold()


def _rank(item: Owned, name: str, worked) -> tuple:
    answers = worked(item.entry.path, name) if worked is not None else None
    return (answers is not False, _named(item, name), item.attempt, item.entry.mtime)


def _why(best: Owned, others: list[Owned], name: str, worked) -> str:
    if worked is not None and worked(best.entry.path, name) and not any(worked(o.entry.path, name) for o in others):
        return "the one with answers (the others are the blank exercise or cannot be read)"
    named = [o for o in [best, *others] if _named(o, name)]
    if _named(best, name) and len(named) == 1:
        return "the one named as the assignment's notebook"
    return ("the one handed in last" if best.attempt else "the one modified last") + (
        " of those named as the notebook" if named and len(named) < len(others) + 1 else "")


def _when(item: Owned) -> str:
    return datetime.datetime.fromtimestamp(item.entry.mtime).strftime("%Y-%m-%d %H:%M")


def _not_a_notebook(item: Owned) -> str:
    entry = item.entry
    if entry.problem:
        return entry.problem
    if item.how == "receipt":
        return "Blackboard's record of the attempt"
    if entry.notebook:
        return "not one of the assignment's notebooks"
    suffix = entry.name.rsplit(".", 1)[-1].casefold() if "." in entry.name.strip(".") else ""
    if suffix == "py":
        return "a Python file, not a notebook: a notebook is handed in as .ipynb"
    return f"not a notebook (a .{suffix} file)" if suffix else "not a notebook"


def _beside(student: str, others: list[Owned], hand_in: HandIn, account: Account) -> None:
    """The student's other files, beside the graded notebooks as in their hand-in, up to the budget."""
    graded = next(iter(hand_in.notebooks.values()))
    base = graded.within[:-1]
    attempts = {item.attempt for item in hand_in.notebooks.values()}
    budget, placed = limits.FILES_PER_STUDENT_BYTES, set()
    for item in others:
        entry = item.entry
        if entry.problem or item.how == "receipt":
            account.say(entry, f"not graded: {_not_a_notebook(item)}")
            continue
        if item.attempt and item.attempt not in attempts:
            account.say(entry, f"not graded: a file of another of {student}'s attempts than the one graded")
            continue
        within = item.within[len(base):] if item.within[:len(base)] == base else item.within
        relative = "/".join(within)
        size = entry.path.stat().st_size
        if relative in placed:
            account.say(entry, f"not graded, not copied: another file of {student}'s has the same path")
            continue
        if size > budget:
            account.say(entry, f"not graded, not copied: beyond the {limits.FILES_PER_STUDENT_BYTES >> 20} MB "
                               "a student's other files may take")
            hand_in.notes.append(f"a file left out, beyond {limits.FILES_PER_STUDENT_BYTES >> 20} MB of files in "
                                 f"all: {entry.shown}")
            continue
        budget -= size
        placed.add(relative)
        hand_in.files.append((relative, entry.path))
        account.say(entry, f"beside {student}'s notebook (a file of theirs, not graded itself)")
