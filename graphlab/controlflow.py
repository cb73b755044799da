"""Running a graph with conditionals and loops: compiled ti.graph segments between control points.

Taichi 1.7.4 has no conditional or loop node (planned in the graph RFC, taichi issue #4786, never
built). So a graph with control flow compiles into a small program: each maximal run of static
nodes becomes one compiled ti.graph segment, and between segments the host reads a flag (one
small device-to-host copy, which also waits for the device) and picks the next segment. A graph
without control flow never comes here: it stays one ti.graph.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphlab.nodes import Cond, Dispatch, Loop, Node, SequenceUse, children


@dataclass(frozen=True)
class ControlEvent:
    """What a control node did in one run: the branch taken, or the iterations of a loop."""

    node: str
    kind: str  # "cond" or "loop"
    value: str | int  # "then" / "else" / "skip", or the number of iterations
    limit_reached: bool = False


@dataclass
class Segment:
    """One compiled ti.graph over consecutive static nodes."""

    name: str
    ti_graph: Any
    node_ids: tuple[str, ...]

    def execute(self, values: Mapping[str, Any], events: list[ControlEvent], read_flag: Callable[[Any], int]) -> None:
        self.ti_graph.run(values)


@dataclass
class Block:
    """A body of segments and control points, run in order."""

    ops: list[Any] = field(default_factory=list)

    def execute(self, values: Mapping[str, Any], events: list[ControlEvent], read_flag: Callable[[Any], int]) -> None:
        for op in self.ops:
            op.execute(values, events, read_flag)


@dataclass
class RepeatOp:
    """A sequence use whose body holds control flow: the body block run ``repeat`` times."""

    repeat: int
    body: Block

    def execute(self, values: Mapping[str, Any], events: list[ControlEvent], read_flag: Callable[[Any], int]) -> None:
        for _ in range(self.repeat):
            self.body.execute(values, events, read_flag)


@dataclass
class CondOp:
    """Read the flag; run ``then`` if it is non-zero, else ``else_``."""

    node_id: str
    flag: str
    then: Block
    else_: Block | None

    def execute(self, values: Mapping[str, Any], events: list[ControlEvent], read_flag: Callable[[Any], int]) -> None:
        taken = "then" if read_flag(values[self.flag]) else ("else" if self.else_ is not None else "skip")
        events.append(ControlEvent(self.node_id, "cond", taken))
        block = self.then if taken == "then" else self.else_
        if block is not None:
            block.execute(values, events, read_flag)


@dataclass
class LoopOp:
    """Run the body ``count`` times, or until the flag reads 0 after an iteration (at most ``max_iter``)."""

    node_id: str
    body: Block
    while_: str | None
    count: str | None
    max_iter: int | None

    def execute(self, values: Mapping[str, Any], events: list[ControlEvent], read_flag: Callable[[Any], int]) -> None:
        if self.count is not None:
            total = int(values[self.count])
            for _ in range(max(total, 0)):
                self.body.execute(values, events, read_flag)
            events.append(ControlEvent(self.node_id, "loop", max(total, 0)))
            return
        assert self.while_ is not None  # the model makes loops with exactly one of count and while_
        limit = self.max_iter or 1
        iterations = 0
        while iterations < limit:
            self.body.execute(values, events, read_flag)
            iterations += 1
            if not read_flag(values[self.while_]):
                events.append(ControlEvent(self.node_id, "loop", iterations))
                return
        events.append(ControlEvent(self.node_id, "loop", iterations, limit_reached=True))


class Program:
    """The compiled form of a graph with control flow; ``run(values)`` mirrors a ti.graph's run.

    ``segments`` lists every compiled ti.graph (the exporter puts each into the AOT module);
    ``last_events`` tells which branches ran and how many iterations each loop took.
    """

    def __init__(self, block: Block, segments: list[Segment], read_flag: Callable[[Any], int]) -> None:
        self.block = block
        self.segments = segments
        self._read_flag = read_flag
        self.last_events: list[ControlEvent] = []

    def run(self, values: Mapping[str, Any]) -> None:
        events: list[ControlEvent] = []
        self.last_events = events
        self.block.execute(values, events, self._read_flag)


def has_control(graph: Any, node: Node) -> bool:
    """Whether a node is, or contains, a conditional or a loop."""
    if isinstance(node, (Cond, Loop)):
        return True
    return any(has_control(graph, child) for _, seq in children(node) for child in graph.sequences[seq])


def build_program(
    graph: Any, build_segment: Callable[[str, list[tuple[str, Node]]], Any], read_flag: Callable[[Any], int]
) -> Program:
    """Split the graph at its control points; ``build_segment(name, [(id, node)])`` compiles a static run."""
    segments: list[Segment] = []

    def block_of(nodes: tuple[Node, ...], prefix: str) -> Block:
        block = Block()
        run: list[tuple[str, Node]] = []

        def flush() -> None:
            if run:
                name = f"{graph.name}_seg{len(segments)}"
                segment = Segment(name, build_segment(name, list(run)), tuple(node_id for node_id, _ in run))
                segments.append(segment)
                block.ops.append(segment)
                run.clear()

        for node in nodes:
            node_id = f"{prefix}{node.name}"
            if isinstance(node, Dispatch) or (isinstance(node, SequenceUse) and not has_control(graph, node)):
                run.append((node_id, node))
                continue
            flush()
            if isinstance(node, SequenceUse):
                block.ops.append(RepeatOp(node.repeat, block_of(graph.sequences[node.sequence], f"{node_id}/")))
            elif isinstance(node, Cond):
                then = block_of(graph.sequences[node.then], f"{node_id}/then/")
                other = None if node.else_ is None else block_of(graph.sequences[node.else_], f"{node_id}/else/")
                block.ops.append(CondOp(node_id, node.flag, then, other))
            elif isinstance(node, Loop):
                body = block_of(graph.sequences[node.body], f"{node_id}/")
                block.ops.append(LoopOp(node_id, body, node.while_, node.count, node.max_iter))
        flush()
        return block

    return Program(block_of(graph.body, ""), segments, read_flag)
