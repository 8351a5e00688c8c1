"""No import cycle anywhere in the tree: each module can be understood, and imported, before those that use it.

The graph is read from the source (every ``import`` and ``from ... import``, at
the top of a module or inside a function: a deferred import is still a
dependency), over the project's own code: the course package, the grader, the
authoring tools, the scripts, the book's extension and the benchmarks.  An
import of ``a.b.c`` also depends on the packages ``a`` and ``a.b`` (Python runs
their ``__init__`` first), except those the importing module is itself inside.
Folders that are not packages (``scripts/``, ``book/_ext/``) import their
neighbours by bare name.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = ["attention_course", "course_grader", "course_authoring", "book_build", "scripts", "book/_ext", "benchmarks"]


def project_modules() -> dict[str, Path]:
    """``{dotted name: file}`` of every module of :data:`TREES` (a package by its ``__init__``)."""
    modules: dict[str, Path] = {}
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if (ROOT / parts[0] / "__init__.py").is_file():
                modules[".".join(parts)] = path
            else:       # a folder of scripts: its files import each other by their bare names
                modules.setdefault(parts[-1], path)
    return modules


def imported_names(path: Path, name: str) -> set[str]:
    """Every dotted name ``path`` (module ``name``) imports, relative imports made absolute."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - (node.level - 1)] if package else []
                base = ".".join(base + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from package import module` imports the module; `from module import name` the module
            found.update(f"{base}.{alias.name}" if base else alias.name for alias in node.names)
            found.add(base)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    graph = {}
    for name, path in modules.items():
        edges = set()
        for target in imported_names(path, name):
            parts = target.split(".")
            known = next((".".join(parts[:cut]) for cut in range(len(parts), 0, -1)
                          if ".".join(parts[:cut]) in modules), None)
            if known is None or modules[known] == path:
                continue
            edges.add(known)
            # its parent packages run first, unless this module is inside them
            for cut in range(1, len(known.split("."))):
                parent = ".".join(known.split(".")[:cut])
                if parent in modules and not (name == parent or name.startswith(parent + ".")):
                    edges.add(parent)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_tree_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 100       # the whole tree was read
    assert cycles(graph) == []


def test_the_check_finds_cycles_and_reads_deferred_imports(tmp_path):
    """The check itself: a cycle of three is found, a chain is not, and an import inside a
    function counts."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    (tmp_path / "m.py").write_text("def later():\n    from .n import x\n")
    assert imported_names(tmp_path / "m.py", "pkg.m") == {"pkg.n", "pkg.n.x"}


def test_the_grader_s_known_cycle_is_gone():
    """hidden_tests -> student_process -> mistakes -> hidden_tests (issue 57): the re-check's
    transport no longer needs the catalogue of mistakes, only the call recording."""
    graph = import_graph()
    assert "course_grader.mistakes" not in graph["course_grader.recheck.transport"]
    assert "course_grader.hidden_tests" in graph["course_grader.mistakes"]


#: The only places that put a folder on ``sys.path``: the grader making the student's own folder
#: importable to the student's code, as Jupyter does (never project code reached by path)
STUDENT_PATH_INSERTS = {"course_grader/instructor_code.py", "course_grader/sandbox.py",
                        "course_grader/recheck/student_program.py"}


def path_inserts(path: Path) -> list[int]:
    """The lines of ``path`` that call ``sys.path.insert`` or ``sys.path.append``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("insert", "append") and ast.unparse(node.func.value) == "sys.path"):
            found.append(node.lineno)
    if "sys.path.insert" in path.read_text() and not found:       # inside a string run as code (sandbox.py)
        found = [n for n, line in enumerate(path.read_text().splitlines(), 1) if "sys.path.insert" in line]
    return sorted(found)


def test_project_code_is_reached_by_import_never_by_a_path_put_on_sys_path():
    """Build code, scripts, benchmarks and the book's extensions import each other as packages
    (``book_build``, ``attention_course``); only the grader puts the *student's* folder on the path."""
    offenders = {}
    for module, path in project_modules().items():
        relative = path.relative_to(ROOT).as_posix()
        if relative not in STUDENT_PATH_INSERTS and path_inserts(path):
            offenders[relative] = path_inserts(path)
    assert offenders == {}
    assert all(path_inserts(ROOT / name) for name in STUDENT_PATH_INSERTS), "an allowed insert is gone: drop it"


def test_the_path_check_finds_an_insert_and_an_append(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("import sys\nif True:\n    sys.path.insert(0, 'x')\nsys.path.append('y')\n")
    assert path_inserts(module) == [3, 4]
    module.write_text("import sys\npaths = [1]\npaths.insert(0, 2)\n")
    assert path_inserts(module) == []
