"""The clean re-check's transport: one sandboxed Python process holding the student's code.

:class:`StudentProcess` starts the student's half of the re-check
(:mod:`~course_grader.recheck.student_program`, with the wire format of
:mod:`~course_grader.recheck.wire_format` prepended: the sandbox has no package to
import them from) in the sandbox, runs the student's cells in it, and carries
the calls a test makes: arguments out, plain data back.  What lives in the
student's process is represented here by a :class:`Remote` handle, which never
judges itself.  Every way the process can fail (death, a hang, a reply that is
not in the format) is a :class:`StudentProcessError` whose message is the
grader's words only.

The test loop that uses it is :mod:`course_grader.recheck.grader_loop`.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import os
import select
import signal
import struct
import subprocess
import sys
import tempfile
import types
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from .. import limits as limits_module
from .. import sandbox
from .call_recording import CallRecorder
from .sharing import Sharing
from .wire_format import HANDLE_KINDS, MAX_FRAME, ReplyError, decode, encode, pack, unpack

#: The requests during which the student's code runs (before them, the tests' random state is sent if it moved)
RUNS_CODE = frozenset({"run", "call", "apply", "getattr", "setattr"})

#: The sandboxed program's files, in order (it has no package to import them from): each one's names
#: are there for the next.
CHILD_FILES = ("wire_format.py", "mirroring.py", "student_program.py")


def child_source() -> str:
    """The sandboxed program: the wire format's source, mirroring's, then the student program's."""
    here = Path(__file__).resolve().parent
    return "\n\n".join(_without_future_import((here / name).read_text()) if index else (here / name).read_text()
                       for index, name in enumerate(CHILD_FILES))


def _without_future_import(source: str) -> str:
    """A file's source without ``from __future__ import annotations``, which may only open a program
    (the first file's opens it for all)."""
    return source.replace("from __future__ import annotations\n", "", 1)


CHILD_SOURCE = child_source()


class StudentProcessError(Exception):
    """The student's process died, hung or broke the protocol."""


class StudentTimeout(StudentProcessError, TimeoutError):
    pass


#: characters of a call's printed output the grader accepts (the child sends at most this many)
MAX_PRINTED = 100_000


def _refused(error: ReplyError) -> str:
    """A refused reply in the grader's words (a ReplyError's message holds nothing of the reply)."""
    return f"the student's process sent a reply the grader refuses ({error})"


class _Deadline(Exception):
    pass


#: set on an exception rebuilt from one the student's code raised (its message is the student's)
FROM_STUDENT = "_raised_by_student_code"


def _exception_from(info) -> BaseException:
    """Rebuild the student's exception as a built-in type the tests can catch."""
    if not (type(info) is dict and type(info.get("type")) is str and type(info.get("message")) is str
            and type(info.get("mro", [])) is list and len(info.get("mro", [])) <= 100):
        raise StudentProcessError("the student's process sent a reply the grader refuses "
                                  "(a reply that is not in the reply format)")
    info = dict(info, message=info["message"][:2000])
    if info["type"] == "KeyboardInterrupt":
        return StudentTimeout("interrupted: the time limit was reached")
    error = None
    for name in info.get("mro", []):
        cls = getattr(builtins, name, None) if type(name) is str else None
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


class TooManyQuestions(StudentProcessError):
    """A test asked the student's objects more questions than one test may (the grader's words only)."""


class TransportError(TypeError):
    """A test tried to send the student's process something that is not plain data or a handle."""


class LendRefused(Exception):
    """The grader holds a name the student's code read, and does not lend it (the message says why,
    in the grader's words: the name is the instructor's)."""


class NotPlainData(TypeError):
    """A test asked one of the student's objects to judge itself (``==``, ``<``, truth).

    Its message is the grader's words only: the assignment's name that gave
    the object and what kind of object it is.
    """


#: Special attributes a test may read of the student's object (``f.__wrapped__``, ``f.__name__``); any other
#: is Python's own machinery probing the stand-in, and is not asked of the student's process.
FORWARDED_DUNDERS = frozenset({"__wrapped__", "__name__", "__qualname__", "__annotations__", "__defaults__",
                               "__kwdefaults__", "__dict__", "__self__", "__func__"})


def known_class(type_name: str):
    """The class named ``module.qualname``, if a module the grader has already imported holds it.

    Nothing is imported on the student's word, and a type the wire carries as
    data (``int``, ``list``, ...) never names a handle's class.
    """
    parts = type_name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        value = module
        for attribute in parts[cut:]:
            value = inspect.getattr_static(value, attribute, None)
        if isinstance(value, type) and value.__module__ != "builtins" and value is not Remote:
            return value
        return None
    return None


class Remote:
    """Something that lives in the student's process: a function, a class, an object.

    Calls, attributes and the questions ordinary tests ask an object (``len``,
    iteration, ``in``, indexing, ``str``) are carried out in the student's
    process, on the real object; only plain data comes back, and the grader
    judges it.  The object never judges itself: ``==``, ``!=``, ``<`` and the
    like, and its truth, raise :class:`NotPlainData` (a handle equals only
    itself), so an object whose ``__eq__`` always answers yes earns nothing.
    """

    __slots__ = ("_process", "_key", "_label", "_generation", "_kind", "_type")

    def __init__(self, process: "StudentProcess", key: int, label: str, kind: str = "object",
                 type_name: str = ""):
        object.__setattr__(self, "_process", process)
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_label", label)
        object.__setattr__(self, "_generation", process.generation)
        object.__setattr__(self, "_kind", kind if kind in HANDLE_KINDS else "object")
        object.__setattr__(self, "_type", type_name)

    @property
    def __class__(self):
        """The class of the student's object, where the grader has it too (``ch.__class__ ==
        matplotlib.patches.Rectangle``, ``isinstance(ch, Rectangle)``); else :class:`Remote`."""
        return known_class(self._type) or Remote

    def __call__(self, *args, **kwargs):
        return self._process.request("call", self, args=args, kwargs=kwargs)

    def __getattr__(self, name):
        if name.startswith("__") and name not in FORWARDED_DUNDERS:
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

    def __str__(self):
        return self._apply("str")

    def __setattr__(self, name, value):
        """``obj.x = value`` in a test: set on the student's object, as in the notebook."""
        self._process.request("setattr", self, name=name, value=value)

    def _same(self, other) -> bool:
        return (type(other) is Remote and other._process is self._process and other._key == self._key
                and other._generation == self._generation)

    def _refuse(self, what: str):
        if self._kind != "object":      # a function, a class, a generator: Python's own identity rules
            return NotImplemented if what != "whether it is true" else True
        raise NotPlainData(f"{self._label} gave {HANDLE_KINDS[self._kind]}, not plain data (numbers, strings, "
                           f"NumPy arrays, lists, tuples, dicts): the grader does not let it decide {what}")

    def __eq__(self, other):
        return True if self._same(other) else self._refuse("whether it equals something")

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __lt__(self, other):
        return self._refuse("how it compares")

    __le__ = __gt__ = __ge__ = __lt__

    def __bool__(self):
        return self._refuse("whether it is true")

    def __hash__(self):
        return hash((id(self._process), self._key, self._generation))

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
        self._callbacks: dict[int, object] = {}
        self.call_deadline = 0.0   # set by the caller before a test cell runs
        self.budget_end = float("inf")        # the submission's whole budget: no grace after it
        self.questions_left = limits_module.OBJECT_QUESTIONS_PER_TEST   # reset for each test
        self.functions: dict[int, str] = {}   # handle -> name, for the assignment's functions
        self.recorder = CallRecorder()        # while a test runs: its calls of those
        self._generators = weakref.WeakKeyDictionary()   # generator here -> the student's, as a Remote
        self.sharing = Sharing()              # copies both sides hold, the random state, the student's names
        self.lender = None                    # name -> the grader's value for the student's code (KeyError: none)
        self.lent: set = set()                # names lent to the current process
        self.refusals: list = []              # (name, why) of names the grader held and did not lend
        self.may_change = lambda value: True  # whether the student's code may change this object of the test's
        self._calls = 0
        self._in_callback = False

    def _handle(self, key: int, kind: str, label: str, type_name: str = ""):
        """What the grader holds for an object of the student's: a :class:`Remote`, and for a
        generator a real generator here that drives the student's (:func:`driving`)."""
        remote = Remote(self, key, label, kind, type_name)
        if kind != "generator":
            return remote
        generator = driving(remote)
        self._generators[generator] = remote
        return generator

    # -- life cycle ---------------------------------------------------------

    def start(self):
        self.generation += 1
        self.sharing.restart()
        self.lent.clear()
        self.functions.clear()
        argv = [sys.executable, "-I", "-c", CHILD_SOURCE]
        cmd = sandbox.command(argv, self.workdir, limits=self.limits, slot=self.slot, forbid=self.forbid)
        self._stderr = tempfile.TemporaryFile()
        # Forked by this worker's zygote without a launcher where it can be, else started as a command.
        self.proc = sandbox.AttachedProgram.start(cmd, self._stderr.fileno()) or subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, start_new_session=True)

    def _signal(self, signum: int):
        """``signum`` to the student's process and whatever it started."""
        if isinstance(self.proc, sandbox.AttachedProgram):
            self.proc.send_signal(signum)
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signum)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.proc is None:
            return
        self._signal(signal.SIGKILL)
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

    def _read(self, size: int, deadline: float) -> bytearray:
        """Exactly ``size`` bytes (never more: the next frame stays in the pipe), into one buffer."""
        fd = self.proc.stdout.fileno()
        data = bytearray(size)
        view, filled = memoryview(data), 0
        while filled < size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Deadline
            readable, _, _ = select.select([fd], [], [], remaining)
            if readable:
                count = os.readv(fd, [view[filled:]])
                if not count:
                    raise StudentProcessError("the student's process died")
                filled += count
        return data

    def _receive(self, deadline: float):
        (size,) = struct.unpack("<Q", self._read(8, deadline))
        if size > MAX_FRAME:     # not read at all: the process is killed, the pipe with it
            raise StudentProcessError(_refused(ReplyError(
                f"a reply larger than the limit; the limit is {MAX_FRAME} bytes")))
        try:
            reply, arrays = unpack(self._read(size, deadline))
            if type(reply.get("op")) is not str:
                raise ReplyError("a reply that is not in the reply format")
            # what changed there (names, shared copies, random state), before anything else is read
            self.sharing.incoming(reply, arrays, lambda data, arrays: decode(
                data, arrays, lambda key, kind, type_name: self._handle(key, kind, "a value your code changed",
                                                                        type_name), None))
        except ReplyError as error:
            self.kill()
            raise StudentProcessError(_refused(error)) from None
        return reply, arrays

    def _send(self, header: dict, arrays: list, deadline: float) -> None:
        """One message to the student's process, with what changed here since the last one (the random
        state only before the student's code runs, or after the test's ran in a callback)."""
        code_ran = header.get("op") in RUNS_CODE or (header.get("op") in ("return", "raise") and self._in_callback)
        self.sharing.outgoing(header, arrays, self._as_reference, self._as_callback, code_ran)
        self._write(pack(header, arrays), deadline)

    def _value(self, reply: dict, arrays: list, label: str):
        """The reply's value as plain data and handles; a malformed one is the process's fault."""
        try:
            return decode(reply.get("value"), arrays, lambda key, kind, type_name: self._handle(key, kind, label, type_name), None)
        except ReplyError as error:
            self.kill()
            raise StudentProcessError(_refused(error)) from None

    def _exchange(self, header: dict, arrays: list, deadline: float):
        """Send a request, serve callbacks, return the reply; interrupt, then kill, at the deadline."""
        interrupted = False
        try:
            self._send(header, arrays, deadline)
        except _Deadline:
            self.kill()
            raise StudentTimeout("the student's process did not accept a request in time") from None
        while True:
            try:
                reply, reply_arrays = self._receive(deadline)
            except _Deadline:
                grace = interrupt_grace(time.monotonic(), self.budget_end)
                if interrupted or grace is None:
                    self.kill()
                    raise StudentTimeout("the student's code did not stop after an interrupt; "
                                         "its process was killed" if interrupted else
                                         "the submission's time budget ran out; the student's process "
                                         "was stopped") from None
                self._signal(signal.SIGINT)
                interrupted = True
                deadline = grace
                continue
            if reply.get("op") == "callback":
                self._in_callback = True
                try:
                    self._serve_callback(reply, reply_arrays, deadline)
                finally:
                    self._in_callback = False
                continue
            if reply.get("op") == "lookup":
                self._serve_lookup(reply, deadline)
                continue
            if interrupted:
                raise StudentTimeout("the time limit was reached; the student's code was interrupted")
            return reply, reply_arrays

    def _serve_callback(self, header, arrays, deadline):
        function = self._callbacks.get(header.get("id"))
        try:
            args = decode(header.get("args"), arrays, self._remote, None)
            kwargs = decode(header.get("kwargs"), arrays, self._remote, None)
            if function is None or type(args) is not list or type(kwargs) is not dict:
                raise ReplyError("a reply that is not in the reply format")
            value = function(*args, **kwargs)
            out: list = []
            reply = {"op": "return", "value": encode(value, out, self._refuse, self._as_callback)}
        except Exception as error:  # the grader's own function failed: tell the student's side
            out, reply = [], {"op": "raise", "error": {"type": type(error).__name__, "mro": [],
                                                       "message": str(error)[:500]}}
        self._send(reply, out, deadline)

    def _serve_lookup(self, header, deadline):
        """The student's code read a name its process lacks: lend the grader's value, if it has one it
        may lend (:attr:`lender`), as the notebook's one namespace would give it."""
        name = header.get("name")
        if type(name) is not str or not name.isidentifier() or len(name) > 200:
            self.kill()
            raise StudentProcessError(_refused(ReplyError("a reply that is not in the reply format")))
        out: list = []
        try:
            if self.lender is None:
                raise KeyError(name)
            value = self.lender(name)
            if isinstance(value, types.ModuleType):     # imported there by its name, as the test imported it
                reply = {"op": "lent", "module": value.__name__}
            else:
                reply = {"op": "lent", "value": encode(value, out, self._as_reference, self._as_callback)}
                self.sharing.share("l:" + name, value)
            self.lent.add(name)
        except KeyError:
            out, reply = [], {"op": "missing"}
        except (LendRefused, TransportError, StudentProcessError) as error:
            out, reply = [], {"op": "missing"}
            why = str(error) if isinstance(error, LendRefused) else "it is not plain data the grader can send"
            self.refusals.append((name, why))
        self._send(reply, out, deadline)

    # -- encoding helpers ---------------------------------------------------

    def _remote(self, key, kind="object", type_name=""):
        return self._handle(key, kind, "an argument your code passed", type_name)

    def _as_callback(self, function):
        if type(function) in (Remote, types.GeneratorType):   # the student's own: it goes back as itself
            return self._as_reference(function)
        self._callbacks[id(function)] = function
        return {"__callback__": id(function)}

    def _as_reference(self, value):
        value = self._generators.get(value, value) if type(value) is types.GeneratorType else value
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

    def request(self, op: str, target: Remote, *, args=(), kwargs=None, name=None, value=None):
        if target._generation != self.generation or not self.alive():
            raise StudentProcessError("the student's process died earlier in this test")
        if op in ("getattr", "apply", "setattr"):   # a question to one of the student's objects (calls are answers)
            if self.questions_left <= 0:
                raise TooManyQuestions(
                    f"the test asked the student's objects more than {limits_module.OBJECT_QUESTIONS_PER_TEST:,} "
                    "questions (lengths, items, attributes), the most one test may ask")
            self.questions_left -= 1
        arrays: list = []
        header = {"op": op, "target": target._key}
        if op in ("call", "apply"):
            self._calls += 1
            header["call"] = number = self._calls
            header["args"] = encode(list(args), arrays, self._as_reference, self._as_callback)
            header["kwargs"] = encode(dict(kwargs or {}), arrays, self._as_reference, self._as_callback)
            for key, argument in list(enumerate(args)) + list((kwargs or {}).items()):   # filled in place there
                self.sharing.share(f"a{number}:{key}", argument, blocked=not self.may_change(argument))
        if op in ("getattr", "apply", "setattr"):
            header["name"] = name
        assigned = value      # what a setattr sets (value is the reply below)
        if op == "setattr":
            header["value"] = encode(value, arrays, self._as_reference, self._as_callback)
        try:
            reply, reply_arrays = self._exchange(header, arrays, self.call_deadline)
        except StudentProcessError:
            self.kill()
            raise
        finally:
            if op in ("call", "apply"):
                self.sharing.forget(f"a{number}:")
        printed = reply.get("stdout")
        if type(printed) is str and len(printed) <= MAX_PRINTED:   # for tests that capture it
            sys.stdout.write(printed)
        if reply["op"] == "raise":
            raise _exception_from(reply.get("error"))
        value = self._value(reply, reply_arrays, target._label)
        if op == "call":
            self._record(target, args, kwargs or {}, value)
        elif op in ("getattr", "setattr"):   # an attribute's list or array: one object in both processes
            self.sharing.share(f"g:{target._key}.{name}", value if op == "getattr" else assigned)
        return value

    def _record(self, target: Remote, args, kwargs, value) -> None:
        """Keep a call of one of the assignment's functions, with plain data only, for a diagnosis."""
        self.recorder.record(self.functions.get(target._key), args, kwargs, value)

    def start_recording(self) -> None:
        """A test begins: record the calls of the assignment's functions from now on
        (:mod:`~course_grader.recheck.call_recording`), and give it its questions to ask of the
        student's objects."""
        self.recorder.start()
        self.questions_left = limits_module.OBJECT_QUESTIONS_PER_TEST

    def advance(self, source: str, deadline: float):
        """A test cell's turn: the student's shell numbers it and keeps its (visible) source in ``In``;
        the copies the last test read of the student's values are no longer kept in step."""
        self.sharing.forget("n:")
        self.sharing.forget("g:")
        if self.alive():
            self._exchange({"op": "advance", "source": source}, [], deadline)

    def forget(self, names: list[str], deadline: float):
        """``del`` in a test, or a name the test rebinds: gone from the student's namespace too (read
        there again, it is the test's, lent), as in the notebook's one namespace."""
        for name in names:
            self.lent.discard(name)
            self.sharing.forget(f"l:{name}")
            self.sharing.forget(f"n:{name}")
        if self.alive():
            self._exchange({"op": "delete", "names": list(names)}, [], deadline)

    def changed_files(self, deadline: float) -> tuple[dict[str, bytes], list[str]]:
        """``({path: content}, [removed path])``: what the student's code wrote or removed in its
        working directory since the last time it was asked (:mod:`~course_grader.recheck.written_files`)."""
        if not self.alive():
            return {}, []
        reply, arrays = self._exchange({"op": "files"}, [], deadline)
        if reply["op"] == "raise":
            raise _exception_from(reply.get("error"))
        files = reply.get("files")
        try:
            written = {path: arrays[index].tobytes() for path, index in files["written"]
                       if type(path) is str and arrays[index].dtype == "|u1" and arrays[index].ndim == 1}
            removed = [path for path in files["removed"] if type(path) is str]
        except (TypeError, KeyError, IndexError, ValueError):
            self.kill()
            raise StudentProcessError(_refused(ReplyError("a reply that is not in the reply format"))) from None
        return written, removed

    def describe(self, names: list[str], deadline: float) -> dict:
        """``{name: Remote | value | missing}`` for the names a test may use."""
        self.ensure(deadline)
        reply, arrays = self._exchange({"op": "describe", "names": list(names)}, [], deadline)
        if reply["op"] == "raise":
            raise _exception_from(reply.get("error"))
        entries = reply.get("value", {}).get("__dict__") if type(reply.get("value")) is dict else None
        if type(entries) is not list or not all(type(e) is list and len(e) == 2 and e[0] in names
                                                for e in entries):
            raise StudentProcessError(_refused(ReplyError("a reply that is not in the reply format")))
        described = {}
        for name, data in entries:      # each value labelled with its name, the grader's word for it
            described[name] = self._value({"value": data}, arrays, name)
            self.sharing.share("n:" + name, described[name])     # the student's copy changes: this one too
        self.functions.update({value._key: name for name, value in described.items() if type(value) is Remote})
        return described


#: Seconds the student's code has to stop after an interrupt, before its process is killed
INTERRUPT_GRACE_SECONDS = 3.0


def interrupt_grace(now: float, budget_end: float) -> float | None:
    """Until when an interrupted call may take to stop: a few seconds, never past the submission's
    budget (``budget_end``); None when the budget has run out, and the process is stopped at once."""
    if now >= budget_end:
        return None
    return min(now + INTERRUPT_GRACE_SECONDS, budget_end)


def driving(remote: Remote):
    """A generator here that drives the student's generator ``remote``: ``next`` and ``send`` are
    carried out there, the values come back as plain data.  A test may ask
    ``isinstance(g, types.GeneratorType)`` of it, as of the student's own in the notebook."""
    sent = None
    while True:
        try:
            value = remote._apply("next") if sent is None else remote._apply("send", sent)
        except StopIteration:
            return
        sent = yield value

