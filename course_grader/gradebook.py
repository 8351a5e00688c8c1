"""The course's gradebook: merging the workers' shards into it (one writer), and the grades CSV.

The CSV is ``nbgrader export``'s, sorted by student, with one more column,
``to_grade_by_hand``: the points of ``max_score`` that no one has graded by hand
yet, which ``score`` counts as 0 until someone does (in the formgrader).
"""

from __future__ import annotations

import shutil
from pathlib import Path


def merge_shard(master_url: str, shard_url: str, assignment: str, students: list[str]):
    """Copy the shard's grades, comments and flags for ``students`` into the course's gradebook."""
    with GradebookMerger(master_url) as merger:
        merger.merge(shard_url, assignment, students)


class GradebookMerger:
    """The course's gradebook, open in its one writer, taking students from the workers' shards.

    The grading command merges each student as soon as a worker has graded them, while the
    workers go on: each shard is only read, a student at a time, so that its worker's next
    commit waits milliseconds at most (SQLite's readers and writer take turns on a file).

    ``copies=True``: the shards are copies of this gradebook made after the assignment was added
    to it (the grading command's own workers), so the assignment, its notebooks and cells have
    the same ids in both, and a student's rows (student, submission, notebooks, grades,
    comments) are copied as they are, in one SQLite transaction, instead of through nbgrader's
    objects (a tenth of the time).  Any shard whose assignment has another id, or whose rows
    do not fit, is merged through nbgrader as for other shards (``merge``, shards of several
    machines, each with its own ids).
    """

    def __init__(self, master_url: str, copies: bool = False):
        import warnings

        warnings.filterwarnings("ignore", module="nbgrader.api")  # SQLAlchemy 2 notes about nbgrader's sessions
        self.master_url, self.copies = master_url, copies
        self._master = None
        self.shards: dict = {}
        self.row_copiers: dict = {}

    @property
    def master(self):
        from nbgrader.api import Gradebook

        if self._master is None:
            self._master = Gradebook(self.master_url)
            # nbgrader commits after each student it adds, and a commit would make SQLAlchemy load
            # every object again (the assignment's cells, dozens per student) on the next look.
            # This process is the gradebook's only writer: what it holds stays true.
            self._master.db().expire_on_commit = False
        return self._master

    def merge(self, shard_url: str, assignment: str, students: list[str]):
        if self.copies and self._master is None:
            if shard_url not in self.row_copiers:
                self.row_copiers[shard_url] = RowCopier.open(self.master_url, shard_url, assignment)
            copier = self.row_copiers[shard_url]
            if copier is not None:
                left = [student for student in students if not copier.copy(student)]
                if not left:
                    return
                students = left
            for other in self.row_copiers.values():     # nbgrader's objects from now on
                if other is not None:
                    other.close()
            self.row_copiers = {url: None for url in self.row_copiers}
        self._merge_objects(shard_url, assignment, students)

    def _merge_objects(self, shard_url: str, assignment: str, students: list[str]):
        from nbgrader.api import Gradebook, MissingEntry

        if shard_url not in self.shards:
            self.shards[shard_url] = Gradebook(shard_url)
            self.shards[shard_url].db().expire_on_commit = False
        shard, master = self.shards[shard_url], self.master
        try:
            for student in students:
                try:
                    submission = shard.find_submission(assignment, student)
                except MissingEntry:
                    continue
                person = submission.student
                master.update_or_create_student(student, first_name=person.first_name,
                                                last_name=person.last_name, email=person.email,
                                                lms_user_id=person.lms_user_id)
                merged = master.update_or_create_submission(assignment, student, timestamp=submission.timestamp)
                notebooks = {nb.name: nb for nb in merged.notebooks}
                for nb in submission.notebooks:
                    target = notebooks[nb.name]
                    target.flagged = nb.flagged
                    target.late_submission_penalty = nb.late_submission_penalty
                    # One query per notebook, not one per cell: the cells are the assignment's, the
                    # same objects for every student once loaded.
                    grades = {g.name: g for g in target.grades}
                    for grade in nb.grades:
                        g = grades[grade.name]
                        g.auto_score, g.manual_score = grade.auto_score, grade.manual_score
                        g.extra_credit, g.needs_manual_grade = grade.extra_credit, grade.needs_manual_grade
                    comments = {c.name: c for c in target.comments}
                    for comment in nb.comments:
                        c = comments[comment.name]
                        c.auto_comment, c.manual_comment = comment.auto_comment, comment.manual_comment
                master.db.commit()
        finally:
            shard.db.commit()     # ends this session's transaction, if any: the shard's worker never waits on it

    def close(self):
        for copier in self.row_copiers.values():
            if copier is not None:
                copier.close()
        for gradebook in [*self.shards.values(), *([self._master] if self._master is not None else [])]:
            gradebook.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class RowCopier:
    """One student's rows of one assignment, copied from a shard into the course's gradebook as
    they are (see :class:`GradebookMerger`), each student in one transaction."""

    #: A student's rows, table by table (parents first), and how each is found from the student
    TABLES = (
        ("student", "id = :student"),
        ("submitted_assignment", "student_id = :student AND assignment_id = :assignment"),
        ("submitted_notebook", "assignment_id IN (SELECT id FROM shard.submitted_assignment"
                               " WHERE student_id = :student AND assignment_id = :assignment)"),
        ("grade", "notebook_id IN (SELECT n.id FROM shard.submitted_notebook n JOIN shard.submitted_assignment a"
                  " ON n.assignment_id = a.id WHERE a.student_id = :student AND a.assignment_id = :assignment)"),
        ("comment", "notebook_id IN (SELECT n.id FROM shard.submitted_notebook n JOIN shard.submitted_assignment a"
                    " ON n.assignment_id = a.id WHERE a.student_id = :student AND a.assignment_id = :assignment)"),
    )

    def __init__(self, connection, assignment_id: str):
        self.connection, self.assignment_id = connection, assignment_id
        self.statements = []
        for table, where in self.TABLES:
            columns = [row[1] for row in connection.execute(f"PRAGMA main.table_info({table})")]
            if columns != [row[1] for row in connection.execute(f"PRAGMA shard.table_info({table})")] \
                    or "id" not in columns:
                raise ValueError(f"the shard's table {table} differs")
            names = ", ".join(columns)
            updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c != "id")
            self.statements.append(f"INSERT INTO main.{table} ({names}) SELECT {names} FROM shard.{table} "
                                   f"WHERE {where} ON CONFLICT (id) DO UPDATE SET {updates}")

    @classmethod
    def open(cls, master_url: str, shard_url: str, assignment: str) -> "RowCopier | None":
        """A copier, or None where the rows cannot be copied as they are (the ids differ)."""
        import sqlite3

        master, shard = (_sqlite_path(url) for url in (master_url, shard_url))
        if master is None or shard is None:
            return None
        connection = sqlite3.connect(master, timeout=30, isolation_level=None)
        try:
            connection.execute("ATTACH DATABASE ? AS shard", (shard,))
            ids = [connection.execute(f"SELECT id FROM {db}.assignment WHERE name = ?", (assignment,)).fetchall()
                   for db in ("main", "shard")]
            cells = [connection.execute(
                f"SELECT c.id, c.name, c.type, n.name FROM {db}.base_cell c JOIN {db}.notebook n "
                f"ON c.notebook_id = n.id WHERE n.assignment_id = ? ORDER BY c.id", ids[0][0] if ids[0] else ("",)
            ).fetchall() for db in ("main", "shard")]
            if len(ids[0]) != 1 or ids[0] != ids[1] or cells[0] != cells[1]:
                connection.close()
                return None
            return cls(connection, ids[0][0][0])
        except (sqlite3.Error, ValueError):
            connection.close()
            return None

    def copy(self, student: str) -> bool:
        """Copy ``student``'s rows; False (and nothing changed) where they do not fit the course's."""
        import sqlite3

        values = {"student": student, "assignment": self.assignment_id}
        try:
            if self.connection.execute("SELECT 1 FROM shard.submitted_assignment WHERE student_id = :student"
                                       " AND assignment_id = :assignment", values).fetchone() is None:
                return True      # nothing graded (as nbgrader's objects would merge nothing)
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                for statement in self.statements:
                    self.connection.execute(statement, values)
            except sqlite3.IntegrityError:    # e.g. a submission the course's gradebook holds under another id
                self.connection.execute("ROLLBACK")
                return False
            self.connection.execute("COMMIT")
            return True
        except sqlite3.Error:
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")
            return False

    def close(self):
        self.connection.close()


def _sqlite_path(url: str) -> str | None:
    prefix = "sqlite:///"
    return url[len(prefix):] if url.startswith(prefix) else None


def copy_student_folders(shard: Path, course_dir: Path, assignment: str, students: list[str],
                         kinds=("submitted", "autograded", "feedback")):
    """Bring ``students``' folders of ``assignment`` (nbgrader's layout) from a shard into the course directory."""
    for kind in kinds:
        for student in students:
            source = Path(shard) / kind / student / assignment
            target = Path(course_dir) / kind / student / assignment
            if source.exists():
                if target.exists():
                    shutil.rmtree(target)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copytree(source, target)


def points_to_grade_by_hand(submission) -> float:
    """Points of ``submission`` (nbgrader's) that await a hand grade: no autograde, no manual score yet.

    nbgrader scores an unchanged written answer 0 itself (a blank is not waiting for anyone), and
    keeps a hand grade when the submission is autograded again.
    """
    return sum(g.max_score for nb in submission.notebooks for g in nb.grades
               if g.auto_score is None and g.manual_score is None)


TO_GRADE_BY_HAND = "to_grade_by_hand"
#: The CSV's column that says what of each student's hand-in was graded, by its path in the upload
HANDED_IN = "handed_in"
#: The CSV's column that says why an instructor should look at a student's grade (the flags' reasons)
REVIEW = "review"


def export_csv(config, course_dir: Path, assignment: str, path: Path, handed_in: dict | None = None,
               review: dict | None = None):
    """nbgrader's CSV export of ``assignment``, sorted by student, with three more columns:
    ``to_grade_by_hand``, ``handed_in`` (``{student: text}``: the files graded, by their paths in
    the upload, or why nothing was; empty for a student this run did not see) and ``review``
    (``{student: [reason]}``: why an instructor should look, each flag's reason; the re-check's
    disagreements say which test, which error, in which process)."""
    import csv

    from nbgrader.api import Gradebook, MissingEntry
    from nbgrader.plugins import CsvExportPlugin

    plugin = CsvExportPlugin(config=config)
    plugin.to = str(path)
    plugin.assignment = [assignment]
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}",
                   config.CourseDirectory.get("course_id", "default_course")) as gb:
        plugin.export(gb)
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            fields = [*(reader.fieldnames or []), TO_GRADE_BY_HAND, HANDED_IN, REVIEW]
        for row in rows:
            try:
                waiting = points_to_grade_by_hand(gb.find_submission(row["assignment"], row["student_id"]))
            except MissingEntry:      # a student of the gradebook who handed nothing in
                waiting = 0.0
            row[TO_GRADE_BY_HAND] = float(waiting)
            row[HANDED_IN] = (handed_in or {}).get(row["student_id"], "") if row["assignment"] == assignment else ""
            row[REVIEW] = (" | ".join((review or {}).get(row["student_id"], []))
                           if row["assignment"] == assignment else "")
    rows.sort(key=lambda row: (row["assignment"], row["student_id"]))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
