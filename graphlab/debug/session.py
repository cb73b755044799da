"""The step debugger: a session that runs a compiled graph dispatch by dispatch, or fast between stops.

This module holds :class:`DebugSession`, one class that lists every verb: where it is
(``position``), its controls (``step``, ``continue_``, ``back``, ``goto`` ...), breakpoints and
watches, buffer views, reports and comparisons. Each verb delegates, with explicit arguments, to a
collaborator given the parts it works on when the session is made: the engine that runs forward and
back and owns the position (:class:`~graphlab.debug.session_running.SessionEngine`), what a target
names (:class:`~graphlab.debug.session_lookup.Targets`), the breakpoint set
(:class:`~graphlab.debug.breakpoints.BreakpointSet`) and watches
(:class:`~graphlab.debug.session_breakpoints.WatchList`), the inspection and report functions
(:mod:`~graphlab.debug.session_inspection`, :mod:`~graphlab.debug.session_reports`) and the other
sides of comparisons (:class:`~graphlab.debug.session_compare.OtherSides`). Long on purpose: most
of it is the verbs' documentation and examples (run as doctests), kept with the verbs.

A :class:`DebugSession` is layered over :class:`graphlab.run.compiled.CompiledGraph`, as TVM's debug
executor is over its graph executor: values are checked by the same ``prepare``, the kernels are the
graph's own, and a span with nothing to stop at runs as compiled ``ti.graph`` segments
(:mod:`graphlab.debug.runner`). Only the dispatches the user steps are launched from Python, one
kernel call each, timed with ``ti.sync()`` around it (:mod:`graphlab.debug.timing`).

Going back is exact. Before a dispatch runs from Python, the buffers it writes (from the data-flow
facts) are copied on the device into a :class:`~graphlab.debug.snapshots.SnapshotStore`; before a
run of compiled segments, the buffers it writes are copied into one of two reused slots (so a fast
run allocates nothing). A buffer's value at step ``q`` is any copy taken at a step ``j`` with no
write to it in between, so ``back()`` puts back only what changed. When the
copies needed were evicted (the store has a byte budget; the oldest go first), the session restores
the nearest state it can rebuild, at worst the initial state (always kept, outside the budget), and
replays forward. On archs where float atomics make the last bits depend on thread timing (several
CPU threads, GPUs), a replayed state can differ in those bits from the first run: run on one CPU
thread (``ti.init(arch=ti.cpu, cpu_max_num_threads=1)``) for bit-identical replays. A dispatch that draws
random numbers (``ti.random``) draws other ones when it runs again after going back: the session
warns then (:mod:`graphlab.debug.redraws`).

A graph with conditionals or loops has no fixed list of dispatches: the session records its timeline
as it runs (:mod:`graphlab.debug.flow`). When the position reaches a control point, the flag is
read on the host, as the compiled graph's plan cursor reads it, and the steps of the path taken are
appended: ``solve/iter[7]/jacobi``, ``branch/then/halve``. Going back and forth within the recorded
timeline follows it; going forward past its end decides anew; ``restart()`` forgets it. A
continue with nothing to stop at runs the plan's own compiled segments, reading each flag once,
as ``run()`` does. Positions past the recorded end are unknown until reached, so ``step_count``
and ``Position.total`` count the steps recorded so far until the run has ended once
(``Position.total_known``).

Examples
--------
For example (needs a Taichi runtime and buffers; see the tests)::

    dbg = g.debug(x=F_x, v=F_v, C=F_C, J=F_J, grid_v=F_grid_v, grid_m=F_grid_m)
    dbg.break_at("substep/substep_p2g")
    stop = dbg.continue_(); print(stop)
    # breakpoint at step 1/2000: next substep[0]/substep_p2g, last ran substep[0]/substep_reset_grid; ...
    dbg.inspect("grid_m")  # a heat map and device statistics in a notebook
"""

from __future__ import annotations

import os
import time
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphlab.analysis.dataflow import dataflow_facts
from graphlab.core.capture_format import is_capture_folder
from graphlab.core.errors import StaleGraphError
from graphlab.debug.breakpoints import (
    Breakpoint,
    BreakpointSet,
    Every,
    Watch,
    evaluate_watches,
    nonfinite_mask,
)
from graphlab.debug.capture import Capture
from graphlab.debug.compare import Divergence, Progress, StepsView, check_options, flag_buffers, is_module_folder
from graphlab.debug.compare_sides import COMMAND_TIMEOUT
from graphlab.debug.flow import Recorder
from graphlab.debug.inspect import BufferView, DiffView
from graphlab.debug.redraws import RandomReplayWarning, Redraws
from graphlab.debug.report import (
    Decision,
    Fault,
    Halt,
    NonfiniteHit,
    ParityReport,
    Position,
    SnapshotUsage,
    StaleViewError,
    StepRef,
    Stop,
    StopReason,
    StopStats,
)
from graphlab.debug.runner import SegmentRunner
from graphlab.debug.session_breakpoints import WatchList
from graphlab.debug.session_compare import ModuleRunnerFactory, OtherSides
from graphlab.debug.session_errors import DebugError, RebuildError
from graphlab.debug.session_inspection import buffer_of, copied_view, where
from graphlab.debug.session_lookup import Targets
from graphlab.debug.session_reports import loop_rows, parity_report, profile_ahead, snapshot_usage
from graphlab.debug.session_running import END, Goal, SessionEngine
from graphlab.debug.stats import BufferStats, buffer_stats, first_nonfinite
from graphlab.debug.steps import StepTable
from graphlab.debug.timeline import Timeline
from graphlab.debug.timing import TimingRecorder, TimingReport
from graphlab.kernelfacts.access import AccessFlag
from graphlab.model.graph import Graph
from graphlab.model.plan import ControlEvent
from graphlab.run.boundscheck import Bounds, check_bounds, checked_bounds
from graphlab.run.compiled import CompiledGraph, compile_graph

__all__ = ["DebugError", "DebugOptions", "DebugSession", "RebuildError"]


@dataclass(frozen=True)
class DebugOptions:
    """Settings of a debug session.

    Parameters
    ----------
    budget_bytes
        Device memory for the copies that make stepping back exact; ``None`` for a quarter of the
        free device memory. The initial state is kept apart from this budget, always.
    stats_on_stop
        Offer the statistics of the buffers each control wrote as ``Stop.stats`` (reduced on the
        device when first read).
    fast_forward
        Run spans without a stop as compiled segments; ``False`` launches every dispatch from Python
        (slower, but times every dispatch).
    max_chunk
        Most sequence repetitions in one compiled segment.
    """

    budget_bytes: int | None = None
    stats_on_stop: bool = True
    fast_forward: bool = True
    max_chunk: int = 1024


class DebugSession:
    """A step debugger over one compiled graph and one set of run values (see the module docs).

    Parameters
    ----------
    graph
        A :class:`graphlab.Graph` (checked and compiled here) or a compiled graph.
    values, **kwargs
        The run values, as for ``run`` and checked the same way. The session works in place on
        the ndarrays given (numpy arrays are copied to the device and copied back, all or none,
        whenever the session stops at the end).
    options
        :class:`DebugOptions` (snapshot budget, statistics at stops, fast-forward). A graph arg
        that is itself called ``options`` goes in the ``values`` dict.
    bounds
        ``"check"``: run the graph once first under Taichi's bounds checks, in a child process
        (:mod:`graphlab.run.boundscheck`), and raise ``OutOfBoundsError`` before the session opens.
    module_runner
        What ``compare(folder)`` runs an exported module with (``g.debug`` gives the exporter's
        ``ModuleRunner``; the debugger does not import the exporter). ``None``: comparing against
        a module folder raises ``DebugError``; comparing against an arch works either way.
    """

    def __init__(
        self,
        graph: Graph | CompiledGraph,
        values: Mapping[str, Any] | None = None,
        /,
        *,
        options: DebugOptions | None = None,
        bounds: Bounds = "trust",
        module_runner: ModuleRunnerFactory | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(graph, (CompiledGraph, Graph)):
            raise DebugError(
                f"DebugSession(graph, ...): expected a graphlab Graph or CompiledGraph, got {type(graph).__name__}"
            )
        self.options = _checked(options)
        compiled = graph if isinstance(graph, CompiledGraph) else compile_graph(graph)
        self.graph: Graph = compiled.graph
        self.arch = compiled.arch
        self._compiled = compiled
        mode = checked_bounds(bounds, f"debug() of graph {compiled.name!r}")
        self._prepared = compiled.prepare(values, **kwargs)
        if mode == "check":  # Taichi's bounds checks, in a child, before the session runs anything
            check_bounds(compiled.graph, self._prepared.values)
        self._values: dict[str, Any] = self._prepared.values
        owner: dict[int, str] = {}
        self._canon: dict[str, str] = {}  # arg name -> the first arg name bound to the same ndarray
        for name, arg in self.graph.args.items():
            if arg.kind == "ndarray" and name in self._values:
                self._canon[name] = owner.setdefault(id(self._values[name]), name)
        self._live = {c: self._values[c] for c in dict.fromkeys(self._canon.values())}
        self.notes: list[str] = []
        self.faults: list[Fault] = []
        self._redraws = Redraws(self.graph)  # ti.random dispatches run again after going back
        node_writes = self._writes()
        recorder: Recorder | None = None
        if self.graph.has_control_flow:  # the timeline is recorded as the session runs (graphlab.debug.flow)
            recorder = Recorder(compiled.plan, self.graph.sequences)
            table = StepTable(written=frozenset().union(*node_writes.values()), complete=False)
        else:
            steps = self.graph.steps()
            table = StepTable(steps, [node_writes.get(step.node_id, frozenset()) for step in steps])
        self._table = table
        self._segments = SegmentRunner(compiled, table, max_chunk=self.options.max_chunk)
        self._breaks = BreakpointSet(self.graph, table, self.graph.args)
        self._watches = WatchList(self.graph.args)
        self._timeline = Timeline(self._live, table, self.options.budget_bytes)
        self._timing = TimingRecorder()
        self._targets = Targets(self.graph, table, flow=recorder is not None)
        self._engine = SessionEngine(
            table, self._segments, self._timeline, self._breaks,
            values=self._values, canon=self._canon, live=self._live, recorder=recorder, node_writes=node_writes,
            redraws=self._redraws, timing=self._timing, fast_forward=self.options.fast_forward,
            notes=self.notes, faults=self.faults,
        )  # fmt: skip
        self._others = OtherSides(module_runner)
        #: The field capture this session was opened on (``gl.open_capture``), for ``compare(dbg.capture)``.
        self.capture: Capture | None = None
        self._nonfinite_reported: tuple[int, int] | None = None  # (state, position) of the last NaN/Inf report

    def _writes(self) -> dict[str, frozenset[str]]:
        """The buffers (canonical names) each dispatch node writes, from the data-flow facts."""
        facts = dataflow_facts(self.graph)
        untracked: set[str] = set()
        writes: dict[str, frozenset[str]] = {}
        for node_id, accesses in facts.args.items():
            written = set()
            for arg, flags in accesses.items():
                if flags & AccessFlag.WRITE:
                    if arg in self._canon:
                        written.add(self._canon[arg])
                    else:
                        untracked.add(arg)
            writes[node_id] = frozenset(written)
        if untracked:
            note = (
                f"the graph writes texture(s) {', '.join(sorted(untracked))}, which snapshots do not cover: "
                "back(), goto() and restart() leave them as they are"
            )
            self.notes.append(note)
            warnings.warn(note, RuntimeWarning, stacklevel=4)
        return writes

    # --- where the session is -------------------------------------------------------------------

    @property
    def position(self) -> Position:
        """The current position: dispatches done, and the step id of the next one.

        With control flow, standing at a control point decides it (reads the flag) to name the next step.
        """
        return self._position_at(self._engine.pos)

    def _position_at(self, k: int) -> Position:
        if k == self._engine.pos:
            self._engine.known(k)
        table = self._table
        steps, n = table.steps, table.count
        nxt = steps[k] if k < n else None
        last = steps[k - 1] if k > 0 else None
        return Position(
            k, n, nxt.id if nxt else None, nxt.node_id if nxt else None, last.id if last else None, table.complete
        )

    @property
    def step_count(self) -> int:
        """Dispatches of the unrolled graph; with control flow, those recorded so far (all of them
        once the run has reached its end: ``position.total_known``)."""
        return self._table.count

    @property
    def events(self) -> list[ControlEvent]:
        """Branches taken and loop iterations in the recorded timeline, as ``compiled.last_events``
        gives them for a run (a loop's event comes when it ends); empty without control flow."""
        recorder = self._engine.recorder
        return [] if recorder is None else list(recorder.events)

    @property
    def decisions(self) -> list[Decision]:
        """Every flag read in the recorded timeline: where, which node, the value and the choice."""
        recorder = self._engine.recorder
        return [] if recorder is None else list(recorder.decisions)

    @property
    def buffers(self) -> Mapping[str, Any]:
        """The live ndarrays by arg name (the values the session works on)."""
        return {name: self._values[name] for name in self._canon}

    def _alive(self) -> None:
        if not self._compiled.is_current():
            raise StaleGraphError(
                f"this debug session of graph {self.graph.name!r} was made for a Taichi runtime that "
                "ti.reset()/ti.init() replaced; its buffers are gone. Start a new one: g.debug(...)"
            )

    # --- controls -----------------------------------------------------------------------------

    def step(self) -> Stop:
        """Run one dispatch from Python (timed, with its written buffers saved for ``back()``).

        Returns
        -------
        Stop
            ``reason`` ``"step"`` (``"end"`` at the end, ``"fault"`` if Taichi raised: then the
            dispatch's buffers are back as before it), and the new position.

        Raises
        ------
        StaleGraphError
            ``ti.init()``/``ti.reset()`` replaced the runtime the session was made for.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> stop = dbg.step()
        >>> stop.reason, stop.last_step_id, stop.step_id
        ('step', 'steps[0]/saxpy', 'steps[0]/again')
        >>> dbg.inspect("y").numpy()
        array([1., 1., 1., 1.], dtype=float32)
        """
        self._alive()
        engine = self._engine
        t0, start = time.perf_counter(), engine.pos
        if not engine.known(engine.pos):
            return self._stop("end", start, t0)
        fault = engine.step()
        if fault is not None:
            return self._stop("fault", start, t0, Halt("fault", fault=fault))
        return self._stop("step", start, t0)

    def step_over(self) -> Stop:
        """Run the rest of the current (innermost) sequence repetition, loop iteration or branch;
        breakpoints still stop it.

        Returns
        -------
        Stop
            ``reason`` ``"step"``, or ``"breakpoint"``, ``"fault"``, ``"end"`` when one came first.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.step().step_id  # inside repetition steps[0]
        'steps[0]/again'
        >>> dbg.step_over().step_id  # the rest of steps[0]
        'steps[1]/saxpy'
        """
        self._alive()
        here = self._engine.pos
        if not self._engine.known(here):
            return self._stop("end", here, time.perf_counter())
        scanned = [here + 1]

        def find(table: StepTable) -> int | None:
            end, scanned[0] = table.scope_end(here, scanned[0])
            return end

        return self._advance(Goal(find, "the end of this repetition"), "step")

    def continue_(self) -> Stop:
        """Run to the next breakpoint, a condition turning true, a fault, or the end.

        Spans with nothing to stop at run as compiled ``ti.graph`` segments, at compiled speed.
        At the end, numpy arrays given as run values receive the results.

        Returns
        -------
        Stop
            ``reason`` ``"breakpoint"`` (``stop.breakpoint`` says which), ``"condition"``,
            ``"fault"`` or ``"end"``.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> bp = dbg.break_at("steps[2]")
        >>> stop = dbg.continue_()
        >>> stop.reason, stop.index, stop.step_id
        ('breakpoint', 4, 'steps[2]/saxpy')
        >>> dbg.continue_().reason
        'end'
        """
        return self._advance(END, "end")

    def run_to(self, target: str | int) -> Stop:
        """Run forward to a step index, a step id, or the next dispatch of a node id.

        Breakpoints on the way stop the run first.

        Parameters
        ----------
        target
            A step index (``3``: after 3 dispatches), a step id (``"steps[1]/again"``), a repetition
            (``"steps[2]"``: its start) or a node id (``"steps/again"``: its next dispatch).

        Returns
        -------
        Stop
            The position before ``target``, or a breakpoint, fault or the end reached first.

        Raises
        ------
        DebugError
            ``target`` lies behind the current position (use :meth:`goto` or :meth:`back`), or no
            dispatch of that node runs after it.
        GraphError
            No such step or node; the message lists the ids nearby.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.run_to("steps[1]/again").index
        3
        >>> dbg.run_to("steps/saxpy").step_id  # the next dispatch of node steps/saxpy
        'steps[2]/saxpy'
        >>> dbg.inspect("y").numpy()
        array([4., 4., 4., 4.], dtype=float32)
        """
        self._alive()
        after = self._engine.pos
        if isinstance(target, str) and self._targets.id_kind(target) == "node":
            self.graph.node(target)  # raises with the ids nearby when unknown
            q = self._table.next_of_node(target, after)
            if q is None and self._table.complete:
                raise DebugError(
                    f"run_to({target!r}): no dispatch of {target!r} runs after step {after}; "
                    "goto() or restart() to go back"
                )
            return self._advance(Goal(lambda t: t.next_of_node(target, after), f"a dispatch of {target!r}"), "step")
        q = self._targets.lookup(target, "run_to")
        if q is not None and q < after:
            raise DebugError(
                f"run_to({target!r}): step {q} is behind the current step {after}; use goto({q}) or back()"
            )
        return self._advance(self._targets.goal(target, q), "step")

    def back(self, steps: int = 1) -> Stop:
        """Go back ``steps`` dispatches (exactly: see the module docs).

        The buffers the skipped dispatches wrote are restored from device copies (or rebuilt by
        replaying from an earlier state when the copies were evicted).

        Parameters
        ----------
        steps
            How many dispatches to undo; going back past the start stops at the start.

        Returns
        -------
        Stop
            The new position (``reason`` ``"start"`` at position 0, else ``"step"``).

        Raises
        ------
        DebugError
            ``steps`` is not an int >= 0.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.continue_().index
        6
        >>> dbg.back(2).step_id
        'steps[2]/saxpy'
        >>> dbg.inspect("y").numpy()
        array([4., 4., 4., 4.], dtype=float32)
        """
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise DebugError(f"back({steps!r}): give a number of dispatches >= 0")
        return self.goto(max(0, self._engine.pos - steps))

    def goto(self, target: str | int) -> Stop:
        """Travel to a position (a step index 0..step_count, a step id or a repetition id), either way.

        Going forward runs without stopping at breakpoints; with control flow, past the recorded
        timeline it decides as it goes, and stops at the end if the run ends first.

        Parameters
        ----------
        target
            A step index (``0``: the start, ``step_count``: the end), a step id (``"steps[1]/again"``:
            just before it runs) or a repetition id (``"steps[2]"``: its start).

        Returns
        -------
        Stop
            The new position (``reason`` ``"start"`` at position 0, else ``"step"``).

        Raises
        ------
        DebugError
            An index out of range, or a node id (it names many steps: name one).
        GraphError
            No such step; the message lists the ids nearby.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.goto("steps[2]").index
        4
        >>> stop = dbg.goto(1)
        >>> stop.reason, stop.moved, stop.step_id
        ('step', -3, 'steps[0]/again')
        """
        self._alive()
        q = self._targets.lookup(target, "goto")
        t0, start = time.perf_counter(), self._engine.pos
        if q is None or q > start:
            return self._advance(self._targets.goal(target, q), "step", locations=False, conditions=False)
        if q < start:
            self._engine.rewind(q)
        return self._stop("start" if q == 0 else "step", start, t0)

    def restart(self) -> Stop:
        """Put every buffer back to the initial state (position 0); with control flow, forget the
        recorded timeline too (the flags decide anew)."""
        self._alive()
        t0, start = time.perf_counter(), self._engine.pos
        restored = self._engine.restart()
        return self._stop("start", start, t0, restored=restored)

    def find_first_nonfinite(self, *, every: Every = "repetition") -> Stop:
        """Run forward to the first dispatch that leaves NaN or Inf in a buffer it writes.

        Written buffers are checked on the device after every repetition of a top-level sequence
        (with control flow, after every run of a compiled segment, such as a loop iteration;
        ``every="dispatch"``: after every dispatch); the repetition where one appears is stepped
        again dispatch by dispatch, so the stop names the exact dispatch, buffer, count and first
        index (``stop.nonfinite``). Breakpoints do not stop the hunt.

        NaN/Inf already in the buffers where the hunt begins (bad start values) are reported once,
        at once (``stop.already``); called again from there, or after a find, the hunt passes over
        the values it reported and stops where NaN/Inf spread to elements that were finite.
        """
        self._alive()
        if every not in ("repetition", "dispatch"):
            raise DebugError(f"find_first_nonfinite(every={every!r}): choose 'repetition' or 'dispatch'")
        t0, start = time.perf_counter(), self._engine.pos
        here = (self._engine.state, start)
        known: dict[str, np.ndarray] = {}
        for name in self._ordered(self._table.written):
            index = first_nonfinite(self._live[name])
            if index is None:
                continue
            if self._nonfinite_reported != here:  # report values already there once, before hunting on
                s = buffer_stats(self._live[name])
                hit = NonfiniteHit(None, name, s.nan, s.inf, index)
                note = (
                    f"{name!r} already holds NaN/Inf at step {start}, where the hunt began; call "
                    "find_first_nonfinite() again to run on to where they spread (or go back before they "
                    "appeared: goto, restart)"
                )
                self._nonfinite_reported = here
                halt = Halt("nonfinite", nonfinite=hit, note=note, already=True)
                return self._stop("nonfinite", start, t0, halt)
            known[name] = nonfinite_mask(self._live[name])
        stop = self._advance(END, "end", locations=False, conditions=False, hunt=every, known=known)
        if stop.reason == "nonfinite":
            self._nonfinite_reported = (self._engine.state, self._engine.pos)
        return stop

    def _advance(
        self,
        goal: Goal,
        reason: StopReason,
        *,
        locations: bool = True,
        conditions: bool = True,
        hunt: Every | None = None,
        known: Mapping[str, np.ndarray] | None = None,
    ) -> Stop:
        """Run forward to ``goal`` (the engine's :meth:`~SessionEngine.advance`) and stop there."""
        self._alive()
        t0, start = time.perf_counter(), self._engine.pos
        halt = self._engine.advance(goal, reason, locations=locations, conditions=conditions, hunt=hunt, known=known)
        return self._stop(halt.reason, start, t0, halt)

    def _ordered(self, names: set[str] | frozenset[str]) -> list[str]:
        return [n for n in self._live if n in names]

    def _stop(
        self, reason: StopReason, start: int, t0: float, halt: Halt | None = None, *, restored: set[str] | None = None
    ) -> Stop:
        halt = halt or Halt(reason)
        for bp in halt.breakpoints:
            bp.hits += 1
        names: list[str] = []
        now = self._engine.pos
        if self.options.stats_on_stop and start != now:
            lo, hi = sorted((start, now))
            names = self._ordered(self._table.written_between(lo, hi) if restored is None else restored)
        stats = StopStats(names, *_stats_access(self))
        pos = self.position  # with control flow, standing at a control point decides it here
        self._redraws.forward(self._table.steps, now, self.notes)
        if reason == "step" and pos.step_id is None:
            reason = "end"
        watches = evaluate_watches(list(self._watches), self._values.__getitem__)
        if pos.step_id is None and self._prepared.write_back:
            self._prepared.finish(retry="stop at the end again (step() there) to copy them")
        return Stop(
            reason,
            pos.index,
            pos.total,
            pos.step_id,
            pos.node_id,
            pos.last_step_id,
            now - start,
            time.perf_counter() - t0,
            watches,
            stats,
            halt.breakpoints,
            halt.fault,
            halt.nonfinite,
            halt.note,
            pos.total_known,
            halt.already,
        )

    # --- breakpoints and watches ----------------------------------------------------------------

    def break_at(self, target: str | int) -> Breakpoint:
        """Stop before a node's every dispatch (``substep/p2g``), one step (``substep[37]/p2g``), a
        repetition (``substep[37]``), every repetition of a sequence (``substep``) or a step index.

        Parameters
        ----------
        target
            A node id, step id, repetition id, sequence use id or step index, as above.

        Returns
        -------
        Breakpoint
            The record (``id``, ``kind``, ``hits``); :meth:`remove_breakpoint` takes it or its id.

        Raises
        ------
        GraphError
            No such node, step or repetition; the message lists the ids nearby.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.break_at("steps/again")
        Breakpoint(id=1, kind='node', target='steps/again', every=None, enabled=True, hits=0)
        >>> dbg.continue_().step_id, dbg.continue_().step_id
        ('steps[0]/again', 'steps[1]/again')
        """
        return self._breaks.add_location(target)

    def break_when(self, condition: str, *, every: Every = "repetition") -> Breakpoint:
        """Stop after the dispatch where ``condition`` turns true (reduced on the device; see
        :mod:`graphlab.debug.breakpoints` for when it is checked)."""
        return self._breaks.add_condition(condition, every)

    @property
    def breakpoints(self) -> list[Breakpoint]:
        """The breakpoints, in the order they were set.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> bp = dbg.break_at("steps/again")
        >>> bp = dbg.break_at("steps[2]")
        >>> stop = dbg.continue_()
        >>> [str(bp) for bp in dbg.breakpoints]
        ['#1 at node steps/again, 1 hits', '#2 at repetition steps[2], 0 hits']
        """
        return list(self._breaks)

    def remove_breakpoint(self, which: Breakpoint | int | str) -> None:
        """Remove one breakpoint (the record, its id, or its target text)."""
        self._breaks.remove(which)

    def clear_breakpoints(self) -> None:
        """Remove every breakpoint."""
        self._breaks.clear()

    def watch(self, expression: str) -> Watch:
        """Add an expression evaluated (on the device) at every stop: ``stop.watches[text]``.

        Parameters
        ----------
        expression
            Reductions of buffers and arithmetic on them, e.g. ``"y.max()"``,
            ``"isnan(x).any() or x.mean() > 1"`` (the grammar: :mod:`graphlab.debug.expr`). Nothing
            typed is executed as Python.

        Returns
        -------
        Watch
            The watch (the same one when that expression is watched already).

        Raises
        ------
        ExprError
            The expression does not parse, or names no buffer of the graph.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.watch("y.max() - y.min()")
        Watch(text='y.max() - y.min()')
        >>> dbg.watch("y.sum()")
        Watch(text='y.sum()')
        >>> dbg.run_to(3).watches
        {'y.max() - y.min()': 0.0, 'y.sum()': 12.0}
        """
        return self._watches.add(expression)

    def unwatch(self, expression: str | None = None) -> None:
        """Remove one watch (by its text), or every watch."""
        self._watches.remove(expression)

    @property
    def watches(self) -> list[str]:
        """The watch expressions."""
        return [w.text for w in self._watches]

    # --- buffers --------------------------------------------------------------------------------

    def inspect(self, name: str, *, at: str | int | None = None) -> BufferView:
        """A view of buffer ``name`` now (or at a past or future position ``at``, rebuilt on copies;
        with control flow, a position of the recorded timeline).

        Parameters
        ----------
        name
            An ndarray arg of the graph.
        at
            A step index, step id or repetition id; ``None`` for the current position. The session
            does not move.

        Returns
        -------
        BufferView
            Shape, dtype, device statistics, ``numpy()`` values and pictures (in a notebook: a heat
            map) of the buffer at that position.

        Raises
        ------
        DebugError
            ``name`` is no ndarray arg, or ``at`` is out of range.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> stop = dbg.run_to(3)
        >>> print(dbg.inspect("y"))
        y: f32[4] before steps[1]/again (step 3; 3 of 6 dispatches done); last written by steps[1]/saxpy (saxpy, step 2)
          f32[4]: min 3.0 max 3.0 mean 3 std 0, 0 NaN, 0 Inf, 0 zeros
        >>> dbg.inspect("y", at="steps[2]").numpy()  # ahead, on copies
        array([4., 4., 4., 4.], dtype=float32)
        """
        self._alive()
        canon = buffer_of(name, self._canon, self.graph.name)
        now = self._engine.pos
        q = now if at is None else self._targets.index(at, "inspect")
        place = where(self._table, self._position_at(q), canon, q)
        if q == now:
            engine, state = self._engine, self._engine.state
            return BufferView(name, self._values[name], place, fresh=lambda: engine.state == state)
        return copied_view(name, self._engine.value_at(canon, q), place)

    def diff(self, name: str, a: str | int, b: str | int | None = None) -> DiffView:
        """How buffer ``name`` changed from position ``a`` to ``b`` (default: the current position)."""
        self._alive()
        canon = buffer_of(name, self._canon, self.graph.name)
        qa = self._targets.index(a, "diff")
        qb = self._engine.pos if b is None else self._targets.index(b, "diff")
        return DiffView(name, qa, qb, self._engine.value_at(canon, qa), self._engine.value_at(canon, qb))

    def last_writer(self, name: str, *, at: str | int | None = None) -> StepRef | None:
        """The step that last wrote buffer ``name`` before the current position (or ``at``)."""
        canon = buffer_of(name, self._canon, self.graph.name)
        q = self._engine.pos if at is None else self._targets.index(at, "last_writer")
        k = self._table.last_write_before(canon, q)
        return None if k is None else self._table.ref(k)

    # --- reports --------------------------------------------------------------------------------

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
        return self._timing.report(loop_rows(self.graph, self._engine.recorder))

    def profile(self, *, steps: int | None = None) -> TimingReport:
        """Time every dispatch from here to the end (or the next ``steps``) on copies of the buffers.

        The session does not move; like TVM's debug executor, each dispatch runs alone between two
        ``ti.sync()``. With control flow, past the recorded timeline the flags are read on the copies.
        """
        self._alive()
        engine = self._engine
        values = engine.detached(engine.pos)
        return profile_ahead(self._table, self._segments, engine.recorder, values, start=engine.pos, steps=steps)

    def parity(self) -> ParityReport:
        """Run the initial state through the compiled graph and, dispatch by dispatch, through the
        kernels (both on copies), and compare every written buffer at the end.

        With control flow the stepped run decides on its own copies and the paths are compared too
        (``ParityReport.control``); the compiled graph's ``last_events`` then describe this run.
        """
        self._alive()
        engine = self._engine
        stepped, whole = engine.detached(0), engine.detached(0)
        written = self._ordered(self._table.written)
        return parity_report(
            self.graph, self._compiled, self._table, self._segments, engine.recorder,
            stepped=stepped, whole=whole, written=written,
        )  # fmt: skip

    @property
    def snapshots(self) -> SnapshotUsage:
        """Device memory held for stepping back."""
        return snapshot_usage(self._timeline)

    @property
    def segments(self) -> list[tuple[Any, ...]]:
        """Keys of the compiled segments built so far (``("reps", "substep", 256)`` ...)."""
        return self._segments.cached

    # --- comparisons ----------------------------------------------------------------------------

    def compare(
        self,
        against: str | os.PathLike[str] | Capture,
        *,
        rtol: float = 0.0,
        atol: float = 0.0,
        progress: Progress | None = None,
        timeout: float = COMMAND_TIMEOUT,
        keep: bool = True,
    ) -> Divergence | None:
        """Run this graph from this session's start values here and on arch ``against``; the first
        dispatch where they disagree, or None when every buffer agrees to the end.

        The session does not move: both runs work on copies of the start values. The other arch runs
        in a child process (one Taichi runtime holds one arch). The runs are compared at segment
        boundaries first, then the first span that differs is replayed dispatch by dispatch, so
        each side costs about one run of the graph. A branch or loop iteration count that differs is
        reported as a ``"control"`` divergence. The other arch's process is kept for the next
        comparison against it (see ``keep`` and :meth:`prepare_compare`).

        Parameters
        ----------
        against
            An arch name (``"x64"``, ``"vulkan"``, ``"cuda"``, ``"metal"`` ...), or the folder of a
            module ``gl.export`` wrote: its deployed graph is compared at the end of the run, and
            when it differs a debug variant (one module graph per dispatch, exported on the fly for
            the same arch) names the dispatch. Or a field capture (``dbg.capture`` of
            ``gl.open_capture``, or its folder): the notebook runs from the captured inputs and is
            compared with the recorded flag reads, segment ends and outputs
            (:mod:`graphlab.debug.compare_capture`); the divergence names the segment and, where
            the data decides it, the dispatch.
        rtol, atol
            Tolerances as in ``numpy.isclose`` (NaN equals NaN); both 0 (the default): bit for bit.
        progress
            Called as ``progress(stage, fraction)`` as the comparison goes (the notebook widget's bar).
        timeout
            Seconds the other arch's process may take over one command (start, a span, a dispatch)
            before it is taken as hung: it is stopped and the comparison fails naming the command.
        keep
            Keep the other arch's process alive, owned by this session, so the next comparison
            against that arch skips its start (Taichi, ``ti.init``, compiling the graph) and pays
            only the search; it is closed by ``close()``, when the session goes away, and at exit.
            ``False``: close it after the answer. A process whose comparison failed is never kept.

        Returns
        -------
        Divergence or None
            The step, node, buffer, first differing index, both values, count and errors;
            ``str()`` says it in a sentence and ``picture()`` draws the difference.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.compare("x64") is None  # the same arch in another process: bit for bit the same
        True
        >>> dbg.position.index  # the session did not move
        0
        """
        kinds = [arg.kind for arg in self.graph.args.values()]
        capture = self._others.capture_of(against, self.graph)  # read and checked before anything runs
        named = against.folder if isinstance(against, Capture) else against  # a capture's folder names it
        check_options(self.graph.name, kinds, named, rtol, atol, timeout)
        self._alive()
        if capture is None and is_module_folder(named):
            self._others.check_module(named)  # before anything runs
        with warnings.catch_warnings():  # the search goes back and forth on copies; a random dispatch is
            warnings.simplefilter("ignore", RandomReplayWarning)  # reported as the divergence itself
            start = self._start_values() if capture is None else capture.start_values()
            mine = DebugSession(self._compiled, start)  # the search moves this one, on copies
            view = mine._steps_view()
            if capture is not None:
                return self._others.against_capture(
                    mine, view, capture, rtol=float(rtol), atol=float(atol), progress=progress
                )
            if is_module_folder(named):
                return self._others.against_module(
                    mine, view, named, start, rtol=float(rtol), atol=float(atol), progress=progress
                )
            return self._others.against_arch(
                mine, view, str(against), start, rtol=float(rtol), atol=float(atol), progress=progress,
                timeout=timeout, keep=bool(keep),
            )  # fmt: skip

    def prepare_compare(self, against: str, *, timeout: float = COMMAND_TIMEOUT, wait: bool = False) -> None:
        """Start the process a later ``compare(against)`` runs the other side in, and return at once.

        It imports Taichi, starts ``against``, compiles this graph and runs it once there from the
        session's start values (so the kernels are compiled too) while you work, so the comparison
        then pays only the search. Errors of the start (Taichi falls back to another
        arch, the kernels fail to load there) are raised by that ``compare``, as without
        ``prepare_compare``, or here with ``wait=True`` (which returns once the process is ready).
        An exported module folder or a capture needs no preparing; calling again is harmless.

        Examples
        --------
        >>> dbg = demo_graph().debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.prepare_compare("x64", wait=True)
        >>> dbg.compare("x64") is None  # the prepared process runs the other side
        True
        >>> dbg.close()  # stops it (so does the session going away)
        """
        kinds = [arg.kind for arg in self.graph.args.values()]
        check_options(self.graph.name, kinds, against, 0.0, 0.0, timeout)
        self._alive()
        if is_module_folder(against) or is_capture_folder(against):  # nothing to start for these
            return
        start = self._start_values()
        self._others.prepare(self.graph, str(against), here=self.arch, start=start, timeout=timeout, wait=wait)

    def compare_pid(self, against: str) -> int | None:
        """The process id of the warm process for ``compare(against)``, or None when none runs."""
        return self._others.pid(against)

    def _start_values(self) -> dict[str, Any]:
        """The graph's run values as at the start, the written buffers as new copies."""
        return {k: v for k, v in self._engine.detached(0).items() if k in self._compiled.args}

    def _steps_view(self) -> StepsView:
        """What the comparison reads of this session's steps (see :class:`~graphlab.debug.compare.StepsView`)."""
        return StepsView(self._table, self._engine.known, self._ordered, flag_buffers(self.graph, self._canon))

    def close(self) -> None:
        """Stop the processes this session keeps warm for ``compare``/``prepare_compare``.

        The session stays usable (a later comparison starts a new process); they are also stopped
        when the session is garbage-collected and at interpreter exit.
        """
        self._others.close()

    def __repr__(self) -> str:
        return (
            f"<graphlab.DebugSession of {self.graph.name!r} on {self.arch}: {self.position}, "
            f"{len(self._breaks)} breakpoints, {len(self._watches)} watches>"
        )


def _checked(options: DebugOptions | None) -> DebugOptions:
    """The options, checked before anything is compiled or copied."""
    if options is None:
        return DebugOptions()
    if not isinstance(options, DebugOptions):
        raise DebugError(f"options= takes a graphlab.debug.DebugOptions, got {type(options).__name__}")
    budget = options.budget_bytes
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0):
        raise DebugError(
            f"DebugOptions(budget_bytes={budget!r}): give a positive int of bytes, or None for a quarter "
            "of the free device memory"
        )
    if isinstance(options.max_chunk, bool) or not isinstance(options.max_chunk, int) or options.max_chunk < 1:
        raise DebugError(f"DebugOptions(max_chunk={options.max_chunk!r}): give an int >= 1 (repetitions per segment)")
    return options


def _stats_access(session: DebugSession) -> tuple[Callable[[str], BufferStats], Callable[[], bool]]:
    """How a stop's statistics are computed and whether they still can be; through a weak reference,
    so a kept stop does not keep the session (and its device copies) alive."""
    ref = weakref.ref(session)
    engine = session._engine
    state = engine.state

    def fresh() -> bool:
        live = ref()
        return live is not None and live._engine.state == state

    def compute(name: str) -> BufferStats:
        live = ref()
        if live is None:  # pragma: no cover - fresh() is checked first
            raise StaleViewError("the debug session of this stop is gone")
        return buffer_stats(live._live[name])

    return compute, fresh
