"""Reports of a debug session: device time, a parity check against the compiled graph, memory held.

:class:`SessionReports` is the part of :class:`~graphlab.debug.session.DebugSession` that measures
and compares without moving the session: ``timing()`` of what was stepped, ``profile()`` ahead on
copies, ``parity()`` of a stepped run against the compiled graph, and the memory the copies for
going back hold (``snapshots``) and the compiled segments built (``segments``). It is a mixin: the
session's state it reads is declared below and set by ``DebugSession.__init__``.
"""

from __future__ import annotations

from functools import partial
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

from graphlab.bridge import runtime as bridge
from graphlab.dataflow import dataflow_facts
from graphlab.debug.report import ParityReport, ParityRow, SnapshotUsage, StepRef, timing_dependent
from graphlab.debug.stats import diff_stats
from graphlab.debug.timing import TimingRecorder, TimingReport, timed
from graphlab.kernel_effects import REPRODUCIBLE_HINT, graph_effects
from graphlab.nodes import Loop
from graphlab.plan import ControlEvent

if TYPE_CHECKING:
    from graphlab.compiled import CompiledGraph
    from graphlab.debug.flow import Recorder
    from graphlab.debug.runner import SegmentRunner
    from graphlab.debug.steps import StepTable
    from graphlab.debug.timeline import Timeline
    from graphlab.graph import Graph


class SessionReports:
    """Timing, profile, parity and memory reports of a debug session (a mixin of ``DebugSession``)."""

    graph: Graph
    arch: str
    _compiled: CompiledGraph
    _recorder: Recorder | None
    _table: StepTable
    _segments: SegmentRunner
    _timing: TimingRecorder
    _timeline: Timeline
    _pos: int

    if TYPE_CHECKING:  # defined by DebugSession

        def _alive(self) -> None: ...

        def _detached(self, q: int) -> dict[str, Any]: ...

        def _ordered(self, names: set[str] | frozenset[str]) -> list[str]: ...

    def timing(self) -> TimingReport:
        """Device time of the dispatches stepped so far, per step and summed per node; with loops,
        each loop's iterations in the recorded timeline.

        Each stepped dispatch runs alone between two ``ti.sync()``; spans run as compiled segments
        are timed as a whole (``report.segments``).

        Returns
        -------
        TimingReport
            Rows per step (``steps``) and per node (``nodes``), segments and loops; printed, a table.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> for _ in range(3):
        ...     stop = dbg.step()
        >>> report = dbg.timing()
        >>> [(row.node_id, row.calls) for row in report.nodes]
        [('steps/saxpy', 2), ('steps/again', 1)]
        >>> report.total_s > 0
        True
        """
        return self._timing.report(self._loop_rows())

    def _loop_rows(self) -> list[tuple[str, int, int, int]]:
        """``(loop id, finished runs, iterations, runs that hit max_iter)`` per loop entered, in program order."""
        if self._recorder is None:
            return []
        iterations = self._recorder.iterations
        runs: dict[str, list[ControlEvent]] = {}
        for event in self._recorder.events:
            if event.kind == "loop":
                runs.setdefault(event.node, []).append(event)
        return [
            (
                node_id,
                len(runs.get(node_id, [])),
                iterations[node_id],
                sum(e.limit_reached for e in runs.get(node_id, [])),
            )
            for node_id, node in self.graph.nodes()
            if isinstance(node, Loop) and node_id in iterations
        ]

    def profile(self, *, steps: int | None = None) -> TimingReport:
        """Time every dispatch from here to the end (or the next ``steps``) on copies of the buffers.

        The session does not move; like TVM's debug executor, each dispatch runs alone between two
        ``ti.sync()``. With control flow, past the recorded timeline the flags are read on the copies.
        """
        self._alive()
        table = self._table
        stop = None if steps is None else self._pos + max(0, steps)
        values = self._detached(self._pos)
        recorder = TimingRecorder()
        k = self._pos
        while k < table.count and (stop is None or k < stop):
            recorder.record_step(table.ref(k), timed(partial(self._segments.launch, k, values)))
            k += 1
        ahead = None if self._recorder is None or table.complete else self._recorder.clone()
        while ahead is not None and (stop is None or k < stop):
            recorded = ahead.extend(values, k)
            if recorded is None:
                break
            for step in recorded.steps[: None if stop is None else stop - k]:
                ref = StepRef(k, step.id, step.node_id, step.dispatch.kernel.name)
                recorder.record_step(ref, timed(partial(self._segments.launch_step, step, values)))
                k += 1
        return recorder.report()

    def parity(self) -> ParityReport:
        """Run the initial state through the compiled graph and, dispatch by dispatch, through the
        kernels (both on copies), and compare every written buffer at the end.

        With control flow the stepped run decides on its own copies and the paths are compared too
        (``ParityReport.control``); the compiled graph's ``last_events`` then describe this run.
        """
        self._alive()
        stepped = self._detached(0)
        stepped_events: list[ControlEvent] = []
        if self._recorder is None:
            for k in range(self._table.count):
                self._segments.launch(k, stepped)
        else:
            walker = self._recorder.fresh()
            k = 0
            while (recorded := walker.extend(stepped, k)) is not None:
                for step in recorded.steps:
                    self._segments.launch_step(step, stepped)
                k = recorded.chunk.stop
            stepped_events = walker.events
        compiled = self._detached(0)
        self._compiled.run({name: v for name, v in compiled.items() if name in self._compiled.args})
        bridge.sync()
        rows = []
        for name in self._ordered(self._table.written):
            d = diff_stats(stepped[name], compiled[name])
            rows.append(
                ParityRow(name, d.count, d.changed, d.max_abs, d.max_rel, d.nonfinite_mismatch, d.first_changed)
            )
        threads = _cpu_threads()
        notes = timing_dependent(dataflow_facts(self.graph).args, self.graph.args, self.arch, threads)
        control = () if self._recorder is None else _paths_differ(stepped_events, self._compiled.last_events)
        random: tuple[str, ...] = ()
        if not all(row.identical for row in rows):
            random = tuple(
                f"{e.random_note()}: the stepped run and the compiled graph drew other numbers, so the buffers "
                f"after it differ ({REPRODUCIBLE_HINT})"
                for e in graph_effects(self.graph)
                if e.effects.random
            )
        return ParityReport(self.arch, threads, tuple(rows), notes, control, random)

    @property
    def snapshots(self) -> SnapshotUsage:
        """Device memory held for stepping back."""
        timeline = self._timeline
        store = timeline.store
        ring = 0 if timeline.marks is None else timeline.marks.budget_bytes
        return SnapshotUsage(
            store.bytes_held,
            timeline.mark_bytes,
            store.budget_bytes + ring,
            timeline.initial_bytes,
            len(store.steps),
            self._timeline.skipped,
        )

    @property
    def segments(self) -> list[tuple[Any, ...]]:
        """Keys of the compiled segments built so far (``("reps", "substep", 256)`` ...)."""
        return self._segments.cached


def _paths_differ(stepped: list[ControlEvent], compiled: list[ControlEvent]) -> tuple[str, ...]:
    """Where two runs of a control-flow graph took different paths (empty when they agree)."""
    out = []
    for a, b in zip_longest(stepped, compiled):
        if a != b:
            left = "nothing" if a is None else f"{a.node} {a.value}"
            right = "nothing" if b is None else f"{b.node} {b.value}"
            out.append(f"stepped run: {left}; compiled graph: {right}")
    return tuple(out)


def _cpu_threads() -> int | None:
    """Threads of a CPU arch (``cpu_max_num_threads``), None on other archs."""
    if bridge.current_arch() not in ("x64", "arm64"):
        return None
    return bridge.cpu_max_threads()
