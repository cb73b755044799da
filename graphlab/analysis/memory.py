"""A static memory plan: temps whose lifetimes do not overlap share one allocation.

This is the storage pool of TVM's graph runtime, for Taichi: a temp (``role="temp"``) lives from the
first to the last dispatch that touches it, in program order (a sequence repeated more than once
keeps its temps alive across repetitions). Taichi ndarrays cannot be re-typed, so temps share a slot
only when dtype, element shape and concrete shape agree; the slot is one ndarray bound to every
name in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphlab.analysis.dataflow import dataflow_facts
from graphlab.core.errors import GraphError, GraphRunError
from graphlab.core.spec import DTYPE_BYTES, Arg, numel

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


@dataclass(frozen=True)
class BufferPlan:
    """One buffer: its concrete shape and bytes (None when unknown), lifetime and slot (temps only)."""

    name: str
    role: str
    shape: tuple[int, ...] | None
    bytes: int | None
    lifetime: tuple[int, int] | None
    slot: int | None


@dataclass(frozen=True)
class Slot:
    """One allocation shared by temps with disjoint lifetimes."""

    index: int
    bytes: int
    args: tuple[str, ...]
    dtype: str
    element_shape: tuple[int, ...]
    shape: tuple[int, ...]


@dataclass(frozen=True)
class MemoryPlan:
    """Bytes, lifetimes and storage slots of a graph's buffers for given shapes."""

    buffers: tuple[BufferPlan, ...]
    slots: tuple[Slot, ...]
    dims: Mapping[str, int] = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        """Bytes of every buffer with a known size, each allocated on its own."""
        return sum(b.bytes or 0 for b in self.buffers)

    @property
    def shared_bytes(self) -> int:
        """Bytes with temps sharing their slots."""
        not_temps = sum(b.bytes or 0 for b in self.buffers if b.slot is None)
        return not_temps + sum(slot.bytes for slot in self.slots)

    def buffer(self, name: str) -> BufferPlan:
        """The plan of one buffer."""
        for plan in self.buffers:
            if plan.name == name:
                return plan
        raise KeyError(name)

    def allocate(self) -> dict[str, Any]:
        """One Taichi ndarray per slot, bound to each temp of that slot."""
        from graphlab.bridge.runtime import new_ndarray  # import cost: Taichi

        temps: dict[str, Any] = {}
        for slot in self.slots:
            arr = new_ndarray(slot.dtype, slot.shape, slot.element_shape)
            temps.update(dict.fromkeys(slot.args, arr))
        return temps

    def table(self) -> str:
        """A text table for the notebook and the CLI."""
        rows = [f"{'buffer':<20} {'role':<7} {'shape':<16} {'bytes':>12} {'lifetime':<12} slot"]
        for b in self.buffers:
            life = "" if b.lifetime is None else f"{b.lifetime[0]}..{b.lifetime[1]}"
            size = "?" if b.bytes is None else f"{b.bytes:,}"
            shape = "?" if b.shape is None else str(b.shape)
            rows.append(
                f"{b.name:<20} {b.role:<7} {shape:<16} {size:>12} {life:<12} {'' if b.slot is None else b.slot}"
            )
        rows.append(f"total {self.total_bytes:,} bytes separately, {self.shared_bytes:,} with shared temps")
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        return "<pre>" + self.table() + "</pre>"


def concrete_shape(arg: Arg, shapes: Mapping[str, Any]) -> tuple[int, ...] | None:
    """An arg's concrete shape from ``shapes`` (by arg name, or its declared dims by dim name)."""
    if arg.name in shapes:
        value = shapes[arg.name]
        shape = (value,) if isinstance(value, int) else tuple(value)
        if len(shape) != arg.ndim:
            raise GraphError(f"memory_plan: {arg.name}={value!r} has {len(shape)} dims, the arg has {arg.ndim}")
        return shape
    if arg.ndim == 0:  # a 0-d ndarray holds one element: its shape is always ()
        return ()
    if arg.shape is None:
        return None
    resolved = [d if isinstance(d, int) else shapes.get(d) for d in arg.shape]
    if any(not isinstance(d, int) for d in resolved):
        return None
    return tuple(resolved)  # type: ignore[arg-type]


def memory_plan(graph: Graph, **shapes: Any) -> MemoryPlan:
    """Plan the graph's ndarray storage; ``shapes`` gives dims (``n=8192``) or arg shapes (``x=(8192,)``)."""
    facts = dataflow_facts(graph)
    touches: dict[str, list[int]] = {}
    for entry in facts.trace:
        for name in entry.args:
            touches.setdefault(name, []).append(entry.position)
    plans: list[BufferPlan] = []
    temps: list[tuple[int, int, Arg, tuple[int, ...], int]] = []
    for arg in graph.args.values():
        if arg.kind != "ndarray":
            continue
        shape = concrete_shape(arg, shapes)
        size = None if shape is None else numel(shape) * numel(arg.element_shape) * DTYPE_BYTES[arg.dtype or "f32"]
        positions = touches.get(arg.name)
        lifetime = None if not positions else (min(positions), max(positions))
        if arg.role == "temp" and lifetime is not None:
            if shape is None:
                raise GraphError(
                    f"memory_plan: temp {arg.name!r} has no concrete shape; declare shape=(...) with dims "
                    f"and pass them (e.g. n=1024), or pass {arg.name}=(...)"
                )
            temps.append((lifetime[0], lifetime[1], arg, shape, size or 0))
        plans.append(BufferPlan(arg.name, arg.role, shape, size, lifetime, None))
    slots, slot_of = _assign_slots(temps)
    buffers = tuple(BufferPlan(p.name, p.role, p.shape, p.bytes, p.lifetime, slot_of.get(p.name)) for p in plans)
    dims = {k: v for k, v in shapes.items() if isinstance(v, int) and k not in graph.args}
    return MemoryPlan(buffers, tuple(slots), dims)


def _assign_slots(temps: list[tuple[int, int, Arg, tuple[int, ...], int]]) -> tuple[list[Slot], dict[str, int]]:
    """Greedy interval colouring by start position (optimal for intervals), per compatible spec."""
    slots: list[Slot] = []
    ends: list[int] = []
    slot_of: dict[str, int] = {}
    for start, end, arg, shape, size in sorted(temps, key=lambda t: (t[0], t[1])):
        for index, slot in enumerate(slots):
            fits = (slot.dtype, slot.element_shape, slot.shape) == (arg.dtype, arg.element_shape, shape)
            if fits and ends[index] < start:
                slots[index] = Slot(index, slot.bytes, (*slot.args, arg.name), slot.dtype, slot.element_shape, shape)
                ends[index] = end
                slot_of[arg.name] = index
                break
        else:
            slot_of[arg.name] = len(slots)
            slots.append(Slot(len(slots), size, (arg.name,), arg.dtype or "f32", arg.element_shape, shape))
            ends.append(end)
    return slots, slot_of


class TempAllocator:
    """Allocates a compiled graph's temps when ``run`` is not given them, cached per set of dims."""

    def __init__(self, graph: Graph) -> None:
        self._graph = graph
        # a temp no dispatch binds (GL007 warns of it) has no lifetime, so the plan allocates none: run without it
        self.temps = [
            a.name for a in graph.args.values() if a.role == "temp" and a.kind == "ndarray" and graph.uses_of(a.name)
        ]
        self._cache: dict[tuple[tuple[str, int], ...], dict[str, Any]] = {}

    def fill(self, values: dict[str, Any], dims: Mapping[str, int]) -> None:
        """Add the missing temps to ``values``, following the memory plan."""
        missing = [name for name in self.temps if name not in values]
        if not missing:
            return
        key = tuple(sorted(dims.items()))
        allocated = self._cache.get(key)
        if allocated is None:
            try:
                allocated = memory_plan(self._graph, **dims).allocate()
            except GraphError as exc:
                raise GraphRunError(
                    f"run(): cannot allocate temps {', '.join(missing)}: {exc}", arg=missing[0]
                ) from exc
            self._cache[key] = allocated
        for name in missing:
            values[name] = allocated[name]
