"""One name, one meaning: no two public classes of graphlab share a name.

``Graph`` is a graph of kernels (an exported module's graph is a ``ModuleGraph``): the model's class,
and the public ``graphlab.Graph`` that subclasses it to add its uses (one concept, refined, so the
one name shared, and only as subclass and base), ``Timeline`` the debugger's
held copies (compare reads a session through a ``StepsView``), ``ReplayError`` the base of every replay
failure, and the arg a value is checked against (``runvalues.ArgLike``) is not the description of a
value (``bridge.types.ValueDescription``). The classes are read from the source, so nothing is imported.
"""

import ast
from collections import defaultdict
from pathlib import Path

import graphlab as gl

PACKAGE = Path(gl.__file__).parent


def _public_classes() -> dict[str, list[str]]:
    """Class name -> the files (relative to the repository) that define a class of that name."""
    defined: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                defined[node.name].append(path.relative_to(PACKAGE.parent).as_posix())
    return defined


def test_no_two_public_classes_share_a_name():
    shared = {name: files for name, files in _public_classes().items() if len(files) > 1}
    assert shared == {"Graph": ["graphlab/api/graph.py", "graphlab/model/graph.py"]}
    from graphlab.model.graph import Graph as GraphModel

    assert gl.Graph.__bases__ == (GraphModel,)  # the public graph is the model's, plus its uses


def test_the_names_that_had_several_meanings_have_one_home():
    defined = _public_classes()
    homes = {name: defined.get(name, []) for name in ("Graph", "ReplayError", "Timeline", "ValueSpec")}
    assert homes == {
        "Graph": ["graphlab/api/graph.py", "graphlab/model/graph.py"],
        "ReplayError": ["graphlab/core/errors.py"],
        "Timeline": ["graphlab/debug/timeline.py"],
        "ValueSpec": [],
    }
    assert {"ModuleGraph", "StepsView", "ArgLike", "ValueDescription", "RebuildError"} <= set(defined)
