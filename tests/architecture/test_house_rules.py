"""Two shapes the package must not take again: a registry filled at import, and mixins sharing state.

A module-level statement that assigns into another module (``conveniences.USES = Uses()``) or calls
a registering method on it makes what a name means depend on which modules were imported; a class
that declares private attributes it never assigns (``_values: dict[str, Any]`` at class level) is a
mixin borrowing another class's state. Both are found by reading the source with ``ast``; each rule
is also run on a snippet that has the shape, so the scan cannot pass by finding nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import graphlab

PACKAGE = Path(graphlab.__file__).resolve().parent
REGISTERING = frozenset(("register", "append", "extend", "update", "setdefault", "add", "insert"))


def imported_names(tree: ast.Module) -> set[str]:
    """The names a module binds by importing (modules and the names taken from them)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def root_name(node: ast.expr) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def registry_fills(source: str, where: str) -> list[str]:
    """Module-level statements that assign into, or register with, a name imported from elsewhere."""
    tree = ast.parse(source)
    imported = imported_names(tree)
    found = []
    for stmt in tree.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            found += [
                f"{where}:{stmt.lineno}: assigns into {ast.unparse(t)}"
                for t in targets
                if isinstance(t, (ast.Attribute, ast.Subscript)) and root_name(t) in imported
            ]
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and func.attr in REGISTERING and root_name(func.value) in imported:
                found.append(f"{where}:{stmt.lineno}: registers with {ast.unparse(func)}")
            if isinstance(func, ast.Name) and func.id == "setattr" and root_name(stmt.value.args[0]) in imported:
                found.append(f"{where}:{stmt.lineno}: setattr on {ast.unparse(stmt.value.args[0])}")
    return found


def borrowed_state(source: str, where: str) -> list[str]:
    """Classes declaring private attributes (annotated at class level, no value) they never assign.

    That is a mixin re-declaring the state of the class it will be mixed into. Dataclasses,
    Protocols, TypedDicts and NamedTuples declare fields that way on purpose and are left out.
    """
    found = []
    for cls in ast.walk(ast.parse(source)):
        if not isinstance(cls, ast.ClassDef):
            continue
        decorators = {ast.unparse(d).split("(")[0].split(".")[-1] for d in cls.decorator_list}
        bases = {ast.unparse(b).split("[")[0].split(".")[-1] for b in cls.bases}
        if "dataclass" in decorators or bases & {"Protocol", "TypedDict", "NamedTuple"}:
            continue
        declared = {
            stmt.target.id: stmt.lineno
            for stmt in cls.body
            if isinstance(stmt, ast.AnnAssign) and stmt.value is None and isinstance(stmt.target, ast.Name)
            if stmt.target.id.startswith("_") and not stmt.target.id.startswith("__")
        }
        assigned = {
            target.attr
            for node in ast.walk(cls)
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"
        }
        found += [
            f"{where}:{line}: class {cls.name} declares {name} but never assigns it (state borrowed from another class)"
            for name, line in declared.items()
            if name not in assigned
        ]
    return found


def package_sources() -> list[tuple[str, str]]:
    return [(str(path.relative_to(PACKAGE.parent)), path.read_text()) for path in sorted(PACKAGE.rglob("*.py"))]


def test_no_module_fills_a_registry_of_another_at_import():
    found = [hit for where, source in package_sources() for hit in registry_fills(source, where)]
    assert found == []


def test_no_class_borrows_the_private_state_of_another():
    found = [hit for where, source in package_sources() for hit in borrowed_state(source, where)]
    assert found == []


def test_the_registry_rule_finds_a_registry_filled_at_import():
    source = "from graphlab.api import graph as conveniences\nimport sys\nclass Uses: ...\nconveniences.USES = Uses()\n"
    source += "sys.modules[__name__].__class__ = Uses\nconveniences.HOOKS.append(print)\nLOCAL = {}\nLOCAL['a'] = 1\n"
    assert registry_fills(source, "m.py") == [
        "m.py:4: assigns into conveniences.USES",
        "m.py:5: assigns into sys.modules[__name__].__class__",
        "m.py:6: registers with conveniences.HOOKS.append",
    ]


def test_the_mixin_rule_finds_state_declared_but_owned_elsewhere():
    source = (
        "class Running:\n    _values: dict\n    _pos: int\n    def step(self):\n        self._pos += 1\n"
        "class Owner:\n    _kept: int\n    def __init__(self):\n        self._kept = 0\n"
    )
    assert borrowed_state(source, "m.py") == [
        "m.py:2: class Running declares _values but never assigns it (state borrowed from another class)"
    ]


def test_the_public_graph_keeps_its_uses_and_the_model_knows_none():
    from graphlab.model.graph import Graph as GraphModel

    for name in ("validate", "check", "compile", "run", "debug", "render", "save", "to_code", "to_dict"):
        assert callable(getattr(graphlab.Graph, name)), name
        assert not hasattr(GraphModel, name), f"the model's Graph has {name}: it belongs above the model"
    for name in ("memory_plan", "dataflow", "_repr_mimebundle_"):
        assert callable(getattr(graphlab.Graph, name)), name
    assert issubclass(graphlab.Graph, GraphModel)


def test_a_loaded_graph_is_the_public_graph(tmp_path):
    from graphlab.api import doc_kernels

    path = tmp_path / "demo.json"
    doc_kernels.demo_graph().save(path)
    assert type(graphlab.load(path, kernels=doc_kernels)) is graphlab.Graph
    assert type(graphlab.loads(path.read_text(), kernels=doc_kernels)) is graphlab.Graph


def test_run_keeps_its_compiled_graph_out_of_the_model(ti_cpu):
    import numpy as np

    from graphlab.api import doc_kernels

    g = doc_kernels.demo_graph(repeat=1)
    y = np.zeros(2, np.float32)
    g.run(a=1.0, x=np.ones(2, np.float32), y=y)
    first = g._compiled
    g.run(a=1.0, x=np.ones(2, np.float32), y=y)
    assert g._compiled is first  # compiled once per edit and runtime
    assert not any(type(v).__name__ == "CompiledGraph" for v in vars(g).get("_cache", {}).values())
    g.rename_arg("a", "b")
    g.run(b=1.0, x=np.ones(2, np.float32), y=y)
    assert g._compiled is not first and y.tolist() == [6.0, 6.0]
