"""The wire format of the clean re-check, shared by the grader and the student's process.

One strict format, bounded before anything is built from it.  A frame is an
8-byte length, then the payload: an 8-byte header length, a JSON header, and
the raw little-endian bytes of the arrays the header's ``__arrays__`` table
lists (dtype and shape each, from an allow-list of numeric, boolean and text
dtypes).  Nothing is unpickled, no archive is opened, no ``np.load`` runs.

What the reader accepts (:func:`unpack`, :func:`decode`) is plain data:
``None``, booleans, numbers, strings, bytes, NumPy arrays and scalars of the
allowed dtypes, lists, tuples, dicts, sets, fractions and decimals of those,
slices and ``...`` (a test indexes a DataFrame or an array with them);
anything else the student's process holds travels as an opaque handle that
the grader never asks to judge itself (:class:`course_grader.recheck.transport.Remote`).
A payload over a limit, or not in this format, raises :class:`ReplyError`,
whose message is the grader's own words (never text or numbers from the reply).

The writer (:func:`encode`) turns subclasses of those types (a ``Counter``,
a ``namedtuple``, an ``ndarray`` subclass) into the base type's data, read with
the base type's own methods, so no method a student defined decides what is sent.

This file must stay self-contained (standard library and NumPy only): the
sandboxed program, :mod:`course_grader.recheck.student_program`, runs it as source,
with no package to import it from.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct

MAX_FRAME = 64 * 2 ** 20      # one message, arrays included (bytes)
MAX_HEADER = 4 * 2 ** 20      # its JSON part: structure, numbers and strings (bytes)
MAX_ITEMS = 200_000           # values in the JSON part (containers and scalars)
MAX_DEPTH = 64                # nesting of the JSON part
MAX_VALUE_DEPTH = 16          # nesting of a value (a dict costs 3 JSON levels); deeper travels as a handle
MAX_ARRAYS = 10_000           # arrays in one message
MAX_DIMS = 32                 # dimensions of one array
MAX_STRING = 1_000_000        # characters of one string
MAX_DIGITS = 4_300            # digits of one integer (Python's own limit for int(str))
MAX_TYPE_NAME = 300           # characters of a handle's type name
MAX_NAME_CHANGES = 10_000     # the student's names one message reports bound or deleted (the rest: the next)

#: The dtypes an array may have on the wire (little-endian); text dtypes are checked by kind.
DTYPES = frozenset(["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
                    "<f2", "<f4", "<f8", "<c8", "<c16"])
#: What a handle may say it is, in the grader's words.
HANDLE_KINDS = {"function": "a function", "class": "a class", "generator": "a generator",
                "object": "an object"}


class ReplyError(ValueError):
    """A message the format refuses.  Its text is the grader's alone: constants and limits."""


def _allowed(dtype_str) -> bool:
    return type(dtype_str) is str and (dtype_str in DTYPES or re.fullmatch(r"<U[1-9][0-9]{0,6}", dtype_str) is not None)


_SCALARS: set = set()


def _scalar_types(np) -> set:
    """NumPy's scalar types of the allowed dtypes (exactly these types: not a subclass)."""
    if not _SCALARS:
        _SCALARS.update(np.dtype(code).type for code in DTYPES)
    return _SCALARS


def handle_type(value) -> str:
    """The qualified name of a handle's type (``matplotlib.patches.Rectangle``), for ``obj.__class__`` in a test."""
    cls = type(value)
    return f"{getattr(cls, '__module__', '')}.{getattr(cls, '__qualname__', '')}"[:MAX_TYPE_NAME]


def handle_kind(value) -> str:
    import inspect

    if isinstance(value, type):
        return "class"
    if inspect.isgenerator(value):
        return "generator"
    return "function" if callable(value) else "object"


# -- writing --------------------------------------------------------------------------------------

def encode(value, arrays: list, as_handle, as_callback=None, depth: int = 0):
    """``value`` as JSON-able data; arrays are appended to ``arrays``.

    ``as_handle(obj)`` turns an object that is not plain data into a JSON
    reference; ``as_callback(fn)`` does the same for callables (grader side).
    """
    import numpy as np

    def inner(item):
        return encode(item, arrays, as_handle, as_callback, depth + 1)

    if depth > MAX_VALUE_DEPTH or type(value) is not value.__class__:   # a stand-in naming another class
        return as_handle(value)
    if value is None or type(value) is bool:
        return value
    if value is Ellipsis:
        return {"__ellipsis__": None}
    if type(value) is slice:
        return {"__slice__": [inner(value.start), inner(value.stop), inner(value.step)]}
    if type(value) in _scalar_types(np):
        scalar, dtype = value.item(), np.dtype(type(value)).newbyteorder("<").str
        return {"__scalar__": [dtype, [scalar.real, scalar.imag] if isinstance(scalar, complex) else scalar]}
    if isinstance(value, int):
        number = int.__int__(value)
        return number if abs(number) < 2 ** 53 else {"__bigint__": str(number)}
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, complex):
        number = complex(value)
        return {"__complex__": [number.real, number.imag]}
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bytes):
        import base64
        return {"__bytes__": base64.b64encode(value).decode()}     # read through the buffer, not a method
    if isinstance(value, np.ndarray):
        base = np.ndarray.view(value, np.ndarray)            # a subclass's data, without its methods
        little = base.dtype.newbyteorder("<")
        if not _allowed(little.str):                         # objects, records, dates: not plain data
            return as_handle(value)
        arrays.append(np.ascontiguousarray(base.astype(little, copy=False)))
        return {"__array__": len(arrays) - 1}
    if isinstance(value, list):
        return [inner(v) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return {"__tuple__": [inner(v) for v in tuple.__iter__(value)]}
    if isinstance(value, dict):
        return {"__dict__": [[inner(k), inner(v)] for k, v in dict.items(value)]}
    if isinstance(value, (set, frozenset)):
        frozen = isinstance(value, frozenset)
        items = frozenset.__iter__(value) if frozen else set.__iter__(value)
        return {"__set__": [inner(v) for v in items], "frozen": frozen}
    kind = type(value).__module__ + "." + type(value).__qualname__
    if kind == "fractions.Fraction":
        return {"__fraction__": [inner(value.numerator), inner(value.denominator)]}
    if kind == "decimal.Decimal":
        return {"__decimal__": str(value)}
    if as_callback is not None and callable(value):
        return as_callback(value)
    return as_handle(value)


def pack(header: dict, arrays: list) -> bytes:
    """One payload: the header (with the arrays' table) as JSON, then the arrays' bytes."""
    table = [[array.dtype.str, list(array.shape)] for array in arrays]
    head = json.dumps(dict(header, __arrays__=table)).encode()
    return b"".join([struct.pack("<Q", len(head)), head] + [array.tobytes() for array in arrays])


# -- reading --------------------------------------------------------------------------------------

_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def check_structure(head: bytes) -> None:
    """Refuse a JSON header whose size, number of values or nesting could swell the reader.

    Checked on the bytes, before ``json.loads`` builds anything: 17 MB of
    nested empty lists would otherwise become a gigabyte of Python objects.
    """
    if len(head) > MAX_HEADER:
        raise ReplyError(f"a reply header larger than the limit; the limit is {MAX_HEADER} bytes")
    # Each string is a value: too many are refused before the substitution below, whose list of
    # pieces grows with the number of strings (1.4 million of them would cost a quarter of a GB).
    if (head.count(b'"') - head.count(b'\\"')) // 2 > MAX_ITEMS:
        raise ReplyError(f"a reply of more values than the limit; the limit is {MAX_ITEMS} values")
    # strings cannot nest or count; the pattern is unrolled so that a long string costs no backtracking stack
    bare = re.sub(rb'"[^"\\]*(?:\\.[^"\\]*)*"', b'""', head)
    items = bare.count(b",") + bare.count(b"[") + bare.count(b"{")
    if items > MAX_ITEMS:
        raise ReplyError(f"a reply of more values than the limit; the limit is {MAX_ITEMS} values")
    depth = deepest = 0
    for bracket in bare.translate(None, _NOT_BRACKETS):   # a copy without the rest, not a piece per byte
        depth += 1 if bracket in b"[{" else -1
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            raise ReplyError(f"a reply nested deeper than the limit; the limit is {MAX_DEPTH} levels")


def unpack(payload) -> tuple[dict, list]:
    """The header and the arrays of one payload, every limit checked before anything is built."""
    import numpy as np

    if len(payload) > MAX_FRAME + 8:
        raise ReplyError(f"a reply larger than the limit; the limit is {MAX_FRAME} bytes")
    if len(payload) < 8:
        raise ReplyError("a reply that is not in the reply format")
    (head_len,) = struct.unpack_from("<Q", payload, 0)
    if head_len > min(MAX_HEADER, len(payload) - 8):
        raise ReplyError(f"a reply header larger than the limit; the limit is {MAX_HEADER} bytes")
    head = bytes(payload[8:8 + head_len])
    check_structure(head)
    try:
        header = json.loads(head)
        table = header.pop("__arrays__")
    except Exception:  # noqa: BLE001 - the reader's message would quote the reply
        raise ReplyError("a reply that is not in the reply format") from None
    if type(header) is not dict or type(table) is not list:
        raise ReplyError("a reply that is not in the reply format")
    if len(table) > MAX_ARRAYS:
        raise ReplyError(f"a reply of more arrays than the limit; the limit is {MAX_ARRAYS} arrays")
    buffer = payload if isinstance(payload, bytearray) else bytearray(payload)   # writable arrays
    offset, arrays = 8 + head_len, []
    for entry in table:
        dtype, shape = _array_entry(entry)
        count = math.prod(shape)
        if offset + count * dtype.itemsize > len(buffer):
            raise ReplyError("a reply whose arrays are larger than its bytes")
        arrays.append(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset).reshape(shape))
        offset += count * dtype.itemsize
    if offset != len(buffer):
        raise ReplyError("a reply whose arrays do not fill its bytes")
    return header, arrays


def _array_entry(entry):
    import numpy as np

    if not (type(entry) is list and len(entry) == 2 and _allowed(entry[0]) and type(entry[1]) is list
            and len(entry[1]) <= MAX_DIMS and all(type(n) is int and n >= 0 for n in entry[1])):
        raise ReplyError("an array of a type or shape the reply format does not allow")
    if math.prod(max(n, 1) for n in entry[1]) > MAX_FRAME:    # a huge shape with a zero in it
        raise ReplyError("an array of a type or shape the reply format does not allow")
    return np.dtype(entry[0]), tuple(entry[1])


def decode(data, arrays: list, from_handle, from_callback=None):
    """The value ``data`` stands for: plain data, handles from ``from_handle(key, kind, type name)``, callbacks."""
    try:
        return _decode(data, arrays, from_handle, from_callback)
    except ReplyError:
        raise
    except Exception:  # noqa: BLE001 - the error's text could quote the reply
        raise ReplyError("a reply that is not in the reply format") from None


def _decode(data, arrays, from_handle, from_callback):
    import numpy as np

    def inner(item):
        return _decode(item, arrays, from_handle, from_callback)

    if data is None or type(data) in (bool, int, float):
        return data
    if type(data) is str:
        if len(data) > MAX_STRING:
            raise ReplyError(f"a string longer than the limit; the limit is {MAX_STRING} characters")
        return data
    if type(data) is list:
        return [inner(v) for v in data]
    if type(data) is not dict:
        raise ReplyError("a reply that is not in the reply format")
    tag = next(iter(data), None)
    body = data.get(tag)
    if set(data) - {tag, "frozen", "kind", "type"}:
        raise ReplyError("a reply that is not in the reply format")
    if tag == "__array__" and type(body) is int:
        return arrays[body]
    if tag == "__scalar__" and type(body) is list and len(body) == 2 and _allowed(body[0]):
        value = complex(*body[1]) if type(body[1]) is list else body[1]
        return np.dtype(body[0]).type(value)
    if tag == "__tuple__" and type(body) is list:
        return tuple(inner(v) for v in body)
    if tag == "__dict__" and type(body) is list:
        return {_hashable(inner(k)): inner(v) for k, v in body}
    if tag == "__set__" and type(body) is list:
        items = (_hashable(inner(v)) for v in body)
        return frozenset(items) if data.get("frozen") is True else set(items)
    if tag == "__bigint__" and type(body) is str and len(body) <= MAX_DIGITS:
        return int(body)
    if tag == "__bytes__" and type(body) is str and len(body) <= MAX_HEADER:
        import base64
        return base64.b64decode(body, validate=True)
    if tag == "__fraction__" and type(body) is list and len(body) == 2:
        from fractions import Fraction
        numerator, denominator = (inner(v) for v in body)
        if type(numerator) is not int or type(denominator) is not int:
            raise ReplyError("a reply that is not in the reply format")
        return Fraction(numerator, denominator)
    if tag == "__decimal__" and type(body) is str and len(body) <= MAX_DIGITS:
        from decimal import Decimal
        return Decimal(body)
    if tag == "__slice__" and type(body) is list and len(body) == 3:
        return slice(*(inner(v) for v in body))
    if tag == "__ellipsis__" and body is None:
        return Ellipsis
    if tag == "__complex__" and type(body) is list and len(body) == 2:
        return complex(float(body[0]), float(body[1]))
    if tag == "__handle__" and type(body) is int:
        kind, type_name = data.get("kind", "object"), data.get("type", "")
        return from_handle(body, kind if kind in HANDLE_KINDS else "object",
                           type_name if type(type_name) is str and len(type_name) <= MAX_TYPE_NAME else "")
    if tag == "__callback__" and type(body) is int and from_callback is not None:
        return from_callback(body)
    raise ReplyError("a reply that is not in the reply format")


def _hashable(key):
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


# -- frames ---------------------------------------------------------------------------------------

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
