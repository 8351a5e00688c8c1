"""The notebook's one namespace, as the tests in the grader see it.

In the notebook, the student's cells and the tests share one namespace.  In the
re-check the student's names live in the student's process and the tests run
in the grader, so this module joins the two back into one, by execution, not
by syntax (a name bound in a loop, by ``global`` in a function, by ``exec`` is
a name like any other):

* a name a test reads that the instructor's code did not bind is looked up in
  the student's process when it is read (:class:`TestGlobals`), so a test sees
  the student's current value even after a call that changed it;
* a name a test binds is the test's: if the student's process held one of that
  name, it is deleted there, and the student's code reading it gets the test's
  value, lent (:meth:`TestNamespace.lend`);
* a name the student's code binds later (in a cell, or by ``global`` in a
  call) is the student's again (:meth:`TestNamespace.names_changed`).

Some names are the instructor's whatever the student's code does
(:attr:`TestNamespace.protected`): what the setup cells bind, the modules the
instructor's cells import (a test's ``np`` is never the student's), the
hidden tests' ``reference`` and ``grading_rng``, and Python's builtins.  And
some values are never lent to the student's code: the grader's own names, and
what a test computed from the reference solution (:func:`tainted_names`), so
that no student's code can read a hidden test's expected values.
"""

from __future__ import annotations

import ast
import builtins
import re

from .. import instructor_code
from .transport import LendRefused

#: IPython's names for a shell's history (``_3``, ``_i3`` too): a test that reads one gets the student's shell's
IPYTHON_NAMES = re.compile(r"In|Out|_{1,3}|_i{1,3}|_ih|_oh|_dh|_\d+|_i\d+")
BUILTIN_NAMES = frozenset(vars(builtins))
#: The names through which a test's expected values are the reference solution's
SECRET_SOURCES = frozenset({"reference"})


class TestGlobals(dict):
    """The test cells' globals: the instructor's names are entries; a name that is not one is looked up
    in the student's process (``__missing__``, which Python calls for a dict subclass's globals too)."""

    def __init__(self, names: "TestNamespace", *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._names = names

    def __missing__(self, key):
        return self._names.student_value(key)

    def __contains__(self, key):
        return dict.__contains__(self, key) or self._names.student_holds(key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self):
        return list(dict.keys(self)) + sorted(self._names.student_names() - set(dict.keys(self)))

    def __iter__(self):
        return iter(self.keys())


class TestNames(dict):
    """A test cell's top-level names (exec's locals): reads, writes and ``del`` go to the one namespace.

    (The dictionary itself stays empty: exec goes through these methods for a
    mapping that is not exactly a dict.)
    """

    def __init__(self, names: "TestNamespace"):
        super().__init__()
        self._names = names

    def __getitem__(self, key):
        return self._names.globals[key]

    def __contains__(self, key):
        return key in self._names.globals

    def keys(self):         # what ``dir()`` lists, as the notebook's shell would
        return self._names.globals.keys()

    def __iter__(self):
        return iter(self.keys())

    def __setitem__(self, key, value):
        self._names.bind(key, value)

    def __delitem__(self, key):
        self._names.unbind(key)


class TestNamespace:
    """The names of the notebook as the grader's tests see them (see the module's docstring)."""

    def __init__(self, process, base: dict):
        self.process = process
        self.globals = TestGlobals(self, base)
        self.protected: set = set(base)       # the instructor's, whatever the student's code binds
        self.grader_only: set = set()         # never lent: the grader's own (reference, grading_rng)
        self.test_bound: set = set()          # bound by a test; the student's later binding replaces it
        self.held: set = set()                # bound in the student's process by the student's code
        self.cache: dict = {}                 # name -> the value read from the student's process
        self.tainted: set = set()             # computed from the reference solution: never lent
        self.reading = False                  # a test is running: the student's names can be read
        self.deadline = 0.0
        process.sharing.on_names = self.names_changed
        process.lender = self.lend

    # -- the grader's own names ----------------------------------------------------------------------

    def run_instructor_code(self, code, *, protect: bool) -> None:
        """Run a setup cell (``protect``: the names it binds are the instructor's) in the namespace."""
        before = {name: id(value) for name, value in dict.items(self.globals)}
        try:
            exec(code, self.globals)
        finally:
            bound = {name for name, value in dict.items(self.globals) if before.get(name) != id(value)}
            if protect:
                self.protected |= bound

    def give(self, names: dict, *, grader_only: bool = False) -> None:
        """Names the grader gives the tests (the instructor's imports; ``grader_only``: the hidden tests'
        ``reference`` and ``grading_rng``): the instructor's, whatever the student binds."""
        for name, value in names.items():
            dict.__setitem__(self.globals, name, value)
            self.cache.pop(name, None)
        self.protected |= set(names)
        if grader_only:
            self.grader_only |= set(names)

    # -- the student's names, read by a test ---------------------------------------------------------

    def student_holds(self, name: str) -> bool:
        return self.reading and name in self.held and name not in self.protected

    def student_names(self) -> set:
        return {name for name in self.held if name not in self.protected} if self.reading else set()

    def student_value(self, name: str):
        """The student's current value of ``name``; KeyError if the student's process has none."""
        if (not self.reading or type(name) is not str or name in self.protected or name in BUILTIN_NAMES
                or not (name in self.held or IPYTHON_NAMES.fullmatch(name))):
            raise KeyError(name)
        if name not in self.cache:
            self.read_from_student([name])
        if name not in self.cache:
            raise KeyError(name)
        return self.cache[name]

    def read_from_student(self, names) -> None:
        """Read ``names`` from the student's process in one request (those it holds)."""
        wanted = sorted({name for name in names if name not in self.cache and name not in self.protected
                         and (name in self.held or IPYTHON_NAMES.fullmatch(name))})
        if wanted:
            self.cache.update(self.process.describe(wanted, self.deadline))

    def names_changed(self, changes) -> None:
        """The student's code bound or deleted these names (reported by its process): reads see the change,
        and a name it bound again after a test bound it is the student's again, as in the notebook."""
        for name, bound in changes:
            self.cache.pop(name, None)
            if bound:
                self.held.add(name)
                if name in self.test_bound and name not in self.protected:
                    dict.pop(self.globals, name, None)
                    self.test_bound.discard(name)
            else:
                self.held.discard(name)

    def forget_read_values(self) -> None:
        """A new test: values read for the last one are read again (handles stay: they are live)."""
        from .transport import Remote

        self.cache = {name: value for name, value in self.cache.items() if type(value) is Remote}

    # -- a test's own names ----------------------------------------------------------------------------

    def bind(self, name: str, value) -> None:
        """A test binds ``name``: the test's from now on, in both processes (deleted in the student's,
        where it is lent from here if the student's code reads it)."""
        dict.__setitem__(self.globals, name, value)
        self.cache.pop(name, None)
        if name not in self.protected:
            self.test_bound.add(name)
        if name in self.held or name in self.process.lent:
            self.held.discard(name)
            self.process.forget([name], self.deadline)

    def unbind(self, name: str) -> None:
        """A test's ``del name``: gone from both processes, as from the notebook's one namespace."""
        here = dict.__contains__(self.globals, name)
        there = name in self.held or name in self.process.lent
        if not here and not there:
            raise KeyError(name)
        if here:
            dict.__delitem__(self.globals, name)
            self.test_bound.discard(name)
        self.cache.pop(name, None)
        if there:
            self.held.discard(name)
            self.process.forget([name], self.deadline)

    def lend(self, name: str):
        """The value of ``name`` for the student's code, which read it and lacks it (KeyError: none to lend,
        as in a notebook without it; :class:`LendRefused`: the grader holds it and keeps it)."""
        import types

        if name.startswith("__") or name in self.grader_only or not dict.__contains__(self.globals, name):
            raise KeyError(name)
        value = dict.__getitem__(self.globals, name)
        if name in self.tainted and not isinstance(value, types.ModuleType):
            raise LendRefused("which the test computes from the reference solution (the grader does not give "
                              "a hidden test's expected values to the student's code)")
        return value

    def values_of_tainted_names(self) -> list:
        """The objects the tainted names hold now (a call may not change them in place)."""
        return [dict.__getitem__(self.globals, name) for name in self.tainted
                if dict.__contains__(self.globals, name)]


# -- what a cell binds, and what of it is the reference solution's ---------------------------------------

def bound_names(source: str) -> set[str]:
    """Every name a cell binds in its namespace (targets, loops, ``with``, ``except``, imports, walrus,
    ``def``/``class``), not counting names local to the functions it defines."""
    tree = instructor_code.parse(source)
    return set() if tree is None else set().union(*(_binds(statement) for statement in tree.body))


def tainted_names(source: str, tainted: set[str]) -> set[str]:
    """The names that hold the reference solution's values after ``source`` runs, given ``tainted`` before.

    A statement that reads ``reference`` or a tainted name taints every name it
    binds, changes in place (``x[i] = ...``) or fills through a method
    (``results.append(...)``), statement by statement until nothing changes
    (for loops); a name the cell binds only from untainted values is clean again.
    """
    tree = instructor_code.parse(source)
    if tree is None:
        return set(tainted)
    secret: set[str] = set()

    def reads_secret(statement) -> bool:
        return bool(_reads(statement) & (set(tainted) | secret | SECRET_SOURCES))

    for _ in range(len(tree.body) + 1):
        before = len(secret)
        for statement in tree.body:
            if reads_secret(statement):
                secret |= _binds(statement) | _filled(statement)
        if len(secret) == before:
            break
    clean = set().union(*(_binds(statement) for statement in tree.body if not reads_secret(statement)))
    return ((set(tainted) - clean) | secret) - SECRET_SOURCES


def _binds(statement) -> set[str]:
    """Names a statement binds in the cell's namespace (not inside the functions or classes it defines)."""
    names: set[str] = set()

    def visit(node, top: bool):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if top:
                names.add(node.name)
            for decorator in node.decorator_list:
                visit(decorator, False)
            return
        if isinstance(node, ast.Lambda):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        for child in ast.iter_child_nodes(node):
            visit(child, top and isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)))

    visit(statement, True)
    return names


def _filled(statement) -> set[str]:
    """Names a statement changes in place: ``x[i] = ...``, ``x.a = ...``, ``x += ...``, ``x.append(...)``."""
    names = set()
    for node in ast.walk(statement):
        target = None
        if isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            target = node.func.value
        while isinstance(target, (ast.Subscript, ast.Attribute)):
            target = target.value
        if isinstance(target, ast.Name):
            names.add(target.id)
    return names


def _reads(statement) -> set[str]:
    return {node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
