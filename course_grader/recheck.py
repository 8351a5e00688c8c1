"""The clean re-run: the tests run in the grader, the student's code in a sandbox.

Inside a notebook, the student's code and the tests share one Python process,
so the student's code can switch the tests off: replace
``np.testing.assert_allclose``, register an IPython hook that rewrites the next
cell, make ``run_cell`` report success.  No test written *inside* that process
can be trusted.

The clean re-run splits the two apart:

* the student's cells run in a fresh, sandboxed Python process
  (:mod:`course_grader.recheck_child`), which only ever *answers calls*;
* the setup and test cells run here, in the grader, against
  :class:`Remote` stand-ins for the functions the assignment asks for.  A call
  sends the arguments (plain data) over a pipe and brings back the result
  (plain data); the assertions that judge it never leave the grader.

So whatever the student's code does to its own process, the only thing it
controls is what its functions return, which is exactly what is being graded.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import io
import os
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from . import limits as default_limits
from . import mistakes, sandbox
from .recheck_protocol import MAX_FRAME, decode, encode, pack, unpack


def child_source() -> str:
    """The sandboxed program: the protocol's source, then the child's (no package to import from there)."""
    here = Path(__file__).resolve().parent
    return (here / "recheck_protocol.py").read_text() + "\n\n" + (here / "recheck_child.py").read_text()


CHILD_SOURCE = child_source()


class StudentProcessError(Exception):
    """The student's process died, hung or broke the protocol."""


class StudentTimeout(StudentProcessError, TimeoutError):
    pass


class _Deadline(Exception):
    pass


#: set on an exception rebuilt from one the student's code raised (its message is the student's)
FROM_STUDENT = "_raised_by_student_code"


def _exception_from(info: dict) -> BaseException:
    """Rebuild the student's exception as a built-in type the tests can catch."""
    if info["type"] == "KeyboardInterrupt":
        return StudentTimeout("interrupted: the time limit was reached")
    error = None
    for name in info.get("mro", []):
        cls = getattr(builtins, name, None)
        if isinstance(cls, type) and issubclass(cls, Exception):
            try:
                error = cls(info["message"])
            except TypeError:
                pass
            break
    if error is None:
        error = RuntimeError(f"{info['type']}: {info['message']}")
    setattr(error, FROM_STUDENT, True)
    return error


class TransportError(TypeError):
    """A test tried to send the student's process something that is not plain data or a handle."""


class Remote:
    """Something that lives in the student's process: a function, a class, an object.

    Calls, attributes and the protocols ordinary tests use (``len``, iteration,
    ``in``, indexing, comparisons, truth, ``str``, ``hash``) are carried out in
    the student's process, on the real object, so a test sees what Python
    would do with it; only plain data comes back.
    """

    __slots__ = ("_process", "_key", "_label", "_generation")

    def __init__(self, process: "StudentProcess", key: int, label: str):
        object.__setattr__(self, "_process", process)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_generation", process.generation)

    def __call__(self, *args, **kwargs):
        return self._process.request("call", self, args=args, kwargs=kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._process.request("getattr", self, name=name)

    def _apply(self, operation: str, *args):
        return self._process.request("apply", self, name=operation, args=args)

    def __len__(self):
        return self._apply("len")

    def __iter__(self):
        return self._apply("iter")

    def __next__(self):
        return self._apply("next")

    def __contains__(self, item):
        return self._apply("contains", item)

    def __getitem__(self, key):
        return self._apply("getitem", key)

    def __bool__(self):
        return self._apply("bool")

    def __str__(self):
        return self._apply("str")

    def __hash__(self):
        return self._apply("hash")

    def __eq__(self, other):
        return self._apply("eq", other)

    def __ne__(self, other):
        return self._apply("ne", other)

    def __lt__(self, other):
        return self._apply("lt", other)

    def __le__(self, other):
        return self._apply("le", other)

    def __gt__(self, other):
        return self._apply("gt", other)

    def __ge__(self, other):
        return self._apply("ge", other)

    def __repr__(self):
        return f"<{self._label} (in the student's process)>"


@dataclass
class StudentProcess:
    """One sandboxed Python process holding the student's code."""

    workdir: str
    limits: dict
    slot: int | None = None
    forbid: list = field(default_factory=list)    # modules the student's code may not import
    generation: int = 0
    history: list = field(default_factory=list)   # cell sources to replay after a restart
    killers: list = field(default_factory=list)   # cells that killed the process
    events: list = field(default_factory=list)

    def __post_init__(self):
        self.proc = None
        self._buffer = bytearray()
        self._callbacks: dict[int, object] = {}
        self.call_deadline = 0.0   # set by the caller before a test cell runs
        self.functions: dict[int, str] = {}   # handle -> name, for the assignment's functions
        self.calls: list | None = None        # while a test runs: its calls of those (mistakes.Call)

    # -- life cycle ---------------------------------------------------------

    def start(self):
        self.generation += 1
        argv = [sys.executable, "-I", "-c", CHILD_SOURCE]
        cmd = sandbox.command(argv, self.workdir, limits=self.limits, slot=self.slot, forbid=self.forbid)
        self._stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, start_new_session=True)
        self._buffer = bytearray()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(Exception):
                stream.close()
        self.proc = None

    def close(self):
        self.kill()

    def stderr_tail(self) -> str:
        with contextlib.suppress(Exception):
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 2000))
            return self._stderr.read().decode(errors="replace")
        return ""

    def ensure(self, deadline: float):
        """A live process with every earlier cell replayed (except those that killed it)."""
        if self.alive():
            return
        restarted = self.proc is not None or self.generation > 0
        self.kill()
        self.start()
        if restarted:
            for source in self.history:
                self._run(source, deadline)

    # -- wire ---------------------------------------------------------------

    def _write(self, payload: bytes, deadline: float):
        data = memoryview(struct.pack("<Q", len(payload)) + payload)
        fd = self.proc.stdin.fileno()
        while data:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Deadline
            _, writable, _ = select.select([], [fd], [], remaining)
            if writable:
                try:
                    data = data[os.write(fd, data[:65536]):]
                except (BrokenPipeError, OSError):
                    raise StudentProcessError("the student's process stopped reading") from None

    def _read(self, size: int, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while len(self._buffer) < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Deadline
            readable, _, _ = select.select([fd], [], [], remaining)
            if readable:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise StudentProcessError("the student's process died")
                self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _receive(self, deadline: float):
        (size,) = struct.unpack("<Q", self._read(8, deadline))
        if size > MAX_FRAME:
            raise StudentProcessError(f"the student's process sent {size} bytes; the limit is {MAX_FRAME}")
        try:
            return unpack(self._read(size, deadline))
        except (ValueError, KeyError, struct.error) as error:
            raise StudentProcessError(f"malformed reply from the student's process: {error}") from None

    def _exchange(self, header: dict, arrays: list, deadline: float):
        """Send a request, serve callbacks, return the reply; interrupt, then kill, at the deadline."""
        interrupted = False
        try:
            self._write(pack(header, arrays), deadline)
        except _Deadline:
            self.kill()
            raise StudentTimeout("the student's process did not accept a request in time") from None
        while True:
            try:
                reply, reply_arrays = self._receive(deadline)
            except _Deadline:
                if interrupted:
                    self.kill()
                    raise StudentTimeout("the student's code did not stop after an interrupt; "
                                         "its process was killed") from None
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGINT)
                interrupted = True
                deadline = time.monotonic() + 3
                continue
            if reply.get("op") == "callback":
                self._serve_callback(reply, reply_arrays, deadline)
                continue
            if interrupted:
                raise StudentTimeout("the time limit was reached; the student's code was interrupted")
            return reply, reply_arrays

    def _serve_callback(self, header, arrays, deadline):
        function = self._callbacks.get(header["id"])
        try:
            args = decode(header["args"], arrays, self._remote, None)
            kwargs = decode(header["kwargs"], arrays, self._remote, None)
            value = function(*args, **kwargs)
            out: list = []
            reply = {"op": "return", "value": encode(value, out, self._refuse, self._as_callback)}
        except Exception as error:  # the grader's own function failed: tell the student's side
            out, reply = [], {"op": "raise", "error": {"type": type(error).__name__, "mro": [],
                                                       "message": str(error)[:500]}}
        self._write(pack(reply, out), deadline)

    # -- encoding helpers ---------------------------------------------------

    def _remote(self, key):
        return Remote(self, key, "object")

    def _as_callback(self, function):
        if type(function) is Remote:      # the student's own function: it goes back as itself
            return self._as_reference(function)
        self._callbacks[id(function)] = function
        return {"__callback__": id(function)}

    def _as_reference(self, value):
        if type(value) is Remote:
            if value._generation != self.generation:
                raise StudentProcessError("the student's process was restarted; this object is gone")
            return {"__handle__": value._key}
        raise TransportError(f"cannot send a {type(value).__name__} to the student's process")

    @staticmethod
    def _refuse(value):
        raise TransportError(f"cannot send a {type(value).__name__} to the student's process")

    # -- operations ---------------------------------------------------------

    def _run(self, source: str, deadline: float) -> dict:
        reply, _ = self._exchange({"op": "run", "source": source}, [], deadline)
        if reply.get("op") != "done":
            raise StudentProcessError("unexpected reply from the student's process")
        return reply

    def run_cell(self, source: str, index: int, timeout: float, deadline: float) -> dict:
        """Run one of the student's (or the setup) cells; remember it for replays."""
        cell_deadline = min(deadline, time.monotonic() + timeout)
        try:
            self.ensure(deadline)
            reply = self._run(source, cell_deadline)
        except StudentTimeout as error:
            self.events.append((index, f"timeout: {error}"))
            if not self.alive():
                self.killers.append(index)
            return {"ok": False}
        except StudentProcessError as error:
            self.events.append((index, f"died: {error}"))
            self.killers.append(index)
            self.kill()
            return {"ok": False}
        self.history.append(source)
        return reply

    def request(self, op: str, target: Remote, *, args=(), kwargs=None, name=None):
        if target._generation != self.generation or not self.alive():
            raise StudentProcessError("the student's process died earlier in this test")
        arrays: list = []
        header = {"op": op, "target": target._key}
        if op in ("call", "apply"):
            header["args"] = encode(list(args), arrays, self._as_reference, self._as_callback)
            header["kwargs"] = encode(dict(kwargs or {}), arrays, self._as_reference, self._as_callback)
        if op in ("getattr", "apply"):
            header["name"] = name
        try:
            reply, reply_arrays = self._exchange(header, arrays, self.call_deadline)
        except StudentProcessError:
            self.kill()
            raise
        if reply.get("stdout"):   # what the student's code printed, for tests that capture it
            sys.stdout.write(str(reply["stdout"]))
        if reply["op"] == "raise":
            raise _exception_from(reply["error"])
        value = decode(reply["value"], reply_arrays, lambda key: Remote(self, key, target._label), None)
        if op == "call":
            self._record(target, args, kwargs or {}, value)
        return value

    def _record(self, target: Remote, args, kwargs, value) -> None:
        """Keep a call of one of the assignment's functions, with plain data only, for a diagnosis."""
        name = self.functions.get(target._key)
        if name is None or self.calls is None or len(self.calls) >= mistakes.MAX_CALLS:
            return
        budget = [self._recording_budget]
        if mistakes.plain(args, budget) and mistakes.plain(kwargs, budget) and mistakes.plain(value, budget):
            self._recording_budget = budget[0]
            self.calls.append(mistakes.Call(name, copy.deepcopy(tuple(args)), copy.deepcopy(kwargs), value))

    def start_recording(self) -> None:
        """Record the calls of the assignment's functions from now on (see :meth:`_record`)."""
        self.calls, self._recording_budget = [], mistakes.MAX_RECORDED_BYTES

    def forget(self, names: list[str], deadline: float):
        """``del`` in a test: the names go from the student's namespace too, as they would in the notebook."""
        if self.alive():
            self._exchange({"op": "delete", "names": list(names)}, [], deadline)

    def assign(self, name: str, value, deadline: float):
        """``name = value`` in a test, for one of the student's names: the student's code sees ``value``."""
        if self.alive():
            arrays: list = []
            value_data = encode(value, arrays, self._as_reference, self._as_callback)
            reply, _ = self._exchange({"op": "assign", "name": name, "value": value_data}, arrays, deadline)
            if reply.get("op") == "raise":
                raise _exception_from(reply["error"])

    def describe(self, names: list[str], deadline: float) -> dict:
        """``{name: Remote | value | missing}`` for the names a test may use."""
        self.ensure(deadline)
        reply, arrays = self._exchange({"op": "describe", "names": list(names)}, [], deadline)
        if reply["op"] == "raise":
            raise _exception_from(reply["error"])
        described = {name: decode(value_data, arrays, lambda key, n=name: Remote(self, key, n), None)
                     for name, value_data in self._raw_items(reply["value"])}
        self.functions = {value._key: name for name, value in described.items() if type(value) is Remote}
        return described

    @staticmethod
    def _raw_items(data):
        return [(key, value) for key, value in data["__dict__"]]


@dataclass
class Cell:
    index: int
    kind: str          # "setup" (instructor code, runs on both sides), "student" or "test"
    source: str
    label: str = ""
    hidden: tuple = ()  # (first, last) line numbers of the source's hidden-test regions


@dataclass
class Verdicts:
    failures: dict            # cell index -> reason the test fails in the clean re-run
    events: list              # (cell index, what happened in the student's process)
    seconds: float = 0.0
    hidden: set = field(default_factory=set)   # failures inside a hidden-test region
    out_of_time: set = field(default_factory=set)  # failures because the time budget ran out
    unverifiable: dict = field(default_factory=dict)  # index -> why the re-check cannot reproduce the test
    diagnoses: dict = field(default_factory=dict)  # index -> names of the catalogued mistakes it matched


def hidden_regions(source: str, begin: str = "BEGIN HIDDEN TESTS",
                   end: str = "END HIDDEN TESTS") -> tuple:
    """``((first, last), ...)``: 1-based line numbers of each hidden-test region of a cell."""
    regions, start = [], None
    for number, line in enumerate(source.split("\n"), start=1):
        if begin in line and start is None:
            start = number
        elif end in line and start is not None:
            regions.append((start, number))
            start = None
    if start is not None:   # no end marker: nbgrader's rule is that the rest is hidden
        regions.append((start, source.count("\n") + 1))
    return tuple(regions)


def hidden_failure_message(error: BaseException) -> str:
    """What the feedback may say about a hidden test that failed: never its data or its source.

    A message the test's own code wrote (``assert ..., "message"``, a check
    function of a setup cell) is the instructor's and is shown; a message
    from the student's code could carry the test's inputs, and one from a
    library (``numpy.testing``) prints the expected values, so of those only
    the exception's type is shown.
    """
    if getattr(error, FROM_STUDENT, None):
        # the built-in type it was rebuilt as: the student's own class name is their text too
        return f"your code raised {type(error).__name__} during a hidden test"
    if isinstance(error, StudentProcessError):
        return str(error)
    frames = _traceback_files(error)
    if frames and (frames[-1].startswith("<test cell") or frames[-1].startswith("<setup cell")):
        message = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return f"{type(error).__name__}: {message[:300]}" if message else type(error).__name__
    return f"{type(error).__name__} (the details of hidden tests are not shown)"


def _traceback_files(error: BaseException) -> list[str]:
    files, tb = [], error.__traceback__
    while tb is not None:
        files.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return files


def _failed_line(error: BaseException, filename: str) -> int | None:
    """The line of ``filename`` (a test cell) that was running when ``error`` was raised."""
    line, tb = None, error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def rerun(cells: list[Cell], api_names: list[str], workdir: str, tests_to_check: set[int], *,
          limits: dict | None = None, slot: int | None = None,
          cell_timeout: float = default_limits.CELL_SECONDS,
          notebook_timeout: float = default_limits.NOTEBOOK_SECONDS, forbid=(),
          grader_names=None, diagnoser: "mistakes.Diagnoser | None" = None) -> Verdicts:
    """Re-run ``cells``: setup cells on both sides, student cells in the sandbox, tests here.

    Only the test cells in ``tests_to_check`` are run (the others have already
    failed in the notebook, and a clean re-run can only take points away).
    ``grader_names(cell)``, if given, returns names a test cell gets from the
    grader (``reference``, ``grading_rng``: :mod:`course_grader.hidden_tests`);
    they are set after the student's, so no student name can shadow them.
    With a ``diagnoser`` (:mod:`course_grader.mistakes`), a failed hidden test's
    calls of the student's functions are compared with the catalogued mistakes,
    and the one they match is named in the failure's message.
    """
    started = time.monotonic()
    deadline = started + notebook_timeout
    limits = dict(limits or {})
    limits.setdefault("wall_seconds", int(notebook_timeout) + default_limits.RECHECK_WALL_SLACK_SECONDS)
    process = StudentProcess(workdir, limits, slot, list(forbid))
    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    failures: dict[int, str] = {}
    hidden_failures: set[int] = set()
    out_of_time: set[int] = set()
    unverifiable: dict[int, str] = {}
    diagnoses: dict[int, list[str]] = {}
    last_test = max(tests_to_check, default=-1)
    quiet = io.StringIO()
    try:
        with _working_directory(workdir), contextlib.redirect_stdout(quiet), \
                contextlib.redirect_stderr(quiet), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for cell in cells:
                if cell.index > last_test:
                    break
                remaining = deadline - time.monotonic()
                if cell.kind in ("setup", "student"):
                    if cell.kind == "setup":
                        with contextlib.suppress(Exception):
                            exec(compile(cell.source, f"<setup cell {cell.label}>", "exec"), namespace)
                    if remaining <= 0:
                        continue
                    process.run_cell(cell.source, cell.index, min(cell_timeout, remaining), deadline)
                    continue
                if cell.index not in tests_to_check:
                    continue
                if remaining <= 0:
                    failures[cell.index] = "the budget was spent before this test could run"
                    out_of_time.add(cell.index)
                    continue
                filename = f"<test cell {cell.label}>"
                try:
                    cell_deadline = min(deadline, time.monotonic() + cell_timeout)
                    defined = process.describe(api_names, cell_deadline)
                    for name in api_names:   # the student's answers, and nothing else of theirs
                        if name in defined:
                            namespace[name] = defined[name]
                        else:
                            namespace.pop(name, None)
                    if grader_names is not None:
                        namespace.update(grader_names(cell))
                    process.call_deadline = cell_deadline
                    names = _TestNames(namespace, set(api_names), process, cell_deadline)
                    process.start_recording()
                    exec(compile(cell.source, filename, "exec"), namespace, names)
                except Exception as error:  # noqa: BLE001 - any failure fails the test
                    line = _failed_line(error, filename)
                    if isinstance(error, TransportError):   # the test itself, not the student, is the limit
                        unverifiable[cell.index] = str(error)
                    elif isinstance(error, StudentTimeout) and time.monotonic() >= deadline - 1:
                        out_of_time.add(cell.index)
                        failures[cell.index] = str(error)
                    elif line is not None and any(a <= line <= b for a, b in cell.hidden):
                        hidden_failures.add(cell.index)
                        failures[cell.index] = hidden_failure_message(error)
                        found = _diagnose(diagnoser, process.calls or [])
                        if found:
                            diagnoses[cell.index] = [m.name for m in found]
                            failures[cell.index] += "\n" + mistakes.feedback(found)
                    else:
                        failures[cell.index] = f"{type(error).__name__}: {error}"[:1000]
                    if isinstance(error, StudentProcessError):
                        process.events.append((cell.index, str(error)))
                finally:
                    process.calls = None
    finally:
        process.close()
    return Verdicts(failures, process.events, time.monotonic() - started, hidden_failures, out_of_time,
                    unverifiable, diagnoses)


def _diagnose(diagnoser, calls) -> list:
    """The catalogued mistakes the calls match; none if there is no catalogue or it cannot say."""
    if diagnoser is None or not calls:
        return []
    try:
        return diagnoser.diagnose(calls)
    except Exception:  # noqa: BLE001 - a diagnosis is a hint; it never changes a grade
        return []


class _TestNames(dict):
    """A test cell's top-level names, which are the grader's namespace (reads, writes and ``del``).

    Assigning or deleting one of the student's names does the same in the
    student's process, as it would in the notebook: a test may check that a
    function fails without a helper it relies on (``del squares``), or
    replace the helper with a stand-in, and put it back.  (The dictionary
    itself stays empty: exec goes through these methods for a mapping that
    is not exactly a dict.)
    """

    def __init__(self, namespace: dict, students: set, process: "StudentProcess", deadline: float):
        super().__init__()
        self._namespace, self._students = namespace, students
        self._process, self._deadline = process, deadline

    def __getitem__(self, key):
        return self._namespace[key]

    def __setitem__(self, key, value):
        self._namespace[key] = value
        if key in self._students:         # e.g. a helper replaced by a stand-in, or restored after del
            self._process.assign(key, value, self._deadline)

    def __delitem__(self, key):
        del self._namespace[key]
        if key in self._students:
            self._process.forget([key], self._deadline)


@contextlib.contextmanager
def _working_directory(path):
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)
