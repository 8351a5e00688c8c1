import numpy as np
import pytest

import tiny_model
from attention_course.training import cache
from attention_course.data import toy_translation


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_COURSE_CACHE", str(tmp_path / "cache"))


def test_entries_appear_only_when_complete(tmp_path):
    folder = cache.cache_dir() / "demo-1"
    assert not folder.exists()

    def write(tmp):
        assert not folder.exists()  # still being written
        np.save(tmp / "a.npy", np.arange(3))

    cache.write_atomically(folder, write)
    np.testing.assert_array_equal(np.load(folder / "a.npy"), np.arange(3))
    assert [p.name for p in folder.parent.iterdir()] == [folder.name]  # no temporary left


def test_a_failed_write_leaves_no_entry():
    folder = cache.cache_dir() / "demo-2"

    def write(tmp):
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        cache.write_atomically(folder, write)
    assert not folder.exists()
    assert list(folder.parent.iterdir()) == []  # the temporary folder is gone too


# --- content keys --------------------------------------------------------------------------

SETTING = 3
DATA = np.arange(6.0)


def uses_the_globals():
    return SETTING * DATA


def test_a_key_covers_the_values_a_function_uses(monkeypatch):
    key = cache.content_key(uses_the_globals)
    assert key == cache.content_key(uses_the_globals)
    monkeypatch.setitem(globals(), "SETTING", 4)
    assert cache.content_key(uses_the_globals) != key
    monkeypatch.setitem(globals(), "SETTING", 3)
    monkeypatch.setitem(globals(), "DATA", np.arange(6.0) + 1e-9)   # data are keyed by content
    assert cache.content_key(uses_the_globals) != key


def reads_an_attribute_called_like_a_global(split):
    def inner():
        return split.images * SETTING
    return inner() + split.images


def test_a_key_covers_global_names_only_not_attributes_of_the_same_name(monkeypatch):
    """``split.images`` reads an attribute: a global that happens to be called ``images``
    (a chapter's loop variable, say) is not something the function uses."""
    key = cache.content_key(reads_an_attribute_called_like_a_global)
    monkeypatch.setitem(globals(), "images", np.zeros(3))
    assert cache.content_key(reads_an_attribute_called_like_a_global) == key
    # the global the nested function does read still counts
    monkeypatch.setitem(globals(), "SETTING", 4)
    assert cache.content_key(reads_an_attribute_called_like_a_global) != key


def test_a_key_covers_closures_defaults_and_package_modules():
    def make(n):
        return lambda: n
    assert cache.content_key(make(1)) != cache.content_key(make(2))

    def with_default(x=1):
        return x
    key = cache.content_key(with_default)
    with_default.__defaults__ = (2,)
    assert cache.content_key(with_default) != key
    # a package function is keyed by its module's source, which includes what it imports
    assert cache.content_key(toy_translation.make_splits) != cache.content_key(cache.write_atomically)


def test_a_key_names_what_it_cannot_read():
    class Opaque:
        pass
    thing = Opaque()
    with pytest.raises(TypeError, match="thing"):
        cache.content_key(lambda: thing)


# --- trained_model -------------------------------------------------------------------------

_build, _fit = tiny_model.build, tiny_model.fit


def test_a_trained_model_is_trained_once_and_then_loaded():
    first = cache.trained_model("tiny", _build, _fit, seed=0)
    second = cache.trained_model("tiny", _build, _fit, seed=0)
    assert not first.cached and second.cached
    for a, b in zip(first.model.weights, second.model.weights):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert second.record["loss"] == first.record["loss"]
    np.testing.assert_array_equal(second.record["predictions"], first.record["predictions"])
    assert second.seconds == first.seconds
    assert not cache.trained_model("tiny", _build, _fit, seed=1).cached        # the seed is in the key
    assert not cache.trained_model("tiny", _build, _fit, seed=0, config={"more": 1}).cached


def test_trained_model_rejects_what_it_cannot_store_or_build():
    import keras
    with pytest.raises(TypeError, match="dict"):
        cache.trained_model("bad-record", _build, lambda model: [1, 2], seed=0)
    with pytest.raises(ValueError, match="example"):
        cache.trained_model("unbuilt", lambda: keras.Sequential([keras.layers.Dense(2)]), _fit, seed=0)
    with pytest.raises(ValueError, match="name"):
        cache.trained_model("a/b", _build, _fit, seed=0)
    assert not any(p.name.startswith("bad-record") and p.is_dir() for p in cache.cache_dir().iterdir())


def test_every_chapter_trains_its_models_through_trained_model():
    """A ``fit`` or ``train_on_batch`` in a chapter sits in a cell that hands it to ``trained_model``."""
    import re
    from pathlib import Path

    chapters = sorted((Path(__file__).resolve().parents[3] / "book" / "chapters").glob("*.md"))
    cells = [(path.name, cell) for path in chapters
             for cell in re.findall(r"```\{code-cell\}[^\n]*\n(.*?)\n```", path.read_text(), re.S)]
    training = [(name, cell) for name, cell in cells if re.search(r"\.fit\(|train_on_batch\(", cell)]
    # the chapters' own training cells (chapter 8's and chapter 12's fine-tuning moved into
    # attention_course.training, which `make tune` calls too), and the package's modules that
    # train for a chapter
    assert len(training) >= 5, "the pattern no longer finds the chapters' training cells"
    untracked = [name for name, cell in training if "trained_model(" not in cell]
    assert not untracked, f"training outside attention_course.training.cache.trained_model in {untracked}"
    package = Path(cache.__file__).parent
    modules = [path for path in sorted(package.glob("*.py")) if path.name != "cache.py"
               and re.search(r"\.fit\(|train_on_batch\(", path.read_text())]
    assert {"deep_stacks.py", "review_classifiers.py"} <= {path.name for path in modules}, \
        "the pattern no longer finds them"
    untracked = [path.name for path in modules if "trained_model(" not in path.read_text()]
    assert not untracked, f"package modules that train outside trained_model: {untracked}"


def test_docstrings_comments_and_blank_lines_change_no_key():
    documented = "def f(x):\n    '''Twice x.'''\n    # the factor\n\n    return 2 * x\n"
    bare = "def f(x):\n    return 2 * x\n"
    assert cache._code(documented) == cache._code(bare)
    assert cache._code(bare) != cache._code(bare.replace("2 * x", "3 * x"))
    assert cache._code("'''A module.'''\nX = 1\n") == cache._code("X = 1\n")


def test_the_code_as_text_reads_the_same_whatever_fields_this_python_adds_or_leaves_empty():
    """Keys must match on every Python (a shipped run is checked against them, on Colab's too):
    Python 3.12 added fields that are almost always empty (``type_params``), and 3.13's
    ``ast.dump`` stopped printing empty ones.  The key's text does not depend on either."""
    import ast

    source = ("class Model:\n    def fit(self, x, *args, scale=None, **options):\n"
              "        return [v async for v in x] if scale else {k: 1 for k in x}\n"
              "lambda: (yield)\nimport numpy as np\n")
    tree = ast.parse(source)
    bare = ast.parse(source)
    for node in ast.walk(bare):          # every empty or None field removed, as if this Python had none
        for name in list(node._fields):
            value = getattr(node, name, None)
            if value is None or value == []:
                delattr(node, name) if hasattr(node, name) else None
    extra = ast.parse(source)
    for node in ast.walk(extra):         # and a field a newer Python might add, empty
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            node._fields = tuple(node._fields) + ("future_field",)
            node.future_field = []
    assert cache._canonical(tree) == cache._canonical(bare) == cache._canonical(extra)
    assert "type_params" not in cache._canonical(tree) and "kind" not in cache._canonical(tree)
    assert cache._canonical(tree) != cache._canonical(ast.parse(source.replace("scale=None", "scale=1")))
