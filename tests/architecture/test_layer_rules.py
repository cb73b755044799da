"""Layer rules, read from the package's source with ``ast``.

- Taichi's internals (``taichi.lang``, ``taichi._lib``, underscore attributes of Taichi objects)
  are used only in :mod:`graphlab.bridge`, so a Taichi upgrade touches that package only;
- no graphlab module takes another module's ``_private`` names: by import, or as an attribute of
  a module or object imported from another graphlab module (that check is best effort: it follows
  imported names, parameters annotated with an imported class and names assigned from one).

Each checker returns ``path:line: what`` per offender; the negative tests feed them snippets.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphlab
from graphlab.core.errors import GraphError, KernelError

PACKAGE = Path(graphlab.__file__).resolve().parent
REPO = PACKAGE.parent
BRIDGE = PACKAGE / "bridge"
TAICHI_INTERNAL = ("taichi.lang", "taichi._lib")
#: Attributes Taichi's decorators set on the functions they wrap (taichi/lang/kernel_impl.py).
TAICHI_MARKERS = frozenset({"_primal", "_is_wrapped_kernel", "_is_classkernel", "_is_taichi_function"})
#: (path relative to the repository, attribute) pairs let through by check (c). Empty: the last
#: ones (``compiled._ti_graph`` in debug/session.py and debug/segments.py) went with the
#: control-flow redesign. Add an entry only with a comment saying who removes it, and when.
ALLOWED_PRIVATE_ATTRIBUTES: frozenset[tuple[str, str]] = frozenset()


# ---------------------------------------------------------------- helpers
def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _is_submodule(dotted: str) -> bool:
    path = REPO.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The module a ``from ... import`` reads from, relative imports resolved."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _in_package(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _private_module_problem(dotted: str, importer: str) -> str | None:
    """A private module (``graphlab.deploy._child``) may be used inside its own package only."""
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        owner = ".".join(parts[:i])
        if _private(part) and not _in_package(importer, owner):
            return f"{'.'.join(parts[: i + 1])} is private to {owner}"
    return None


def _by_line(hits: list[str]) -> list[str]:
    return sorted(dict.fromkeys(hits), key=lambda s: int(s.split(":")[1]))


def _modules() -> Iterator[tuple[Path, str, bool]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        is_package = rel.name == "__init__"
        parts = rel.parts[:-1] if is_package else rel.parts
        yield path, ".".join(parts), is_package


# ---------------------------------------------------------------- (a) Taichi internals
def _internal(dotted: str) -> bool:
    return any(dotted == p or dotted.startswith(p + ".") for p in TAICHI_INTERNAL)


def taichi_internal_uses(source: str, filename: str) -> list[str]:
    """Imports of ``taichi.lang``/``taichi._lib``, ``ti.lang``/``ti._x`` chains, Taichi's marker attributes."""
    tree = ast.parse(source, filename)
    taichi_names = {"ti", "taichi"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            taichi_names |= {a.asname for a in node.names if a.name == "taichi" and a.asname}
    out = []

    def flag(node: ast.AST, what: str) -> None:
        out.append(f"{filename}:{node.lineno}: {what}")  # type: ignore[attr-defined]

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _internal(alias.name):
                    flag(node, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names:
                if _internal(node.module) or _internal(f"{node.module}.{alias.name}"):
                    flag(node, f"from {node.module} import {alias.name}")
        elif isinstance(node, ast.Call):
            name = _dotted(node.func) or ""
            first = node.args[0] if node.args else None
            text = first.value if isinstance(first, ast.Constant) else None
            if name.rsplit(".", 1)[-1] in ("import_module", "__import__") and isinstance(text, str) and _internal(text):
                flag(node, f"{name}({text!r})")
            marker = node.args[1] if len(node.args) > 1 else None
            marker_name = marker.value if isinstance(marker, ast.Constant) else None
            if name in ("getattr", "hasattr", "setattr") and marker_name in TAICHI_MARKERS:
                flag(node, f"{name}(..., {marker_name!r}): a Taichi marker attribute")
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id in taichi_names:
                if node.attr == "lang" or _private(node.attr):
                    flag(node, f"{node.value.id}.{node.attr}")
            elif node.attr in TAICHI_MARKERS:
                flag(node, f".{node.attr}: a Taichi marker attribute")
    return _by_line(out)


def test_taichi_internals_are_used_only_in_the_bridge():
    offenders = [
        hit
        for path, _, _ in _modules()
        if BRIDGE not in path.parents
        for hit in taichi_internal_uses(path.read_text(), str(path.relative_to(REPO)))
    ]
    assert not offenders, "Taichi internals outside graphlab/bridge/:\n" + "\n".join(offenders)


def test_taichi_internal_check_flags_every_form():
    source = """
import taichi as tai
import taichi.lang.impl
from taichi.lang import impl
from taichi import _lib, lang
from taichi.types import ndarray_type
import importlib

def f(k):
    importlib.import_module("taichi._lib.core")
    tai.lang.impl.get_runtime()
    tai._snode
    print(tai.__version__, ndarray_type)
    return getattr(k, "_is_wrapped_kernel", False), k._primal
"""
    hits = taichi_internal_uses(source, "x.py")
    assert [h.split(":")[1] for h in hits] == ["3", "4", "5", "5", "10", "11", "12", "14", "14"], hits
    assert "x.py:3: import taichi.lang.impl" in hits


# ---------------------------------------------------------------- (b) private names by import
def private_imports(source: str, filename: str, module: str, *, is_package: bool = False) -> list[str]:
    """``from graphlab.x import _name`` (and private modules used outside their package)."""
    out = []
    for node in ast.walk(ast.parse(source, filename)):
        found: list[str] = []
        if isinstance(node, ast.Import):
            found = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            if not _in_package(base, "graphlab"):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if _private(alias.name) and not _is_submodule(full) and base != module:
                    out.append(f"{filename}:{node.lineno}: from {base} import {alias.name}: a private name")
                found.append(full if _is_submodule(full) else base)
        for dotted in found:
            problem = _private_module_problem(dotted, module) if _in_package(dotted, "graphlab") else None
            if problem:
                out.append(f"{filename}:{node.lineno}: {problem}")
    return _by_line(out)


def test_no_module_imports_another_modules_private_names():
    offenders = [
        hit
        for path, module, is_package in _modules()
        for hit in private_imports(path.read_text(), str(path.relative_to(REPO)), module, is_package=is_package)
    ]
    assert not offenders, "private names imported across modules:\n" + "\n".join(offenders)


def test_private_import_check_flags_names_and_private_modules():
    source = """
from graphlab.run.compiled import _build, CompiledGraph
from ..model.graph import _parse_dtype
from graphlab.deploy._child import run_watched
from graphlab._version import __version__
from . import _helper
from taichi.lang import _wrap_inspect
"""
    hits = private_imports(source, "graphlab/debug/x.py", "graphlab.debug.x")
    assert hits == [
        "graphlab/debug/x.py:2: from graphlab.run.compiled import _build: a private name",
        "graphlab/debug/x.py:3: from graphlab.model.graph import _parse_dtype: a private name",
        "graphlab/debug/x.py:4: graphlab.deploy._child is private to graphlab.deploy",
        "graphlab/debug/x.py:6: from graphlab.debug import _helper: a private name",
    ]
    # the package's own modules may use its private module
    assert private_imports(source.splitlines()[3], "e.py", "graphlab.deploy.exporter") == []


# ---------------------------------------------------------------- (c) private attributes
def _graphlab_imports(tree: ast.AST, module: str, is_package: bool) -> tuple[dict[str, str], set[str]]:
    """Local name -> the graphlab module it comes from (the module itself for a module), and which are modules."""
    names: dict[str, str] = {}
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _in_package(alias.name, "graphlab"):
                    local = alias.asname or alias.name.split(".")[0]
                    names[local] = alias.name if alias.asname else "graphlab"
                    modules.add(local)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            if _in_package(base, "graphlab"):
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    local = alias.asname or alias.name
                    names[local] = full if _is_submodule(full) else base
                    if _is_submodule(full):
                        modules.add(local)
    return names, modules


def _annotation_names(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval")
        except SyntaxError:
            return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Owners:
    """Which graphlab module a name, an attribute chain or a call result belongs to (best effort)."""

    def __init__(self, tree: ast.AST, module: str, is_package: bool) -> None:
        self.imported, self.modules = _graphlab_imports(tree, module, is_package)
        self.attrs: dict[str, str] = {}  # attribute declared with an imported class: `graph: Graph`
        for node in ast.walk(tree):
            if isinstance(node, ast.AnnAssign):
                target = node.target
                name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
                owner = self.of_annotation(node.annotation)
                if name and owner:
                    self.attrs[name] = owner

    def of_annotation(self, annotation: ast.AST | None) -> str | None:
        owners = {self.imported[n] for n in _annotation_names(annotation) if n in self.imported}
        return owners.pop() if len(owners) == 1 else None

    def of(self, node: ast.AST, local: dict[str, str]) -> str | None:
        if isinstance(node, ast.Call):
            node = node.func
        dotted = _dotted(node)
        if dotted is None:
            return None
        root, *rest = dotted.split(".")
        owner = local.get(root) or self.imported.get(root)
        is_module = root not in local and root in self.modules
        for part in rest:
            if owner is not None and is_module and _is_submodule(f"{owner}.{part}"):
                owner = f"{owner}.{part}"  # still a module
            elif part in self.attrs:
                owner, is_module = self.attrs[part], False
            elif is_module:
                is_module = False  # a class or function of that module: its attributes are the module's
            else:
                owner = None  # an attribute of an object of unknown type
        return owner


def private_attribute_uses(source: str, filename: str, module: str, *, is_package: bool = False) -> list[str]:
    """``x._name`` where ``x`` is a module, class or object from another graphlab module (best effort).

    ``x`` is followed through imports, parameters and attributes annotated with an imported class,
    and local names assigned from any of those.
    """
    tree = ast.parse(source, filename)
    owners = _Owners(tree, module, is_package)
    out = []

    def scan(body: ast.AST, local: dict[str, str]) -> None:
        for node in ast.walk(body):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            owner = owners.of(node.value, local)
            if owner is None or owner == module:
                continue
            if _is_submodule(f"{owner}.{node.attr}") and _in_package(module, owner):
                continue
            if (filename, node.attr) not in ALLOWED_PRIVATE_ATTRIBUTES:
                out.append(f"{filename}:{node.lineno}: {_dotted(node) or node.attr} is private to {owner}")

    def typed_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> dict[str, str]:
        local: dict[str, str] = {}
        args = fn.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            owner = owners.of_annotation(arg.annotation)
            if owner:
                local[arg.arg] = owner
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, owner = node.targets[0], owners.of(node.value, local)
                if owner and isinstance(target, ast.Name):
                    local[target.id] = owner
                elif owner and isinstance(target, ast.Attribute):  # self.graph = graph
                    owners.attrs[target.attr] = owner
        return local

    functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
    for fn in functions:  # first pass: learn the attributes assigned from typed values
        typed_locals(fn)
    scan(tree, {})
    for fn in functions:
        scan(fn, typed_locals(fn))
    return _by_line(out)


def test_no_module_reads_another_modules_private_attributes():
    offenders = [
        hit
        for path, module, is_package in _modules()
        for hit in private_attribute_uses(path.read_text(), str(path.relative_to(REPO)), module, is_package=is_package)
    ]
    assert not offenders, "private attributes read across modules:\n" + "\n".join(offenders)


def test_private_attribute_check_follows_modules_classes_and_objects():
    source = """
from graphlab.run import compiled
from graphlab.model.graph import Graph
import graphlab.deploy

def run(c: "compiled.CompiledGraph", g: Graph | None, n: int):
    c._ti_graph.run({})
    compiled._build(g)
    g._cache.clear()
    h = Graph("h")
    h._new_sequence()
    graphlab.deploy.exporter._plan()
    n._private
    s = State()
    s.graph._containment()
    f = s.graph
    f._container(None)
    return g.public._x, compiled.__name__, lambda: s.graph._cache

class State:
    graph: Graph

class Other:
    def __init__(self, g: Graph):
        self.held = g

    def use(self):
        return self.held._cache
"""
    hits = private_attribute_uses(source, "graphlab/debug/x.py", "graphlab.debug.x")
    assert [h.split(":")[1] for h in hits] == ["7", "8", "9", "11", "12", "15", "17", "18", "28"], hits
    assert "graphlab/debug/x.py:8: compiled._build is private to graphlab.run.compiled" in hits
    # a module's own private names, and a package's private submodules inside the package, are fine
    own = "from graphlab.deploy import _child\nimport graphlab.deploy\ngraphlab.deploy._child.run()\n"
    assert private_attribute_uses(own, "e.py", "graphlab.deploy.exporter") == []
    assert private_attribute_uses(own, "w.py", "graphlab.widget.export_panel") == [
        "w.py:3: graphlab.deploy._child is private to graphlab.deploy"
    ]


# ---------------------------------------------------------------- what replaced the private uses
def test_kernel_parameters_refuse_what_is_not_a_kernel():
    from graphlab.bridge.types import kernel_parameters

    def plain(x):
        return x

    with pytest.raises(KernelError, match=r"plain' is not a @ti\.kernel; decorate it with @ti\.kernel"):
        kernel_parameters(plain)


def test_to_numpy_dtype_follows_the_taichi_dtype():
    import numpy as np
    import taichi as ti

    from graphlab.bridge.types import to_numpy_dtype

    assert [to_numpy_dtype(t) for t in (ti.f16, ti.u8, ti.i64)] == [np.float16, np.uint8, np.int64]
    with pytest.raises(GraphError, match="not a Taichi primitive type"):
        to_numpy_dtype(ti.types.vector(2, ti.f32))


def test_graph_sequence_goes_into_a_sequence_under_its_own_use_name():
    # the public form of what the graph-file loader did with Graph._new_sequence
    g = graphlab.Graph("g")
    with g.sequence("outer") as outer:
        inner = g.sequence("inner", 3, into=outer, use_name="thrice")
    assert inner.id == "outer/thrice"
    assert g.node("outer/thrice").repeat == 3


def test_graph_cached_keeps_a_value_until_the_next_edit():
    # the public form of what data flow did with Graph._cache
    g = graphlab.Graph("g")
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    assert (g.cached("test:n", compute), g.cached("test:n", compute)) == (1, 1)
    g.scalar("a", "f32")
    assert g.cached("test:n", compute) == 2
