"""Stepping a graph with conditionals and loops: the timeline is recorded as the session runs it.

Which dispatches such a graph runs depends on flags its kernels write on the device, so the
debugger cannot unroll it before it runs, as it unrolls a plain graph. A :class:`Recorder` walks the
graph's plan with the plan's own :class:`~graphlab.model.plan.Cursor` (the interpreter ``run()`` and
``gl.load_module`` use too) and appends steps to the session's
:class:`~graphlab.debug.steps.StepTable` as the session reaches them: a whole segment's steps at
once (they depend on no flag), and a decision only when the position stands at the control point,
reading the flag on the host, so it holds what the dispatches before it wrote.

The recorded timeline stays when the session goes back, so going back and forth within it replays
the same path; going forward past its end decides anew.

Step ids name the path taken (the grammar is :mod:`graphlab.model.ids`): ``solve/iter[7]/jacobi``,
``branch/then/halve``, ``outer[1]/solve/iter[2]/jacobi``; node ids stay the definition's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphlab.bridge import runtime as bridge
from graphlab.debug.report import Decision
from graphlab.debug.steps import Block, Chunk, Scope
from graphlab.model import ids
from graphlab.model.nodes import Dispatch, Node, SequenceUse
from graphlab.model.plan import ControlEvent, Cursor, Plan, Segment, Visit
from graphlab.model.unroll import Step


@dataclass(frozen=True)
class Recorded:
    """The steps of one visit of a plan segment, ready for :meth:`StepTable.append`."""

    steps: list[Step]
    scopes: list[tuple[Scope, ...]]
    blocks: list[Block]
    chunk: Chunk


@dataclass(frozen=True)
class _Template:
    """The steps of a segment relative to where it runs (its node ids never change; its step ids,
    repetitions and scopes get the frame's prefix), so a loop iteration is recorded without walking
    the segment's nodes again."""

    ids: tuple[str, ...]  # after the frame's step-id prefix
    node_ids: tuple[str, ...]
    dispatches: tuple[Dispatch, ...]
    reps: tuple[tuple[tuple[str, int], ...], ...]  # repetitions inside the segment, per step (shared tuples)
    scopes: tuple[tuple[Scope, ...], ...]  # scopes inside the segment, instance ids after the prefix
    blocks: tuple[tuple[int, str | None, int, int], ...]  # (offset, use id, repetition length, repetitions)


class Recorder:
    """Walks a control-flow graph's plan forward, deciding at control points on the values it is given.

    :meth:`extend` must be given the values as they are at the end of what it recorded so far (the
    session calls it only when its position stands there). ``events`` mirror what ``compiled.run``
    reports (same order); ``decisions`` say where each flag was read and what it held.
    """

    def __init__(
        self,
        plan: Plan,
        sequences: Mapping[str, tuple[Node, ...]],
        cursor: Cursor | None = None,
        decisions: list[Decision] | None = None,
        templates: dict[int, _Template] | None = None,
    ) -> None:
        self.plan = plan
        self._sequences = sequences
        self.cursor = Cursor(plan) if cursor is None else cursor
        self.decisions: list[Decision] = [] if decisions is None else decisions
        self._templates = {} if templates is None else templates  # by segment id; shared by clones

    @property
    def events(self) -> list[ControlEvent]:
        """Control events of the recorded path, in the order the control nodes finished."""
        return self.cursor.events

    @property
    def iterations(self) -> dict[str, int]:
        """Iterations entered so far, per loop id."""
        return self.cursor.iterations

    @property
    def done(self) -> bool:
        """Whether the recorded path reached the graph's end."""
        return self.cursor.done

    def fresh(self) -> Recorder:
        """A recorder at the start of the graph (a restarted timeline, a parity run)."""
        return Recorder(self.plan, self._sequences, templates=self._templates)

    def clone(self) -> Recorder:
        """An independent recorder at the same place (to run ahead on copies)."""
        return Recorder(self.plan, self._sequences, self.cursor.clone(), list(self.decisions), self._templates)

    def extend(self, values: Mapping[str, Any], index: int) -> Recorded | None:
        """The next visit of a segment, its first step numbered ``index``, deciding the control points
        before it on ``values``; None when the graph ends first.

        All or nothing (the cursor's guarantee): if reading a flag raises, the recorder is left as it
        was, so the same decisions can be taken again."""

        def read_flag(name: str) -> int:
            return bridge.read_flag(values[name])

        def read_count(name: str) -> int:
            return int(values[name])

        while True:
            seen = len(self.cursor.reads)
            visit = self.cursor.advance(read_flag, read_count)
            self.decisions.extend(
                Decision(index, r.node_id, r.scope, r.kind, r.value, r.outcome) for r in self.cursor.reads[seen:]
            )
            if visit is None:
                return None
            recorded = self._unroll(visit, index)
            if recorded.steps:
                return recorded

    def _unroll(self, visit: Visit, index: int) -> Recorded:
        """The steps of one visit of a segment, numbered from ``index``."""
        segment, frame = visit.segment, visit.frame
        t = self._templates.get(segment.id)
        if t is None:
            t = self._templates[segment.id] = _template(segment, self._sequences)
        prefix, reps, scope = frame.prefix, frame.reps, frame.scopes
        if segment.simple:  # dispatches only: every step shares the frame's repetitions and scopes
            steps = [
                Step(index + i, prefix + rel, node_id, dispatch, reps)
                for i, (rel, node_id, dispatch) in enumerate(zip(t.ids, t.node_ids, t.dispatches))
            ]
            scopes = [scope] * len(steps)
        else:
            outer_reps: dict[int, tuple[tuple[str, int], ...]] = {}
            outer_scopes: dict[int, tuple[Scope, ...]] = {}
            steps, scopes = [], []
            for i, (rel, node_id, dispatch, inner_reps, inner_scopes) in enumerate(
                zip(t.ids, t.node_ids, t.dispatches, t.reps, t.scopes)
            ):
                full_reps = outer_reps.get(id(inner_reps))
                if full_reps is None:
                    full_reps = outer_reps[id(inner_reps)] = reps + inner_reps
                full_scopes = outer_scopes.get(id(inner_scopes))
                if full_scopes is None:
                    full_scopes = scope + tuple((d, prefix + rel_instance) for d, rel_instance in inner_scopes)
                    outer_scopes[id(inner_scopes)] = full_scopes
                steps.append(Step(index + i, prefix + rel, node_id, dispatch, full_reps))
                scopes.append(full_scopes)
        blocks = [Block(index + offset, use, rep_len, count) for offset, use, rep_len, count in t.blocks]
        chunk = Chunk(index, index + len(steps), segment.id, segment.simple)
        return Recorded(steps, scopes, blocks, chunk)


def _template(segment: Segment, sequences: Mapping[str, tuple[Node, ...]]) -> _Template:
    """Walk a segment's nodes once: dispatches, sequences repeated, in order (ids relative to the frame)."""
    rel_ids: list[str] = []
    node_ids: list[str] = []
    dispatches: list[Dispatch] = []
    reps_of: list[tuple[tuple[str, int], ...]] = []
    scopes_of: list[tuple[Scope, ...]] = []

    def walk(
        nodes: tuple[Node, ...], rel: str, defs: str, reps: tuple[tuple[str, int], ...], sc: tuple[Scope, ...]
    ) -> None:
        for node in nodes:
            if isinstance(node, Dispatch):
                rel_ids.append(ids.child(rel, node.name))
                node_ids.append(ids.child(defs, node.name))
                dispatches.append(node)
                reps_of.append(reps)
                scopes_of.append(sc)
            elif isinstance(node, SequenceUse):
                use = ids.child(defs, node.name)
                for k in range(node.repeat):
                    inner = ids.repetition(ids.child(rel, node.name), k)
                    walk(sequences[node.sequence], f"{inner}/", f"{use}/", (*reps, (use, k)), (*sc, (use, inner)))

    blocks: list[tuple[int, str | None, int, int]] = []
    for node_id, node in segment.nodes:
        def_prefix = node_id[: len(node_id) - len(node.name)]
        first = len(rel_ids)
        walk((node,), "", def_prefix, (), ())
        made = len(rel_ids) - first
        if made and isinstance(node, SequenceUse):
            blocks.append((first, node_id, made // node.repeat, node.repeat))
        elif made:
            blocks.append((first, None, 1, 1))
    return _Template(
        tuple(rel_ids), tuple(node_ids), tuple(dispatches), tuple(reps_of), tuple(scopes_of), tuple(blocks)
    )
