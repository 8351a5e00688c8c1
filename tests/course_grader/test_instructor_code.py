"""The instructor's code run in the grader as a notebook runs it (course_grader.instructor_code)."""

import sys

from course_grader import instructor_code


def test_ipython_syntax_becomes_python_and_its_magics_do_nothing():
    source = "%matplotlib inline\n%%time\nx = 1"   # a line magic, then a cell magic that is not first: plain text
    assert instructor_code.parse(source) is not None
    cell_magic = "%%html\n<video src='lecture.mp4'></video>"
    namespace = instructor_code.namespace("t")
    exec(compile(instructor_code.python_source(cell_magic), "<t>", "exec"), namespace)
    exec(compile(instructor_code.python_source("%timeit 1 + 1\n!ls\ny = 2"), "<t>", "exec"), namespace)
    assert namespace["y"] == 2
    assert instructor_code.parse("def broken(:\n    pass") is None


def test_the_assignments_modules_are_importable_then_forgotten(tmp_path):
    first, second = tmp_path / "a1", tmp_path / "a2"
    for folder, value in ((first, 1), (second, 2)):
        folder.mkdir()
        (folder / "course_helpers_for_test.py").write_text(f"VALUE = {value}\n")
    with instructor_code.importable_from(first):
        import course_helpers_for_test
        assert course_helpers_for_test.VALUE == 1
    assert "course_helpers_for_test" not in sys.modules and str(first) not in sys.path
    with instructor_code.importable_from(second):
        import course_helpers_for_test  # noqa: F811 - the second assignment's own module
        assert course_helpers_for_test.VALUE == 2
    assert "course_helpers_for_test" not in sys.modules


def test_what_a_cell_defines_and_imports():
    defined, imports = instructor_code.top_level_names(
        "%matplotlib inline\nimport numpy as np\nimport os.path\nfrom math import sqrt as root, pi\n"
        "from . import sibling\ndef f():\n    import json\nclass C:\n    pass\nx, (y, z) = 1, (2, 3)\ntotal += 1\n"
        "for i in range(3):\n    pass")
    assert defined == {"f", "C", "x", "y", "z", "total"}
    assert imports == {"np": ("numpy", None), "os": ("os", None), "root": ("math", "sqrt"), "pi": ("math", "pi")}
    assert instructor_code.names_used("assert Out[3] == 4 and len(In) > 2") >= {"Out", "In", "len"}


def test_remembered_translations_are_ipythons_for_short_and_long_cells():
    from IPython.core.inputtransformer2 import TransformerManager

    short = "%matplotlib inline\nx = !ls\nprint(x)"
    long = short + "\n" + "y = 1\n" * 3000               # past what is remembered
    before = instructor_code._remembered_python_source.cache_info()
    for source in (short, long, short, long, "%%bash\necho $HOME"):
        assert instructor_code.python_source(source) == TransformerManager().transform_cell(source)
    after = instructor_code._remembered_python_source.cache_info()
    assert after.hits - before.hits >= 1 and after.currsize - before.currsize <= 2   # the long one is not kept
