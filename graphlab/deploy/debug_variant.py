"""The debug variant of a graph: one module graph per dispatch node, to step an exported module.

A deployed module graph runs a whole graph per call in Taichi's C runtime, with no stop inside.
Stepping it, as ``dbg.compare(folder)`` does to name the dispatch where it departs from the
notebook, needs a boundary after every dispatch: a module graph per dispatch node, taking every
arg it binds as a value (nothing is a temp, so the state between steps lives on the host).
``gl.export(..., debug=True)`` exports these next to the deployed graphs and records them in the
manifest's ``debug_steps``; without them, the comparison exports them on the fly.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from graphlab.model.graph import Graph
from graphlab.model.nodes import Dispatch

__all__ = ["debug_entry", "step_graphs"]


def step_graphs(graph: Graph) -> list[tuple[str, Graph]]:
    """``(node id, graph)`` for every dispatch node of ``graph``, in the graph's order; the graphs
    are named ``<graph>_step<i>`` and dispatch that node's kernel on the same args (all state)."""
    out = []
    dispatches = [(node_id, node) for node_id, node in graph.nodes() if isinstance(node, Dispatch)]
    for i, (node_id, node) in enumerate(dispatches):
        one = Graph(f"{graph.name}_step{i}")
        for _, arg in node.bindings:
            if arg is not None and arg not in one.args:
                one.declare(dataclasses.replace(graph.args[arg], role="state"))
        one.dispatch(node.kernel.fn, **{param: arg for param, arg in node.bindings if arg is not None})
        out.append((node_id, one))
    return out


def debug_entry(graph: Graph, steps: list[tuple[str, Graph]]) -> dict[str, Any]:
    """What ``manifest.json``'s ``debug_steps`` records of ``graph``: the module graph of each dispatch
    node, and (without control flow, where the order is fixed) the node ids in the order they run."""
    order = None if graph.has_control_flow else [step.node_id for step in graph.steps()]
    return {"graphs": [[node_id, one.name] for node_id, one in steps], "order": order}
