"""The step debugger: a session that runs a compiled graph dispatch by dispatch, or fast between stops.

This module holds :class:`DebugSession`'s state, its position and its controls (``step``,
``continue_``, ``back``, ``goto`` ...). The rest of the class is one concept per module, as mixins:
running and going back (:mod:`~graphlab.debug.session_running`), what a target names
(:mod:`~graphlab.debug.session_lookup`), breakpoints and watches
(:mod:`~graphlab.debug.session_breakpoints`), buffer views (:mod:`~graphlab.debug.session_inspection`)
and reports (:mod:`~graphlab.debug.session_reports`). Over 500 lines on purpose: about 250 of them
are the controls' documentation and examples (run as doctests), kept with the controls.

A :class:`DebugSession` is layered over :class:`graphlab.compiled.CompiledGraph`, as TVM's debug
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

import time
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphlab.access import AccessFlag
from graphlab.boundscheck import Bounds, check_bounds, checked_bounds
from graphlab.compiled import CompiledGraph, compile_graph
from graphlab.dataflow import dataflow_facts
from graphlab.debug.breakpoints import (
    BreakpointSet,
    Every,
    Watch,
    evaluate_watches,
    nonfinite_mask,
)
from graphlab.debug.flow import Recorder
from graphlab.debug.redraws import Redraws
from graphlab.debug.report import (
    Decision,
    Fault,
    Halt,
    NonfiniteHit,
    Position,
    StaleViewError,
    Stop,
    StopReason,
    StopStats,
)
from graphlab.debug.runner import SegmentRunner
from graphlab.debug.session_breakpoints import SessionBreakpoints
from graphlab.debug.session_compare import SessionCompare
from graphlab.debug.session_errors import DebugError, RebuildError
from graphlab.debug.session_inspection import SessionInspection
from graphlab.debug.session_lookup import SessionLookup
from graphlab.debug.session_reports import SessionReports
from graphlab.debug.session_running import END, Goal, SessionRunning
from graphlab.debug.stats import BufferStats, buffer_stats, first_nonfinite
from graphlab.debug.steps import StepTable
from graphlab.debug.timeline import Timeline
from graphlab.debug.timing import TimingRecorder
from graphlab.errors import StaleGraphError
from graphlab.graph import Graph
from graphlab.plan import ControlEvent

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


class DebugSession(
    SessionRunning, SessionLookup, SessionBreakpoints, SessionInspection, SessionReports, SessionCompare
):
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
        (:mod:`graphlab.boundscheck`), and raise ``OutOfBoundsError`` before the session opens.
    """

    def __init__(
        self,
        graph: Graph | CompiledGraph,
        values: Mapping[str, Any] | None = None,
        /,
        *,
        options: DebugOptions | None = None,
        bounds: Bounds = "trust",
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
        self._redraws = Redraws(self.graph)  # ti.random dispatches run again after going back
        self._node_writes = self._writes()
        self._recorder: Recorder | None = None
        if self.graph.has_control_flow:  # the timeline is recorded as the session runs (graphlab.debug.flow)
            self._recorder = Recorder(compiled.plan, self.graph.sequences)
            table = StepTable(written=frozenset().union(*self._node_writes.values()), complete=False)
        else:
            steps = self.graph.steps()
            table = StepTable(steps, [self._node_writes.get(step.node_id, frozenset()) for step in steps])
        self._table = table
        self._segments = SegmentRunner(compiled, table, max_chunk=self.options.max_chunk)
        self._breaks = BreakpointSet(self.graph, table, self.graph.args)
        self._watches: list[Watch] = []
        self._timeline = Timeline(self._live, table, self.options.budget_bytes)
        self._timing = TimingRecorder()
        self._pos = 0
        self._state = 0  # bumped whenever the live buffers change
        self._nonfinite_reported: tuple[int, int] | None = None  # (state, position) of the last NaN/Inf report
        self.faults: list[Fault] = []

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
        return self._position_at(self._pos)

    def _position_at(self, k: int) -> Position:
        if k == self._pos:
            self._known(k)
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
        return [] if self._recorder is None else list(self._recorder.events)

    @property
    def decisions(self) -> list[Decision]:
        """Every flag read in the recorded timeline: where, which node, the value and the choice."""
        return [] if self._recorder is None else list(self._recorder.decisions)

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

    def _resolve(self, name: str) -> Any:
        return self._values[name]

    def _known(self, k: int) -> bool:
        """Whether step ``k`` exists; at the end of the recorded timeline (only where the position
        stands) this records the next steps, deciding the control points on the live buffers."""
        while k >= self._table.count and not self._table.complete:
            self._extend()
        return k < self._table.count

    def _extend(self) -> None:
        """Record the next visit of a plan segment; mark the table complete at the graph's end."""
        assert self._recorder is not None and self._pos == self._table.count
        recorded = self._recorder.extend(self._values, self._table.count)
        if recorded is None:
            self._table.complete = True
            return
        writes = [self._node_writes.get(step.node_id, frozenset()) for step in recorded.steps]
        self._table.append(recorded.steps, writes, recorded.scopes, recorded.blocks, recorded.chunk)

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
        t0, start = time.perf_counter(), self._pos
        if not self._known(self._pos):
            return self._stop("end", start, t0)
        fault = self._step_one()
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
        if not self._known(self._pos):
            return self._stop("end", self._pos, time.perf_counter())
        here, scanned = self._pos, [self._pos + 1]

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
        if isinstance(target, str) and self._id_kind(target) == "node":
            self.graph.node(target)  # raises with the ids nearby when unknown
            after = self._pos
            q = self._table.next_of_node(target, after)
            if q is None and self._table.complete:
                raise DebugError(
                    f"run_to({target!r}): no dispatch of {target!r} runs after step {self._pos}; "
                    "goto() or restart() to go back"
                )
            return self._advance(Goal(lambda t: t.next_of_node(target, after), f"a dispatch of {target!r}"), "step")
        q = self._lookup(target, "run_to")
        if q is not None and q < self._pos:
            raise DebugError(
                f"run_to({target!r}): step {q} is behind the current step {self._pos}; use goto({q}) or back()"
            )
        return self._advance(self._goal(target, q), "step")

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
        return self.goto(max(0, self._pos - steps))

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
        q = self._lookup(target, "goto")
        t0, start = time.perf_counter(), self._pos
        if q is None or q > self._pos:
            return self._advance(self._goal(target, q), "step", locations=False, conditions=False)
        if q < self._pos:
            self._redraws.rewound(self._table.steps, q, self._pos)
            self._back_to(q)
        return self._stop("start" if q == 0 else "step", start, t0)

    def restart(self) -> Stop:
        """Put every buffer back to the initial state (position 0); with control flow, forget the
        recorded timeline too (the flags decide anew)."""
        self._alive()
        t0, start = time.perf_counter(), self._pos
        restored = self._table.written_between(0, self._pos)
        self._redraws.rewound(self._table.steps, 0, self._pos)
        self._timeline.restore(0, self._pos)
        self._timeline.clear()
        self._pos, self._state = 0, self._state + 1
        if self._recorder is not None:
            self._recorder = self._recorder.fresh()
            self._table.reset()
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
        t0, start = time.perf_counter(), self._pos
        here = (self._state, self._pos)
        known: dict[str, np.ndarray] = {}
        for name in self._ordered(self._table.written):
            index = first_nonfinite(self._live[name])
            if index is None:
                continue
            if self._nonfinite_reported != here:  # report values already there once, before hunting on
                s = buffer_stats(self._live[name])
                hit = NonfiniteHit(None, name, s.nan, s.inf, index)
                note = (
                    f"{name!r} already holds NaN/Inf at step {self._pos}, where the hunt began; call "
                    "find_first_nonfinite() again to run on to where they spread (or go back before they "
                    "appeared: goto, restart)"
                )
                self._nonfinite_reported = here
                halt = Halt("nonfinite", nonfinite=hit, note=note, already=True)
                return self._stop("nonfinite", start, t0, halt)
            known[name] = nonfinite_mask(self._live[name])
        stop = self._advance(END, "end", locations=False, conditions=False, hunt=every, known=known)
        if stop.reason == "nonfinite":
            self._nonfinite_reported = (self._state, self._pos)
        return stop

    def _ordered(self, names: set[str] | frozenset[str]) -> list[str]:
        return [n for n in self._live if n in names]

    def _stop(
        self, reason: StopReason, start: int, t0: float, halt: Halt | None = None, *, restored: set[str] | None = None
    ) -> Stop:
        halt = halt or Halt(reason)
        for bp in halt.breakpoints:
            bp.hits += 1
        names: list[str] = []
        if self.options.stats_on_stop and start != self._pos:
            lo, hi = sorted((start, self._pos))
            names = self._ordered(self._table.written_between(lo, hi) if restored is None else restored)
        stats = StopStats(names, *_stats_access(self))
        pos = self.position  # with control flow, standing at a control point decides it here
        self._redraws.forward(self._table.steps, self._pos, self.notes)
        if reason == "step" and pos.step_id is None:
            reason = "end"
        watches = evaluate_watches(self._watches, self._resolve)
        if pos.step_id is None and self._prepared.write_back:
            self._prepared.finish(retry="stop at the end again (step() there) to copy them")
        return Stop(
            reason,
            pos.index,
            pos.total,
            pos.step_id,
            pos.node_id,
            pos.last_step_id,
            self._pos - start,
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

    def close(self) -> None:
        """Stop the processes this session keeps warm for ``compare``/``prepare_compare``.

        The session stays usable (a later comparison starts a new process); they are also stopped
        when the session is garbage-collected and at interpreter exit.
        """
        self._close_children()

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
    state = session._state

    def fresh() -> bool:
        live = ref()
        return live is not None and live._state == state

    def compute(name: str) -> BufferStats:
        live = ref()
        if live is None:  # pragma: no cover - fresh() is checked first
            raise StaleViewError("the debug session of this stop is gone")
        return buffer_stats(live._live[name])

    return compute, fresh
