"""The re-check's reply attacks as whole submissions of an assignment, for grading them end to end.

``test_reply_attacks.py`` forges replies from a one-function student program
run by :func:`course_grader.recheck.grader_loop.rerun` directly.  Here the same forgeries
(its ``MALFORMED_REPLIES``, ``SWOLLEN_REPLIES`` and ``ARCHIVE_REPLY``) go into
the instructor's solution of a real assignment: every function of every
solution cell answers as the solution does in the notebook's kernel, and with
the forged reply in the clean re-check's process (an IPython shell, not the kernel's), so
the grading worker meets the attack on every call a test makes.

:data:`LARGEST_REPLIES` are replies the format *accepts*, at its limits: they
reach the tests, which hold them in their names.
"""

from __future__ import annotations

import ast
import copy

from grading_support import solved_notebook
from test_reply_attacks import ARCHIVE_REPLY, FORGER, MALFORMED_REPLIES, SWOLLEN_REPLIES

MAX_FRAME_BYTES = 64 * 2 ** 20      # course_grader.recheck.wire_format.MAX_FRAME, as a student reads it
MAX_HEADER_BYTES = 4 * 2 ** 20      # ... MAX_HEADER

LARGEST_VALUES = f"return {{i: (1.5,) for i in range(33_000)}}, _np.zeros({MAX_FRAME_BYTES} - 2 * 2 ** 20, _np.uint8)"
WIDEST_HEADER = ("head = b'{\"op\": \"return\", \"__arrays__\": [], \"value\": 1' + b' ' * "
                 f"({MAX_HEADER_BYTES} - 64) + b'}}'\n_forge(_struct.pack('<Q', len(head)) + head)")

#: Function bodies (of ``x``, a hidden input) whose reply is at a limit of the format.
LARGEST_REPLIES = {
    # an array filling the whole frame
    "largest-array": f"return _np.zeros(({MAX_FRAME_BYTES} - 4096) // 8)",
    # as many values as the header may hold, in dicts, and an array filling the rest of the frame
    # (the largest reply of test_recheck_protocol.py)
    "largest-values": LARGEST_VALUES,
    # the most values as small dicts: the most Python objects the header builds
    "most-dicts": "return [{str(i): i} for i in range(39_000)]",
    # a header of the largest size, nearly all of it blank between two values
    "widest-header": WIDEST_HEADER,
    # the largest values on every other call, held by the test's names while the widest header is read
    "held-and-widest": "global _calls\n_calls = globals().get('_calls', 0) + 1\nif _calls % 2:\n    "
                       + LARGEST_VALUES + "\n" + WIDEST_HEADER,
}


def _named(bodies: list[str], kind: str) -> dict[str, str]:
    return {f"{kind}-{i + 1}": body for i, body in enumerate(bodies)}


#: Every reply attack, by a name for the submission: forged, swollen and at the limits.
REPLY_ATTACKS = {**_named(MALFORMED_REPLIES, "malformed"), **_named(SWOLLEN_REPLIES, "swollen"),
                 "archive": ARCHIVE_REPLY, **LARGEST_REPLIES}

WRAPPER = '''
import numpy as _np
from IPython import get_ipython as _get_ipython
def _in_recheck(_honest):
    def attacked(*args, **kwargs):
        if type(_get_ipython()).__name__ == "ZMQInteractiveShell":   # the notebook's kernel: the solution's answer
            return _honest(*args, **kwargs)
        x = 997.1837
{body}
    return attacked
'''


def functions_of(source: str) -> list[str]:
    return [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]


def attacking(assignment: str, body: str):
    """The solution of ``assignment`` with every function answering ``body`` in the clean re-check."""
    nb = copy.deepcopy(solved_notebook(assignment))
    wrapper = FORGER + WRAPPER.format(body="\n".join(" " * 8 + line for line in body.split("\n")))
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            names = functions_of(cell.source)
            if names:
                cell.source += "\n" + wrapper + "".join(f"{name} = _in_recheck({name})\n" for name in names)
    assert any("_in_recheck" in c.source for c in nb.cells), f"no function to attack in {assignment}"
    return nb


def reply_attack_submissions(assignment: str, names=None) -> dict:
    """``{student: notebook}``: the solution attacked with each reply attack (``names``: a few of them)."""
    return {f"reply-{name}": attacking(assignment, REPLY_ATTACKS[name]) for name in (names or REPLY_ATTACKS)}

