"""graphlab: assemble, check, debug and ship Taichi compute graphs from a notebook.

Importing graphlab is light: it does not import Taichi, Jupyter or the widget; those load when
first used.
"""

from __future__ import annotations

from typing import Any

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
from graphlab.graph import Dispatch, Graph, GraphChange, SequenceBuilder, SequenceUse, Step
from graphlab.kernels import KernelInfo, KernelRegistry, Param, kernel_info
from graphlab.spec import Arg

__all__ = [
    "Arg",
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
    "Param",
    "SequenceBuilder",
    "SequenceUse",
    "StaleGraphError",
    "Step",
    "ToolMissingError",
    "__version__",
    "kernel_info",
    "load",
    "loads",
]


def load(path: Any, *, kernels: Any) -> Graph:
    """Load a graph file; kernels resolve only from ``kernels`` (module, dict, list or registry)."""
    from graphlab.graphfile import load as _load

    return _load(path, kernels=kernels)


def loads(text: str | bytes, *, kernels: Any) -> Graph:
    """Load a graph from JSON text."""
    from graphlab.graphfile import loads as _loads

    return _loads(text, kernels=kernels)
