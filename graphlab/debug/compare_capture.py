"""``dbg.compare(capture)``: where the notebook departs from a run recorded in the field.

A capture holds the field run's state only at segment ends (when segments were recorded) and at the
end of the run, plus every flag it read. So the notebook session, started from the captured inputs,
is run visit by visit through its plan: its flag reads are compared with the captured ones as they
come (a read that differs is a ``"control"`` divergence), and at each recorded segment end the
buffers the capture holds are compared. The first segment that differs is then narrowed to a dispatch
from the notebook's own data-flow facts: a buffer's value at the segment end is what its *last* writer
in the segment left, so that dispatch is named when every buffer it reads is known to agree at the
moment it ran (not written earlier in the segment, or written there for the last time and agreeing
at the end). Where no such dispatch exists (a buffer the segment overwrites, a temp, an unrecorded
start), the answer says so honestly: the segment and the steps that may hold the departure.
Without recorded segments the whole run is one span, compared at its end. A guarded ``check_every``
loop runs in the field past the flag clearing, then replays its last group: the session keeps of its
reads those the field makes and steps over those extra segment records (:meth:`_CaptureSearch.replayed`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlab.analysis.dataflow import dataflow_facts
from graphlab.core.capture_format import CapturedDecision, reads_as_recorded
from graphlab.debug.capture import Capture
from graphlab.debug.compare import Divergence, Progress, StepsView, buffer_divergence, differ
from graphlab.debug.report import Decision
from graphlab.kernelfacts.access import AccessFlag
from graphlab.model.nodes import Loop

if TYPE_CHECKING:
    from graphlab.debug.session import DebugSession

__all__ = ["compare_capture"]


def compare_capture(
    mine: DebugSession,
    view: StepsView,
    capture: Capture,
    *,
    rtol: float = 0.0,
    atol: float = 0.0,
    progress: Progress | None = None,
) -> Divergence | None:
    """Compare ``mine`` (a session on copies of the captured inputs, which this moves) with ``capture``."""
    return _CaptureSearch(mine, view, capture, rtol, atol, progress).run()


class _CaptureSearch:
    """The walk of one comparison: the session's visits against the capture's records."""

    def __init__(
        self, mine: DebugSession, view: StepsView, capture: Capture, rtol: float, atol: float, progress: Progress | None
    ) -> None:
        self.mine, self.view, self.capture = mine, view, capture
        self.rtol, self.atol, self.progress = rtol, atol, progress
        self.archs = (mine.arch, capture.arch)
        graph = mine.graph
        self.checked = {n for n, a in graph.args.items() if a.kind == "ndarray" and a.role != "temp"}
        self.element_ndim = {name: len(arg.element_shape) for name, arg in graph.args.items()}
        facts = dataflow_facts(graph).args
        self.reads = {node: {a for a, f in acc.items() if f & AccessFlag.READ} for node, acc in facts.items()}
        self.writes = {node: {a for a, f in acc.items() if f & AccessFlag.WRITE} for node, acc in facts.items()}
        self.compared = 0  # flag reads compared so far
        # the notebook steps a guarded check_every loop reading every iteration; the field does not
        loops = {
            node_id: node
            for node_id, node in graph.nodes()
            if isinstance(node, Loop) and node.guarded and node.check_every > 1
        }
        self.guarded = {node_id: node.check_every for node_id, node in loops.items()}
        self.max_iter = {node_id: node.max_iter or 1 for node_id, node in loops.items()}
        self.visited: list[str] = []  # the first step id of each of the notebook's visits so far
        self.scanned = 0  # the notebook's flag reads looked at for replays so far

    def run(self) -> Divergence | None:
        mine, view, table, records = self.mine, self.view, self.view.table, self.capture.record.segments
        at, visit, verified = 0, 0, 0  # ``verified``: the state at this step agrees with the field's
        while visit < len(records) and view.known(at):  # visit by visit while the capture has records
            found = self.decisions(end=False)
            if found is not None:
                return found
            chunk = table.chunk_of(at)
            stop, segment = (table.count, 0) if chunk is None else (chunk.stop, chunk.segment)
            skip = self.replayed()  # past a guarded loop's overshoot and replay in the field
            if skip is None or visit + skip >= len(records):
                break
            visit += skip
            if records[visit].segment != segment:  # another path (a decision will say): compare at the end
                break
            mine.goto(stop)
            self.visited.append(table.steps[at].id if at < table.count else "")
            theirs = self.capture.segments[visit]
            names = [n for n in view.ordered(set(theirs)) if n in self.checked]
            differing = self.differing(names, theirs)
            if differing:
                return self.narrow(verified == at, at, stop, differing, set(names), theirs, visit)
            verified = at = stop
            visit += 1
            if self.progress is not None:
                self.progress(f"segment {visit - 1} agrees", min(1.0, stop / max(table.count, 1)))
        mine.continue_()  # the rest of the run at once: no recorded segment end to compare inside it
        found = self.decisions(end=True)
        if found is not None:
            return found
        theirs = self.capture.outputs
        names = [n for n in view.ordered(set(theirs)) if n in self.checked]
        differing = self.differing(names, theirs)
        if not differing:
            return None
        return self.narrow(True, verified, table.count, differing, set(names), theirs, None)

    def replayed(self) -> int | None:
        """How many segment records the field's guarded loops added since the last call, past the visits
        the notebook made (the iterations a group ran after the flag cleared, then the group's replay),
        or None when some loop's iterations do not all take as many visits (no way to tell)."""
        made, skip = self.mine.decisions, 0
        for i in range(self.scanned, len(made)):
            read = made[i]
            every = self.guarded.get(read.node_id, 1)
            if read.kind != "loop" or read.outcome != "done" or every <= 1:
                continue
            n = 0  # the iterations this run of the loop made: its reads back to the previous run's end
            for earlier in reversed(made[: i + 1]):
                if earlier.scope == read.scope and earlier.kind == "loop":
                    if earlier.outcome != "again" and n:
                        break
                    n += 1
            start = every * ((n - 1) // every)
            end = min(start + every, self.max_iter[read.node_id])
            if end - start <= 1:  # a group of one is read without a guard: no replay
                continue
            inside = (f"{read.scope}/iter[{k}]/" for k in range(start, n))
            visits = sum(1 for prefix in inside for step in self.visited if step.startswith(prefix))
            if visits % (n - start):
                return None
            skip += visits // (n - start) * (end - n) + visits
        self.scanned = len(made)
        return skip

    def differing(self, names: Sequence[str], theirs: Mapping[str, np.ndarray]) -> list[str]:
        """The names whose arrays differ here (in arg order)."""
        buffers = self.mine.buffers
        return [n for n in names if differ(buffers[n].to_numpy(), theirs[n], self.rtol, self.atol) is not None]

    def decisions(self, *, end: bool) -> Divergence | None:
        """A control divergence at the first flag read (since the last call) that the capture does not share."""
        captured = self.capture.record.decisions
        made = reads_as_recorded(self.mine.decisions, self.guarded, key=lambda d: (d.node_id, d.scope, d.outcome))
        for i in range(self.compared, len(made)):
            theirs = captured[i] if i < len(captured) else None
            if theirs is None or not _same(made[i], theirs):
                return self.control(made[i], theirs)
        self.compared = len(made)
        if end and len(captured) > len(made):
            return self.control(None, captured[len(made)])
        return None

    def control(self, mine: Decision | None, theirs: CapturedDecision | None) -> Divergence:
        table = self.view.table
        index = max((mine.index if mine is not None else table.count) - 1, 0)  # the dispatch whose result decided
        step = table.steps[index] if index < table.count else None
        node = mine.node_id if mine is not None else theirs.node if theirs is not None else None
        flag = self.view.flags.get(node) if node is not None else None
        values = None if mine is None or theirs is None else (mine.value, theirs.value)
        said = (
            "reached the end" if mine is None else _said(mine.scope, mine.kind, mine.value, mine.outcome),
            "reached the end" if theirs is None else _said(theirs.scope, theirs.kind, theirs.value, theirs.outcome),
        )
        return Divergence(
            "control", self.archs, index, step.id if step else None, step.node_id if step else None,
            buffer=flag if values is not None else None, values=values, rtol=self.rtol, atol=self.atol,
            control_node=(mine.scope if mine is not None else theirs.scope if theirs is not None else None),
            decisions=said,
        )  # fmt: skip

    def narrow(
        self, start_agrees: bool, start: int, stop: int, differing: list[str], recorded: set[str],
        theirs: Mapping[str, np.ndarray], segment: int | None,
    ) -> Divergence:  # fmt: skip
        """The first dispatch of ``[start, stop)`` provably departing, or the steps that may (see the module docs).

        The session stands at ``stop``, so its buffers are the span's end, which for a buffer's last
        writer is the value it wrote."""
        steps = self.view.table.steps
        written_at: dict[str, list[int]] = {}
        for k in range(start, stop):
            for name in self.writes.get(steps[k].node_id, ()):
                written_at.setdefault(name, []).append(k)
        last = {name: ks[-1] for name, ks in written_at.items()}
        bad = set(differing)

        def agrees_before(name: str, k: int) -> bool:
            """Whether ``name`` held the field's value when step ``k`` ran."""
            before = [j for j in written_at.get(name, ()) if j < k]
            if not before:
                return start_agrees
            return before[-1] == last[name] and name in recorded and name not in bad

        buffers = self.mine.buffers
        for k in range(start, stop):
            node = steps[k].node_id
            for name in differing:
                if last.get(name) != k:
                    continue
                mine = buffers[name].to_numpy()
                d = differ(mine, theirs[name], self.rtol, self.atol)
                assert d is not None
                decided = all(agrees_before(r, k) for r in self.reads.get(node, ()))
                suspects = None if decided else tuple(steps[j].id for j in range(start, k + 1))
                return buffer_divergence(
                    name, mine, theirs[name], d, self.element_ndim.get(name, 0), archs=self.archs, index=k,
                    step_id=steps[k].id, node_id=node, rtol=self.rtol, atol=self.atol, segment=segment,
                    suspects=suspects,
                )  # fmt: skip
        name = differing[0]  # not written in the span: its value at the start already differed
        mine = buffers[name].to_numpy()
        d = differ(mine, theirs[name], self.rtol, self.atol)
        assert d is not None
        return buffer_divergence(
            name, mine, theirs[name], d, self.element_ndim.get(name, 0), archs=self.archs, index=stop,
            step_id=None, node_id=None, rtol=self.rtol, atol=self.atol, segment=segment,
            suspects=tuple(steps[j].id for j in range(start, stop)),
        )  # fmt: skip


def _same(mine: Decision, theirs: CapturedDecision) -> bool:
    return (mine.node_id, mine.scope, mine.kind, mine.value, mine.outcome) == (
        theirs.node, theirs.scope, theirs.kind, theirs.value, theirs.outcome,
    )  # fmt: skip


def _said(scope: str, kind: str, value: Any, outcome: str) -> str:
    verb = "took" if kind == "cond" else "chose"
    return f"read {value} and {verb} {outcome!r} at {scope}"
