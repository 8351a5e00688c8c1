"""Train once, reuse everywhere: the one way a chapter gets a trained model.

:func:`trained_model` builds a model and trains it, or loads the weights and
the training record of an earlier run with the same key.  The key hashes the
*content* of everything the build and fit functions depend on
(:func:`content_key`): their source, the values of the names they use (data
arrays, settings, other functions, the package modules they call, recursively),
the seed and the library versions.  Change any of those and the key changes,
so a stale model is never reused; change anything else (a plotting helper, the
prose) and a re-executed chapter loads its models instead of training them.
Chapters 3 and 11 load chapter 1's translator the same way.

The cache lives in ``$ATTENTION_COURSE_CACHE`` (the book's build points it
into ``_build/``) or, by default, in ``~/.cache/attention-course``.

A model too slow to train while a chapter executes (chapter 13's GPT) goes
through the same function: a script trains it once and :func:`ship` writes
it into the package with its *recipe key* (the content key without the
library versions); ``trained_model(..., shipped=...)`` then loads it, and
refuses, naming the script to run, if the recipe has changed since.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import dis
import functools
import hashlib
import importlib
import inspect
import json
import os
import re
import shutil
import sys
import textwrap
import time
import types
from pathlib import Path

import numpy as np

from . import dependencies

PACKAGE = __name__.split(".")[0]


def cache_dir() -> Path:
    path = Path(os.environ.get("ATTENTION_COURSE_CACHE",
                               Path.home() / ".cache" / "attention-course"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def locked(folder: Path):
    """Hold an exclusive lock on the entry ``folder`` while it is looked up or made.

    The book executes two chapters at a time, and two chapters may ask for the
    same model (chapters 3 and 11 compare against chapter 1's): the second
    waits for the first to finish training and then loads its result instead
    of training it again.  Where ``fcntl`` does not exist (Windows), there is
    no lock and both train; the result is the same.
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(folder.name + ".lock"), "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def write_atomically(folder: Path, write) -> None:
    """Call ``write(tmp_folder)`` and then move the folder into place.

    A half-written entry (an interrupted build) is never mistaken for a result.
    """
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        write(tmp)
        tmp.rename(folder)
    except OSError:
        if not folder.exists():
            raise
        # another process finished the same entry first; its result is as good
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _library_versions() -> str:
    """The versions of the libraries, and which CPU kernels TensorFlow uses (oneDNN's or not)."""
    import keras
    import tensorflow

    kernels = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default")
    return f"{keras.__version__} {tensorflow.__version__} {np.__version__} oneDNN={kernels}"


class _ContentHasher:
    """Feeds a SHA-256 with what an object is and, recursively, what it depends on.

    * Plain values, containers, NumPy arrays and dataclasses: their values.
    Code counts by what it does: its syntax tree without docstrings (so a
    docstring, a comment or a blank line changes no key).

    * A module of this package: its code, and the package modules it
      imports anywhere in it (:mod:`.dependencies`, the walker the book's
      build uses too), recursively (so a model module's key covers the
      layers it imports, and an edit to a plotting module changes no model's
      key).  Other modules: their name (the library versions are part of
      every key).
    * A function or class defined outside the package (in a chapter): its
      source, its defaults and closure, and the values of the global names its
      code uses.  Defined inside the package: its module, as above, and the
      values its defaults and closure hold.
    * A Keras object: its class and configuration, and a built layer's weights.
    """

    def __init__(self):
        self.digest = hashlib.sha256()
        self.seen: set[int] = set()

    def feed(self, obj, where: str = "value") -> None:
        update = self.digest.update
        if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
            update(f"{type(obj).__name__}:{obj!r};".encode())
        elif isinstance(obj, (np.ndarray, np.generic)):
            array = np.ascontiguousarray(obj)
            update(f"array:{array.dtype.str}{array.shape};".encode())
            update(array.tobytes())
        elif isinstance(obj, (list, tuple)):
            update(f"{type(obj).__name__}[{len(obj)}](".encode())
            for i, item in enumerate(obj):
                self.feed(item, f"{where}[{i}]")
            update(b")")
        elif isinstance(obj, (set, frozenset)):
            self.feed(sorted(obj, key=repr), where)
        elif isinstance(obj, dict):
            update(b"dict(")
            for key in sorted(obj, key=repr):
                self.feed(key, where)
                self.feed(obj[key], f"{where}[{key!r}]")
            update(b")")
        elif id(obj) in self.seen:
            update(f"seen:{getattr(obj, '__qualname__', type(obj).__name__)};".encode())
        else:
            self.seen.add(id(obj))
            self._feed_object(obj, where)

    def _feed_object(self, obj, where: str) -> None:
        update = self.digest.update
        if isinstance(obj, types.ModuleType):
            self._feed_module(obj)
        elif isinstance(obj, functools.partial):
            update(b"partial(")
            self.feed(obj.func, where)
            self.feed(obj.args, where)
            self.feed(obj.keywords, where)
            update(b")")
        elif isinstance(obj, types.MethodType):
            self.feed(obj.__func__, where)
            self.feed(obj.__self__, where)
        elif isinstance(obj, (types.FunctionType, type)):
            module = sys.modules.get(getattr(obj, "__module__", None) or "")
            if _in_package(module) or (module is not None and not _defined_here(module)):
                update(f"{getattr(obj, '__module__', '')}.{obj.__qualname__};".encode())
                if module is not None:
                    self.feed(module, where)
                if isinstance(obj, types.FunctionType) and _in_package(module):
                    self._feed_bindings(obj, where)  # a closure made by package code
            else:
                self._feed_source(obj, where)
        elif dataclasses.is_dataclass(obj):
            update(f"dataclass:{type(obj).__module__}.{type(obj).__qualname__}(".encode())
            self.feed(type(obj), where)
            for field in dataclasses.fields(obj):
                self.feed(field.name)
                self.feed(getattr(obj, field.name), f"{where}.{field.name}")
            update(b")")
        elif type(obj).__module__.split(".")[0] == "keras" and hasattr(obj, "get_config") \
                or _in_package(sys.modules.get(type(obj).__module__)):
            self._feed_keras(obj, where)
        elif isinstance(obj, (types.BuiltinFunctionType, np.ufunc)):
            update(f"library:{getattr(obj, '__module__', '')}.{obj.__name__};".encode())
        else:
            raise TypeError(f"cannot key {where} (a {type(obj).__qualname__}) by its content: "
                            "pass the settings it stands for in `config` instead")

    def _feed_module(self, module) -> None:
        self.digest.update(f"module:{module.__name__};".encode())
        if not _in_package(module):
            return
        source = inspect.getsource(module)
        self.digest.update(_code(source).encode())
        imported = dependencies.imported_modules(source, module.__name__, hasattr(module, "__path__"))
        for name in sorted(imported):
            self.feed(importlib.import_module(name), f"{module.__name__} imports {name}")

    def _feed_source(self, function, where: str) -> None:
        """A function or class from a chapter: its code and everything its code names."""
        try:
            source = inspect.getsource(function)
        except (OSError, TypeError) as error:
            raise TypeError(f"cannot read the source of {where} ({function.__qualname__}): {error}") from None
        self.digest.update(_code(source).encode())
        if isinstance(function, type):
            return
        self._feed_bindings(function, where)
        for name in sorted(_names_used(function.__code__)):
            if name in function.__globals__:
                self.feed(name)
                self.feed(function.__globals__[name], f"{function.__qualname__}: {name}")

    def _feed_bindings(self, function, where: str) -> None:
        """A function's defaults and the values its closure holds."""
        self.feed(function.__defaults__, f"{where} defaults")
        self.feed(function.__kwdefaults__, f"{where} keyword defaults")
        for name, cell in zip(function.__code__.co_freevars, function.__closure__ or ()):
            self.feed(cell.cell_contents, f"{function.__qualname__}: {name}")

    def _feed_keras(self, obj, where: str) -> None:
        self.digest.update(f"object:{type(obj).__module__}.{type(obj).__qualname__};".encode())
        self.feed(type(obj), where)
        if hasattr(obj, "get_config"):
            try:
                config = obj.get_config()
            except (NotImplementedError, TypeError):  # a subclassed model without one
                config = {}
            self.digest.update(json.dumps(config, sort_keys=True, default=_stable_repr).encode())
        for i, weight in enumerate(getattr(obj, "weights", None) or ()):
            self.feed(np.asarray(weight), f"{where}.weights[{i}]")
        if not hasattr(obj, "get_config"):  # an instance of a plain class of the package
            self.feed(vars(obj), where)


def _code(source: str) -> str:
    """``source``'s syntax tree without docstrings, as text (:func:`_canonical`); the source itself if
    it does not parse alone."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:  # e.g. a lambda cut out of a longer line
        return source
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return _canonical(tree)


def _canonical(node) -> str:
    """A syntax tree as text that reads the same on every Python from 3.10 on.

    ``ast.dump`` does not: Python 3.12 added fields that are almost always
    empty (``type_params``), and 3.13 stopped printing empty fields, so the
    same code dumped differently there and a shipped run's key no longer
    matched.  Here a field that is ``None`` or empty is always left out.
    """
    if isinstance(node, ast.AST):
        fields = []
        for name in node._fields:
            value = getattr(node, name, None)
            if value is not None and not (isinstance(value, list) and not value):
                fields.append(f"{name}={_canonical(value)}")
        return f"{type(node).__name__}({', '.join(fields)})"
    if isinstance(node, list):
        return "[" + ", ".join(_canonical(item) for item in node) + "]"
    return repr(node)


def _stable_repr(obj) -> str:
    """``repr`` without memory addresses, which differ from one process to the next."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(obj))


def _in_package(module) -> bool:
    return module is not None and module.__name__.split(".")[0] == PACKAGE


def _defined_here(module) -> bool:
    """A chapter's (or a test's) own namespace, as opposed to an installed library."""
    if module is None or module.__name__ == "__main__":
        return True
    path = getattr(module, "__file__", None)
    if path is None:  # built into the interpreter
        return False
    return "site-packages" not in path and not path.startswith(sys.base_prefix)


#: the instructions that read or write a module-level name (``co_names`` also holds
#: attribute and method names, which are not the chapter's variables: ``train.images``
#: does not make a global called ``images`` part of the key)
_GLOBAL_NAME_OPS = {"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"}


def _names_used(code) -> set[str]:
    """The global names ``code`` (and the functions and classes nested in it) reads or writes."""
    names = {instruction.argval for instruction in dis.get_instructions(code)
             if instruction.opname in _GLOBAL_NAME_OPS}
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names_used(constant)
    return names


def content_key(*objects, versions: bool = True) -> str:
    """A short hash of ``objects`` and of everything they depend on (see :class:`_ContentHasher`).

    With ``versions``, also of the keras, tensorflow and numpy versions.
    """
    hasher = _ContentHasher()
    for i, obj in enumerate(objects):
        hasher.feed(obj, f"argument {i}")
    if versions:
        hasher.digest.update(_library_versions().encode())
    return hasher.digest.hexdigest()[:16]


@dataclasses.dataclass
class TrainedModel:
    """What :func:`trained_model` returns.

    Attributes:
        model: the trained Keras model.
        record: what ``fit(model)`` returned (JSON values and NumPy arrays).
        seconds: how long ``fit`` took when it ran (on this machine or the one
            that filled the cache).
        cached: whether the model was loaded instead of trained.
        recipe_key: the content key of the recipe without the library versions
            (what :func:`ship` records).
    """

    model: object
    record: dict
    seconds: float
    cached: bool
    recipe_key: str = ""


class StaleShippedRun(RuntimeError):
    """The shipped weights were trained by another recipe than the code asks for now."""


@dataclasses.dataclass(frozen=True)
class ShippedRun:
    """A run trained once by a script and shipped inside the package.

    ``weights_file``: a ``.npz`` of float16 arrays keyed by Keras variable path;
    ``record_file``: JSON with ``recipe_key``, ``seconds`` and the run's record;
    ``script``: the command that trains and ships it again.
    """

    weights_file: Path
    record_file: Path
    script: str

    def read_record(self) -> dict:
        return json.loads(Path(self.record_file).read_text())

    def load_into(self, model) -> None:
        """Assign the shipped weights (widened to float32) to ``model``'s variables, by path."""
        with np.load(self.weights_file) as arrays:
            stored, expected = set(arrays.files), {variable.path for variable in model.weights}
            if stored != expected:
                raise ValueError(f"{self.weights_file} does not match the model: missing "
                                 f"{sorted(expected - stored)}, unexpected {sorted(stored - expected)}")
            for variable in model.weights:
                variable.assign(arrays[variable.path].astype(np.float32))


def ship(run: "TrainedModel", shipped: ShippedRun, extra: dict | None = None) -> None:
    """Write ``run`` as ``shipped`` describes: float16 weights, and its record with its recipe key."""
    arrays = {variable.path: np.asarray(variable.numpy(), dtype=np.float16) for variable in run.model.weights}
    if len(arrays) != len(run.model.weights):
        raise ValueError("two of the model's variables share a path")
    if any(isinstance(v, np.ndarray) for v in run.record.values()):
        raise TypeError("a shipped record holds JSON values only")
    Path(shipped.weights_file).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(shipped.weights_file, **arrays)
    record = {"recipe_key": run.recipe_key, "seconds": run.seconds, **run.record, **(extra or {})}
    Path(shipped.record_file).write_text(json.dumps(record, indent=1) + "\n")


def trained_model(name: str, build, fit, *, example=None, config=None,
                  seed: int | None = None, shipped: ShippedRun | None = None) -> TrainedModel:
    """Build ``build()`` and train it with ``fit(model)``, or load the run with the same key.

    ``fit`` compiles and trains the model it is given and returns a dict of
    what the chapter wants to keep besides the weights (a history, losses,
    scores: JSON values or NumPy arrays).  ``example`` is an input to call the
    model on once, to create its weights, where ``build`` does not.
    ``config`` holds whatever else the result depends on that the two
    functions' code and the values they name do not show.  ``seed`` (default:
    the course seed) seeds Keras before ``build`` and again after training or
    loading, so that what a chapter does next is the same either way.

    The key is :func:`content_key` of ``name``, both functions, ``config``
    and the seed.  A second process asking for the same key while the first
    trains waits and loads its result.

    With ``shipped``, nothing is trained: the shipped run is loaded if it was
    trained by this recipe (same key without the library versions), and
    :class:`StaleShippedRun` names the script to run if it was not.
    """
    import keras

    from ..seeding import course_seed

    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"name must be a non-empty string without '/', got {name!r}")
    seed = course_seed() if seed is None else seed
    recipe_key = content_key(name, build, fit, config, seed, versions=False)
    if shipped is not None:
        record = shipped.read_record()
        if record.get("recipe_key") != recipe_key:
            raise StaleShippedRun(
                f"{name}: {shipped.weights_file} was trained by another recipe (key "
                f"{record.get('recipe_key')}, the code's is {recipe_key}): run `{shipped.script}` "
                "to train and ship it again, or undo the change to the code it depends on")
    folder = cache_dir() / f"{name}-{content_key(name, build, fit, config, seed)}"
    keras.utils.set_random_seed(seed)
    model = build()
    if not model.built or not model.weights:
        if example is None:
            raise ValueError(f"{name}: build() returned a model without weights; pass `example`, "
                             "an input to call it on once")
        model(example)
    if shipped is not None:
        shipped.load_into(model)
        keras.utils.set_random_seed(seed)
        return TrainedModel(model, record, record["seconds"], True, recipe_key)
    with locked(folder):
        cached = folder.exists()
        if not cached:
            started = time.perf_counter()
            record = fit(model)
            seconds = time.perf_counter() - started
            if not isinstance(record, dict):
                raise TypeError(f"{name}: fit must return a dict of results, got {type(record).__name__}")
            cache_write = functools.partial(_write_run, model=model, record=record, seconds=seconds)
            write_atomically(folder, cache_write)
    if cached:
        model.load_weights(folder / "model.weights.h5")
        record, seconds = _read_run(folder)
    keras.utils.set_random_seed(seed)
    return TrainedModel(model, record, seconds, cached, recipe_key)


def _write_run(folder: Path, model, record: dict, seconds: float) -> None:
    arrays = {k: v for k, v in record.items() if isinstance(v, np.ndarray)}
    values = {k: v for k, v in record.items() if k not in arrays}
    try:
        text = json.dumps({"seconds": seconds, "record": values}, indent=1)
    except TypeError as error:
        raise TypeError(f"fit's record must hold JSON values or NumPy arrays: {error}") from None
    model.save_weights(folder / "model.weights.h5")
    (folder / "run.json").write_text(text)
    np.savez_compressed(folder / "arrays.npz", **arrays)


def _read_run(folder: Path) -> tuple[dict, float]:
    run = json.loads((folder / "run.json").read_text())
    with np.load(folder / "arrays.npz") as arrays:
        record = {**run["record"], **{k: arrays[k] for k in arrays.files}}
    return record, run["seconds"]
