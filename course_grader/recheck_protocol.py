"""The wire format of the clean re-check, shared by the grader and the student's process.

Deliberately dull: a JSON header plus NumPy arrays saved with ``np.save`` and
read back with ``allow_pickle=False``, in length-prefixed frames.  Nothing the
student's process sends can make the grader run code: anything that is not
plain data (numbers, strings, bytes, arrays, lists, tuples, dicts, sets,
fractions, decimals) stays in the student's process and travels as an opaque
handle.

This file must stay self-contained (standard library and NumPy only): the
sandboxed program, :mod:`course_grader.recheck_child`, runs it as source,
with no package to import it from.
"""

from __future__ import annotations

import io
import json
import os
import struct

MAX_FRAME = 64 * 2 ** 20      # one message, arrays included
MAX_HEADER = 4 * 2 ** 20      # its JSON part: structure, numbers and strings
MAX_ITEMS = 200_000           # values in the JSON part (containers and scalars)
MAX_DEPTH = 64                # nesting of the JSON part (encode() sends deeper values as handles)


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
    if type(value) in (set, frozenset):
        return {"__set__": [encode(v, arrays, as_handle, as_callback, depth + 1) for v in value],
                "frozen": type(value) is frozenset}
    if type(value) is bytes:
        import base64
        return {"__bytes__": base64.b64encode(value).decode()}
    kind = type(value).__module__ + "." + type(value).__qualname__
    if kind == "fractions.Fraction":
        return {"__fraction__": [encode(value.numerator, arrays, as_handle), encode(value.denominator, arrays, as_handle)]}
    if kind == "decimal.Decimal":
        return {"__decimal__": str(value)}
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
    if "__set__" in data:
        items = (_hashable(decode(v, arrays, from_handle, from_callback)) for v in data["__set__"])
        return frozenset(items) if data.get("frozen") else set(items)
    if "__bytes__" in data:
        import base64
        return base64.b64decode(data["__bytes__"])
    if "__fraction__" in data:
        from fractions import Fraction
        numerator, denominator = (decode(v, arrays, from_handle) for v in data["__fraction__"])
        return Fraction(int(numerator), int(denominator))
    if "__decimal__" in data:
        from decimal import Decimal
        return Decimal(data["__decimal__"])
    if "__complex__" in data:
        return complex(*data["__complex__"])
    if "__handle__" in data:
        return from_handle(data["__handle__"])
    if "__callback__" in data and from_callback is not None:
        return from_callback(data["__callback__"])
    raise ValueError(f"unknown encoded value {sorted(data)}")


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


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


def check_structure(head: bytes) -> None:
    """Refuse a JSON header whose size, number of values or nesting could swell the reader.

    Checked on the bytes, before ``json.loads`` builds anything: 17 MB of
    nested empty lists would otherwise become a gigabyte of Python objects.
    """
    import re

    if len(head) > MAX_HEADER:
        raise ValueError(f"a header of {len(head)} bytes (the limit is {MAX_HEADER})")
    bare = re.sub(rb'"(?:[^"\\]|\\.)*"', b'""', head)        # strings cannot nest or count
    items = bare.count(b",") + bare.count(b"[") + bare.count(b"{")
    if items > MAX_ITEMS:
        raise ValueError(f"a header of {items} values (the limit is {MAX_ITEMS})")
    depth = deepest = 0
    for bracket in re.sub(rb"[^\[\]{}]", b"", bare):
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            raise ValueError(f"a header nested more than {MAX_DEPTH} deep")


def unpack(payload: bytes) -> tuple[dict, list]:
    import numpy as np

    head_len, count = struct.unpack_from("<QQ", payload, 0)
    offset = 16
    check_structure(payload[offset:offset + head_len])
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


