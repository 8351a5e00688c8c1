"""The patches of nbgrader's internals (``course_grader.nbgrader_patches``) are read again when the code
under them changes: each upstream function they replace or wrap is fingerprinted as in the pinned
versions, and an upgrade that changes one fails here, naming it."""

import json
import subprocess
import sys

from course_grader import nbgrader_patches

#: Computed in a new interpreter, where no patch has been applied (a test process may have applied some)
FRESH = ("import json\nfrom course_grader.nbgrader_patches import UPSTREAM, fingerprint, upstream_object\n"
         "print(json.dumps({name: fingerprint(upstream_object(name)) for name in UPSTREAM}))")


def test_the_upstream_code_under_every_patch_is_as_in_the_pinned_versions():
    done = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    changed = {name: now for name, now in json.loads(done.stdout).items()
               if now != nbgrader_patches.UPSTREAM[name]}
    assert changed == {}, ("the upstream code under a patch changed: read nbgrader_patches' patch of each "
                           f"against the new code, then record its fingerprint: {changed}")


def test_every_patch_names_its_upstream_code_and_the_check_sees_a_change():
    names = set(nbgrader_patches.UPSTREAM)
    for upstream in ("get_alembic_version", "_create_environment", "Gradebook.__init__", "find_grade",
                     "find_comment", "find_source_cell", "find_graded_cell", "validate_cell",
                     "Highlight2HTML.__call__"):
        assert any(name.endswith(upstream) for name in names), upstream

    def original(x):
        return x

    def edited(x):
        return x + 1

    assert nbgrader_patches.fingerprint(original) != nbgrader_patches.fingerprint(edited)


def test_applying_a_patch_twice_is_applying_it_once():
    """In a new interpreter: every patch for the workers, twice; each upstream object is replaced once."""
    code = ("from course_grader import nbgrader_patches as p\nimport nbgrader.api as a\n"
            "p.for_workers(); first = (a.Gradebook.find_grade, a.Gradebook.__init__)\n"
            "p.for_workers(); p.use_fast_alembic_head(); p.use_fast_alembic_head()\n"
            "assert (a.Gradebook.find_grade, a.Gradebook.__init__) == first\n"
            "assert a.get_alembic_version is p.alembic_head\n"
            "assert p.nbgraders_alembic_head.__module__ == 'course_grader.nbgrader_patches'\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
