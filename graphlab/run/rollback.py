"""Saving and restoring what a guarded loop's body writes, on the device, for ``run()``.

A ``guarded`` while loop (:mod:`graphlab.model.plan`) reads its flag every k iterations yet ends where a
loop reading every iteration would: before each group of k iterations the buffers its body may
write are copied aside, and a 0 read puts them back so the group can be replayed one read at a
time. Which buffers: :func:`graphlab.analysis.guarded.guarded_writes`, so a buffer the body only reads costs
nothing. The copies are ``ti.graph`` launches of one copy kernel per
buffer, queued in order with the body's launches; the arrays holding the copies are kept between
runs while the shapes fit.
"""

# No `from __future__ import annotations`: Taichi reads the copy kernel's annotations as objects.
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import taichi as ti

from graphlab.analysis.guarded import guarded_writes
from graphlab.bridge import runtime as bridge
from graphlab.core.errors import GraphError
from graphlab.model.plan import Iterate, Plan

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = ["GuardedLoops", "GuardedRun", "saved_name"]


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
class GuardedRun:
    """One run's save and restore: the run's arrays plus the kept copies, by graph arg name.

    A save is only queued: it joins the next launch when that is a batch compiled with the copies
    in front (:meth:`take_save`), and runs as its own copy graph before anything else otherwise
    (:meth:`flush`), so a group of k iterations costs one launch, saved or not."""

    owner: "GuardedLoops"
    values: dict[str, Any]
    pending: str | None = None  # the loop whose save is queued

    def save(self, loop: Iterate) -> None:
        self.flush()
        self.pending = loop.node_id

    def take_save(self) -> str | None:
        """The loop whose queued save the caller's next launch performs itself (then no longer queued)."""
        loop, self.pending = self.pending, None
        return loop

    def flush(self) -> None:
        """Launch a queued save on its own: call before any launch that does not perform it."""
        if self.pending is not None:
            self.owner.saves[self.take_save() or ""].run(self.values)

    def restore(self, loop: Iterate) -> None:
        self.flush()
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
        self._pairs: dict[str, list[tuple[Any, Any]]] = {}  # loop -> (copy, arg) graph symbols
        for loop, args in self.writes.items():
            symbols = {a: bridge.to_graph_arg(graph.args[a]) for a in args}
            copies = {a: bridge.to_graph_arg(replace(graph.args[a], name=self._names[a])) for a in args}
            self._pairs[loop] = [(copies[a], symbols[a]) for a in args]
            self.saves[loop] = _copy_graph(self.save_dispatches(loop), f"{loop} save")
            self.restores[loop] = _copy_graph([(copy_array, (arg, copy)) for copy, arg in self._pairs[loop]],
                                              f"{loop} restore")  # fmt: skip

    def save_dispatches(self, loop: str) -> list[tuple[Any, tuple[Any, ...]]]:
        """The (kernel, graph args) dispatches that save ``loop``'s buffers: a batch puts them first."""
        return [(copy_array, (copy, arg)) for copy, arg in self._pairs[loop]]

    def __bool__(self) -> bool:
        return bool(self.writes)

    def bind(self, values: Mapping[str, Any]) -> GuardedRun:
        """The rollback of one run over ``values`` (prepared Taichi values, by arg name)."""
        bound = dict(values)
        for arg, spec in self._specs.items():
            shape = tuple(values[arg].shape)
            copy = self._copies.get(arg)
            if copy is None or tuple(copy.shape) != shape:
                copy = self._copies[arg] = bridge.new_ndarray(spec.dtype or "f32", shape, spec.element_shape)
            bound[self._names[arg]] = copy
        return GuardedRun(self, bound)


def _copy_graph(dispatches: list[tuple[Any, tuple[Any, ...]]], name: str) -> Any:
    builder = ti.graph.GraphBuilder()
    for kernel, args in dispatches:
        builder.dispatch(kernel, *args)
    try:
        return builder.compile()
    except Exception as exc:  # Taichi raises several unrelated types at build time
        raise GraphError(f"Taichi could not compile the {name} graph of a guarded loop: {exc}") from exc
