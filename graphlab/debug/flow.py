"""Stepping a graph with conditionals and loops: the timeline is recorded as the session runs it.

Which dispatches such a graph runs depends on flags its kernels write on the device, so the
debugger cannot unroll it before it runs, as it unrolls a plain graph. A :class:`Recorder` walks the
graph the way its compiled Program does (:mod:`graphlab.controlflow`: compiled ``ti.graph``
segments between control points) and appends steps to the session's
:class:`~graphlab.debug.segments.StepTable` as the session reaches them: a whole segment's steps at
once (they depend on no flag), and a decision only when the position stands at the control point,
reading the flag on the host exactly as ``Program.run`` does, so it holds what the dispatches
before it wrote. A ``while_`` loop is a do-while: run the body, read the flag, stop at 0 or after
``max_iter`` iterations.

The recorded timeline stays when the session goes back, so going back and forth within it replays
the same path; going forward past its end decides anew.

Step ids name the path taken: ``solve/iter[7]/jacobi`` (iteration 7 of loop ``solve``, from 0),
``branch/then/halve`` (the taken branch of ``branch``), ``outer[1]/solve/iter[2]/jacobi`` (nested in
a sequence). The node id stays the definition's: ``solve/jacobi``, ``branch/then/halve``. A
repetition id names one iteration (``solve/iter[7]``) or one taken branch (``branch/then``) too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from graphlab import taichi_bridge as bridge
from graphlab.controlflow import ControlEvent, has_control
from graphlab.debug.report import Decision
from graphlab.debug.segments import Block, Chunk, Scope
from graphlab.errors import GraphError
from graphlab.graph import Step
from graphlab.nodes import Cond, Dispatch, Loop, Node, SequenceUse

if TYPE_CHECKING:
    from graphlab.controlflow import Program
    from graphlab.graph import Graph

IdKind = Literal["node", "step", "repetition"]
_PART = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:#[0-9]+)?)(?:\[(?P<k>[0-9]+)\])?$")
_ITER = re.compile(r"^iter\[(?P<k>[0-9]+)\]$")


@dataclass(frozen=True)
class Run:
    """Consecutive static nodes (dispatches, sequences without control flow): one Program segment."""

    nodes: tuple[Node, ...]
    segment: int
    simple: bool  # only dispatches


@dataclass(frozen=True)
class Repeat:
    """A sequence use whose body holds control flow: the body, ``repeat`` times."""

    name: str
    def_id: str
    repeat: int
    body: tuple[Item, ...]


@dataclass(frozen=True)
class Branch:
    """A conditional: read ``flag``, run ``then`` if non-zero, else ``else_``."""

    name: str
    def_id: str
    flag: str
    then: tuple[Item, ...]
    else_: tuple[Item, ...] | None


@dataclass(frozen=True)
class Iterate:
    """A loop: ``count`` times, or do-while ``while_`` is non-zero (at most ``max_iter``)."""

    name: str
    def_id: str
    body: tuple[Item, ...]
    while_: str | None
    count: str | None
    max_iter: int | None


Item = Run | Repeat | Branch | Iterate


def build_items(graph: Graph, program: Program) -> tuple[Item, ...]:
    """The graph as the Program runs it: static runs (each one of ``program.segments``, found by its
    node ids) between control points. Splits exactly where :func:`graphlab.controlflow.build_program` does."""
    segment_of = {segment.node_ids: i for i, segment in enumerate(program.segments)}
    sequences = graph.sequences

    def items(nodes: tuple[Node, ...], prefix: str) -> tuple[Item, ...]:
        out: list[Item] = []
        run: list[Node] = []

        def flush() -> None:
            if run:
                ids = tuple(f"{prefix}{node.name}" for node in run)
                if ids not in segment_of:  # pragma: no cover - the Program is built from the same graph
                    raise GraphError(f"the compiled graph has no segment for {', '.join(ids)}; compile it again")
                out.append(Run(tuple(run), segment_of[ids], all(isinstance(n, Dispatch) for n in run)))
                run.clear()

        for node in nodes:
            if isinstance(node, Dispatch) or (isinstance(node, SequenceUse) and not has_control(graph, node)):
                run.append(node)
                continue
            flush()
            def_id = f"{prefix}{node.name}"
            if isinstance(node, SequenceUse):
                out.append(Repeat(node.name, def_id, node.repeat, items(sequences[node.sequence], f"{def_id}/")))
            elif isinstance(node, Cond):
                then = items(sequences[node.then], f"{def_id}/then/")
                other = None if node.else_ is None else items(sequences[node.else_], f"{def_id}/else/")
                out.append(Branch(node.name, def_id, node.flag, then, other))
            elif isinstance(node, Loop):
                body = items(sequences[node.body], f"{def_id}/")
                out.append(Iterate(node.name, def_id, body, node.while_, node.count, node.max_iter))
        flush()
        return tuple(out)

    return items(graph.body, "")


@dataclass(frozen=True)
class Recorded:
    """The steps of one run of a Program segment, ready for :meth:`StepTable.append`."""

    steps: list[Step]
    scopes: list[tuple[Scope, ...]]
    blocks: list[Block]
    chunk: Chunk


class _Frame(NamedTuple):
    """One body being walked: its items, the next one, and the ids its steps get (a tuple: the
    walk replaces one per item, so it must be cheap to copy)."""

    items: tuple[Item, ...]
    at: int
    prefix: str  # step-id prefix: "outer[1]/solve/iter[2]/"
    def_prefix: str  # node-id prefix: "outer/solve/"
    reps: tuple[tuple[str, int], ...]  # Step.repetitions: (use or loop id, index)
    scopes: tuple[Scope, ...]
    k: int = 0  # which repetition or iteration of the owner this body is
    total: int = 0  # repetitions, or iterations of a count loop (read on entry)


@dataclass(frozen=True)
class _Template:
    """The steps of a run of a segment relative to where it runs (its node ids never change; its
    step ids, repetitions and scopes get the frame's prefix), so a loop iteration is recorded
    without walking the run's nodes again."""

    ids: tuple[str, ...]  # after the frame's step-id prefix
    node_ids: tuple[str, ...]
    dispatches: tuple[Dispatch, ...]
    reps: tuple[tuple[tuple[str, int], ...], ...]  # repetitions inside the run, per step (shared tuples)
    scopes: tuple[tuple[Scope, ...], ...]  # scopes inside the run, instance ids after the prefix
    blocks: tuple[tuple[int, str | None, int, int], ...]  # (offset, use id, repetition length, repetitions)


@dataclass
class Recorder:
    """Walks a control-flow graph forward, deciding at control points on the values it is given.

    :meth:`extend` must be given the values as they are at the end of what it recorded so far (the
    session calls it only when its position stands there). ``events`` mirror
    ``Program.last_events`` (same order); ``decisions`` say where each flag was read and what it held.
    """

    graph: Graph
    items: tuple[Item, ...]
    stack: tuple[_Frame, ...] = ()
    events: list[ControlEvent] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    iterations: dict[str, int] = field(default_factory=dict)  # loop id -> iterations entered
    done: bool = False

    def __post_init__(self) -> None:
        self._sequences = self.graph.sequences
        self._templates: dict[int, _Template] = {}  # by id() of the Run (items live as long as the recorder)
        if not self.stack and not self.done:
            self.stack = (_Frame(self.items, 0, "", "", (), ()),)

    def fresh(self) -> Recorder:
        """A recorder at the start of the graph (a restarted timeline, a parity run)."""
        return Recorder(self.graph, self.items)

    def clone(self) -> Recorder:
        """An independent recorder at the same place (to run ahead on copies)."""
        return Recorder(
            self.graph,
            self.items,
            self.stack,
            list(self.events),
            list(self.decisions),
            dict(self.iterations),
            self.done,
        )

    def extend(self, values: Mapping[str, Any], index: int) -> Recorded | None:
        """The next run of a segment, its first step numbered ``index``, deciding the control points
        before it on ``values``; None when the graph ends first.

        All or nothing: if reading a flag raises (a kernel's error surfacing at that wait), the
        recorder is left as it was, so the same decisions can be taken again."""
        saved = (self.stack, len(self.events), len(self.decisions), dict(self.iterations))
        try:
            return self._extend(values, index)
        except BaseException:
            self.stack, events, decisions, self.iterations = saved
            del self.events[events:], self.decisions[decisions:]
            raise

    def _extend(self, values: Mapping[str, Any], index: int) -> Recorded | None:
        while self.stack:
            top = self.stack[-1]
            if top.at < len(top.items):
                item = top.items[top.at]
                if isinstance(item, Run):
                    self._next_item()
                    recorded = self._unroll(item, top, index)
                    if recorded.steps:
                        return recorded
                elif isinstance(item, Repeat):
                    self._enter(top, item, 0, item.repeat)
                elif isinstance(item, Branch):
                    self._branch(top, item, values, index)
                else:
                    self._loop(top, item, values)
                continue
            self.stack = self.stack[:-1]  # the body in `top` is done
            if not self.stack:
                break
            self._body_done(top, values, index)
        self.done = True
        return None

    # --- walking ------------------------------------------------------------------------------------

    def _next_item(self) -> None:
        top = self.stack[-1]
        self.stack = (*self.stack[:-1], _Frame(top.items, top.at + 1, *top[2:]))

    def _enter(self, parent: _Frame, item: Repeat | Iterate, k: int, total: int) -> None:
        if isinstance(item, Repeat):
            prefix = f"{parent.prefix}{item.name}[{k}]/"
        else:
            prefix = f"{parent.prefix}{item.name}/iter[{k}]/"
            self.iterations[item.def_id] = self.iterations.get(item.def_id, 0) + 1
        frame = _Frame(
            item.body,
            0,
            prefix,
            f"{item.def_id}/",
            (*parent.reps, (item.def_id, k)),
            (*parent.scopes, (item.def_id, prefix[:-1])),
            k,
            total,
        )
        self.stack = (*self.stack, frame)

    def _branch(self, parent: _Frame, item: Branch, values: Mapping[str, Any], index: int) -> None:
        value = bridge.read_flag(values[item.flag])
        taken = "then" if value else ("else" if item.else_ is not None else "skip")
        self.events.append(ControlEvent(item.def_id, "cond", taken))
        self.decisions.append(Decision(index, item.def_id, f"{parent.prefix}{item.name}", "cond", value, taken))
        body = item.then if taken == "then" else item.else_
        if body is None:
            self._next_item()
            return
        prefix = f"{parent.prefix}{item.name}/{taken}/"
        frame = _Frame(
            body, 0, prefix, f"{item.def_id}/{taken}/", parent.reps, (*parent.scopes, (item.def_id, prefix[:-1]))
        )
        self.stack = (*self.stack, frame)

    def _loop(self, parent: _Frame, item: Iterate, values: Mapping[str, Any]) -> None:
        if item.count is not None:
            total = max(int(values[item.count]), 0)
            if total == 0:
                self.events.append(ControlEvent(item.def_id, "loop", 0))
                self._next_item()
                return
            self._enter(parent, item, 0, total)
            return
        self._enter(parent, item, 0, 0)  # do-while: the body runs before the flag is read

    def _body_done(self, body: _Frame, values: Mapping[str, Any], index: int) -> None:
        """The body of the item the (new) top frame stands at ran to its end: repeat it or move on."""
        parent = self.stack[-1]
        owner = parent.items[parent.at]
        if isinstance(owner, Repeat):
            if body.k + 1 < owner.repeat:
                self._enter(parent, owner, body.k + 1, owner.repeat)
            else:
                self._next_item()
        elif isinstance(owner, Branch):
            self._next_item()
        elif isinstance(owner, Iterate):
            done = body.k + 1
            if owner.count is not None:
                if done < body.total:
                    self._enter(parent, owner, done, body.total)
                    return
                self.events.append(ControlEvent(owner.def_id, "loop", done))
                self._next_item()
                return
            assert owner.while_ is not None
            value = bridge.read_flag(values[owner.while_])
            limit = owner.max_iter or 1
            scope = f"{parent.prefix}{owner.name}"
            if value and done < limit:
                self.decisions.append(Decision(index, owner.def_id, scope, "loop", value, "again"))
                self._enter(parent, owner, done, 0)
                return
            outcome = "limit" if value else "done"
            self.decisions.append(Decision(index, owner.def_id, scope, "loop", value, outcome))
            self.events.append(ControlEvent(owner.def_id, "loop", done, limit_reached=bool(value)))
            self._next_item()

    def _unroll(self, run: Run, frame: _Frame, index: int) -> Recorded:
        """The steps of one run of ``run``'s segment where ``frame`` stands, numbered from ``index``."""
        t = self._templates.get(id(run))
        if t is None:
            t = self._templates[id(run)] = _template(run, frame.def_prefix, self._sequences)
        prefix, reps, scope = frame.prefix, frame.reps, frame.scopes
        if run.simple:  # dispatches only: every step shares the frame's repetitions and scopes
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
        chunk = Chunk(index, index + len(steps), run.segment, run.simple)
        return Recorded(steps, scopes, blocks, chunk)


def _template(run: Run, def_prefix: str, sequences: Mapping[str, tuple[Node, ...]]) -> _Template:
    """Walk a run's nodes once: dispatches, sequences repeated, in order (ids relative to the frame)."""
    ids: list[str] = []
    node_ids: list[str] = []
    dispatches: list[Dispatch] = []
    reps_of: list[tuple[tuple[str, int], ...]] = []
    scopes_of: list[tuple[Scope, ...]] = []

    def walk(
        nodes: tuple[Node, ...], rel: str, defs: str, reps: tuple[tuple[str, int], ...], sc: tuple[Scope, ...]
    ) -> None:
        for node in nodes:
            if isinstance(node, Dispatch):
                ids.append(f"{rel}{node.name}")
                node_ids.append(f"{defs}{node.name}")
                dispatches.append(node)
                reps_of.append(reps)
                scopes_of.append(sc)
            elif isinstance(node, SequenceUse):
                use = f"{defs}{node.name}"
                for k in range(node.repeat):
                    inner = f"{rel}{node.name}[{k}]"
                    walk(sequences[node.sequence], f"{inner}/", f"{use}/", (*reps, (use, k)), (*sc, (use, inner)))

    blocks: list[tuple[int, str | None, int, int]] = []
    for node in run.nodes:
        first = len(ids)
        walk((node,), "", def_prefix, (), ())
        made = len(ids) - first
        if made and isinstance(node, SequenceUse):
            blocks.append((first, f"{def_prefix}{node.name}", made // node.repeat, node.repeat))
        elif made:
            blocks.append((first, None, 1, 1))
    return _Template(tuple(ids), tuple(node_ids), tuple(dispatches), tuple(reps_of), tuple(scopes_of), tuple(blocks))


# ---------------------------------------------------------------------------------------------
# Ids of steps that have not run yet


def runs_once(graph: Graph, node_id: str) -> bool:
    """Whether a node is a dispatch in no loop and no sequence, so that it runs at most once (its
    step id is its node id: ``branch/then/halve``)."""
    if not isinstance(graph.node(node_id), Dispatch):
        return False
    parts = node_id.split("/")
    for depth in range(1, len(parts)):
        prefix = "/".join(parts[:depth])
        if parts[depth - 1] in ("then", "else") and isinstance(graph.node("/".join(parts[: depth - 1])), Cond):
            continue  # a branch, not a node
        if isinstance(graph.node(prefix), (Loop, SequenceUse)):
            return False
    return True


def parse_id(graph: Graph, target: str) -> tuple[IdKind, str]:
    """What an id names in a control-flow graph, checked against its structure before it runs.

    Returns ``(kind, definition id)``: ``"node"`` for a node id (``solve/jacobi``), ``"step"`` for one
    dispatch on one path (``solve/iter[7]/jacobi``), ``"repetition"`` for one repetition, iteration or
    taken branch (``outer[1]``, ``solve/iter[7]``, ``branch/then``). Raises GraphError naming what is
    wrong and what would fit.
    """
    if "[" not in target:  # a node id, or the one taken-branch instance of a top-level conditional
        parent, _, branch = target.rpartition("/")
        if branch in ("then", "else") and parent:
            cond = graph.node(parent)
            if isinstance(cond, Cond) and (branch == "then" or cond.else_ is not None):
                return "repetition", target
        graph.node(target)  # raises naming the ids nearby
        return "node", target
    parts = target.split("/")
    container: str | None = None
    defs: list[str] = []
    indexed = False
    i = 0
    while i < len(parts):
        m = _PART.match(parts[i])
        here = "/".join(defs)
        body = graph.body if container is None else graph.sequences[container]
        node = next((n for n in body if m is not None and n.name == m.group("name")), None)
        if m is None or node is None:
            names = ", ".join(n.name for n in body[:12]) or "none"
            where = f"in {here!r}" if here else "at the top level"
            raise GraphError(f"{target!r}: no node {parts[i]!r} {where}; nodes there: {names}")
        k = None if m.group("k") is None else int(m.group("k"))
        defs.append(node.name)
        last = i == len(parts) - 1
        if isinstance(node, Dispatch):
            if k is not None or not last:
                raise GraphError(f"{target!r}: {'/'.join(defs)!r} is a dispatch; it has no repetitions or children")
            return ("step" if indexed else "node"), "/".join(defs)
        if isinstance(node, SequenceUse):
            if k is None:
                if last:
                    return "node", "/".join(defs)
                raise GraphError(f"{target!r}: name a repetition of sequence {'/'.join(defs)!r}, e.g. '{node.name}[0]'")
            if k >= node.repeat:
                raise GraphError(
                    f"{target!r}: sequence {'/'.join(defs)!r} repeats {node.repeat} times (0..{node.repeat - 1})"
                )
            indexed = True
            container = node.sequence
        elif k is not None:
            kind = "a loop: its iterations are '.../iter[k]'" if isinstance(node, Loop) else "a conditional"
            raise GraphError(f"{target!r}: {'/'.join(defs)!r} is {kind}, not a sequence")
        elif last:
            return "node", "/".join(defs)
        elif isinstance(node, Loop):
            i += 1
            it = _ITER.match(parts[i])
            if it is None:
                raise GraphError(
                    f"{target!r}: inside loop {'/'.join(defs)!r} name an iteration, e.g. '{'/'.join(defs)}/iter[0]'"
                )
            j = int(it.group("k"))
            if node.max_iter is not None and j >= node.max_iter:
                top = node.max_iter - 1
                raise GraphError(
                    f"{target!r}: loop {'/'.join(defs)!r} runs at most {node.max_iter} iterations (0..{top})"
                )
            indexed = True
            container = node.body
        elif isinstance(node, Cond):
            i += 1
            branches = {"then": node.then, "else": node.else_}
            if parts[i] not in branches or branches[parts[i]] is None:
                have = " or ".join(b for b, s in branches.items() if s is not None)
                raise GraphError(f"{target!r}: inside conditional {'/'.join(defs)!r} name a branch ({have})")
            defs.append(parts[i])
            container = branches[parts[i]]
        if i == len(parts) - 1:
            return "repetition", "/".join(defs)
        i += 1
    raise GraphError(f"{target!r} names no node")  # pragma: no cover - the loop returns or raises
