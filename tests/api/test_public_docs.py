"""The public API documents itself: numpydoc sections, examples that run, and help(gl.export) showing the function.

The examples themselves run as doctests (``pytest graphlab``, on the runtime the repository's
conftest.py sets up); these tests check that every public entry point has them, that its
Parameters section names each parameter, and that ``gl.export`` (the exporter's own function) reads as the
export function in ``help()`` and ``inspect.signature``.
"""

import inspect
import pydoc
import re
import subprocess
import sys

import pytest

import graphlab as gl
from graphlab.debug.session import DebugSession

PUBLIC = {
    **{f"Graph.{name}": getattr(gl.Graph, name) for name in (
        "ndarray", "scalar", "dispatch", "sequence", "validate", "check", "compile", "run", "debug", "save",
        "to_code", "render",
    )},
    **{f"gl.{name}": getattr(gl, name) for name in ("load", "loads", "export", "verify", "load_module", "editor")},
    **{f"DebugSession.{name}": getattr(DebugSession, name) for name in (
        "step", "step_over", "continue_", "back", "goto", "run_to", "break_at", "inspect", "watch", "timing",
    )},
    "DebugSession.breakpoints": DebugSession.breakpoints.fget,
}  # fmt: skip


def sections(doc: str) -> dict[str, str]:
    """A numpydoc docstring's sections by title (``Parameters``...), each the text under its underline."""
    parts = re.split(r"^(\w[\w ]*)\n-{3,}\n", doc, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def documented_names(section: str) -> set[str]:
    """Parameter names a Parameters section lists (``dims, values``, ``*args, **bindings``)."""
    names = set()
    for line in section.splitlines():
        if line and not line[0].isspace():
            names.update(part.strip().lstrip("*") for part in line.split(","))
    return names


@pytest.mark.parametrize("name", list(PUBLIC))
def test_public_callable_has_numpydoc_with_runnable_examples(name):
    doc = inspect.getdoc(PUBLIC[name]) or ""
    found = sections(doc)
    assert "Examples" in found, f"{name}: no Examples section"
    assert ">>> " in found["Examples"], f"{name}: its Examples hold no doctest"
    params = [p for p in inspect.signature(PUBLIC[name]).parameters if p != "self"]
    if params:
        assert "Parameters" in found, f"{name}: takes {params} but has no Parameters section"
        missing = set(params) - documented_names(found["Parameters"])
        assert not missing, f"{name}: Parameters does not name {sorted(missing)}"


def test_help_of_gl_export_shows_the_export_function():
    text = pydoc.render_doc(gl.export, renderer=pydoc.plaintext)
    assert "function export in module graphlab.deploy.exporter" in text
    assert re.search(r"export\(graph: .*, path: .*, arch: .* = 'vulkan', \*, dims: .* = None", text)
    params = sections(inspect.getdoc(gl.export) or "")["Parameters"]
    assert {"arch", "dims", "overwrite", "cpu_threads"} <= documented_names(params)
    for word in ("arch", "dims", "overwrite"):
        assert re.search(rf"^\s*{word}\b", text, re.M), f"help(gl.export) does not describe {word!r}"


def test_signature_of_gl_export_is_the_function_and_import_stays_light():
    code = (
        "import inspect, sys, graphlab as gl\n"
        "assert 'graphlab.deploy.exporter' not in sys.modules, 'import graphlab loaded the exporter'\n"
        "print(list(inspect.signature(gl.export).parameters))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == str(
        ["graph", "path", "arch", "dims", "values", "overwrite", "progress", "tcm", "cpu_threads", "timeout", "debug"]
    )


def test_gl_export_is_the_export_function_whatever_was_imported_first():
    code = (
        "import graphlab.deploy.cruntime, graphlab as gl\n"
        "from graphlab.deploy import exporter\n"
        "assert gl.export is exporter.export, gl.export\n"
        "from graphlab import export\n"
        "assert export is exporter.export\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert inspect.isfunction(gl.export) and gl.export.__doc__.startswith("Export graphs")
