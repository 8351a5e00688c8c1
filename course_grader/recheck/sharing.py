"""The grader's side of what the two processes of the re-check share, message by message.

Every message between the grader and the student's process carries what
changed on its sender's side since the last one
(:mod:`~course_grader.recheck.mirroring` says why):

* ``names`` (from the student's process only): which of the student's
  names were bound, rebound or deleted -- :attr:`Sharing.on_names` hears it;
* ``mirrors``: the new value of a copy both sides hold (a call's argument, a
  lent value, a student's value a test read), keyed as both sides keyed it;
* ``random``: the global random generators' state, when it moved.

Everything that arrives is checked before it is used: a malformed part is a
:class:`~course_grader.recheck.wire_format.ReplyError` (the reply is refused
and the process stopped).  A change that may not reach the grader's copy (an
argument the test computed from the reference solution) or that cannot be
made in place is not made, and is noted in :attr:`Sharing.not_mirrored`.
"""

from __future__ import annotations

from .mirroring import RandomWatch, fingerprint, holds_mutable, random_state, set_random_state, update_in_place
from .wire_format import MAX_NAME_CHANGES, ReplyError, encode

#: What a name may be, when the student's process reports one (an identifier, not a sentence).
MAX_NAME_LENGTH = 200


class Sharing:
    """The grader's copies shared with the student's process, and the random state both sides use."""

    def __init__(self):
        self.mirrors: dict = {}           # key -> [the grader's object, its fingerprint when last in step]
        self.blocked: set = set()         # keys whose changes may not reach the grader's object
        self.not_mirrored: list = []      # what could not be mirrored, in the grader's words
        self.random = RandomWatch()
        self.on_names = None              # called with [(name, bound?)] from each message

    def restart(self) -> None:
        """A new student's process: nothing is shared with it yet."""
        self.mirrors.clear()
        self.blocked.clear()
        self.random.settled()

    def share(self, key: str, value, blocked: bool = False) -> None:
        """Keep ``value`` in step with the student's process's copy under ``key`` (if it can change)."""
        if blocked:
            self.blocked.add(key)
        elif holds_mutable(value):
            self.mirrors[key] = [value, fingerprint(value)]

    def forget(self, prefix: str) -> None:
        for key in [key for key in self.mirrors if key.startswith(prefix)]:
            del self.mirrors[key]
        self.blocked = {key for key in self.blocked if not key.startswith(prefix)}

    def outgoing(self, header: dict, arrays: list, as_reference, as_callback, code_ran: bool = True) -> None:
        """Add to ``header`` the grader's copies that changed, and the random state if it moved (looked
        at only when ``code_ran``: the tests' code ran since the last message)."""
        changed = []
        for key, entry in self.mirrors.items():
            now = fingerprint(entry[0])
            if now != entry[1]:
                entry[1] = now
                changed.append([key, encode(entry[0], arrays, as_reference, as_callback)])
        if changed:
            header["mirrors"] = changed
        if code_ran and self.random.moved():
            header["random"] = encode(random_state(), arrays, as_reference)

    def incoming(self, header: dict, arrays: list, decode) -> None:
        """Take in what changed in the student's process (``decode(data, arrays)`` builds its values)."""
        names = header.get("names")
        if names is not None:
            if not (type(names) is list and len(names) <= MAX_NAME_CHANGES and all(
                    type(item) is list and len(item) == 2 and type(item[0]) is str and type(item[1]) is bool
                    and len(item[0]) <= MAX_NAME_LENGTH and item[0].isidentifier() for item in names)):
                raise ReplyError("a reply that is not in the reply format")
            if self.on_names is not None:
                self.on_names([(name, bound) for name, bound in names])
        mirrors = header.get("mirrors", [])
        if type(mirrors) is not list or not all(type(m) is list and len(m) == 2 and type(m[0]) is str
                                                for m in mirrors):
            raise ReplyError("a reply that is not in the reply format")
        for key, data in mirrors:
            if key in self.blocked:
                self.not_mirrored.append("the student's code changed a value the test computed from the "
                                         "reference solution, and the change was not made")
            entry = self.mirrors.get(key)
            if entry is None:
                continue
            new = decode(data, arrays)
            if update_in_place(entry[0], new):
                entry[1] = fingerprint(entry[0])
            else:
                self.not_mirrored.append("the student's code changed a shared value in a way the grader "
                                         "cannot make in place (another type or shape)")
        if "random" in header:
            try:
                set_random_state(decode(header["random"], arrays))
            except ValueError:
                raise ReplyError("a reply that is not in the reply format") from None
            self.random.settled()
