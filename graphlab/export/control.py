"""Control flow in an exported module: the tree of segments and decisions that ``manifest.json`` records.

A graph with conditionals or loops compiles to several ti.graph segments with host-side decisions
between them (:mod:`graphlab.controlflow`). Exported, each segment is one compute graph of the AOT
module, and the manifest keeps the decisions as a JSON tree that mirrors
:class:`graphlab.controlflow.Program`::

    {"op": "segment", "graph": "poisson_seg0", "args": ["u", "f", "u_new", "tol", "flag"]}
    {"op": "repeat", "times": 2, "body": [...]}
    {"op": "cond", "node": "branch", "flag": "flag", "then": [...], "else": [...] or null}
    {"op": "loop", "node": "solve", "while": "flag", "count": null, "max_iter": 5000, "body": [...]}

A graph without control flow stays one module graph named after it and has no tree (``control``
absent); its program is then one segment taking every arg, so old manifests load unchanged. A
segment without ``args`` takes every arg of its graph too.

Every consumer runs the tree with the same semantics: :func:`run_entries` executes it with
graphlab.controlflow's own classes (``gl.load_module``), and the generated C host mirrors them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlab.controlflow import Block, CondOp, ControlEvent, LoopOp, Program, RepeatOp, Segment, build_program
from graphlab.nodes import Dispatch, Node, SequenceUse

if TYPE_CHECKING:
    from graphlab.graph import Graph

__all__ = [
    "CondEntry",
    "ControlEntry",
    "FrameEvent",
    "LoopEntry",
    "RepeatEntry",
    "SegmentEntry",
    "entries_to_json",
    "event_line",
    "parse_event_lines",
    "plan_control",
    "run_entries",
    "segments_of",
]


@dataclass(frozen=True)
class SegmentEntry:
    """Launch one module graph with the args it takes (by name)."""

    graph: str
    args: tuple[str, ...]


@dataclass(frozen=True)
class RepeatEntry:
    """A sequence use holding control flow: its body ``times`` times in a row."""

    times: int
    body: tuple[ControlEntry, ...]


@dataclass(frozen=True)
class CondEntry:
    """Read ``flag`` on the host; run ``then`` if non-zero, else ``else_`` (None: skip)."""

    node: str
    flag: str
    then: tuple[ControlEntry, ...]
    else_: tuple[ControlEntry, ...] | None = None


@dataclass(frozen=True)
class LoopEntry:
    """``count`` times (an i32 scalar), or do-while ``while_`` reads non-zero, at most ``max_iter``."""

    node: str
    body: tuple[ControlEntry, ...]
    while_: str | None = None
    count: str | None = None
    max_iter: int | None = None


ControlEntry = SegmentEntry | RepeatEntry | CondEntry | LoopEntry


# --- from a graph (export) ----------------------------------------------------------------------------


def _bound_args(graph: Graph, node: Node) -> set[str]:
    """Args a static node binds, its sequence's nested dispatches included."""
    if isinstance(node, Dispatch):
        return {bound for _, bound in node.bindings if bound is not None}
    if isinstance(node, SequenceUse):
        return {name for child in graph.sequences[node.sequence] for name in _bound_args(graph, child)}
    return set()


def _entries(block: Block, order: Sequence[str]) -> tuple[ControlEntry, ...]:
    """A planned :class:`Block` as entries; each segment holds the arg names of its nodes, not a ti.graph."""
    return tuple(_entry(op, order) for op in block.ops)


def _entry(op: Any, order: Sequence[str]) -> ControlEntry:
    if isinstance(op, Segment):
        used = set().union(*op.ti_graph) if op.ti_graph else set()
        return SegmentEntry(op.name, tuple(name for name in order if name in used))
    if isinstance(op, RepeatOp):
        return RepeatEntry(op.repeat, _entries(op.body, order))
    if isinstance(op, CondOp):
        other = None if op.else_ is None else _entries(op.else_, order)
        return CondEntry(op.node_id, op.flag, _entries(op.then, order), other)
    assert isinstance(op, LoopOp)
    return LoopEntry(op.node_id, _entries(op.body, order), op.while_, op.count, op.max_iter)


def _no_flags(value: Any) -> int:
    raise AssertionError("plan_control only plans; nothing runs")


def plan_control(graph: Graph, order: Sequence[str]) -> tuple[ControlEntry, ...] | None:
    """The control tree of a graph (None without control flow), without compiling anything.

    It splits the graph exactly as ``g.compile()`` does (the same :func:`build_program`, so the
    segment names match the compiled segments); each segment lists the args its dispatches bind,
    in the order of ``order``.
    """
    if not graph.has_control_flow:
        return None

    def segment_args(name: str, run: list[tuple[str, Node]]) -> list[set[str]]:
        return [_bound_args(graph, node) for _, node in run]

    return _entries(build_program(graph, segment_args, _no_flags).block, order)


def segments_of(entries: Sequence[ControlEntry]) -> Iterator[SegmentEntry]:
    """Every segment of a tree, in program order."""
    for entry in entries:
        if isinstance(entry, SegmentEntry):
            yield entry
        elif isinstance(entry, RepeatEntry | LoopEntry):
            yield from segments_of(entry.body)
        else:
            yield from segments_of(entry.then)
            yield from segments_of(entry.else_ or ())


def entries_to_json(entries: Sequence[ControlEntry]) -> list[dict[str, Any]]:
    """The tree as ``manifest.json`` records it."""
    return [_entry_json(entry) for entry in entries]


def _entry_json(entry: ControlEntry) -> dict[str, Any]:
    if isinstance(entry, SegmentEntry):
        return {"op": "segment", "graph": entry.graph, "args": list(entry.args)}
    if isinstance(entry, RepeatEntry):
        return {"op": "repeat", "times": entry.times, "body": entries_to_json(entry.body)}
    if isinstance(entry, CondEntry):
        other = None if entry.else_ is None else entries_to_json(entry.else_)
        return {"op": "cond", "node": entry.node, "flag": entry.flag, "then": entries_to_json(entry.then),
                "else": other}  # fmt: skip
    return {"op": "loop", "node": entry.node, "while": entry.while_, "count": entry.count,
            "max_iter": entry.max_iter, "body": entries_to_json(entry.body)}  # fmt: skip


# --- running a tree (load_module) --------------------------------------------------------------------


class _Launch:
    """Stands in for a segment's ti.graph: ``run`` launches the module graph through a callback."""

    def __init__(self, entry: SegmentEntry, launch: Callable[[SegmentEntry], None]) -> None:
        self._entry, self._launch = entry, launch

    def run(self, values: Mapping[str, Any]) -> None:
        self._launch(self._entry)


def _block(entries: Sequence[ControlEntry], launch: Callable[[SegmentEntry], None]) -> Block:
    """The tree as graphlab.controlflow's own executable classes: one semantics everywhere."""
    ops: list[Any] = []
    for entry in entries:
        if isinstance(entry, SegmentEntry):
            ops.append(Segment(entry.graph, _Launch(entry, launch), ()))
        elif isinstance(entry, RepeatEntry):
            ops.append(RepeatOp(entry.times, _block(entry.body, launch)))
        elif isinstance(entry, CondEntry):
            other = None if entry.else_ is None else _block(entry.else_, launch)
            ops.append(CondOp(entry.node, entry.flag, _block(entry.then, launch), other))
        else:
            ops.append(LoopOp(entry.node, _block(entry.body, launch), entry.while_, entry.count, entry.max_iter))
    return Block(ops)


def run_entries(
    entries: Sequence[ControlEntry],
    launch: Callable[[SegmentEntry], None],
    read_flag: Callable[[str], int],
    counts: Mapping[str, int],
) -> list[ControlEvent]:
    """Run a tree: ``launch`` each segment, ``read_flag(name)`` at each decision; return the events.

    ``counts`` gives the values of the count loops' scalar args.
    """
    program = Program(_block(entries, launch), [], read_flag)
    names = _FlagNames(counts)
    program.run(names)
    return program.last_events


class _FlagNames(Mapping[str, Any]):
    """The values a Program reads: a flag's name (``read_flag`` looks it up), or a count's value."""

    def __init__(self, counts: Mapping[str, int]) -> None:
        self._counts = counts

    def __getitem__(self, name: str) -> Any:
        return self._counts.get(name, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._counts)


# --- events of a run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class FrameEvent:
    """A control event of one graph in one frame (frames count from 0)."""

    frame: int
    graph: str
    event: ControlEvent

    def __str__(self) -> str:
        e = self.event
        limit = " (max_iter reached)" if e.limit_reached else ""
        what = f"{e.value} iteration(s)" if e.kind == "loop" else f"took {e.value}"
        return f"frame {self.frame}, {self.graph}/{e.node}: {e.kind} {what}{limit}"


#: How the C host prints an event with ``--events`` (one line each, on stdout).
EVENT_RE = re.compile(r"^event frame=(\d+) graph=(\S+) node=(\S+) (cond|loop)=(\S+)( limit_reached)?$", re.MULTILINE)


def event_line(event: FrameEvent) -> str:
    """One event as the C host prints it (the format :data:`EVENT_RE` parses)."""
    e = event.event
    limit = " limit_reached" if e.limit_reached else ""
    return f"event frame={event.frame} graph={event.graph} node={e.node} {e.kind}={e.value}{limit}"


def parse_event_lines(text: str) -> list[FrameEvent]:
    """The events in the C host's output."""
    events = []
    for frame, graph, node, kind, value, limit in EVENT_RE.findall(text):
        typed: str | int = int(value) if kind == "loop" else value
        events.append(FrameEvent(int(frame), graph, ControlEvent(node, kind, typed, bool(limit))))
    return events
