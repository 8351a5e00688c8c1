"""The re-check's wire format: plain data only, every size bounded before anything is built."""

import contextlib
import collections
import json
import struct
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest

from course_grader.recheck.wire_format import (MAX_ARRAYS, MAX_DEPTH, MAX_FRAME, MAX_HEADER, MAX_STRING,
                                            ReplyError, check_structure, decode, encode, handle_kind, pack,
                                            unpack)


def round_trip(value):
    arrays = []
    data = encode(value, arrays, as_handle=lambda obj: {"__handle__": 7, "kind": handle_kind(obj)})
    header, back = unpack(pack({"value": data}, arrays))
    return decode(header["value"], back, from_handle=lambda key, kind, type_name: ("handle", key, kind))


def frame(header: dict, raw: bytes = b"") -> bytes:
    """A payload as a student's process could forge it: any header, any bytes after it."""
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + raw


def test_plain_data_comes_back_as_itself():
    value = {"a": [1, 2.5, None, True, "text", b"\x00\x01"], ("t", 1): (np.float32(1.5), np.int8(-3)),
             "big": 2 ** 80, "c": 1 + 2j, "f": Fraction(1, 3), "s": {1, 2}, "fs": frozenset({"x"}),
             "x": np.arange(6, dtype=">i4").reshape(2, 3), "b": np.array([True, False]), "u": np.array(["ab", "c"])}
    back = round_trip(value)
    assert back["a"] == [1, 2.5, None, True, "text", b"\x00\x01"]
    assert type(back[("t", 1)][0]) is np.float32 and back[("t", 1)] == (1.5, -3)
    assert back["big"] == 2 ** 80 and back["c"] == 1 + 2j and back["f"] == Fraction(1, 3)
    assert back["s"] == {1, 2} and type(back["fs"]) is frozenset
    assert back["x"].dtype == np.dtype("<i4") and back["x"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back["b"].dtype == bool and back["u"].tolist() == ["ab", "c"]
    back["x"][0, 0] = 9          # arrays arrive writable, as np.load gave them


def test_an_index_of_slices_and_ellipsis_comes_back_as_itself():
    """What a test indexes a DataFrame or an array with (``df.loc[:, "b"]``, ``x[..., ::2]``)."""
    key = (slice(None), "b", slice(1, 2 ** 60, -2), Ellipsis)
    assert round_trip(key) == key and round_trip(slice(0, 3)) == slice(0, 3)


def test_subclasses_of_plain_types_become_the_base_type_with_their_real_contents():
    class Liar(dict):
        def __eq__(self, other):
            return True

        def __len__(self):
            return 3

        def items(self):
            return [("forged", 1)]

    class Stretchy(list):
        def __iter__(self):
            return iter([1, 2, 3])

    class Odd(np.ndarray):
        def __eq__(self, other):
            return np.ones(np.shape(other), bool)

    counts = collections.Counter("abca")
    Point = collections.namedtuple("Point", "x y")
    back = round_trip([Liar(real=2), Stretchy([9]), np.zeros(2).view(Odd), counts, Point(1, 2), True])
    assert back[0] == {"real": 2} and type(back[0]) is dict
    assert back[1] == [9] and type(back[1]) is list
    assert type(back[2]) is np.ndarray and not (back[2] == np.ones(2)).any()
    assert back[3] == {"a": 2, "b": 1, "c": 1} and type(back[3]) is dict
    assert back[4] == (1, 2) and type(back[4]) is tuple


def test_what_is_not_plain_data_travels_as_a_handle_with_a_kind():
    def gen():
        yield 1

    back = round_trip([object(), np.array([object()]), lambda: 0, int, gen(), np.array(["2020"], "datetime64[D]")])
    assert [kind for _, _, kind in back] == ["object", "object", "function", "class", "generator", "object"]


def test_a_value_nested_deeper_than_the_limit_is_a_handle_not_an_error():
    value = []
    for _ in range(1000):
        value = [value]
    back = round_trip(value)
    for _ in range(17):
        back = back[0]
    assert back == ("handle", 7, "object")


@pytest.mark.parametrize("header", [
    {"op": "return", "value": {"__nope__": "LEAK 997.1837"}},             # an unknown tag
    {"op": "return", "value": {"__array__": 5}},                          # an array that is not there
    {"op": "return", "value": {"__scalar__": ["|O", "LEAK"]}},            # a dtype not allowed
    {"op": "return", "value": {"__dict__": [[{"__set__": []}, 1]]}},      # an unhashable key
    {"op": "return", "value": {"__bigint__": "9" * 5000}},                # more digits than int() takes
    {"op": "return", "value": {"__handle__": "LEAK"}},
])
def test_a_value_not_in_the_format_is_refused_in_the_graders_words(header):
    parsed, arrays = unpack(frame(dict(header, __arrays__=[])))
    with pytest.raises(ReplyError) as refused:
        decode(parsed["value"], arrays, from_handle=lambda key, *_: key)
    assert "LEAK" not in str(refused.value) and "997" not in str(refused.value)


def _refused_quickly(payload) -> str:
    tracemalloc.start()
    try:
        with pytest.raises(ReplyError) as refused:
            header, arrays = unpack(payload)
            decode(header.get("value"), arrays, from_handle=lambda key, *_: key)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # (the time it takes: benchmarks/reply_parsing.py; milliseconds on this course's machines)
    assert peak < 2 * MAX_FRAME + 32 * 2 ** 20, peak  # the payload (and one copy), never what it claims
    return str(refused.value)


def test_a_huge_declared_shape_with_few_bytes_is_refused():
    for shape in ([10 ** 6, 10 ** 6], [0, 2 ** 40, 2 ** 40], [2] * 33, [-1]):
        assert "does not allow" in _refused_quickly(
            frame({"op": "return", "value": {"__array__": 0}, "__arrays__": [["<f8", shape]]}, b"\0" * 8))
    assert "larger than its bytes" in _refused_quickly(
        frame({"op": "return", "value": {"__array__": 0}, "__arrays__": [["<f8", [1000, 1000]]]}, b"\0" * 8))


def test_an_archive_of_a_million_entries_is_not_an_array():
    # What np.load would have opened as a zip: here it is bytes after the header, which must be
    # exactly the listed arrays' bytes; an npz's members are never listed or read.
    directory = b"".join(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0)
                         + b"a" for _ in range(1_000_000))
    archive = b"PK\x03\x04" + directory + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF,
                                                      len(directory), 4, 0)
    assert "do not fill its bytes" in _refused_quickly(frame({"op": "return", "value": 1, "__arrays__": []}, archive))


def test_more_arrays_than_the_limit_are_refused_before_one_is_built():
    table = [["|u1", [0]]] * (MAX_ARRAYS + 1)
    assert f"the limit is {MAX_ARRAYS} arrays" in _refused_quickly(frame({"op": "return", "value": 1, "__arrays__": table}))


def test_a_deeply_nested_list_is_refused_before_it_is_built():
    head = b'{"op": "return", "__arrays__": [], "value": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert f"the limit is {MAX_DEPTH} levels" in _refused_quickly(struct.pack("<Q", len(head)) + head)


def test_an_over_long_string_is_refused():
    assert f"the limit is {MAX_STRING} characters" in _refused_quickly(
        frame({"op": "return", "value": "x" * (MAX_STRING + 1), "__arrays__": []}))
    assert f"the limit is {MAX_HEADER} bytes" in _refused_quickly(
        frame({"op": "return", "value": "x" * (MAX_HEADER + 1), "__arrays__": []}))


def test_a_header_longer_than_its_payload_or_not_json_is_refused():
    assert "the limit is" in _refused_quickly(struct.pack("<Q", 2 ** 62) + b"{}")
    assert "not in the reply format" in _refused_quickly(struct.pack("<Q", 5) + b"LEAK!")
    assert "not in the reply format" in _refused_quickly(frame(["LEAK"]))


def test_the_largest_reply_the_limits_allow_is_read_within_the_stated_memory():
    # the most values a header may hold, in dicts, and an array filling the rest of the frame
    value = {"__tuple__": [{"__dict__": [[i, {"__tuple__": [1.5]}] for i in range(33_000)]}, {"__array__": 0}]}
    head = json.dumps({"op": "return", "value": value, "__arrays__": [["|u1", [0]]]}).encode()
    size = MAX_FRAME - len(head) - 8
    payload = bytearray(frame({"op": "return", "value": value, "__arrays__": [["|u1", [size]]]}, bytes(size)))
    tracemalloc.start()
    try:
        header, arrays = unpack(payload)
        counts, array = decode(header["value"], arrays, from_handle=lambda key, *_: key)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(counts) == 33_000 and array.size == size
    # (the time it takes: benchmarks/reply_parsing.py)
    assert len(payload) + peak < 130 * 2 ** 20, peak   # the instructor page's figure, the payload included


def test_structure_limits_count_what_json_would_build():
    check_structure(b'{"op": "return", "value": [1, 2, "a, [b] {c}", {"__dict__": []}]}')
    with pytest.raises(ReplyError, match="nested"):
        check_structure(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    with pytest.raises(ReplyError, match="values"):
        check_structure(b"[" + b"[]," * 300_000 + b"[]]")


@pytest.mark.parametrize("head", [b" " * (MAX_HEADER - 16),                       # a header of blanks
                                  b"[" + b'"",' * (MAX_HEADER // 3 - 1) + b"1]"])  # of empty strings
def test_checking_a_headers_structure_costs_a_few_times_its_bytes(head):
    # Found by benchmarks/grader_memory.py: a regular expression's list of pieces, one per byte or
    # per string, cost the grader 240-357 MiB for a 4 MiB header.
    tracemalloc.start()
    try:
        with contextlib.suppress(ReplyError):
            check_structure(head)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * MAX_HEADER, peak
