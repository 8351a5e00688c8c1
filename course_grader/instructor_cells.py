"""Every cell the instructor wrote runs as the instructor wrote it; only the answers are the student's.

nbgrader's ``OverwriteCells`` puts back what a submission changed of a graded
or locked cell's source, cell type, points and lock, but a submission holds
the rest of each cell and of the notebook, and some of it decides how the
notebook runs and is scored:

* cell tags read by nbclient: ``skip-execution`` (the cell is not run; a test
  that never runs has no error, and nbgrader gives its points) and
  ``raises-exception``;
* the other nbgrader flags of a cell (``grade``, ``solution``, ``task``):
  a test cell that claims to be a solution is no longer a test;
* any other cell metadata a tool may read (``execution``, ...), and the
  notebook's metadata (its kernel, its language, widget state).

So before the notebook runs, :func:`restore` gives every cell that carries one
of the assignment's nbgrader ids its type, its nbgrader metadata (as
released: from the gradebook) and the rest of its metadata (tags included)
from the instructor's **source** notebook, and gives the notebook the source
notebook's metadata.  Only the student's answers (the source of solution
cells) and the student's own cells come from the submission.  The course's
own practice cell is tagged ``skip-execution`` by the instructor, so a tag is
honoured exactly where the instructor wrote it.

After the run, :func:`fail_tests_not_run` gives a test cell that nothing ran
(:func:`tests_not_run`) a failure: a test that did not run never passes.

Cells without nbgrader metadata cannot be told apart from the student's own
(an instructor's plain cell is the student's to change), so they run as
handed in: their tags can only keep the student's own code from running.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path

from nbformat.notebooknode import from_dict

from .cells import NOT_RUN, SKIP_TAG, error_output, grade_id, is_test

#: Tags nbclient reads to decide whether and how a cell runs: a change to one of these on an
#: instructor's cell is tampering, not a slip of an editor, and flags the submission.
EXECUTION_TAGS = frozenset({SKIP_TAG, "raises-exception"})
#: nbgrader's flags of a cell that say what it is graded as.  (``locked`` is not one: nbgrader reads a
#: graded cell as locked whatever it says, and OverwriteCells puts any other cell's back.)
NBGRADER_FLAGS = ("grade", "solution", "task")
#: Notebook metadata of the source notebook that is the instructor's editor's, not the notebook's.
EDITOR_METADATA = frozenset({"celltoolbar"})


@dataclass
class Restored:
    """What :func:`restore` changed: for the grading notes (``changed``) and for a flag (``tampered``)."""

    changed: list = field(default_factory=list)    # grade ids whose type or metadata came back
    tampered: list = field(default_factory=list)   # why the submission is flagged: execution-affecting changes

    def flag(self) -> str:
        """One line for an instructor, or "" when nothing that decides execution had been changed."""
        if not self.tampered:
            return ""
        return ("cells of the instructor's were changed in ways that decide how they run or are scored "
                "(restored as the instructor wrote them): " + "; ".join(self.tampered[:8]))


def released_nbgrader_metadata(gradebook_notebook) -> dict[str, dict]:
    """``{grade id: the cell's nbgrader metadata as released}``, from nbgrader's gradebook notebook."""
    points = {cell.name: cell.max_score for cell in gradebook_notebook.grade_cells}
    solutions = {cell.name for cell in gradebook_notebook.solution_cells}
    tasks = {cell.name for cell in gradebook_notebook.task_cells}
    released = {}
    for cell in gradebook_notebook.source_cells:
        info = {"grade": cell.name in points, "grade_id": cell.name, "locked": bool(cell.locked),
                "schema_version": 3, "solution": cell.name in solutions, "task": cell.name in tasks}
        if cell.name in points:
            info["points"] = points[cell.name]
        if cell.checksum:
            info["checksum"] = cell.checksum
        released[cell.name] = {"cell_type": cell.cell_type, "nbgrader": info}
    return released


def from_gradebook(db_url: str, notebook: str, assignment: str) -> dict[str, dict]:
    """:func:`released_nbgrader_metadata` of ``notebook`` of ``assignment`` in the gradebook at ``db_url``."""
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        return released_nbgrader_metadata(gb.find_notebook(notebook, assignment))


def read_source(path: Path):
    """The instructor's source notebook, or None where it cannot be read (the grader then keeps
    the submission's cell metadata, without the tags that decide execution)."""
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError):
        return None


def restore(nb, released: dict[str, dict], source_nb=None) -> Restored:
    """The instructor's cells and notebook metadata of ``nb`` as the instructor wrote them (see the module).

    ``released`` is :func:`released_nbgrader_metadata`; ``source_nb`` the source
    notebook (None: not readable here; then every execution tag of an instructor's
    cell is dropped instead).  The student's answers, the source of solution
    cells, are left as handed in; so is every cell without one of the
    assignment's nbgrader ids.
    """
    done = Restored()
    source_cells = {grade_id(cell): cell for cell in source_nb.cells if grade_id(cell)} if source_nb else {}
    seen = set()
    for cell in nb.cells:
        gid = grade_id(cell)
        if gid not in released:
            continue
        if gid in seen:
            # A second cell with the id (nbgrader adds a test back when the submission's copy claims not
            # to be one): the first is the instructor's, this one runs as the student's own.
            del cell.metadata["nbgrader"]
            done.changed.append(gid)
            continue
        seen.add(gid)
        wanted = _instructor_metadata(cell, released[gid], source_cells.get(gid))
        what = _differences(cell, released[gid]["cell_type"], wanted)
        if what:
            done.changed.append(gid)
            done.tampered += [f"{gid}: {change}" for change in what if _decides_execution(change)]
        _set_cell_type(cell, released[gid]["cell_type"])
        cell.metadata = from_dict(wanted)
    if source_nb is not None:
        _restore_notebook_metadata(nb, source_nb)
    return done


def _instructor_metadata(cell, released: dict, source_cell) -> dict:
    """The cell's metadata as the instructor wrote it: the source cell's, nbgrader's as released."""
    if source_cell is not None:
        metadata = copy.deepcopy(dict(source_cell.metadata))
    else:       # no source notebook here: the submission's, without what decides execution
        metadata = copy.deepcopy(dict(cell.metadata))
        tags = [tag for tag in metadata.get("tags", []) if tag not in EXECUTION_TAGS]
        metadata.pop("execution", None)
        if tags:
            metadata["tags"] = tags
        else:
            metadata.pop("tags", None)
    metadata["nbgrader"] = copy.deepcopy(released["nbgrader"])
    return metadata


def _differences(cell, cell_type: str, wanted: dict) -> list[str]:
    """What of ``cell`` differs from the instructor's, in words (nbgrader's checksum aside)."""
    found = []
    if cell.cell_type != cell_type:
        found.append(f"cell type {cell.cell_type!r} instead of {cell_type!r}")
    have = cell.metadata if isinstance(cell.metadata, dict) else {}
    tags, want_tags = set(_tags(have)), set(_tags(wanted))
    for tag in sorted(tags - want_tags):
        found.append(f"tag {tag!r} added")
    for tag in sorted(want_tags - tags):
        found.append(f"tag {tag!r} removed")
    info = have.get("nbgrader") if isinstance(have.get("nbgrader"), dict) else {}
    for flag in NBGRADER_FLAGS:
        if bool(info.get(flag, False)) != bool(wanted["nbgrader"].get(flag, False)):
            found.append(f"nbgrader {flag!r} set to {info.get(flag, False)!r}")
    for key in sorted(set(have) - {"nbgrader", "tags"}):
        if have[key] != wanted.get(key):
            found.append(f"metadata {key!r} changed")
    return found


def _tags(metadata: dict) -> list[str]:
    tags = metadata.get("tags", [])
    return [tag for tag in tags if isinstance(tag, str)] if isinstance(tags, list) else []


def _decides_execution(change: str) -> bool:
    """Whether a change (a line of :func:`_differences`) decides whether the cell runs or how it is
    scored: an execution tag, or an nbgrader flag.  (A cell type nbgrader puts back itself; editors
    write ``execution`` timings and other metadata that nothing reads: restored without a flag.)"""
    return change.startswith("nbgrader") or any(f"tag {tag!r}" in change for tag in EXECUTION_TAGS)


def _set_cell_type(cell, cell_type: str) -> None:
    """``cell`` as a cell of ``cell_type``, with the fields that type has (outputs of a code cell)."""
    if cell.cell_type == cell_type:
        return
    cell.cell_type = cell_type
    if cell_type == "code":
        cell.setdefault("outputs", [])
        cell.setdefault("execution_count", None)
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def _restore_notebook_metadata(nb, source_nb) -> None:
    """The source notebook's metadata (its kernel, its language), with the grader's own keys kept."""
    from .report import grader_metadata

    kept = grader_metadata(nb)
    metadata = {key: copy.deepcopy(value) for key, value in source_nb.metadata.items()
                if key not in EDITOR_METADATA}
    nb.metadata = from_dict({**metadata, **kept})


def tests_not_run(nb, skip_tag: str = SKIP_TAG) -> list[int]:
    """The test cells with code that nothing runs: tagged ``skip_tag`` (after :func:`restore`, by the
    instructor), so that nbclient skips them in the notebook and the clean re-check skips them too."""
    return [index for index, cell in enumerate(nb.cells)
            if is_test(cell) and cell.source.strip() and skip_tag in cell.metadata.get("tags", [])]


def fail_tests_not_run(nb, indices, why_not: str) -> list[int]:
    """Each test cell of ``indices`` (:func:`tests_not_run`) that has no failure yet fails with ``NotRun``.

    Returns the indices failed.  A test that did not run never passes: nbgrader
    gives full points to a test cell without an error.
    """
    failed = []
    for index in indices:
        cell = nb.cells[index]
        if any(output.get("output_type") == "error" for output in cell.get("outputs", [])):
            continue
        cell.setdefault("outputs", []).insert(0, error_output(NOT_RUN, why_not))
        failed.append(index)
    return failed
