"""JSON views of the model for the widget's traits (mirrored in ``extension/src/protocol.ts``).

Plain functions from model objects to JSON-ready dicts and lists; nothing here edits a graph.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from graphlab.graph import Dispatch, SequenceUse

if TYPE_CHECKING:
    from graphlab.diagnostics import Diagnostic
    from graphlab.graph import Graph
    from graphlab.kernels import KernelInfo, Param
    from graphlab.spec import Arg


def arg_view(arg: Arg) -> dict[str, Any]:
    """An arg as the ``ArgView`` of protocol.ts."""
    return {**arg.to_dict(), "label": arg.describe()}


def param_view(param: Param) -> dict[str, Any]:
    """A kernel parameter as the ``ParamView`` of protocol.ts (None: left open by the annotation)."""
    return {
        "name": param.name,
        "kind": param.kind,
        "dtype": param.dtype,
        "ndim": param.ndim,
        "element_shape": None if param.element_shape is None else list(param.element_shape),
        "fmt": param.fmt,
        "label": param.describe(),
    }


def kernel_view(info: KernelInfo) -> dict[str, Any]:
    """A kernel as a palette entry (``KernelView``)."""
    return {
        "name": info.name,
        "ref": info.ref,
        "params": [param_view(p) for p in info.params],
        "returns": info.returns,
        "dispatchable": info.dispatchable,
        "why_not": info.why_not,
    }


def palette_view(kernels: Iterable[KernelInfo]) -> list[dict[str, Any]]:
    """The ``palette`` trait: kernels sorted by name, then reference."""
    return [kernel_view(k) for k in sorted(kernels, key=lambda k: (k.name, k.ref))]


def diagnostic_view(diagnostic: Diagnostic) -> dict[str, Any]:
    """A diagnostic as the ``DiagnosticView`` of protocol.ts."""
    return diagnostic.to_dict()


def graph_view(graph: Graph) -> dict[str, Any]:
    """The ``graph`` trait: args, every node (depth first, in program order) and the top-level ids.

    >>> import graphlab as gl
    >>> g = gl.Graph("empty")
    >>> graph_view(g)
    {'name': 'empty', 'version': 0, 'args': [], 'nodes': [], 'body': []}
    """
    nodes: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    body: list[str] = []
    for node_id, node in graph.nodes():
        parent = node_id.rsplit("/", 1)[0] if "/" in node_id else None
        siblings = body if parent is None else by_id[parent]["children"]
        view: dict[str, Any] = {"id": node_id, "name": node.name, "parent": parent, "index": len(siblings)}
        if isinstance(node, Dispatch):
            view |= {
                "kind": "dispatch",
                "kernel": node.kernel.ref,
                "kernel_name": node.kernel.name,
                "params": [param_view(p) for p in node.kernel.params],
                "bindings": node.bound,
            }
        elif isinstance(node, SequenceUse):
            view |= {"kind": "sequence", "sequence": node.sequence, "repeat": node.repeat, "children": []}
        siblings.append(node_id)
        by_id[node_id] = view
        nodes.append(view)
    return {
        "name": graph.name,
        "version": graph.version,
        "args": [arg_view(a) for a in graph.args.values()],
        "nodes": nodes,
        "body": body,
    }
