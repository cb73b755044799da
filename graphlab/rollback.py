"""Saving and restoring what a guarded loop's body writes, on the device, for ``run()``.

A ``guarded`` while loop (:mod:`graphlab.plan`) reads its flag every k iterations yet ends where a
loop reading every iteration would: before each group of k iterations the buffers its body may
write are copied aside, and a 0 read puts them back so the group can be replayed one read at a
time. Which buffers: :func:`graphlab.guarded.guarded_writes`, so a buffer the body only reads costs
nothing. The copies are ``ti.graph`` launches of one copy kernel per
buffer, queued in order with the body's launches; the arrays holding the copies are kept between
runs while the shapes fit.
"""

# No `from __future__ import annotations`: Taichi reads the copy kernel's annotations as objects.
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import taichi as ti

from graphlab.bridge import runtime as bridge
from graphlab.errors import GraphError
from graphlab.guarded import guarded_writes
from graphlab.plan import Iterate, Plan

if TYPE_CHECKING:
    from graphlab.graph import Graph

__all__ = ["GuardedLoops", "saved_name"]


@ti.kernel
def copy_array(dst: ti.types.ndarray(), src: ti.types.ndarray()):  # type: ignore[valid-type]
    for index in ti.grouped(src):
        dst[index] = src[index]


def saved_name(arg: str, taken: Mapping[str, Any]) -> str:
    """The graph arg that holds ``arg``'s saved copy: a name none of the graph's args has."""
    name = f"graphlab_saved_{arg}"
    while name in taken:
        name += "_"
    return name


@dataclass
class _Copies:
    """One run's save/restore launches: the run's arrays plus the kept copies, by graph arg name."""

    owner: "GuardedLoops"
    values: dict[str, Any]

    def save(self, loop: Iterate) -> None:
        self.owner.saves[loop.node_id].run(self.values)

    def restore(self, loop: Iterate) -> None:
        self.owner.restores[loop.node_id].run(self.values)


class GuardedLoops:
    """The save and restore graphs of a compiled graph's guarded loops, and the copies they fill."""

    def __init__(self, graph: "Graph", plan: Plan) -> None:
        self.writes = guarded_writes(graph, plan)
        self.saves: dict[str, Any] = {}
        self.restores: dict[str, Any] = {}
        self._copies: dict[str, Any] = {}  # arg -> its copy, kept while the run's array has its shape
        self._specs = {a: graph.args[a] for args in self.writes.values() for a in args}
        self._names = {a: saved_name(a, graph.args) for a in self._specs}
        for loop, args in self.writes.items():
            symbols = {a: bridge.to_graph_arg(graph.args[a]) for a in args}
            copies = {a: bridge.to_graph_arg(replace(graph.args[a], name=self._names[a])) for a in args}
            self.saves[loop] = _copy_graph([(copies[a], symbols[a]) for a in args], f"{loop} save")
            self.restores[loop] = _copy_graph([(symbols[a], copies[a]) for a in args], f"{loop} restore")

    def __bool__(self) -> bool:
        return bool(self.writes)

    def bind(self, values: Mapping[str, Any]) -> "_Copies":
        """The rollback of one run over ``values`` (prepared Taichi values, by arg name)."""
        bound = dict(values)
        for arg, spec in self._specs.items():
            shape = tuple(values[arg].shape)
            copy = self._copies.get(arg)
            if copy is None or tuple(copy.shape) != shape:
                copy = self._copies[arg] = bridge.new_ndarray(spec.dtype or "f32", shape, spec.element_shape)
            bound[self._names[arg]] = copy
        return _Copies(self, bound)


def _copy_graph(pairs: list[tuple[Any, Any]], name: str) -> Any:
    builder = ti.graph.GraphBuilder()
    for dst, src in pairs:
        builder.dispatch(copy_array, dst, src)
    try:
        return builder.compile()
    except Exception as exc:  # Taichi raises several unrelated types at build time
        raise GraphError(f"Taichi could not compile the {name} graph of a guarded loop: {exc}") from exc
