"""Benchmark: what reading one reply of the student's process costs the grader, in time and memory.

The clean re-check reads the replies of the student's process in one strict
format (``course_grader/recheck/wire_format.py``), bounded in bytes, values,
nesting and arrays.  This prints, for the largest reply those limits allow and
for replies that claim far more than they hold (refused before anything is
built from them), the seconds (without ``tracemalloc``) and the peak memory (``tracemalloc``, the
reply's own bytes included) of parsing them, each the median of ``--repeats``.
The tests assert the memory bounds (``tests/course_grader/test_recheck_protocol.py``);
times depend on the machine and its load, so they are measured here. Run it
from the repository root:

    .venv/bin/python benchmarks/reply_parsing.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import time
import tracemalloc

from course_grader.recheck.wire_format import MAX_FRAME, ReplyError, decode, unpack


def frame(header: dict, data: bytes = b"") -> bytes:
    head = json.dumps(header).encode()
    return struct.pack("<Q", len(head)) + head + data


def largest_allowed() -> bytes:
    """The most values a header may hold, in dicts, and an array filling the rest of the frame."""
    value = {"__tuple__": [{"__dict__": [[i, {"__tuple__": [1.5]}] for i in range(33_000)]}, {"__array__": 0}]}
    head = json.dumps({"op": "return", "value": value, "__arrays__": [["|u1", [0]]]}).encode()
    size = MAX_FRAME - len(head) - 8
    return frame({"op": "return", "value": value, "__arrays__": [["|u1", [size]]]}, bytes(size))


CASES = {
    "largest reply allowed": largest_allowed,
    "array claiming 8 TB": lambda: frame({"op": "return", "value": {"__array__": 0},
                                          "__arrays__": [["<f8", [10**6, 10**6]]]}, b"\0" * 8),
    "1,000,000 archive entries": lambda: frame({"op": "return", "value": None, "__arrays__": []},
                                               b"PK\x03\x04" * 1_000_000),
    "300,000 nested values": lambda: frame({"op": "return", "value": [[]] * 300_000, "__arrays__": []}),
}


def read(payload: bytearray) -> str:
    try:
        header, arrays = unpack(payload)
        decode(header.get("value"), arrays, from_handle=lambda key, *_: key)
    except ReplyError as error:
        return f"refused ({str(error)[:60]})"
    return "read"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs")
    print(f"{'reply':<28}{'bytes':>12}{'seconds':>10}{'peak MiB':>10}  outcome")
    for name, build in CASES.items():
        payload = bytearray(build())     # as the grader holds a reply it has read from the pipe
        seconds, peaks = [], []
        for _ in range(args.repeats):
            started = time.perf_counter()     # timed without tracemalloc, which slows allocation
            outcome = read(payload)
            seconds.append(time.perf_counter() - started)
            tracemalloc.start()
            read(payload)
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        peak = (len(payload) + statistics.median(peaks)) / 2**20
        print(f"{name:<28}{len(payload):>12,}{statistics.median(seconds):>10.3f}{peak:>10.1f}  {outcome}")


if __name__ == "__main__":
    main()
