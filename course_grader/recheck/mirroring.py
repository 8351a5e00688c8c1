"""One value in two processes: noticing that a copy changed, and changing the other copy in place.

In a notebook, a test and the student's code share one process: an array the
test passes to the student's function is the array the function fills, a
global the function reads is the test's, and ``np.random.seed(0)`` in a test
decides what the student's code draws next.  In the re-check the two run in
two processes, so each side holds a *copy* of such a value.  Both sides keep a
fingerprint of each copy they share (:func:`fingerprint`); when a copy changes
between two messages, the new value travels with the next message and the
other side writes it into its own copy in place (:func:`update_in_place`), so
that every name and object that refers to that copy sees the change, as it
would in one process.  Python's and NumPy's global random generators are
shared the same way (:func:`random_state`, :func:`set_random_state`).

This file must stay self-contained (standard library and NumPy, and the wire
format's :func:`encode`): the student's program in the sandbox runs it as
source, after :mod:`~course_grader.recheck.wire_format`.
"""

from __future__ import annotations

import hashlib
import json

if __package__:  # imported as a module; in the sandbox, the wire format's source runs just before this
    from .wire_format import encode

#: Types whose values can change in place (what a copy on the other side must follow).
MUTABLE_TYPES = (list, dict, set, bytearray)


def holds_mutable(value, depth: int = 0) -> bool:
    """Whether ``value`` is, or contains, data that can change in place (a list, dict, set, array)."""
    import numpy as np

    if depth > 16:
        return False
    if issubclass(type(value), np.ndarray):    # type(), not isinstance: a stand-in may name its class
        return value.dtype != object
    if type(value) in MUTABLE_TYPES:
        return True
    if type(value) is tuple:
        return any(holds_mutable(item, depth + 1) for item in value)
    return False


def fingerprint(value) -> bytes:
    """A digest of ``value``'s data as the wire would carry it (objects count by identity)."""
    arrays: list = []
    header = encode(value, arrays, lambda obj: {"__object__": id(obj)}, lambda fn: {"__object__": id(fn)})
    digest = hashlib.blake2b(json.dumps(header, sort_keys=False).encode(), digest_size=16)
    for array in arrays:
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        # read in place where the buffer allows (memoryview cannot cast an empty view with a zero in its shape)
        in_place = array.flags.c_contiguous and array.size > 0
        digest.update(memoryview(array).cast("B") if in_place else array.tobytes())
    return digest.digest()


def update_in_place(target, new) -> bool:
    """Make ``target`` hold ``new``'s data, keeping ``target`` (and what it holds) the same objects.

    Returns False when that cannot be done in place (another type, an array of
    another shape or dtype): the caller decides what that means.
    """
    import numpy as np

    if issubclass(type(target), np.ndarray):
        if not issubclass(type(new), np.ndarray) or new.shape != target.shape or new.dtype != target.dtype:
            return False
        if not target.flags.writeable:
            return bool(np.array_equal(target, new, equal_nan=new.dtype.kind in "fc"))
        np.copyto(target, new)
        return True
    if type(target) is list and type(new) is list:
        target[:] = [_merged(old, item) for old, item in zip(target, new)] + list(new[len(target):])
        return True
    if type(target) is dict and type(new) is dict:
        for key in [key for key in target if key not in new]:
            del target[key]
        for key, item in new.items():
            target[key] = _merged(target[key], item) if key in target else item
        return True
    if type(target) is set and type(new) is set:
        target.clear()
        target.update(new)
        return True
    if type(target) is bytearray and type(new) in (bytes, bytearray):
        target[:] = new
        return True
    if type(target) is tuple and type(new) is tuple and len(target) == len(new):
        # the tuple cannot change, but what it holds can
        return all(update_in_place(old, item) or _same(old, item) for old, item in zip(target, new))
    return _same(target, new)


def _merged(old, new):
    """``old`` updated with ``new`` where it can be (keeping its identity), else ``new``."""
    if holds_mutable(old) and update_in_place(old, new):
        return old
    return new


def _same(a, b) -> bool:
    try:
        return type(a) is type(b) and fingerprint(a) == fingerprint(b)
    except Exception:  # noqa: BLE001 - not comparable: not the same
        return False


# -- the global random generators -------------------------------------------------------------------

class RandomWatch:
    """Whether the global random generators moved since this side last looked.

    Looking is cheap: Python's generator's state is hashed, and of NumPy's
    global Mersenne Twister only its position and three words of its key are
    read in place (:func:`_twister_probe`); its full state is read only when
    those moved, or while it holds a cached gaussian, which a draw can consume
    without moving them.  A NumPy whose generator cannot be read so is looked
    at in full every time.
    """

    def __init__(self):
        self._probe = _twister_probe()
        self._last_probe = None
        self._numpy = None           # hash of NumPy's full state when last read
        self._gauss = True           # whether that state may hold a cached gaussian
        self.seen = self.fingerprint()

    def fingerprint(self) -> int:
        import random

        import numpy as np

        probe = self._probe() if self._probe is not None else None
        if probe is None or probe != self._last_probe or self._gauss:
            name, keys, position, has_gauss, cached = np.random.get_state()
            self._numpy = hash((keys.tobytes(), position, has_gauss, cached))
            self._gauss, self._last_probe = bool(has_gauss), probe
        return hash((random.getstate(), self._numpy))

    def moved(self) -> bool:
        """Whether the state differs from when this was last asked (or :meth:`settled`)."""
        now = self.fingerprint()
        moved, self.seen = now != self.seen, now
        return moved

    def settled(self) -> None:
        """The state was just set from the other side: that is where it is now."""
        self._last_probe = None
        self.seen = self.fingerprint()


def _twister_probe():
    """A function reading NumPy's global Mersenne Twister's position and three words of its key in place
    (microseconds, where ``np.random.get_state()`` copies it all), or None if that reading does not
    agree with ``get_state`` here (another layout of the generator's memory)."""
    import ctypes

    import numpy as np

    try:
        generator = np.random.mtrand._rand._bit_generator
        words = ctypes.cast(generator.ctypes.state_address, ctypes.POINTER(ctypes.c_uint32 * 625))

        def probe(generator=generator):     # holds the generator: its memory stays the one read
            state = words.contents
            return state[0], state[1], state[623], state[624]

        _, keys, position, _, _ = np.random.get_state()
        if probe() != (int(keys[0]), int(keys[1]), int(keys[623]), int(position)):
            return None
        return probe
    except Exception:  # noqa: BLE001 - another NumPy: look at the full state instead
        return None


def random_state():
    """The state of Python's ``random`` and of NumPy's global generator (``np.random.seed``'s), as plain data."""
    import random

    import numpy as np

    name, keys, position, has_gauss, cached = np.random.get_state()
    return {"python": list(random.getstate()), "numpy": [name, keys, position, has_gauss, cached]}


def set_random_state(state) -> None:
    """Set both global generators to ``state`` (from :func:`random_state`); a malformed one raises ValueError."""
    import random

    import numpy as np

    try:
        version, internal, gauss = state["python"]
        name, keys, position, has_gauss, cached = state["numpy"]
        random.setstate((version, tuple(internal), gauss))
        np.random.set_state((name, keys, position, has_gauss, cached))
    except Exception:  # noqa: BLE001 - the other side's data: one clear error
        raise ValueError("a random generator state that is not one") from None
