"""The student's half of the clean re-run (see :mod:`autograder.recheck`).

This file runs in two places:

* **inside the sandbox**, as ``python -c <this source>``: it executes the
  student's cells in an IPython shell and answers requests ("call
  ``softmax`` with these arrays") over its stdin/stdout;
* **in the grader**, imported for :func:`pack` / :func:`unpack`, the wire format
  both sides share.

The wire format is deliberately dull: a JSON header plus NumPy arrays saved with
``np.save`` and read back with ``allow_pickle=False``.  Nothing the student's
process sends can make the grader run code: anything that is not plain data
(numbers, strings, arrays, lists, tuples, dicts) stays in the student's process
and travels as an opaque handle.
"""

from __future__ import annotations

import io
import json
import os
import struct
import sys

MAX_FRAME = 256 * 2 ** 20


# ---------------------------------------------------------------------------
# Wire format
# ---------------------------------------------------------------------------

def encode(value, arrays: list, as_handle, as_callback=None, depth: int = 0):
    """``value`` as JSON-able data; arrays are appended to ``arrays``.

    ``as_handle(obj)`` turns an object that is not plain data into a JSON
    reference; ``as_callback(fn)`` does the same for callables (grader side).
    """
    import numpy as np

    if depth > 50:
        return as_handle(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) < 2 ** 53 else {"__bigint__": str(value)}
    if isinstance(value, float):
        return value
    if isinstance(value, complex):
        return {"__complex__": [value.real, value.imag]}
    if isinstance(value, np.ndarray) and type(value) is np.ndarray and value.dtype != object:
        arrays.append(value)
        return {"__array__": len(arrays) - 1}
    if isinstance(value, np.generic) and not isinstance(value, np.object_):
        arrays.append(np.asarray(value))
        return {"__scalar__": len(arrays) - 1}
    if type(value) in (list, tuple):
        items = [encode(v, arrays, as_handle, as_callback, depth + 1) for v in value]
        return items if isinstance(value, list) else {"__tuple__": items}
    if type(value) is dict:
        return {"__dict__": [[encode(k, arrays, as_handle, as_callback, depth + 1),
                              encode(v, arrays, as_handle, as_callback, depth + 1)]
                             for k, v in value.items()]}
    if as_callback is not None and callable(value):
        return as_callback(value)
    return as_handle(value)


def decode(data, arrays: list, from_handle, from_callback=None):
    if isinstance(data, list):
        return [decode(v, arrays, from_handle, from_callback) for v in data]
    if not isinstance(data, dict):
        return data
    if "__array__" in data:
        return arrays[data["__array__"]]
    if "__scalar__" in data:
        return arrays[data["__scalar__"]][()]
    if "__tuple__" in data:
        return tuple(decode(v, arrays, from_handle, from_callback) for v in data["__tuple__"])
    if "__dict__" in data:
        return {_hashable(decode(k, arrays, from_handle, from_callback)):
                decode(v, arrays, from_handle, from_callback) for k, v in data["__dict__"]}
    if "__bigint__" in data:
        return int(data["__bigint__"])
    if "__complex__" in data:
        return complex(*data["__complex__"])
    if "__handle__" in data:
        return from_handle(data["__handle__"])
    if "__callback__" in data and from_callback is not None:
        return from_callback(data["__callback__"])
    raise ValueError(f"unknown encoded value {sorted(data)}")


def _hashable(key):
    return tuple(key) if isinstance(key, list) else key


def pack(header: dict, arrays: list) -> bytes:
    import numpy as np

    parts = []
    for array in arrays:
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        parts.append(buffer.getvalue())
    head = json.dumps(header).encode()
    return b"".join([struct.pack("<QQ", len(head), len(parts)), head]
                    + [struct.pack("<Q", len(p)) + p for p in parts])


def unpack(payload: bytes) -> tuple[dict, list]:
    import numpy as np

    head_len, count = struct.unpack_from("<QQ", payload, 0)
    offset = 16
    header = json.loads(payload[offset:offset + head_len])
    offset += head_len
    arrays = []
    for _ in range(count):
        (size,) = struct.unpack_from("<Q", payload, offset)
        offset += 8
        arrays.append(np.load(io.BytesIO(payload[offset:offset + size]), allow_pickle=False))
        offset += size
    return header, arrays


def write_frame(fd: int, payload: bytes) -> None:
    data = memoryview(struct.pack("<Q", len(payload)) + payload)
    while data:
        written = os.write(fd, data)
        data = data[written:]


def read_exactly(fd: int, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the pipe")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


# ---------------------------------------------------------------------------
# The student's process
# ---------------------------------------------------------------------------

def error_info(error: BaseException) -> dict:
    return {"type": type(error).__name__,
            "mro": [c.__name__ for c in type(error).__mro__],
            "message": str(error)[:2000]}


def serve() -> None:
    fd_in, fd_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):          # the student's prints go nowhere; the protocol keeps its own pipes
        os.dup2(null, fd)
    sys.stdin = open(os.devnull)
    sys.stdout = sys.stderr = open(os.devnull, "w")

    import numpy  # noqa: F401  (the wire format needs it)
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    handles: dict[int, object] = {}

    def as_handle(obj):
        handles[id(obj)] = obj
        return {"__handle__": id(obj)}

    def from_handle(key):
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

    def describe(names):
        """The student's value for each name that exists; objects travel as handles."""
        return {name: shell.user_ns[name] for name in names if name in shell.user_ns}

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
                result = shell.run_cell(header["source"], store_history=False)
                error = result.error_before_exec or result.error_in_exec
                reply = {"op": "done", "ok": error is None,
                         "error": None if error is None else error_info(error)}
            elif op in ("call", "getattr", "describe"):
                if op == "call":
                    target = handles[header["target"]]
                    args = decode(header["args"], arrays, from_handle, from_callback)
                    kwargs = decode(header["kwargs"], arrays, from_handle, from_callback)
                    value = target(*args, **kwargs)
                elif op == "getattr":
                    value = getattr(handles[header["target"]], header["name"])
                else:
                    value = describe(header["names"])
                reply = {"op": "return", "value": encode(value, reply_arrays, as_handle)}
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
