"""JSON views of the model for the widget's traits (their types: :mod:`graphlab.widget.protocol`).

Plain functions from model objects to JSON-ready dicts and lists; nothing here edits a graph.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from graphlab.kernelfacts.effects import kernel_effects
from graphlab.kernelfacts.shape_facts import inferred_shapes
from graphlab.model.nodes import Cond, Dispatch, Loop, SequenceUse, children

if TYPE_CHECKING:
    from graphlab.core.diagnostics import Diagnostic
    from graphlab.core.spec import Arg
    from graphlab.model.graph import Graph
    from graphlab.model.kernels import KernelInfo, Param


def arg_view(arg: Arg, inferred_shape: str | None = None) -> dict[str, Any]:
    """An arg as the ``ArgView`` of graphlab.widget.protocol.

    ``inferred_shape``: see :mod:`graphlab.kernelfacts.shape_facts`."""
    return {**arg.to_dict(), "label": arg.describe(), "inferred_shape": inferred_shape}


def param_view(param: Param) -> dict[str, Any]:
    """A kernel parameter as the ``ParamView`` of graphlab.widget.protocol (None: left open by the annotation)."""
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
    """A diagnostic as the ``DiagnosticView`` of graphlab.widget.protocol."""
    return diagnostic.to_dict()


def _draws(node: Dispatch) -> str | None:
    """What the dispatch's kernel draws at random, or None (also when its source cannot be read)."""
    try:
        draws = kernel_effects(node.kernel.fn).random
    except Exception:  # the editor must draw even when a kernel's source cannot be read
        return None
    return "; ".join(d.describe() for d in draws) or None


def graph_view(graph: Graph) -> dict[str, Any]:
    """The ``graph`` trait: args, every node (depth first, in program order) and the top-level ids.

    A conditional's branches appear as ``branch`` nodes (``decide/then``, ``decide/else``: the ids
    the drawing gives their clusters, and the ``into`` of an insertion there) holding the branch's
    nodes, so every node's parent is its id up to the last ``/``.

    >>> import graphlab as gl
    >>> g = gl.Graph("empty")
    >>> graph_view(g)
    {'name': 'empty', 'version': 0, 'args': [], 'nodes': [], 'body': [], 'layout': {}}
    """
    nodes: list[dict[str, Any]] = []
    body: list[str] = []

    def add(view: dict[str, Any], siblings: list[str]) -> None:
        view["index"] = len(siblings)
        siblings.append(view["id"])
        nodes.append(view)

    def walk(sequence: str | None, parent: str | None, siblings: list[str]) -> None:
        for node in graph.body if sequence is None else graph.sequences[sequence]:
            node_id = f"{parent}/{node.name}" if parent else node.name
            view: dict[str, Any] = {"id": node_id, "name": node.name, "parent": parent}
            inner: list[str] = []
            if isinstance(node, Dispatch):
                view |= {
                    "kind": "dispatch",
                    "kernel": node.kernel.ref,
                    "kernel_name": node.kernel.name,
                    "params": [param_view(p) for p in node.kernel.params],
                    "bindings": node.bound,
                }
                guessed = graph.layout.guessed.get(node_id)
                if guessed:  # drawn as suggestions until accepted (graphlab.model.layout)
                    view["guessed"] = [p.name for p in node.kernel.params if p.name in guessed]
                drawn = _draws(node)
                if drawn:  # the side panel says so; the drawing marks it (graphlab.analysis.render)
                    view["random"] = drawn
            elif isinstance(node, SequenceUse):
                view |= {"kind": "sequence", "sequence": node.sequence, "repeat": node.repeat, "children": inner}
            elif isinstance(node, Loop):
                view |= {"kind": "loop", "sequence": node.body, "while": node.while_, "count": node.count,
                         "max_iter": node.max_iter, "check_every": node.check_every, "guarded": node.guarded,
                         "children": inner}  # fmt: skip
            elif isinstance(node, Cond):
                view |= {"kind": "cond", "flag": node.flag, "children": inner}
            add(view, siblings)
            if isinstance(node, Cond):
                for segment, branch_sequence in children(node):
                    branch = segment.rstrip("/")
                    arm: list[str] = []
                    add({"id": f"{node_id}/{branch}", "name": branch, "parent": node_id, "kind": "branch",
                         "sequence": branch_sequence, "children": arm}, inner)  # fmt: skip
                    walk(branch_sequence, f"{node_id}/{branch}", arm)
            elif not isinstance(node, Dispatch):
                walk(view["sequence"], node_id, inner)

    walk(None, None, body)
    ids = {n["id"] for n in nodes} | {f"arg:{name}" for name in graph.args}
    try:
        inferred = inferred_shapes(graph)
    except Exception:  # the editor must draw even when a kernel's source cannot be read
        inferred = {}
    return {
        "name": graph.name,
        "version": graph.version,
        "args": [arg_view(a, inferred.get(a.name)) for a in graph.args.values()],
        "nodes": nodes,
        "body": body,
        "layout": {k: [x, y] for k, (x, y) in graph.layout.positions.items() if k in ids},
    }
