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
