"""The step debugger: a session that runs a compiled graph dispatch by dispatch, or fast between stops.

A :class:`DebugSession` is layered over :class:`graphlab.compiled.CompiledGraph`, as TVM's debug
executor is over its graph executor: values are checked by the same ``prepare``, the kernels are the
graph's own, and a span with nothing to stop at runs as compiled ``ti.graph`` segments
(:mod:`graphlab.debug.segments`). Only the dispatches the user steps are launched from Python, one
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
thread (``ti.init(arch=ti.cpu, cpu_max_num_threads=1)``) for bit-identical replays.

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

import dataclasses
import time
import traceback
import warnings
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import zip_longest
from typing import TYPE_CHECKING, Any

from graphlab.bridge import runtime as bridge
from graphlab.compiled import CompiledGraph, compile_graph
from graphlab.dataflow import WRITE, dataflow_facts
from graphlab.debug.breakpoints import (
    Breakpoint,
    BreakpointSet,
    Check,
    ConditionCheck,
    Every,
    NonfiniteHunt,
    Watch,
    compile_watch,
    evaluate_watches,
)
from graphlab.debug.flow import Recorder
from graphlab.debug.inspect import BufferView, DiffView, Where
from graphlab.debug.report import (
    Decision,
    Fault,
    Halt,
    NonfiniteHit,
    ParityReport,
    ParityRow,
    Position,
    SnapshotUsage,
    StaleViewError,
    StepRef,
    Stop,
    StopReason,
    StopStats,
    timing_dependent,
)
from graphlab.debug.segments import Granularity, SegmentRunner, StepTable, Timeline, step_kind, unknown_id
from graphlab.debug.stats import BufferStats, buffer_stats, diff_stats, first_nonfinite
from graphlab.debug.timing import TimingRecorder, TimingReport, timed
from graphlab.errors import GraphlabError, StaleGraphError
from graphlab.ids import parse_id, runs_once
from graphlab.nodes import Loop
from graphlab.plan import ControlEvent

if TYPE_CHECKING:
    from graphlab.debug.segments import Piece
    from graphlab.graph import Graph

__all__ = ["DebugError", "DebugOptions", "DebugSession", "ReplayError"]


class DebugError(GraphlabError, ValueError):
    """A debugger control was asked for something it cannot do (a position out of range, a run
    backwards); nothing ran."""


class ReplayError(GraphlabError, RuntimeError):
    """Replaying dispatches that ran before, to rebuild a past state, failed."""


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
    """

    def __init__(
        self,
        graph: Graph | CompiledGraph,
        values: Mapping[str, Any] | None = None,
        /,
        *,
        options: DebugOptions | None = None,
        **kwargs: Any,
    ) -> None:
        from graphlab.graph import Graph

        if not isinstance(graph, (CompiledGraph, Graph)):
            raise DebugError(
                f"DebugSession(graph, ...): expected a graphlab Graph or CompiledGraph, got {type(graph).__name__}"
            )
        self.options = _checked(options)
        compiled = graph if isinstance(graph, CompiledGraph) else compile_graph(graph)
        self.graph: Graph = compiled.graph
        self.arch = compiled.arch
        self._compiled = compiled
        self._prepared = compiled.prepare(values, **kwargs)
        self._values: dict[str, Any] = self._prepared.values
        owner: dict[int, str] = {}
        self._canon: dict[str, str] = {}  # arg name -> the first arg name bound to the same ndarray
        for name, arg in self.graph.args.items():
            if arg.kind == "ndarray" and name in self._values:
                self._canon[name] = owner.setdefault(id(self._values[name]), name)
        self._live = {c: self._values[c] for c in dict.fromkeys(self._canon.values())}
        self.notes: list[str] = []
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
        self.faults: list[Fault] = []

    def _writes(self) -> dict[str, frozenset[str]]:
        """The buffers (canonical names) each dispatch node writes, from the data-flow facts."""
        facts = dataflow_facts(self.graph)
        untracked: set[str] = set()
        writes: dict[str, frozenset[str]] = {}
        for node_id, accesses in facts.args.items():
            written = set()
            for arg, flags in accesses.items():
                if flags & WRITE:
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

        return self._advance(_Goal(find, "the end of this repetition"), "step")

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
        return self._advance(_END, "end")

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
            return self._advance(_Goal(lambda t: t.next_of_node(target, after), f"a dispatch of {target!r}"), "step")
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
            self._back_to(q)
        return self._stop("start" if q == 0 else "step", start, t0)

    def restart(self) -> Stop:
        """Put every buffer back to the initial state (position 0); with control flow, forget the
        recorded timeline too (the flags decide anew)."""
        self._alive()
        t0, start = time.perf_counter(), self._pos
        restored = self._table.written_between(0, self._pos)
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
        """
        self._alive()
        if every not in ("repetition", "dispatch"):
            raise DebugError(f"find_first_nonfinite(every={every!r}): choose 'repetition' or 'dispatch'")
        t0, start = time.perf_counter(), self._pos
        for name in self._ordered(self._table.written):
            index = first_nonfinite(self._live[name])
            if index is not None:
                s = buffer_stats(self._live[name])
                hit = NonfiniteHit(None, name, s.nan, s.inf, index)
                note = (
                    f"{name!r} already holds NaN/Inf at step {self._pos}; the hunt looks for the dispatch that "
                    "first writes them, so go back before they appeared (goto, restart) and hunt again"
                )
                return self._stop("nonfinite", start, t0, Halt("nonfinite", nonfinite=hit, note=note))
        return self._advance(_END, "end", locations=False, conditions=False, hunt=every)

    # --- breakpoints and watches ------------------------------------------------------------------

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
        watch = compile_watch(expression, self.graph.args)
        for existing in self._watches:
            if existing.text == watch.text:
                return existing
        self._watches.append(watch)
        return watch

    def unwatch(self, expression: str | None = None) -> None:
        """Remove one watch (by its text), or every watch."""
        if expression is None:
            self._watches.clear()
            return
        kept = [w for w in self._watches if w.text != expression.strip()]
        if len(kept) == len(self._watches):
            listed = ", ".join(repr(w.text) for w in self._watches) or "none"
            raise DebugError(f"unwatch({expression!r}): no such watch; watches: {listed}")
        self._watches = kept

    @property
    def watches(self) -> list[str]:
        """The watch expressions."""
        return [w.text for w in self._watches]

    # --- inspection -------------------------------------------------------------------------------

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
        canon = self._buffer(name)
        q = self._pos if at is None else self._index(at, "inspect")
        if q == self._pos:
            state = self._state
            array = self._values[name]
            view = BufferView(name, array, self._where(canon, q), fresh=lambda: self._state == state)
            return view
        array = self._value_at(canon, q)
        twin = bridge.new_ndarray(str(array.dtype), tuple(array.shape), tuple(array.element_shape))
        twin.copy_from(array)
        return BufferView(name, twin, self._where(canon, q))

    def diff(self, name: str, a: str | int, b: str | int | None = None) -> DiffView:
        """How buffer ``name`` changed from position ``a`` to ``b`` (default: the current position)."""
        self._alive()
        canon = self._buffer(name)
        qa = self._index(a, "diff")
        qb = self._pos if b is None else self._index(b, "diff")
        return DiffView(name, qa, qb, self._value_at(canon, qa), self._value_at(canon, qb))

    def last_writer(self, name: str, *, at: str | int | None = None) -> StepRef | None:
        """The step that last wrote buffer ``name`` before the current position (or ``at``)."""
        canon = self._buffer(name)
        q = self._pos if at is None else self._index(at, "last_writer")
        k = self._table.last_write_before(canon, q)
        return None if k is None else self._table.ref(k)

    def _where(self, canon: str, q: int) -> Where:
        k = self._table.last_write_before(canon, q)
        return Where(self._position_at(q), None if k is None else self._table.ref(k))

    def _buffer(self, name: str) -> str:
        if name not in self._canon:
            known = ", ".join(self._canon) or "none"
            raise DebugError(f"{name!r} is not an ndarray arg of graph {self.graph.name!r}; buffers: {known}")
        return self._canon[name]

    # --- timing, parity, memory -------------------------------------------------------------------

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
        return ParityReport(self.arch, threads, tuple(rows), notes, control)

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

    # --- running -------------------------------------------------------------------------------------

    def _advance(
        self,
        goal: _Goal,
        reason: StopReason,
        *,
        locations: bool = True,
        conditions: bool = True,
        hunt: Every | None = None,
    ) -> Stop:
        """Run forward to ``goal``, stopping first at breakpoints (``locations``), conditions or a
        hunt's find. With control flow the goal may lie past the recorded timeline: run to its end,
        record what comes next (deciding on the live buffers), and go on."""
        self._alive()
        t0, start = time.perf_counter(), self._pos
        conds = self._breaks.conditions() if conditions else []
        check: Check | None = None
        if hunt is not None:
            check = NonfiniteHunt(self._table, self._live, list(self._live))
        elif conds:
            self._breaks.arm(self._resolve)
            check = ConditionCheck(self._breaks, self._resolve)
        fine = (hunt == "dispatch") or any(bp.every == "dispatch" for bp in conds) or not self.options.fast_forward
        granularity: Granularity = "dispatch" if fine else "repetition" if check else "span"
        if check is None and granularity == "span" and self._recorder is not None:
            halt, hits, missed = self._fly(start, goal, locations)
        else:
            halt, hits, missed = self._walk(start, goal, locations, granularity, check)
        if halt is not None:
            return self._stop(halt.reason, start, t0, halt)
        if hits:
            return self._stop("breakpoint", start, t0, Halt("breakpoint", tuple(hits)))
        note = ""
        if missed and goal.what:
            note = f"the run ended at step {self._pos} without reaching {goal.what}: the flags took another path"
        return self._stop(reason, start, t0, Halt(reason, note=note))

    def _limit(self, goal: _Goal, start: int, locations: bool) -> tuple[int | None, int, list[Breakpoint]]:
        """The goal if the recorded steps show it, where to run to now, and the breakpoints there
        (a breakpoint at the control's start does not stop it again)."""
        target = goal.find(self._table)
        limit, hits = self._table.count if target is None else max(target, self._pos), list[Breakpoint]()
        if locations:
            nxt = self._breaks.next_location(self._pos - 1 if self._pos > start else start)
            if nxt is not None and nxt[0] <= limit:
                limit, hits = nxt
        return target, limit, hits

    def _walk(
        self, start: int, goal: _Goal, locations: bool, granularity: Granularity, check: Check | None
    ) -> tuple[Halt | None, list[Breakpoint], bool]:
        """Run to the goal span by span (a plain graph's one span; with control flow, the recorded
        steps, then each new run of a segment as it is recorded). Returns the halt, the breakpoints
        reached, and whether the graph ended before the goal."""
        while True:
            target, limit, hits = self._limit(goal, start, locations)
            halt = self._run(self._pos, limit, granularity, check)
            if halt is not None or hits:
                return halt, hits, False
            if target is not None and self._pos >= target:
                return None, [], False
            if not self._known(self._pos):
                return None, [], True

    def _fly(self, start: int, goal: _Goal, locations: bool) -> tuple[Halt | None, list[Breakpoint], bool]:
        """Run a control-flow graph at compiled speed to the goal, a breakpoint or the end: its
        plan's segments back to back, each flag read on the host between them as
        ``compiled.run`` reads it (the only waits), the timeline recorded on the way. One mark of
        every buffer the graph may write at the start; one wait at the end.

        If Taichi raises, the buffers go back to ``start`` and the steps are run again piece by
        piece to find the dispatch that fails."""
        table = self._table
        self._timeline.mark(start, table.written)
        bridge.sync()
        t = time.perf_counter()
        hits: list[Breakpoint] = []
        missed = False
        try:
            while True:
                target, limit, hits = self._limit(goal, start, locations)
                pos, self._pos = self._pos, limit  # what may have run, should Taichi raise
                last = table.chunks[-1] if table.chunks else None
                if last is not None and (last.start, last.stop) == (pos, limit):  # the run just recorded
                    self._segments.run_chunk(last, self._values)
                else:
                    for piece in self._segments.plan(pos, limit, "span"):
                        self._segments.run(piece, self._values)
                if hits or (target is not None and limit >= target):
                    break
                if not self._known(limit):  # the next flag read waits for the device
                    missed = True
                    break
            bridge.sync()
        except KeyboardInterrupt:
            self._back_to(start)
            raise
        except Exception as exc:  # Taichi raises assertion, index and runtime errors alike
            error, reached = _without_frames(exc), self._pos
            self._back_to(start)
            for piece in self._segments.plan(start, reached, "span"):
                halt = self._run_piece(piece)
                if halt is not None:
                    return halt, [], False
            return self._unreproduced(start, reached, error), [], False
        if self._pos > start:
            self._timing.record_segment(start, self._pos, time.perf_counter() - t)
        self._state += 1
        return None, hits, missed

    def _run(self, start: int, stop: int, granularity: Granularity, check: Check | None) -> Halt | None:
        """Run ``[start, stop)``: at once when nothing is checked on the way, else piece by piece."""
        pieces = self._segments.plan(start, stop, granularity)
        error: Exception | None = None
        if check is None and any(piece.kind != "dispatch" for piece in pieces):
            error = self._run_fast(start, stop, pieces)
            if error is None:
                return None
        for piece in pieces:  # checked, or the fast run raised: the buffers are back at `start`
            halt = self._run_piece(piece)
            if halt is not None:
                return halt
            if check is None:
                continue
            halt = check.look(piece.start, piece.stop)
            if halt is None or piece.stop - piece.start == 1:
                check.commit()
                if halt is not None:
                    return halt
                continue
            self._back_to(piece.start)  # find the exact dispatch: step the piece again
            for k in range(piece.start, piece.stop):
                fault = self._step_one()
                if fault is not None:
                    return Halt("fault", fault=fault)
                exact = check.look(k, k + 1)
                check.commit()
                if exact is not None:
                    return exact
            note = (
                f"the check fired after steps {piece.start}..{piece.stop - 1} ran as one segment, but not when "
                "they were stepped one by one: on this arch results can depend on thread timing"
            )
            return dataclasses.replace(halt, note=note)
        if error is not None:
            return self._unreproduced(start, stop, error)
        return None

    def _run_fast(self, start: int, stop: int, pieces: list[Piece]) -> Exception | None:
        """Launch every piece and wait once: compiled speed, no copies but one mark at ``start``.

        Returns None, or what Taichi raised; then the buffers are back as at ``start``.
        """
        self._timeline.mark(start, self._table.written_between(start, stop))
        bridge.sync()
        t = time.perf_counter()
        try:
            for piece in pieces:
                self._segments.run(piece, self._values)
            bridge.sync()
        except KeyboardInterrupt:
            self._pos = stop
            self._back_to(start)
            raise
        except Exception as exc:  # Taichi raises assertion, index and runtime errors alike
            self._pos = stop
            self._back_to(start)
            return _without_frames(exc)
        self._timing.record_segment(start, stop, time.perf_counter() - t)
        self._pos, self._state = stop, self._state + 1
        return None

    def _run_piece(self, piece: Piece) -> Halt | None:
        if piece.kind == "dispatch":
            fault = self._step_one()
            return None if fault is None else Halt("fault", fault=fault)
        self._timeline.mark(piece.start, self._table.written_between(piece.start, piece.stop))
        bridge.sync()
        t = time.perf_counter()
        try:
            self._segments.run(piece, self._values)
            bridge.sync()
        except KeyboardInterrupt:
            self._pos = piece.stop
            self._back_to(piece.start)
            raise
        except Exception as exc:  # Taichi raises assertion, index and runtime errors alike
            self._pos = piece.stop
            self._back_to(piece.start)
            return self._locate_fault(piece, _without_frames(exc))
        self._timing.record_segment(piece.start, piece.stop, time.perf_counter() - t)
        self._pos, self._state = piece.stop, self._state + 1
        return None

    def _unreproduced(self, start: int, stop: int, error: Exception) -> Halt:
        fault = _fault(self._table.ref(start), error)
        self.faults.append(fault)
        note = (
            f"steps {start}..{stop - 1} raised when run as compiled segments but not when run again piece by piece; "
            "the session is after them, with the results of the second run"
        )
        return Halt("fault", fault=fault, note=note)

    def _locate_fault(self, piece: Piece, error: Exception) -> Halt:
        """A segment raised: step its dispatches one by one to find which one fails."""
        for _ in range(piece.start, piece.stop):
            fault = self._step_one()
            if fault is not None:
                return Halt("fault", fault=fault)
        return self._unreproduced(piece.start, piece.stop, error)

    def _step_one(self) -> Fault | None:
        k = self._pos
        self._timeline.save(k, self._table.writes[k])
        try:
            seconds = timed(partial(self._segments.launch, k, self._values))
        except KeyboardInterrupt:
            self._pos = k + 1
            self._back_to(k)
            raise
        except Exception as exc:  # Taichi raises assertion, index and runtime errors alike
            self._pos = k + 1
            self._back_to(k)
            fault = _fault(self._table.ref(k), exc)
            self.faults.append(fault)
            return fault
        self._timing.record_step(self._table.ref(k), seconds)
        self._pos, self._state = k + 1, self._state + 1
        return None

    def _back_to(self, q: int) -> None:
        """Make the live buffers hold position ``q < self._pos``: restore copies, else rebuild and replay."""
        p = self._pos
        self._state += 1
        if not self._timeline.restore(q, p):
            c = self._timeline.best_start(q, p)
            self._timeline.restore(c, p)
            self._timeline.drop_after(c)
            self._pos = c
            halt = self._run(c, q, "span", None)
            if halt is not None:
                raise ReplayError(
                    f"replaying steps {c}..{q - 1} to rebuild step {q} failed: {halt.fault or halt.reason}; "
                    f"the session is at step {self._pos}"
                )
        self._timeline.drop_after(q)
        self._pos = q

    def _value_at(self, canon: str, q: int) -> Any:
        """An ndarray holding buffer ``canon`` as at position ``q`` (live, a held copy, or replayed)."""
        p = self._pos
        if q <= p:
            src = self._timeline.source(canon, q, p)
            if src is not None:
                return src.array(canon, self._live)
            start = self._timeline.best_start(q, p)
        elif self._table.first_write(canon, p) >= q:
            return self._live[canon]
        else:
            start = p
        values = self._detached(start)
        try:
            for piece in self._segments.plan(start, q, "span"):
                self._segments.run(piece, values)
            bridge.sync()
        except Exception as exc:
            raise ReplayError(f"rebuilding {canon!r} at step {q} from step {start} on copies failed: {exc}") from exc
        return values[canon]

    def _detached(self, q: int) -> dict[str, Any]:
        """Run values whose written buffers are new copies as at position ``q`` (``q <= now`` must be
        rebuildable; callers pass the current position, 0 or a ``best_start``)."""
        copies = self._timeline.copies_at(q, self._pos) if q <= self._pos else {}
        values = dict(self._values)
        for name, canon in self._canon.items():
            if canon in copies:
                values[name] = copies[canon]
        return values

    def _ordered(self, names: set[str] | frozenset[str]) -> list[str]:
        return [n for n in self._live if n in names]

    def _index(self, target: str | int, what: str) -> int:
        """The position ``target`` names, which must be known (recorded, with control flow)."""
        q = self._lookup(target, what)
        if q is None:
            raise DebugError(
                f"{what}({target!r}): that step has not run yet, and which steps run depends on the graph's flags; "
                "run there first (run_to, continue_ with a breakpoint)"
            )
        return q

    def _lookup(self, target: str | int, what: str) -> int | None:
        """The position ``target`` names; None for a step of a control-flow graph that fits the
        graph but is not recorded yet (it may still run)."""
        table = self._table
        n = table.count
        if isinstance(target, bool) or not isinstance(target, (str, int)):
            raise DebugError(f"{what}({target!r}): give a step index 0..{n}, a step id or a repetition id")
        if isinstance(target, int):
            if target < 0 or (table.complete and target > n):
                raise DebugError(f"{what}({target}): a position must lie in 0..{n} (0: the start, {n}: the end)")
            return target if target <= n else None
        if target in table.by_id:
            return table.by_id[target]
        kind = self._id_kind(target)
        if kind == "node" and self._recorder is not None and runs_once(self.graph, target):
            kind = "step"  # its step id is its node id (branch/then/halve)
        if kind == "repetition" and table.scope_start(target) is not None:
            return table.scope_start(target)
        if kind == "node":
            known = table.by_node.get(target)
            if known is None and self._recorder is None:
                raise unknown_id(target, table.by_node, f"{what}(): node")
            self.graph.node(target)  # raises for an id that is no node
            example = f"e.g. {table.steps[known[0]].id!r}, " if known else ""
            raise DebugError(f"{what}({target!r}): a node runs at many steps; name one, {example}or give a step index")
        if self._recorder is None:
            if kind == "step":
                raise unknown_id(target, table.by_id, f"{what}(): step")
            raise DebugError(f"{what}({target!r}): no such repetition")
        if table.complete:
            raise DebugError(
                f"{what}({target!r}): the recorded run does not pass there (its flags took another path); "
                "restart() to decide anew"
            )
        return None

    def _id_kind(self, target: str) -> str:
        """``"node"``, ``"step"`` or ``"repetition"``; with control flow, checked against the graph."""
        if self._recorder is not None:
            return parse_id(self.graph, target)[0]
        return step_kind(target)

    def _goal(self, target: str | int, q: int | None) -> _Goal:
        """Where a forward run to ``target`` stops: a known position ``q``, else where it gets recorded."""
        if q is not None:
            return _Goal(lambda t: q, "")
        if isinstance(target, int):
            return _Goal(lambda t: target if target <= t.count else None, f"step {target}")
        if self._id_kind(target) == "repetition":
            return _Goal(lambda t: t.scope_start(target), repr(target))
        return _Goal(lambda t: t.by_id.get(target), repr(target))

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
        )

    def __repr__(self) -> str:
        return (
            f"<graphlab.DebugSession of {self.graph.name!r} on {self.arch}: {self.position}, "
            f"{len(self._breaks)} breakpoints, {len(self._watches)} watches>"
        )


@dataclass(frozen=True)
class _Goal:
    """Where a forward run stops: ``find(table)`` gives the position once the recorded steps show
    it (always at once in a plain graph); ``what`` names it for the note when the run ends first."""

    find: Callable[[StepTable], int | None]
    what: str


_END = _Goal(lambda t: t.count if t.complete else None, "")


def _paths_differ(stepped: list[ControlEvent], compiled: list[ControlEvent]) -> tuple[str, ...]:
    """Where two runs of a control-flow graph took different paths (empty when they agree)."""
    out = []
    for a, b in zip_longest(stepped, compiled):
        if a != b:
            left = "nothing" if a is None else f"{a.node} {a.value}"
            right = "nothing" if b is None else f"{b.node} {b.value}"
            out.append(f"stepped run: {left}; compiled graph: {right}")
    return tuple(out)


def _without_frames(error: Exception) -> Exception:
    """``error`` (and its causes) without tracebacks: their frames reference the session, a cycle the
    garbage collector may break only after a ``ti.init``, when freeing Taichi's launch state crashes."""
    seen: set[int] = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        link.__traceback__ = None
        link = link.__cause__ or link.__context__
    return error


def _fault(step: StepRef, error: Exception) -> Fault:
    """A fault record: the error without frames, its traceback as text."""
    text = "".join(traceback.format_exception(error))
    return Fault(step, _without_frames(error), text)


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


def _cpu_threads() -> int | None:
    """Threads of a CPU arch (``cpu_max_num_threads``), None on other archs."""
    if bridge.current_arch() not in ("x64", "arm64"):
        return None
    return bridge.cpu_max_threads()
