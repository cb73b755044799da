"""graphlab: assemble, check, debug and ship Taichi compute graphs from a notebook.

Importing graphlab is light: it does not import Taichi, Jupyter or the widget; those load when
first used.
"""

from __future__ import annotations

from typing import Any

from graphlab import export  # a package you call: gl.export(g, "out/mpm88", arch="vulkan")
from graphlab._version import __version__
from graphlab.diagnostics import Diagnostic
from graphlab.errors import (
    GraphError,
    GraphFileError,
    GraphlabError,
    GraphRunError,
    KernelError,
    StaleGraphError,
    ToolMissingError,
)
from graphlab.graph import Graph, GraphChange, SequenceBuilder, Step
from graphlab.kernels import KernelInfo, KernelRegistry, Param, kernel_info
from graphlab.nodes import Cond, Dispatch, Loop, SequenceUse
from graphlab.spec import Arg

__all__ = [
    "Arg",
    "Cond",
    "Diagnostic",
    "Dispatch",
    "Graph",
    "GraphChange",
    "GraphError",
    "GraphFileError",
    "GraphRunError",
    "GraphlabError",
    "KernelError",
    "KernelInfo",
    "KernelRegistry",
    "Loop",
    "Param",
    "SequenceBuilder",
    "SequenceUse",
    "StaleGraphError",
    "Step",
    "ToolMissingError",
    "__version__",
    "editor",
    "export",
    "kernel_info",
    "load",
    "load_module",
    "loads",
    "verify",
]


def load(path: Any, *, kernels: Any) -> Graph:
    """Load a graph file; kernels resolve only from ``kernels`` (module, dict, list or registry)."""
    from graphlab.graphfile import load as _load

    return _load(path, kernels=kernels)


def editor(graph: Graph, kernels: Any = None, **options: Any) -> Any:
    """Open the notebook widget on ``graph``: edit, debug (``values=``) and export it (see graphlab.widget.editor)."""
    from graphlab.widget import editor as _editor

    return _editor(graph, kernels, **options)


def loads(text: str | bytes, *, kernels: Any) -> Graph:
    """Load a graph from JSON text."""
    from graphlab.graphfile import loads as _loads

    return _loads(text, kernels=kernels)


def verify(path: Any, inputs: Any = None, **options: Any) -> Any:
    """Compare an exported module in the C runtime with Taichi's Python frontend (see graphlab.export.verify)."""
    from graphlab.export.verify import verify as _verify

    return _verify(path, inputs, **options)


def load_module(path: Any) -> Any:
    """Load an exported module into Taichi's C runtime, to run its graphs "as deployed"."""
    from graphlab.export.cruntime import load_module as _load_module

    return _load_module(path)


def _note_taichi_runtimes() -> None:
    """Have :mod:`graphlab.taichi_bridge` note the Taichi runtime of every ndarray and texture made
    from now on (one made before ``ti.reset()``/``ti.init()`` would segfault a graph). Taichi is not
    imported here: when it is not loaded yet, a one-shot import hook loads the bridge right after it."""
    import sys

    if "taichi" in sys.modules:
        import graphlab.taichi_bridge  # noqa: F401

        return

    class AfterTaichi:
        def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
            if name != "taichi":
                return None
            sys.meta_path.remove(self)
            import importlib.util

            spec = importlib.util.find_spec(name)
            loader = getattr(spec, "loader", None)
            if loader is None or not hasattr(loader, "exec_module"):
                return spec
            exec_taichi = loader.exec_module

            def exec_module(module: Any) -> None:
                exec_taichi(module)
                import contextlib

                with contextlib.suppress(Exception):  # never break `import taichi`; the bridge fails when used
                    import graphlab.taichi_bridge  # noqa: F401

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, AfterTaichi())


_note_taichi_runtimes()
