"""The student's half of the clean re-check (see :mod:`~course_grader.recheck.grader_loop`): the sandboxed program.

It runs inside the sandbox as ``python -I -c <source>``, where the source is
:mod:`~course_grader.recheck.wire_format`'s, then
:mod:`~course_grader.recheck.mirroring`'s, then this file's
(:func:`course_grader.recheck.transport.child_source`): it executes the
student's cells in an IPython shell and answers requests ("call ``softmax``
with these arrays") over its stdin/stdout.  Nothing in the grader imports it.

The notebook has one namespace; the re-check has two, the student's here and
the tests' in the grader, and this program keeps them one as far as the
student's code can tell:

* a name the student's code reads that its namespace lacks (a global a test
  cell set, a name a later test cell binds) is asked of the grader
  (:class:`LendingNamespace`), which lends its value;
* every message says which of the student's names were bound, rebound or
  deleted since the last one, so the grader's tests read the current ones;
* values that exist on both sides (the arguments of a call, a lent value, a
  student's list a test read) are compared with their fingerprint at each
  message, and a change travels to the other side's copy, in place
  (:mod:`~course_grader.recheck.mirroring`); so do the global random
  generators' states.
"""

import builtins
import contextlib
import io
import json
import operator
import os
import re
import stat
import struct
import sys

if __package__:  # imported as a module; in the sandbox, the wire format's and mirroring's sources run first
    from .mirroring import (RandomWatch, fingerprint, holds_mutable, random_state, set_random_state,
                            update_in_place)
    from .wire_format import (MAX_FRAME, MAX_HEADER, MAX_NAME_CHANGES, decode, encode, handle_kind,
                              handle_type, pack, read_exactly, unpack, write_frame)


#: What a test may ask the student's objects, carried out here on the real object; the answers
#: come back as plain data.  Never a comparison or a truth value: the grader judges those itself.
OPERATIONS = {"len": len, "iter": iter, "next": next, "str": str,
              "contains": operator.contains, "getitem": operator.getitem,
              "send": lambda generator, value: generator.send(value)}
MAX_PRINTED = 100_000      # characters of a call's printed output sent back
MAX_FILES = 10_000               # files of the working directory looked at for changes
MAX_FILE_BYTES = 32 * 2 ** 20    # bytes of the files the student's code wrote, sent for the tests
DESCRIBED_VALUES = 50_000       # items of one described value, past which it travels as a handle
DESCRIBED_JSON = 512 * 2 ** 10   # one described value's JSON, past which it travels as a handle (bytes)
DESCRIBED_ARRAYS = 16 * 2 ** 20  # one described value's arrays, past which it travels as a handle (bytes)
#: The requests during which the student's code runs (after them, the random state may have moved)
RUNS_CODE = frozenset({"run", "call", "apply", "getattr", "setattr"})
#: IPython's own names (its history: ``_3``, ``_i3``, ``In``, ``Out``) and the shell's: not the student's
SHELL_NAMES = re.compile(r"In|Out|_{1,3}|_i{1,3}|_ih|_oh|_dh|_\d+|_i\d+|get_ipython|exit|quit|__\w*__")


def error_info(error: BaseException) -> dict:
    return {"type": type(error).__name__,
            "mro": [c.__name__ for c in type(error).__mro__],
            "message": str(error)[:2000]}


def larger_than(value, values: int, array_bytes: int) -> bool:
    """Whether ``value`` holds more than ``values`` items or ``array_bytes`` of arrays, found without
    encoding it (a list of 400,000 tuples is seen to be too large after 50,000 of them)."""
    import numpy

    stack, count, nbytes = [value], 0, 0
    while stack:
        item = stack.pop()
        count += 1
        if count > values:
            return True
        kind = type(item)
        if issubclass(kind, numpy.ndarray):
            nbytes += item.nbytes
            if nbytes > array_bytes:
                return True
        elif issubclass(kind, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif issubclass(kind, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif issubclass(kind, (str, bytes)):
            count += len(item) // 64
    return False


def working_files() -> dict:
    """``{relative path: (size, mtime)}`` of the regular files in the working directory (symlinks not followed)."""
    found: dict = {}
    for folder, subfolders, names in os.walk("."):
        for name in names:
            path = os.path.join(folder, name)[2:]
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                if stat.S_ISREG(info.st_mode):
                    found[path] = (info.st_size, info.st_mtime_ns)
            if len(found) >= MAX_FILES:
                return found
    return found


def changed_files(seen: dict, arrays: list) -> dict:
    """The files the student's code wrote or removed since ``seen`` (which is brought up to date), as
    ``{"written": [[path, array index]], "removed": [path]}``: a test that reads one, as in the notebook,
    finds it (the grader keeps them beside the tests).  At most :data:`MAX_FILE_BYTES` in all."""
    now = working_files()
    written, total = [], 0
    for path, info in sorted(now.items()):
        if seen.get(path) == info:
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read(MAX_FILE_BYTES - total + 1)
        except OSError:      # a file the code made unreadable: the tests do not get it
            continue
        total += len(data)
        if total > MAX_FILE_BYTES:
            raise ValueError(f"the files your code wrote are larger than {MAX_FILE_BYTES // 2 ** 20} MiB in all")
        import numpy
        arrays.append(numpy.frombuffer(data, dtype=numpy.uint8))
        written.append([path, len(arrays) - 1])
    removed = sorted(set(seen) - set(now))
    seen.clear()
    seen.update(now)
    return {"written": written, "removed": removed}


class LendingNamespace(dict):
    """The student's globals (the shell's ``user_ns``): a name the student's code reads and this
    namespace lacks is asked of the grader (``lend``), as the notebook's one namespace would hold
    it.  Builtins and dunder names are never asked: Python finds them where it always does."""

    lend = None    # name -> value; raises KeyError where the grader has none to give

    def __missing__(self, key):
        if type(key) is not str or key in _BUILTIN_NAMES or key.startswith("__") or self.lend is None:
            raise KeyError(key)
        return self.lend(key)


_BUILTIN_NAMES = frozenset(vars(builtins))


class StudentProgram:
    """The IPython shell holding the student's cells, and the requests it answers (one ``op_*`` each)."""

    def __init__(self, fd_in: int, fd_out: int):
        self.fd_in, self.fd_out = fd_in, fd_out
        # As in a kernel: matplotlib's inline backend, which closes a cell's figures once it has run
        # (a test that counts the lines of the current axes sees that cell's plot only).
        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        import numpy  # noqa: F401  (the wire format needs it)
        from IPython.core.interactiveshell import InteractiveShell
        from traitlets.config import Config

        config = Config()
        config.HistoryManager.hist_file = ":memory:"

        class Shell(InteractiveShell):
            def enable_gui(self, gui=None):   # %matplotlib inline, as a kernel has it: figures go nowhere
                pass

        self.namespace = LendingNamespace()
        self.shell = Shell.instance(config=config, user_ns=self.namespace)
        # As in the notebook's kernel: the submission's folder is importable (a module the assignment
        # ships, or one the student handed in), and the cells are numbered and kept in In/Out.
        sys.path.insert(0, os.getcwd())
        self.handles: dict = {}
        self.seen_files = working_files()
        self.lent: dict = {}          # name -> the grader's value, lent to the student's code
        self.mirrors: dict = {}       # key -> [value, fingerprint]: values the grader holds a copy of
        self.bindings = self._bindings()   # the student's names as last reported: name -> id of the value
        self.pending_names: dict = {name: True for name in self.bindings}
        self.random = RandomWatch()

    # -- the wire ----------------------------------------------------------------------------------

    def as_handle(self, obj):
        self.handles[id(obj)] = obj
        return {"__handle__": id(obj), "kind": handle_kind(obj), "type": handle_type(obj)}

    def from_handle(self, key, kind=None, type_name=None):
        return self.handles[key]

    def send(self, header: dict, arrays=(), code_ran: bool = True) -> None:
        arrays = list(arrays)
        self.outgoing(header, arrays, code_ran)
        write_frame(self.fd_out, pack(header, arrays))

    def receive(self):
        (size,) = struct.unpack("<Q", read_exactly(self.fd_in, 8))
        if size > MAX_FRAME:
            raise ValueError("frame too large")
        header, arrays = unpack(read_exactly(self.fd_in, size))
        self.incoming(header, arrays)
        return header, arrays

    def decode(self, data, arrays):
        return decode(data, arrays, self.from_handle, self.from_callback)

    def from_callback(self, key):
        def callback(*args, **kwargs):
            arrays: list = []
            self.send({"op": "callback", "id": key, "args": encode(list(args), arrays, self.as_handle),
                       "kwargs": encode(kwargs, arrays, self.as_handle)}, arrays)
            header, arrays = self.receive()
            if header["op"] == "raise":
                raise RuntimeError(f"{header['error']['type']}: {header['error']['message']}")
            return self.decode(header["value"], arrays)
        return callback

    def lend(self, name: str):
        """The grader's value of ``name`` (cached here, as a global of the student's); KeyError if none."""
        self.send({"op": "lookup", "name": name})
        header, arrays = self.receive()
        if header.get("op") != "lent":
            raise KeyError(name)
        if "module" in header:
            import importlib
            value = importlib.import_module(header["module"])
        else:
            value = self.decode(header["value"], arrays)
        dict.__setitem__(self.namespace, name, value)
        self.lent[name] = value
        if holds_mutable(value):
            self.mirrors["l:" + name] = [value, fingerprint(value)]
        return value

    # -- keeping the two sides one -------------------------------------------------------------------

    def _bindings(self) -> dict:
        return {name: id(value) for name, value in dict.items(self.namespace)
                if not SHELL_NAMES.fullmatch(name) and not (name in self.lent and self.lent[name] is value)}

    def outgoing(self, header: dict, arrays: list, code_ran: bool = True) -> None:
        """What changed here since the last message: the student's names, shared copies, and (where the
        student's code ran since the last message) the random state."""
        now = self._bindings()
        for name in set(self.bindings) | set(now):
            if self.bindings.get(name) != now.get(name):
                self.pending_names[name] = name in now
                if name in self.lent and name in now:      # the student's code rebound a lent name
                    del self.lent[name]
                    self.mirrors.pop("l:" + name, None)
        self.bindings = now
        if self.pending_names:
            names = list(self.pending_names.items())[:MAX_NAME_CHANGES]
            header["names"] = [[name, present] for name, present in names]
            for name, _ in names:
                del self.pending_names[name]
        changed = []
        for key, entry in self.mirrors.items():
            now_print = fingerprint(entry[0])
            if now_print != entry[1]:
                entry[1] = now_print
                changed.append([key, encode(entry[0], arrays, self.as_handle)])
        if changed:
            header["mirrors"] = changed
        if not code_ran:
            return
        if self.random.moved():
            header["random"] = encode(random_state(), arrays, self.as_handle)

    def incoming(self, header: dict, arrays: list) -> None:
        """The grader's changes to shared copies and to the random state, made here before anything runs."""
        for key, data in header.get("mirrors", []):
            entry = self.mirrors.get(key)
            if entry is None:
                continue
            new = self.decode(data, arrays)
            if not update_in_place(entry[0], new) and key.startswith(("l:", "n:")):
                name = key[2:]                    # cannot change in place: the name gets the new value
                if self.namespace.get(name) is entry[0]:
                    dict.__setitem__(self.namespace, name, new)
                    if key.startswith("l:"):
                        self.lent[name] = new
                entry[0] = new
            entry[1] = fingerprint(entry[0])
        if "random" in header:
            state = self.decode(header["random"], arrays)
            set_random_state(state)
            self.random.settled()

    # -- the requests ----------------------------------------------------------------------------------

    def op_run(self, header, arrays, reply_arrays):
        result = self.shell.run_cell(header["source"], store_history=True)
        error = result.error_before_exec or result.error_in_exec
        return {"op": "done", "ok": error is None, "error": None if error is None else error_info(error)}

    def op_call(self, header, arrays, reply_arrays):
        target = self.handles[header["target"]]
        args = self.decode(header["args"], arrays)
        kwargs = self.decode(header["kwargs"], arrays)
        number = header.get("call", 0)
        for key, value in list(enumerate(args)) + list(kwargs.items()):   # filled in place, as in one process
            if holds_mutable(value):
                self.mirrors[f"a{number}:{key}"] = [value, fingerprint(value)]
        if header["op"] == "apply":
            return OPERATIONS[header["name"]](target, *args, **kwargs)
        return target(*args, **kwargs)

    op_apply = op_call

    def op_getattr(self, header, arrays, reply_arrays):
        """An attribute of one of the student's objects; a value that can change in place is shared
        (``a.history.append(4)`` in a test changes the student's object's list, as in the notebook)."""
        value = getattr(self.handles[header["target"]], header["name"])
        if holds_mutable(value):
            self.mirrors[f"g:{header['target']}.{header['name']}"] = [value, fingerprint(value)]
        return value

    def op_setattr(self, header, arrays, reply_arrays):
        value = self.decode(header["value"], arrays)
        setattr(self.handles[header["target"]], header["name"], value)
        if holds_mutable(value):
            self.mirrors[f"g:{header['target']}.{header['name']}"] = [value, fingerprint(value)]

    def op_describe(self, header, arrays, reply_arrays):
        """The student's value for each name that exists, encoded; objects travel as handles.

        So does a value too large to send whole (a list of 362,880 permutations
        the notebook printed the length of): a test that uses it asks the
        student's process what it needs (``len``, an item) through the handle.
        A value that can change in place is shared: a change on either side
        reaches the other (:meth:`outgoing`, :meth:`incoming`).
        """
        entries, header_bytes = [], 0
        for name in header["names"]:
            if not dict.__contains__(self.namespace, name):
                continue
            value, mark = self.namespace[name], len(reply_arrays)
            data = (None if larger_than(value, DESCRIBED_VALUES, DESCRIBED_ARRAYS)
                    else encode(value, reply_arrays, self.as_handle))
            size = len(json.dumps(data)) if data is not None else 0
            if (data is None or size > DESCRIBED_JSON or header_bytes + size > MAX_HEADER // 2
                    or sum(a.nbytes for a in reply_arrays[mark:]) > DESCRIBED_ARRAYS):
                del reply_arrays[mark:]
                data = self.as_handle(value)
                size = len(json.dumps(data))
            elif holds_mutable(value):
                self.mirrors["n:" + name] = [value, fingerprint(value)]
            header_bytes += size
            entries.append([name, data])
        return {"__dict__": entries}

    def op_advance(self, header, arrays, reply_arrays):
        """A test cell's turn (it runs in the grader): numbered and in ``In``, as in the notebook; the
        copies the last test read of the student's values are no longer shared."""
        self.shell.history_manager.store_inputs(self.shell.execution_count, header["source"], header["source"])
        self.shell.execution_count += 1
        for key in [key for key in self.mirrors if key.startswith(("n:", "g:"))]:
            del self.mirrors[key]

    def op_delete(self, header, arrays, reply_arrays):
        """A test's ``del name``, or a name the test rebinds: gone here too (read again, it is lent)."""
        for name in header["names"]:
            dict.pop(self.namespace, name, None)
            self.lent.pop(name, None)
            self.mirrors.pop("l:" + name, None)
            self.mirrors.pop("n:" + name, None)
        self.bindings = self._bindings()      # the grader knows: not reported back

    def op_files(self, header, arrays, reply_arrays):
        return changed_files(self.seen_files, reply_arrays)

    def op_release(self, header, arrays, reply_arrays):
        self.handles.clear()

    def answer(self, header, arrays) -> tuple[dict, list]:
        """The reply to one request."""
        op = header["op"]
        method = getattr(self, f"op_{op}", None) if type(op) is str else None
        if method is None:
            raise ValueError(f"unknown operation {op!r}")
        reply_arrays: list = []
        if op in ("call", "apply", "getattr", "setattr"):
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):   # a test may check what was printed
                value = method(header, arrays, reply_arrays)
            reply = {"op": "return", "value": encode(value, reply_arrays, self.as_handle),
                     "stdout": printed.getvalue()[:MAX_PRINTED]}
        elif op == "run":
            reply = method(header, arrays, reply_arrays)
        elif op == "files":
            reply = {"op": "return", "value": None, "files": method(header, arrays, reply_arrays)}
        else:
            reply = {"op": "return", "value": method(header, arrays, reply_arrays)}
        return reply, reply_arrays

    def serve(self) -> None:
        import signal

        self.namespace.lend = self.lend
        while True:
            # An interrupt meant for a call that has just finished must not break the pipe.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                header, arrays = self.receive()
            except EOFError:
                os._exit(0)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            try:
                reply, reply_arrays = self.answer(header, arrays)
            except BaseException as error:  # noqa: BLE001 - everything goes back to the grader
                reply, reply_arrays = {"op": "raise", "error": error_info(error)}, []
            ran = header.get("op") in RUNS_CODE
            try:
                self.send(reply, reply_arrays, ran)
            except Exception as error:  # e.g. a value np.save refuses
                self.send({"op": "raise", "error": error_info(error)}, (), ran)
            finally:     # the arguments of a call are shared while it runs, not after
                for key in [key for key in self.mirrors if key.startswith("a")]:
                    del self.mirrors[key]


def serve() -> None:
    fd_in, fd_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):          # the student's prints go nowhere; the protocol keeps its own pipes
        os.dup2(null, fd)
    sys.stdin = open(os.devnull)
    sys.stdout = sys.stderr = open(os.devnull, "w")
    StudentProgram(fd_in, fd_out).serve()


if __name__ == "__main__" and sys.argv[:1] == ["-c"]:
    serve()
