"""Device time per dispatch, collected while stepping, as TVM's debug executor reports it.

A compiled ``ti.graph`` runs as one call, so it cannot say which kernel took the time. When the
debugger steps a dispatch it waits for the device before and after (``ti.sync()``), so the wall time
in between is that dispatch's device time plus one launch. The table sums those per node over the
repetitions measured and gives each its share of the total, and keeps the per-repetition rows.
Spans run as compiled segments are listed apart (they cannot be split per dispatch). In a graph
with loops, each loop's row counts its iterations in the recorded timeline, since how many there
are is what a flag decided.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphlab.bridge.runtime import sync
from graphlab.debug.report_text import timing_text

if TYPE_CHECKING:
    from graphlab.debug.report import StepRef


@dataclass(frozen=True)
class StepTime:
    """One stepped dispatch's device time; ``share`` of the report's total."""

    index: int
    step_id: str
    node_id: str
    kernel: str
    seconds: float
    share: float


@dataclass(frozen=True)
class NodeTime:
    """A node's stepped dispatches summed over the repetitions measured."""

    node_id: str
    kernel: str
    calls: int
    total_s: float
    mean_s: float
    min_s: float
    max_s: float
    share: float


@dataclass(frozen=True)
class SegmentTime:
    """A span run as one compiled segment (not split per dispatch)."""

    start: int
    stop: int
    seconds: float


@dataclass(frozen=True)
class LoopTime:
    """A loop's iterations in the recorded timeline, and the time of the dispatches stepped in it.

    ``iterations`` counts every iteration entered (over all ``runs`` of the loop, and the run under
    way); ``limit_reached`` the runs stopped by ``max_iter`` rather than by the flag.
    """

    node_id: str
    runs: int
    iterations: int
    limit_reached: int
    stepped_s: float

    @property
    def mean_iterations(self) -> float:
        """Iterations per finished run (all iterations while none finished)."""
        return self.iterations / self.runs if self.runs else float(self.iterations)


@dataclass(frozen=True)
class TimingReport:
    """Per-step rows, per-node sums (program order), the fast-forwarded segments, and per-loop
    iteration counts (graphs with loops)."""

    steps: tuple[StepTime, ...]
    nodes: tuple[NodeTime, ...]
    segments: tuple[SegmentTime, ...]
    total_s: float
    loops: tuple[LoopTime, ...] = ()

    def node(self, node_id: str) -> NodeTime:
        """The row of one node."""
        for row in self.nodes:
            if row.node_id == node_id:
                return row
        known = ", ".join(r.node_id for r in self.nodes) or "none measured yet (step some dispatches first)"
        raise KeyError(f"no timing for node {node_id!r}; nodes measured: {known}")

    def loop(self, node_id: str) -> LoopTime:
        """The row of one loop."""
        for row in self.loops:
            if row.node_id == node_id:
                return row
        known = ", ".join(r.node_id for r in self.loops) or "none entered yet"
        raise KeyError(f"no loop {node_id!r} in the timing; loops: {known}")

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready)."""
        return {
            "total_s": self.total_s,
            "nodes": [row.__dict__ for row in self.nodes],
            "steps": [row.__dict__ for row in self.steps],
            "segments": [row.__dict__ for row in self.segments],
            "loops": [{**row.__dict__, "mean_iterations": row.mean_iterations} for row in self.loops],
        }

    def __str__(self) -> str:
        return timing_text(self)

    def _repr_html_(self) -> str:
        return "<pre>" + html.escape(str(self)) + "</pre>"


def timed(launch: Callable[[], object]) -> float:
    """Seconds ``launch`` keeps the device busy: the device is idle before (a sync) and waited for after."""
    sync()
    start = time.perf_counter()
    launch()
    sync()
    return time.perf_counter() - start


class TimingRecorder:
    """Keeps the latest device time of every stepped dispatch, and the segments run.

    Stepping a dispatch again (after going back) replaces its earlier measurement.
    """

    def __init__(self) -> None:
        self._steps: dict[int, tuple[StepRef, float]] = {}
        self._segments: list[SegmentTime] = []

    def record_step(self, ref: StepRef, seconds: float) -> None:
        """Remember the device time of one stepped dispatch."""
        self._steps[ref.index] = (ref, seconds)

    def record_segment(self, start: int, stop: int, seconds: float) -> None:
        """Remember a span run as one compiled segment (with control flow: the segments and flag
        reads of one control)."""
        self._segments.append(SegmentTime(start, stop, seconds))

    def clear(self) -> None:
        """Forget every measurement."""
        self._steps.clear()
        self._segments.clear()

    def report(self, loops: Sequence[tuple[str, int, int, int]] = ()) -> TimingReport:
        """The tables, steps in program order and nodes in first-measured program order.

        ``loops``: ``(loop id, runs, iterations, runs that hit max_iter)`` for each loop entered.
        """
        items = [self._steps[k] for k in sorted(self._steps)]
        total = sum(seconds for _, seconds in items)
        share = (lambda s: s / total) if total > 0 else (lambda s: 0.0)
        steps = tuple(StepTime(r.index, r.step_id, r.node_id, r.kernel, s, share(s)) for r, s in items)
        per_node: dict[str, list[float]] = {}
        kernels: dict[str, str] = {}
        for ref, seconds in items:
            per_node.setdefault(ref.node_id, []).append(seconds)
            kernels[ref.node_id] = ref.kernel
        nodes = tuple(
            NodeTime(node, kernels[node], len(t), sum(t), sum(t) / len(t), min(t), max(t), share(sum(t)))
            for node, t in per_node.items()
        )
        loop_rows = tuple(
            LoopTime(loop, runs, iterations, limited, sum(s for r, s in items if r.node_id.startswith(f"{loop}/")))
            for loop, runs, iterations, limited in loops
        )
        return TimingReport(steps, nodes, tuple(self._segments), total, loop_rows)
