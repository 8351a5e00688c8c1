"""The student's half of the clean re-check (see :mod:`~course_grader.recheck.grader_loop`): the sandboxed program.

It runs inside the sandbox as ``python -I -c <source>``, where the source is
:mod:`~course_grader.recheck.wire_format`'s followed by this file's
(:func:`course_grader.recheck.transport.child_source`): it executes the student's cells
in an IPython shell and answers requests ("call ``softmax`` with these
arrays") over its stdin/stdout.  Nothing in the grader imports it.
"""

import contextlib
import io
import json
import operator
import os
import stat
import struct
import sys

if __package__:  # imported as a module; in the sandbox, the protocol's source runs just before this
    from .wire_format import (MAX_FRAME, MAX_HEADER, decode, encode, handle_kind, handle_type, pack,
                                   read_exactly, unpack, write_frame)


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


def serve() -> None:
    fd_in, fd_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):          # the student's prints go nowhere; the protocol keeps its own pipes
        os.dup2(null, fd)
    sys.stdin = open(os.devnull)
    sys.stdout = sys.stderr = open(os.devnull, "w")

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

    shell = Shell.instance(config=config)
    # As in the notebook's kernel: the submission's folder is importable (a module the assignment
    # ships, or one the student handed in), and the cells are numbered and kept in In/Out.
    sys.path.insert(0, os.getcwd())
    handles: dict[int, object] = {}
    seen_files = working_files()

    def as_handle(obj):
        handles[id(obj)] = obj
        return {"__handle__": id(obj), "kind": handle_kind(obj), "type": handle_type(obj)}

    def from_handle(key, kind=None, type_name=None):
        return handles[key]

    def send(header, arrays=()):
        write_frame(fd_out, pack(header, list(arrays)))

    def receive():
        (size,) = struct.unpack("<Q", read_exactly(fd_in, 8))
        if size > MAX_FRAME:
            raise ValueError("frame too large")
        return unpack(read_exactly(fd_in, size))

    def from_callback(key):
        def callback(*args, **kwargs):
            arrays: list = []
            send({"op": "callback", "id": key,
                  "args": encode(list(args), arrays, as_handle),
                  "kwargs": encode(kwargs, arrays, as_handle)}, arrays)
            header, arrays = receive()
            if header["op"] == "raise":
                raise RuntimeError(f"{header['error']['type']}: {header['error']['message']}")
            return decode(header["value"], arrays, from_handle, from_callback)
        return callback

    def describe(names, arrays):
        """The student's value for each name that exists, encoded; objects travel as handles.

        So does a value too large to send whole (a list of 362,880 permutations
        the notebook printed the length of): a test that uses it asks the
        student's process what it needs (``len``, an item) through the handle.
        """
        entries, header_bytes = [], 0
        for name in names:
            if name not in shell.user_ns:
                continue
            value, mark = shell.user_ns[name], len(arrays)
            data = None if larger_than(value, DESCRIBED_VALUES, DESCRIBED_ARRAYS) else encode(value, arrays, as_handle)
            size = len(json.dumps(data)) if data is not None else 0
            if (data is None or size > DESCRIBED_JSON or header_bytes + size > MAX_HEADER // 2
                    or sum(a.nbytes for a in arrays[mark:]) > DESCRIBED_ARRAYS):
                del arrays[mark:]
                data = as_handle(value)
                size = len(json.dumps(data))
            header_bytes += size
            entries.append([name, data])
        return {"__dict__": entries}

    import signal

    while True:
        # An interrupt meant for a call that has just finished must not break the pipe.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            header, arrays = receive()
        except EOFError:
            os._exit(0)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        reply_arrays: list = []
        try:
            op = header["op"]
            if op == "run":
                result = shell.run_cell(header["source"], store_history=True)
                error = result.error_before_exec or result.error_in_exec
                reply = {"op": "done", "ok": error is None,
                         "error": None if error is None else error_info(error)}
            elif op in ("call", "getattr", "apply", "describe"):
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):   # a test may check what was printed
                    if op in ("call", "apply"):
                        target = handles[header["target"]]
                        args = decode(header["args"], arrays, from_handle, from_callback)
                        kwargs = decode(header["kwargs"], arrays, from_handle, from_callback)
                        if op == "apply":
                            value = OPERATIONS[header["name"]](target, *args, **kwargs)
                        else:
                            value = target(*args, **kwargs)
                    elif op == "getattr":
                        value = getattr(handles[header["target"]], header["name"])
                if op == "describe":
                    encoded = describe(header["names"], reply_arrays)
                else:
                    encoded = encode(value, reply_arrays, as_handle)
                reply = {"op": "return", "value": encoded, "stdout": printed.getvalue()[:MAX_PRINTED]}
            elif op == "advance":    # a test cell, which runs in the grader: numbered and in In, as in the notebook
                shell.history_manager.store_inputs(shell.execution_count, header["source"], header["source"])
                shell.execution_count += 1
                reply = {"op": "return", "value": None}
            elif op == "delete":     # a test's `del name`: gone here too, as in the notebook
                for name in header["names"]:
                    shell.user_ns.pop(name, None)
                reply = {"op": "return", "value": None}
            elif op == "assign":     # a test's `name = value` for one of the student's names
                shell.user_ns[header["name"]] = decode(header["value"], arrays, from_handle, from_callback)
                reply = {"op": "return", "value": None}
            elif op == "files":      # what the student's code wrote, for a test that reads it
                reply = {"op": "return", "value": None, "files": changed_files(seen_files, reply_arrays)}
            elif op == "release":
                handles.clear()
                reply = {"op": "return", "value": None}
            else:
                raise ValueError(f"unknown operation {op!r}")
        except BaseException as error:  # noqa: BLE001 - everything goes back to the grader
            reply_arrays = []
            reply = {"op": "raise", "error": error_info(error)}
        try:
            send(reply, reply_arrays)
        except Exception as error:  # e.g. a value np.save refuses
            send({"op": "raise", "error": error_info(error)})


if __name__ == "__main__" and sys.argv[:1] == ["-c"]:
    serve()
