"""Running a debug session: forward to a goal, at compiled speed or step by step, and back again.

:class:`SessionEngine` is the engine under :class:`~graphlab.debug.session.DebugSession`'s controls.
A forward run goes to a :class:`Goal`, stopping first at breakpoints, conditions or a hunt's find:
spans with nothing to check run as compiled segments (:mod:`graphlab.debug.runner`) with one mark
of the buffers they write; checked runs go piece by piece and step a piece again to find the exact
dispatch; a fault is located by stepping the dispatches one by one. Going back restores held copies
(:mod:`graphlab.debug.timeline`), else rebuilds from the nearest state and replays. The engine is
given the parts it drives when the session is made, and owns the position.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from graphlab.bridge import runtime as bridge
from graphlab.debug.breakpoints import Breakpoint, BreakpointSet, Check, ConditionCheck, Every, NonfiniteHunt
from graphlab.debug.report import Fault, Halt, StepRef, StopReason
from graphlab.debug.session_errors import RebuildError
from graphlab.debug.steps import StepTable
from graphlab.debug.timing import timed

if TYPE_CHECKING:
    import numpy as np

    from graphlab.debug.flow import Recorder
    from graphlab.debug.redraws import Redraws
    from graphlab.debug.runner import Granularity, Piece, SegmentRunner
    from graphlab.debug.timeline import Timeline
    from graphlab.debug.timing import TimingRecorder


@dataclass(frozen=True)
class Goal:
    """Where a forward run stops: ``find(table)`` gives the position once the recorded steps show
    it (always at once in a plain graph); ``what`` names it for the note when the run ends first."""

    find: Callable[[StepTable], int | None]
    what: str


#: A run to the end of the graph (with control flow, the end once it is recorded).
END = Goal(lambda t: t.count if t.complete else None, "")


class SessionEngine:
    """The position of a debug session and what moves it: forward runs, fault location, going back.

    It is given the parts it drives (the step table, the segment runner, the snapshot timeline, the
    breakpoint set ...) and owns the position (``pos``), the live-state counter (``state``, bumped
    whenever the live buffers change) and, with control flow, the timeline recorder (``recorder``).
    """

    def __init__(
        self,
        table: StepTable,
        segments: SegmentRunner,
        timeline: Timeline,
        breaks: BreakpointSet,
        *,
        values: dict[str, Any],
        canon: dict[str, str],
        live: dict[str, Any],
        recorder: Recorder | None,
        node_writes: Mapping[str, frozenset[str]],
        redraws: Redraws,
        timing: TimingRecorder,
        fast_forward: bool,
        notes: list[str],
        faults: list[Fault],
    ) -> None:
        self._table = table
        self._segments = segments
        self._timeline = timeline
        self._breaks = breaks
        self._values = values
        self._canon = canon
        self._live = live
        self.recorder = recorder
        self._node_writes = node_writes
        self._redraws = redraws
        self._timing = timing
        self._fast_forward = fast_forward
        self.notes = notes
        self.faults = faults
        self.pos = 0
        self.state = 0

    def known(self, k: int) -> bool:
        """Whether step ``k`` exists; at the end of the recorded timeline (only where the position
        stands) this records the next steps, deciding the control points on the live buffers."""
        while k >= self._table.count and not self._table.complete:
            self._extend()
        return k < self._table.count

    def _extend(self) -> None:
        """Record the next visit of a plan segment; mark the table complete at the graph's end."""
        assert self.recorder is not None and self.pos == self._table.count
        recorded = self.recorder.extend(self._values, self._table.count)
        if recorded is None:
            self._table.complete = True
            return
        writes = [self._node_writes.get(step.node_id, frozenset()) for step in recorded.steps]
        self._table.append(recorded.steps, writes, recorded.scopes, recorded.blocks, recorded.chunk)

    def rewind(self, q: int) -> None:
        """Go back to position ``q`` (behind the current one), noting random dispatches undone."""
        self._redraws.rewound(self._table.steps, q, self.pos)
        self.back_to(q)

    def restart(self) -> set[str]:
        """Put every buffer back to the initial state and, with control flow, forget the recorded
        timeline; the buffers restored."""
        restored = self._table.written_between(0, self.pos)
        self._redraws.rewound(self._table.steps, 0, self.pos)
        self._timeline.restore(0, self.pos)
        self._timeline.clear()
        self.pos, self.state = 0, self.state + 1
        if self.recorder is not None:
            self.recorder = self.recorder.fresh()
            self._table.reset()
        return restored

    def advance(
        self,
        goal: Goal,
        reason: StopReason,
        *,
        locations: bool = True,
        conditions: bool = True,
        hunt: Every | None = None,
        known: Mapping[str, np.ndarray] | None = None,
    ) -> Halt:
        """Run forward to ``goal``, stopping first at breakpoints (``locations``), conditions or a
        hunt's find. With control flow the goal may lie past the recorded timeline: run to its end,
        record what comes next (deciding on the live buffers), and go on. ``known``: where buffers
        already hold NaN/Inf, which the hunt passes over (it stops where they spread).

        Returns the halt the session makes its stop of (its ``reason`` is the stop's).
        """
        start = self.pos
        conds = self._breaks.conditions() if conditions else []
        check: Check | None = None
        if hunt is not None:
            check = NonfiniteHunt(self._table, self._live, list(self._live), known)
        elif conds:
            already = self._breaks.arm(self._values.__getitem__)
            if already:
                texts = ", ".join(bp.target for bp in already)
                note = (
                    f"{texts} already true at step {self.pos}, where this run began (checked first when new): "
                    "no dispatch of this run made it true; continue_() again stops where it next turns true"
                )
                return Halt("condition", tuple(already), note=note, already=True)
            check = ConditionCheck(self._breaks, self._values.__getitem__)
        fine = (hunt == "dispatch") or any(bp.every == "dispatch" for bp in conds) or not self._fast_forward
        granularity: Granularity = "dispatch" if fine else "repetition" if check else "span"
        if check is None and granularity == "span" and self.recorder is not None:
            halt, hits, missed = self._fly(start, goal, locations)
        else:
            halt, hits, missed = self._walk(start, goal, locations, granularity, check)
        if halt is not None:
            return halt
        if hits:
            return Halt("breakpoint", tuple(hits))
        note = ""
        if missed and goal.what:
            note = f"the run ended at step {self.pos} without reaching {goal.what}: the flags took another path"
        return Halt(reason, note=note)

    def _limit(self, goal: Goal, start: int, locations: bool) -> tuple[int | None, int, list[Breakpoint]]:
        """The goal if the recorded steps show it, where to run to now, and the breakpoints there
        (a breakpoint at the control's start does not stop it again)."""
        target = goal.find(self._table)
        limit, hits = self._table.count if target is None else max(target, self.pos), list[Breakpoint]()
        if locations:
            nxt = self._breaks.next_location(self.pos - 1 if self.pos > start else start)
            if nxt is not None and nxt[0] <= limit:
                limit, hits = nxt
        return target, limit, hits

    def _walk(
        self, start: int, goal: Goal, locations: bool, granularity: Granularity, check: Check | None
    ) -> tuple[Halt | None, list[Breakpoint], bool]:
        """Run to the goal span by span (a plain graph's one span; with control flow, the recorded
        steps, then each new run of a segment as it is recorded). Returns the halt, the breakpoints
        reached, and whether the graph ended before the goal."""
        while True:
            target, limit, hits = self._limit(goal, start, locations)
            halt = self._run(self.pos, limit, granularity, check)
            if halt is not None or hits:
                return halt, hits, False
            if target is not None and self.pos >= target:
                return None, [], False
            if not self.known(self.pos):
                return None, [], True

    def _fly(self, start: int, goal: Goal, locations: bool) -> tuple[Halt | None, list[Breakpoint], bool]:
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
                pos, self.pos = self.pos, limit  # what may have run, should Taichi raise
                last = table.chunks[-1] if table.chunks else None
                if last is not None and (last.start, last.stop) == (pos, limit):  # the run just recorded
                    self._segments.run_chunk(last, self._values)
                else:
                    for piece in self._segments.plan(pos, limit, "span"):
                        self._segments.run(piece, self._values)
                if hits or (target is not None and limit >= target):
                    break
                if not self.known(limit):  # the next flag read waits for the device
                    missed = True
                    break
            bridge.sync()
        except KeyboardInterrupt:
            self.back_to(start)
            raise
        except Exception as exc:  # Taichi raises assertion, index and runtime errors alike
            error, reached = _without_frames(exc), self.pos
            self.back_to(start)
            for piece in self._segments.plan(start, reached, "span"):
                halt = self._run_piece(piece)
                if halt is not None:
                    return halt, [], False
            return self._unreproduced(start, reached, error), [], False
        if self.pos > start:
            self._timing.record_segment(start, self.pos, time.perf_counter() - t)
        self.state += 1
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
            self.back_to(piece.start)  # find the exact dispatch: step the piece again
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
            self.pos = stop
            self.back_to(start)
            raise
        except Exception as exc:  # Taichi raises assertion, index and runtime errors alike
            self.pos = stop
            self.back_to(start)
            return _without_frames(exc)
        self._timing.record_segment(start, stop, time.perf_counter() - t)
        self.pos, self.state = stop, self.state + 1
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
            self.pos = piece.stop
            self.back_to(piece.start)
            raise
        except Exception as exc:  # Taichi raises assertion, index and runtime errors alike
            self.pos = piece.stop
            self.back_to(piece.start)
            return self._locate_fault(piece, _without_frames(exc))
        self._timing.record_segment(piece.start, piece.stop, time.perf_counter() - t)
        self.pos, self.state = piece.stop, self.state + 1
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

    def step(self) -> Fault | None:
        """Run the dispatch at the position from Python, timed, its written buffers saved for going
        back; the fault when Taichi raised (the buffers are then as before it)."""
        return self._step_one()

    def _step_one(self) -> Fault | None:
        k = self.pos
        self._timeline.save(k, self._table.writes[k])
        try:
            seconds = timed(partial(self._segments.launch, k, self._values))
        except KeyboardInterrupt:
            self.pos = k + 1
            self.back_to(k)
            raise
        except Exception as exc:  # Taichi raises assertion, index and runtime errors alike
            self.pos = k + 1
            self.back_to(k)
            fault = _fault(self._table.ref(k), exc)
            self.faults.append(fault)
            return fault
        self._timing.record_step(self._table.ref(k), seconds)
        self.pos, self.state = k + 1, self.state + 1
        return None

    def back_to(self, q: int) -> None:
        """Make the live buffers hold position ``q < self.pos``: restore copies, else rebuild and replay."""
        p = self.pos
        self.state += 1
        if not self._timeline.restore(q, p):
            c = self._timeline.best_start(q, p)
            self._timeline.restore(c, p)
            self._timeline.drop_after(c)
            self.pos = c
            self._redraws.replayed(self._table.steps, c, q, self.notes)
            halt = self._run(c, q, "span", None)
            if halt is not None:
                raise RebuildError(
                    f"replaying steps {c}..{q - 1} to rebuild step {q} failed: {halt.fault or halt.reason}; "
                    f"the session is at step {self.pos}"
                )
        self._timeline.drop_after(q)
        self.pos = q

    def value_at(self, canon: str, q: int) -> Any:
        """An ndarray holding buffer ``canon`` as at position ``q`` (live, a held copy, or replayed)."""
        p = self.pos
        if q <= p:
            src = self._timeline.source(canon, q, p)
            if src is not None:
                return src.array(canon, self._live)
            start = self._timeline.best_start(q, p)
            self._redraws.replayed(self._table.steps, start, q, self.notes)
        elif self._table.first_write(canon, p) >= q:
            return self._live[canon]
        else:
            start = p
        values = self.detached(start)
        try:
            for piece in self._segments.plan(start, q, "span"):
                self._segments.run(piece, values)
            bridge.sync()
        except Exception as exc:
            raise RebuildError(f"rebuilding {canon!r} at step {q} from step {start} on copies failed: {exc}") from exc
        return values[canon]

    def detached(self, q: int) -> dict[str, Any]:
        """Run values whose written buffers are new copies as at position ``q`` (``q <= now`` must be
        rebuildable; callers pass the current position, 0 or a ``best_start``)."""
        copies = self._timeline.copies_at(q, self.pos) if q <= self.pos else {}
        values = dict(self._values)
        for name, canon in self._canon.items():
            if canon in copies:
                values[name] = copies[canon]
        return values


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
