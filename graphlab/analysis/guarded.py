"""Which buffers a guarded loop must copy aside to be able to go back (no Taichi import: the CLI's
export path reads this too).

A ``guarded`` while loop (:mod:`graphlab.model.plan`) saves what its body may write before each group of
``check_every`` iterations; Taichi's own access flags per dispatch (:mod:`graphlab.analysis.dataflow`) say
what that is, so a buffer the body only reads costs nothing. ``run()`` copies them with
:mod:`graphlab.run.rollback`; an export lists them in the manifest for ``gl.load_module`` and the C host.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlab.analysis.dataflow import dataflow_facts
from graphlab.kernelfacts.access_ast import AccessFlag
from graphlab.model.plan import Iterate, Plan

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = ["guarded_writes"]


def guarded_writes(graph: Graph, plan: Plan) -> dict[str, tuple[str, ...]]:
    """Per guarded loop (its node id): the args its body may write, in the graph's arg order.

    A body that writes a texture cannot be guarded (its texels cannot be copied aside as a buffer's
    can): ``validate()`` reports that as GL026 before compile or export get here."""
    facts = dataflow_facts(graph)
    found: dict[str, tuple[str, ...]] = {}
    for op in plan.ops():
        if not (isinstance(op, Iterate) and op.guarded):
            continue
        inside = f"{op.node_id}/"
        written = {
            arg
            for node_id, accesses in facts.args.items()
            if node_id.startswith(inside)
            for arg, flags in accesses.items()
            if flags & AccessFlag.WRITE
        }
        found[op.node_id] = tuple(a for a in graph.args if a in written)
    return found
