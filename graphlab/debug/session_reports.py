"""Reports of a debug session: device time, a parity check against the compiled graph, memory held.

The functions here measure and compare for :class:`~graphlab.debug.session.DebugSession` without
moving it: the loop rows of ``timing()``, ``profile()`` ahead on copies, ``parity()`` of a stepped
run against the compiled graph, and the memory the copies for going back hold (``snapshots``).
Each is given the session's parts it reads (step table, segment runner, recorder ...) explicitly.
"""

from __future__ import annotations

from functools import partial
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

from graphlab.analysis.dataflow import dataflow_facts
from graphlab.bridge import runtime as bridge
from graphlab.debug.report import ParityReport, ParityRow, SnapshotUsage, StepRef, timing_dependent
from graphlab.debug.stats import diff_stats
from graphlab.debug.timing import TimingRecorder, TimingReport, timed
from graphlab.kernelfacts.effects import REPRODUCIBLE_HINT, graph_effects
from graphlab.model.nodes import Loop
from graphlab.model.plan import ControlEvent

if TYPE_CHECKING:
    from graphlab.debug.flow import Recorder
    from graphlab.debug.runner import SegmentRunner
    from graphlab.debug.steps import StepTable
    from graphlab.debug.timeline import Timeline
    from graphlab.model.graph import Graph
    from graphlab.run.compiled import CompiledGraph


def loop_rows(graph: Graph, recorder: Recorder | None) -> list[tuple[str, int, int, int]]:
    """``(loop id, finished runs, iterations, runs that hit max_iter)`` per loop entered, in program order."""
    if recorder is None:
        return []
    iterations = recorder.iterations
    runs: dict[str, list[ControlEvent]] = {}
    for event in recorder.events:
        if event.kind == "loop":
            runs.setdefault(event.node, []).append(event)
    return [
        (
            node_id,
            len(runs.get(node_id, [])),
            iterations[node_id],
            sum(e.limit_reached for e in runs.get(node_id, [])),
        )
        for node_id, node in graph.nodes()
        if isinstance(node, Loop) and node_id in iterations
    ]


def profile_ahead(
    table: StepTable,
    segments: SegmentRunner,
    recorder: Recorder | None,
    values: dict[str, Any],
    *,
    start: int,
    steps: int | None,
) -> TimingReport:
    """Time every dispatch from ``start`` to the end (or the next ``steps``) on ``values`` (copies);
    past the recorded timeline a clone of ``recorder`` decides the flags on them."""
    stop = None if steps is None else start + max(0, steps)
    timing = TimingRecorder()
    k = start
    while k < table.count and (stop is None or k < stop):
        timing.record_step(table.ref(k), timed(partial(segments.launch, k, values)))
        k += 1
    ahead = None if recorder is None or table.complete else recorder.clone()
    while ahead is not None and (stop is None or k < stop):
        recorded = ahead.extend(values, k)
        if recorded is None:
            break
        for step in recorded.steps[: None if stop is None else stop - k]:
            ref = StepRef(k, step.id, step.node_id, step.dispatch.kernel.name)
            timing.record_step(ref, timed(partial(segments.launch_step, step, values)))
            k += 1
    return timing.report()


def parity_report(
    graph: Graph,
    compiled: CompiledGraph,
    table: StepTable,
    segments: SegmentRunner,
    recorder: Recorder | None,
    *,
    stepped: dict[str, Any],
    whole: dict[str, Any],
    written: list[str],
) -> ParityReport:
    """Run ``stepped`` (copies of the initial state) dispatch by dispatch and ``whole`` (other copies)
    through the compiled graph, and compare the ``written`` buffers at the end."""
    stepped_events: list[ControlEvent] = []
    if recorder is None:
        for k in range(table.count):
            segments.launch(k, stepped)
    else:
        walker = recorder.fresh()
        k = 0
        while (recorded := walker.extend(stepped, k)) is not None:
            for step in recorded.steps:
                segments.launch_step(step, stepped)
            k = recorded.chunk.stop
        stepped_events = walker.events
    compiled.run({name: v for name, v in whole.items() if name in compiled.args})
    bridge.sync()
    rows = []
    for name in written:
        d = diff_stats(stepped[name], whole[name])
        rows.append(ParityRow(name, d.count, d.changed, d.max_abs, d.max_rel, d.nonfinite_mismatch, d.first_changed))
    threads = _cpu_threads()
    arch = compiled.arch
    notes = timing_dependent(dataflow_facts(graph).args, graph.args, arch, threads)
    control = () if recorder is None else _paths_differ(stepped_events, compiled.last_events)
    random: tuple[str, ...] = ()
    if not all(row.identical for row in rows):
        random = tuple(
            f"{e.random_note()}: the stepped run and the compiled graph drew other numbers, so the buffers "
            f"after it differ ({REPRODUCIBLE_HINT})"
            for e in graph_effects(graph)
            if e.effects.random
        )
    return ParityReport(arch, threads, tuple(rows), notes, control, random)


def snapshot_usage(timeline: Timeline) -> SnapshotUsage:
    """Device memory ``timeline`` holds for stepping back."""
    store = timeline.store
    ring = 0 if timeline.marks is None else timeline.marks.budget_bytes
    return SnapshotUsage(
        store.bytes_held,
        timeline.mark_bytes,
        store.budget_bytes + ring,
        timeline.initial_bytes,
        len(store.steps),
        timeline.skipped,
    )


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
