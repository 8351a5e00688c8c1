"""The expected values in the exercises' tests are what the real Keras layers compute today.

:mod:`course_authoring.references` ran the Keras layers ahead of time and wrote the
results into the source notebooks, so that grading never imports TensorFlow.
This test runs every generator again, with Keras, and compares.
"""

import numpy as np
import pytest

from grading_support import SOLUTIONS

from course_authoring import references


def _blocks():
    found = []
    for path in sorted(SOLUTIONS.glob("*/*.ipynb")):
        import nbformat

        for cell in nbformat.read(path, as_version=4).cells:
            for name in references.blocks_in(cell.source):
                found.append((path.parent.name, name, cell.source))
    return found


BLOCKS = _blocks()


def test_every_block_has_a_generator():
    # (generators without a block check the reference solutions: test_reference_solutions.py)
    assert {name for _, name, _ in BLOCKS} <= set(references.GENERATORS)


def _flatten(data):
    if all(isinstance(v, dict) for v in data.values()):
        return {f"{case}/{field}": v for case, fields in data.items() for field, v in fields.items()}
    return data


@pytest.mark.parametrize("assignment, name, source", BLOCKS, ids=[f"{a}-{n}" for a, n, _ in BLOCKS])
def test_block_matches_a_fresh_keras_run(assignment, name, source):
    stored = _flatten(references.read_block(source, name))
    fresh = _flatten(references.GENERATORS[name]())
    assert stored.keys() == fresh.keys()
    for key, value in fresh.items():
        value = np.asarray(value)
        assert stored[key].shape == value.shape and stored[key].dtype == value.dtype, key
        if value.dtype == bool:
            np.testing.assert_array_equal(stored[key], value, err_msg=key)
        else:
            # The same inputs, run by Keras on another CPU (or another build of its
            # kernels): float32 results may differ in the last bits of every sum, which
            # two layers compound to a few 1e-7 (measured: 7e-7 on values of order 1).
            np.testing.assert_allclose(stored[key], value, rtol=1e-5, atol=1e-6, err_msg=key)


def test_every_assignment_has_the_shared_cells_from_their_one_source():
    import nbformat

    for path in sorted(SOLUTIONS.glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        instructions, first_code = references.shared_cells(nb, path)
        assert instructions.source == references.assignment_header.INSTRUCTIONS, path.name
        assert first_code.source.startswith(references.assignment_header.HELPERS), path.name
        assert references.with_shared_helpers(first_code.source, path) == first_code.source, path.name
        last = nb.cells[-1]       # the practice call, which a graded run skips
        assert (last.source, last.metadata.get("tags")) == (references.assignment_header.PRACTICE,
                                                           references.assignment_header.PRACTICE_TAGS), path.name


def test_rewrite_restores_edited_shared_cells_and_keeps_the_assignments_own_code(tmp_path):
    import shutil
    import nbformat

    source = SOLUTIONS / "a8_encoder_block" / "a8_encoder_block.ipynb"
    path = tmp_path / source.name
    shutil.copy(source, path)
    nb = nbformat.read(path, as_version=4)
    instructions, first_code = references.shared_cells(nb, path)
    original = first_code.source
    instructions.source += "\nan edit"
    first_code.source = first_code.source.replace("def check_close(", "def check_close_edited(")
    nb.cells[-1].metadata["tags"] = []           # the practice call's tag lost
    nbformat.write(nb, path)
    references.rewrite(paths=[path], names=["no block"])
    nb = nbformat.read(path, as_version=4)
    instructions, first_code = references.shared_cells(nb, path)
    assert instructions.source == references.assignment_header.INSTRUCTIONS
    assert first_code.source == original and "def layer_norm(" in original   # a5's own given code kept
    assert nb.cells[-1].metadata["tags"] == references.assignment_header.PRACTICE_TAGS
    assert sum("course_grader.practice" in c.source for c in nb.cells) == 1


def test_the_notebooks_decoder_reads_what_the_generator_encodes():
    namespace = {}
    exec(references.assignment_header.HELPERS, namespace)
    cases = {"case": {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "m": np.array([True, False])}}
    decoded = namespace["decode_reference"](references.encode_cases(cases))
    for name, value in cases["case"].items():
        np.testing.assert_array_equal(decoded["case"][name], value)
        assert decoded["case"][name].dtype == value.dtype
