"""``DebugSession`` is one class that lists every verb, over collaborators given explicit arguments.

No mixins sharing private state (issue 20, point 2): the class's only base is ``object``, no class
of the session's modules declares state it borrows or stubs another's methods, and compare's other
side for an exported module is built above the debugger (``g.debug`` gives it), not reached through
a back door into the exporter.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import graphlab.debug
from graphlab.api.doc_kernels import demo_graph
from graphlab.debug.session import DebugError, DebugSession
from graphlab.deploy.errors import ManifestError

DEBUG = Path(graphlab.debug.__file__).parent
SESSION_MODULES = sorted(DEBUG.glob("session*.py"))


def test_debug_session_has_no_base_but_object():
    assert DebugSession.__bases__ == (object,)
    assert DebugSession.__mro__ == (DebugSession, object)


def test_every_public_verb_is_defined_in_the_session_class_itself():
    tree = ast.parse((DEBUG / "session.py").read_text())
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "DebugSession")
    defined = {node.name for node in cls.body if isinstance(node, ast.FunctionDef)}
    public = {name for name in dir(DebugSession) if not name.startswith("_")}
    assert public <= defined, sorted(public - defined)
    for verb in ("step", "continue_", "back", "goto", "break_at", "watch", "inspect", "timing", "compare", "close"):
        assert verb in public


@pytest.mark.parametrize("path", SESSION_MODULES, ids=lambda p: p.name)
def test_no_session_class_borrows_state_or_stubs_methods(path):
    """A mixin declares private attributes it never sets and stubs others' methods under TYPE_CHECKING."""
    for cls in (node for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ClassDef)):
        for item in cls.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                assert not item.target.id.startswith("_"), f"{path.name}: {cls.name} declares {item.target.id}"
            if isinstance(item, ast.If):
                assert "TYPE_CHECKING" not in ast.unparse(item.test), f"{path.name}: {cls.name} stubs methods"


@pytest.mark.parametrize("path", sorted(DEBUG.glob("*.py")), ids=lambda p: p.name)
def test_the_debugger_does_not_reach_the_exporter_through_the_uses(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            assert not name.startswith(("graphlab.api.graph", "graphlab.deploy")), (
                f"{path.name} imports {name}"
            )


def test_a_session_given_no_module_runner_refuses_a_module_folder_before_running(ti_cpu, tmp_path):
    y = np.zeros(4, np.float32)
    dbg = DebugSession(demo_graph(), a=1.0, x=np.ones(4, np.float32), y=y)
    with pytest.raises(DebugError, match=r"cannot run exported modules.*module_runner="):
        dbg.compare(tmp_path)
    assert dbg.position.index == 0 and y.tolist() == [0.0] * 4


def test_g_debug_gives_the_session_the_exporters_module_runner(ti_cpu, tmp_path):
    dbg = demo_graph().debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
    with pytest.raises(ManifestError, match="pass the folder gl.export wrote"):  # the exporter read it
        dbg.compare(tmp_path)
