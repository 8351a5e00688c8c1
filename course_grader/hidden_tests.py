"""What hidden tests have and the student's code never sees: a secret, and the reference solution.

Hidden tests run only in the grader (:mod:`course_grader.recheck`).  Two names
are there for them, besides the setup cells' helpers and the student's
functions (stand-ins that call into the sandbox):

* ``reference`` -- everything the assignment's **source** notebook defines: its
  setup cells and its solution cells, run in the grader (it is the
  instructor's code).  A hidden test computes the expected values with it at
  grading time, instead of storing them in the notebook.
* ``grading_rng(*labels)`` -- a NumPy random generator seeded from the course's
  **secret**, the assignment, the notebook, the test cell, the student and the
  labels.  A hidden test draws its inputs from it, so they differ from course
  to course, term to term and student to student, and no data written down
  anywhere (a public repository, an earlier term's feedback) predicts them.
  The same student is given the same inputs when graded again.

The secret is ``c.HiddenTests.secret``, the grading command's ``--secret-seed``,
or the file ``c.HiddenTests.secret_file`` (default ``.hidden-tests-secret`` in the
course directory), created with a random value the first time it is needed.
Keep that file private, and keep it for re-grading.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import secrets
import types
from pathlib import Path

from traitlets import Unicode
from traitlets.config import LoggingConfigurable

SECRET_FILE = ".hidden-tests-secret"


class HiddenTests(LoggingConfigurable):
    """Where the course's secret comes from (``c.HiddenTests.*`` in the config)."""

    secret = Unicode("", help="The secret hidden tests draw their inputs from; empty: read secret_file.").tag(
        config=True)
    secret_file = Unicode("", help=f"File holding the secret (created if missing); default: "
                                   f"{SECRET_FILE} in the course directory.").tag(config=True)

    def secret_path(self, course_root) -> Path:
        return Path(self.secret_file or Path(course_root) / SECRET_FILE)

    def course_secret(self, course_root) -> str:
        return self.secret or read_or_create_secret(self.secret_path(course_root))


def read_or_create_secret(path: Path) -> str:
    """The secret in ``path``; a new random one (written owner-only, atomically) if there is none."""
    path = Path(path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:      # another worker made it first
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32) + "\n")
    value = path.read_text().strip()
    if not value:
        raise SystemExit(f"the hidden tests' secret file {path} is empty: put a long random string in it")
    return value


def rng_factory(secret: str, *context: str):
    """``grading_rng(*labels)`` for one test cell: ``context`` is (assignment, notebook, cell, student)."""
    import numpy as np

    def grading_rng(*labels) -> "np.random.Generator":
        material = "\0".join([secret, *context, *map(str, labels)]).encode()
        return np.random.default_rng(int.from_bytes(hashlib.sha256(material).digest()[:16], "little"))

    return grading_rng


_REFERENCES: dict = {}


def reference_solution(source: Path):
    """The source notebook's setup and solution cells, run once per process: a namespace.

    Test cells (nbgrader grade cells that are not solution cells) are left
    out; so is whatever the cells print.
    """
    import nbformat

    source = Path(source)
    if not source.is_file():
        return _Missing(f"the assignment's source notebook {source} was not found, so the hidden "
                        "tests have no reference solution")
    stat = source.stat()
    key = (str(source.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _REFERENCES:
        namespace = run_solution(nbformat.read(source, as_version=4), "reference")
        _REFERENCES[key] = types.SimpleNamespace(
            **{name: value for name, value in namespace.items() if not name.startswith("_")})
    return _REFERENCES[key]


def run_solution(nb, label: str) -> dict:
    """What a notebook's setup and solution cells define, run here (test cells and output left out).

    Used for the reference solution and for the catalogued wrong answers
    (:mod:`course_grader.mistakes`): both are the instructor's code.
    """
    namespace: dict = {"__name__": label}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nb.cells:
            info = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or (info.get("grade") and not info.get("solution")):
                continue
            exec(compile(cell.source, f"<{label}: {info.get('grade_id', 'cell')}>", "exec"), namespace)
    return namespace


class _Missing:
    """A reference that cannot be built: any use says why."""

    def __init__(self, why: str):
        self._why = why

    def __getattr__(self, name):
        raise RuntimeError(self._why)
