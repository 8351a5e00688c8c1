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
    """

    def __init__(self, master_url: str):
        import warnings

        from nbgrader.api import Gradebook

        warnings.filterwarnings("ignore", module="nbgrader.api")  # SQLAlchemy 2 notes about nbgrader's sessions
        self.master = Gradebook(master_url)
        # nbgrader commits after each student it adds, and a commit would make SQLAlchemy load
        # every object again (the assignment's cells, dozens per student) on the next look.
        # This process is the gradebook's only writer: what it holds stays true.
        self.master.db().expire_on_commit = False
        self.shards: dict = {}

    def merge(self, shard_url: str, assignment: str, students: list[str]):
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
        for gradebook in [*self.shards.values(), self.master]:
            gradebook.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


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


def export_csv(config, course_dir: Path, assignment: str, path: Path):
    """nbgrader's CSV export of ``assignment``, sorted by student, with the ``to_grade_by_hand`` column."""
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
            fields = [*(reader.fieldnames or []), TO_GRADE_BY_HAND]
        for row in rows:
            try:
                waiting = points_to_grade_by_hand(gb.find_submission(row["assignment"], row["student_id"]))
            except MissingEntry:      # a student of the gradebook who handed nothing in
                waiting = 0.0
            row[TO_GRADE_BY_HAND] = float(waiting)
    rows.sort(key=lambda row: (row["assignment"], row["student_id"]))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
