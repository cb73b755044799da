"""The program a graph runs: compiled segments between host decisions, built once, walked by one cursor.

Taichi 1.7.4 has no conditional or loop node (the graph RFC, taichi issue #4786, was never built),
so a graph with control flow runs as a small program: each maximal run of static nodes (dispatches,
sequences without control flow inside) is one *segment*, compiled as one ``ti.graph``, and between
segments the host reads a flag and picks what runs next. A graph without control flow is a plan of
one segment holding its whole body.

Every consumer reads this one plan and attaches its own data by :attr:`Segment.id`: ``g.compile()``
a ``ti.graph`` per segment, the debugger its step templates, the exporter a module graph and its
arg list, the generated C host a table row. :class:`Cursor` is the one interpreter: it walks the
plan forward, deciding each control point on a flag read through a callback, and yields the
segment visits in order, so ``run()``, the debugger and ``gl.load_module`` share its semantics
(the C host mirrors it; a test runs all of them on the same graphs).

Semantics: a sequence use repeats its body ``times`` times; a conditional runs ``then`` when its flag
reads non-zero, else ``else_`` (or nothing); a ``count`` loop runs its body as many times as the
count arg holds (none when it is 0 or less); a ``while_`` loop is a do-while: run the body, read the
flag, stop at 0 or after ``max_iter`` iterations. With ``check_every=k`` the flag is read only after
iterations k, 2k, ... and after iteration ``max_iter``; between reads the body runs unguarded, so it
may run up to k-1 iterations after the flag cleared. A ``guarded`` loop ends where ``check_every=1``
would: :func:`run_plan` saves what the body writes before each group of k iterations (a
:class:`Rollback` the caller gives) and, on a 0 read, restores it and replays the group one
iteration and one read at a time; the debugger's :class:`Cursor` simply reads after every iteration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from graphlab.core.errors import GraphError, GuardedLoopReplayError
from graphlab.model import ids
from graphlab.model.nodes import Cond, Dispatch, Loop, Node, SequenceUse, children

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = [
    "Branch",
    "ControlEvent",
    "Cursor",
    "FlagRead",
    "Iterate",
    "Op",
    "Plan",
    "Repeat",
    "Rollback",
    "Segment",
    "Visit",
    "build_plan",
    "has_control",
    "run_plan",
    "segment_name",
]


@dataclass(frozen=True)
class Segment:
    """Consecutive static nodes run as one compiled graph.

    ``id`` numbers segments in program order from 0 (stable for a given graph); ``name`` is the
    compiled/exported graph's name; ``nodes`` are ``(node id, node)`` pairs (empty in a plan read back
    from a manifest); ``args`` names the args its dispatches bind, in the graph's arg order.
    """

    id: int
    name: str
    nodes: tuple[tuple[str, Node], ...]
    args: tuple[str, ...]

    @property
    def simple(self) -> bool:
        """Whether it holds only dispatches (no sequence use)."""
        return all(isinstance(node, Dispatch) for _, node in self.nodes)


@dataclass(frozen=True)
class Repeat:
    """A sequence use that holds control flow: its body ``times`` times in a row."""

    node_id: str
    times: int
    body: tuple[Op, ...]


@dataclass(frozen=True)
class Branch:
    """A conditional: read ``flag``; run ``then`` when non-zero, else ``else_`` (None: skip)."""

    node_id: str
    flag: str
    then: tuple[Op, ...]
    else_: tuple[Op, ...] | None


@dataclass(frozen=True)
class Iterate:
    """A loop: ``count`` times (an i32 scalar arg), or do-while ``while_`` is non-zero, at most ``max_iter``.

    ``check_every``: a ``while_`` loop reads its flag after every ``check_every``-th iteration only;
    ``guarded``: yet it ends where reading every iteration would (see the module docstring);
    ``saves``: the args such a loop copies aside, as an exported manifest records them (a plan built
    from a graph leaves them empty: ``run()`` finds them from the access facts, :mod:`graphlab.run.rollback`).
    """

    node_id: str
    body: tuple[Op, ...]
    while_: str | None
    count: str | None
    max_iter: int | None
    check_every: int = 1
    guarded: bool = False
    saves: tuple[str, ...] = ()

    @property
    def limit(self) -> int:
        """Most iterations of a ``while_`` loop."""
        return self.max_iter or 1


Op = Segment | Repeat | Branch | Iterate


@dataclass(frozen=True)
class Plan:
    """A graph's program: ``body`` in program order, every segment in ``segments`` (by id)."""

    graph: str
    body: tuple[Op, ...]
    segments: tuple[Segment, ...]
    control: bool

    def ops(self) -> Iterator[Op]:
        """Every op, depth first in program order."""
        yield from _walk_ops(self.body)


def _walk_ops(body: tuple[Op, ...]) -> Iterator[Op]:
    for op in body:
        yield op
        if isinstance(op, Repeat | Iterate):
            yield from _walk_ops(op.body)
        elif isinstance(op, Branch):
            yield from _walk_ops(op.then)
            yield from _walk_ops(op.else_ or ())


def segment_name(graph: str, index: int, *, control: bool) -> str:
    """The name of segment ``index`` of graph ``graph``: the graph's own name when it is the only one."""
    return f"{graph}_seg{index}" if control else graph


def has_control(sequences: Mapping[str, tuple[Node, ...]], node: Node) -> bool:
    """Whether a node is, or contains, a conditional or a loop."""
    if isinstance(node, Cond | Loop):
        return True
    return any(has_control(sequences, child) for _, seq in children(node) for child in sequences[seq])


def _bound_args(sequences: Mapping[str, tuple[Node, ...]], node: Node, out: set[str]) -> None:
    if isinstance(node, Dispatch):
        out.update(bound for _, bound in node.bindings if bound is not None)
    elif isinstance(node, SequenceUse):
        for child in sequences[node.sequence]:
            _bound_args(sequences, child, out)


def build_plan(graph: Graph) -> Plan:
    """Cut a graph at its control points into segments and decisions (the one place that does)."""
    sequences = graph.sequences
    order = list(graph.args)
    control = graph.has_control_flow
    segments: list[Segment] = []

    def block(nodes: tuple[Node, ...], prefix: str) -> tuple[Op, ...]:
        ops: list[Op] = []
        run: list[tuple[str, Node]] = []

        def flush() -> None:
            if run:
                used: set[str] = set()
                for _, node in run:
                    _bound_args(sequences, node, used)
                index = len(segments)
                name = segment_name(graph.name, index, control=control)
                segment = Segment(index, name, tuple(run), tuple(a for a in order if a in used))
                segments.append(segment)
                ops.append(segment)
                run.clear()

        for node in nodes:
            node_id = ids.child(prefix, node.name)
            if isinstance(node, Dispatch) or (isinstance(node, SequenceUse) and not has_control(sequences, node)):
                run.append((node_id, node))
                continue
            flush()
            if isinstance(node, SequenceUse):
                ops.append(Repeat(node_id, node.repeat, block(sequences[node.sequence], f"{node_id}/")))
            elif isinstance(node, Cond):
                then = block(sequences[node.then], f"{ids.branch(node_id, 'then')}/")
                other = None if node.else_ is None else block(sequences[node.else_], f"{ids.branch(node_id, 'else')}/")
                ops.append(Branch(node_id, node.flag, then, other))
            elif isinstance(node, Loop):
                body = block(sequences[node.body], f"{node_id}/")
                ops.append(
                    Iterate(node_id, body, node.while_, node.count, node.max_iter, node.check_every, node.guarded)
                )
        flush()
        return tuple(ops)

    body = block(graph.body, "")
    return Plan(graph.name, body, tuple(segments), control)


# --- walking a plan ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ControlEvent:
    """What a control node did in one run: the branch taken, or the iterations of a loop."""

    node: str
    kind: Literal["cond", "loop"]
    value: str | int  # "then" / "else" / "skip", or the number of iterations
    limit_reached: bool = False


@dataclass(frozen=True)
class FlagRead:
    """One flag read: the control node, this run of it (``outer[1]/solve``), the value and the choice.

    ``outcome``: ``"then"``, ``"else"`` or ``"skip"`` for a conditional; ``"again"``, ``"done"`` (the
    flag read 0) or ``"limit"`` (``max_iter`` reached) after a loop iteration.
    """

    node_id: str
    scope: str
    kind: Literal["cond", "loop"]
    value: int
    outcome: str


@dataclass(frozen=True)
class Frame:
    """One body being walked: its ops, the next one, and where its steps sit.

    ``prefix`` is the step-id prefix (``outer[1]/solve/iter[2]/``), ``def_prefix`` the node-id prefix
    (``outer/solve/``), ``reps`` the repetitions around it (``(use or loop id, k)``), ``scopes`` the
    repetition, iteration and branch instances around it (``(definition id, instance id)``); ``k`` is
    which repetition or iteration of its owner this body is, ``total`` how many (a count loop's count).
    """

    ops: tuple[Op, ...]
    at: int = 0
    prefix: str = ""
    def_prefix: str = ""
    reps: tuple[tuple[str, int], ...] = ()
    scopes: tuple[tuple[str, str], ...] = ()
    k: int = 0
    total: int = 0

    def moved(self) -> Frame:
        """The same frame at its next op."""
        return Frame(self.ops, self.at + 1, self.prefix, self.def_prefix, self.reps, self.scopes, self.k, self.total)


@dataclass(frozen=True)
class Visit:
    """One run of a segment, with the frame it runs in (for step ids)."""

    segment: Segment
    frame: Frame


ReadFlag = Callable[[str], int]


@dataclass
class Cursor:
    """Walks a plan forward; :meth:`advance` returns the next segment visit, deciding control points on the way.

    ``read_flag(name)`` reads a while/cond flag (it must see what the segments before it wrote);
    ``read_count(name)`` gives a count loop's count. ``events`` are the finished control nodes in the
    order they finish (a loop's event comes when it ends), ``reads`` every flag read, ``iterations``
    the iterations entered per loop id. Copying a cursor (:meth:`clone`) is cheap: its frames are
    immutable.
    """

    plan: Plan
    stack: tuple[Frame, ...] | None = None
    events: list[ControlEvent] = field(default_factory=list)
    reads: list[FlagRead] = field(default_factory=list)
    iterations: dict[str, int] = field(default_factory=dict)
    done: bool = False

    def __post_init__(self) -> None:
        if self.stack is None:
            self.stack = () if self.done else (Frame(self.plan.body),)

    def clone(self) -> Cursor:
        """An independent cursor at the same place."""
        return Cursor(self.plan, self.stack, list(self.events), list(self.reads), dict(self.iterations), self.done)

    def fresh(self) -> Cursor:
        """A cursor at the start of the plan."""
        return Cursor(self.plan)

    def advance(self, read_flag: ReadFlag, read_count: ReadFlag) -> Visit | None:
        """The next segment visit; None at the end of the plan.

        All or nothing: when a read raises (a kernel's error surfacing at that wait), the cursor is
        left as it was, so the same decisions can be taken again.
        """
        saved = (self.stack, len(self.events), len(self.reads), dict(self.iterations))
        try:
            return self._advance(read_flag, read_count)
        except BaseException:
            self.stack, events, reads, self.iterations = saved
            del self.events[events:], self.reads[reads:]
            raise

    def _advance(self, read_flag: ReadFlag, read_count: ReadFlag) -> Visit | None:
        assert self.stack is not None
        while self.stack:
            top = self.stack[-1]
            if top.at < len(top.ops):
                op = top.ops[top.at]
                if isinstance(op, Segment):
                    self._replace_top(top.moved())
                    return Visit(op, top)
                if isinstance(op, Repeat):
                    if op.times > 0:
                        self._enter(top, op, 0, op.times)
                    else:
                        self._replace_top(top.moved())
                elif isinstance(op, Branch):
                    self._branch(top, op, read_flag)
                else:
                    self._loop(top, op, read_count)
                continue
            self.stack = self.stack[:-1]  # the body in `top` is done
            if not self.stack:
                break
            self._body_done(top, read_flag)
        self.done = True
        return None

    def _replace_top(self, frame: Frame) -> None:
        assert self.stack is not None
        self.stack = (*self.stack[:-1], frame)

    def _enter(self, parent: Frame, op: Repeat | Iterate, k: int, total: int) -> None:
        assert self.stack is not None
        name = ids.last(op.node_id)
        if isinstance(op, Repeat):
            instance = ids.repetition(parent.prefix + name, k)
        else:
            instance = ids.iteration(parent.prefix + name, k)
            self.iterations[op.node_id] = self.iterations.get(op.node_id, 0) + 1
        frame = Frame(
            op.body,
            0,
            f"{instance}/",
            f"{op.node_id}/",
            (*parent.reps, (op.node_id, k)),
            (*parent.scopes, (op.node_id, instance)),
            k,
            total,
        )
        self.stack = (*self.stack, frame)

    def _branch(self, parent: Frame, op: Branch, read_flag: ReadFlag) -> None:
        assert self.stack is not None
        value = int(read_flag(op.flag))
        taken = "then" if value else ("else" if op.else_ is not None else "skip")
        scope = parent.prefix + ids.last(op.node_id)
        self.events.append(ControlEvent(op.node_id, "cond", taken))
        self.reads.append(FlagRead(op.node_id, scope, "cond", value, taken))
        body = op.then if taken == "then" else op.else_
        if body is None:
            self._replace_top(parent.moved())
            return
        instance = ids.branch(scope, taken)
        frame = Frame(
            body,
            0,
            f"{instance}/",
            f"{ids.branch(op.node_id, taken)}/",
            parent.reps,
            (*parent.scopes, (op.node_id, instance)),
        )
        self.stack = (*self.stack, frame)

    def _loop(self, parent: Frame, op: Iterate, read_count: ReadFlag) -> None:
        if op.count is not None:
            total = max(int(read_count(op.count)), 0)
            if total == 0:
                self.events.append(ControlEvent(op.node_id, "loop", 0))
                self._replace_top(parent.moved())
                return
            self._enter(parent, op, 0, total)
            return
        self._enter(parent, op, 0, 0)  # do-while: the body runs before the flag is read

    def _body_done(self, body: Frame, read_flag: ReadFlag) -> None:
        """The body of the op the (new) top frame stands at ran to its end: repeat it or move on."""
        assert self.stack is not None
        parent = self.stack[-1]
        owner = parent.ops[parent.at]
        done = body.k + 1
        if isinstance(owner, Repeat):
            if done < owner.times:
                self._enter(parent, owner, done, owner.times)
            else:
                self._replace_top(parent.moved())
        elif isinstance(owner, Branch):
            self._replace_top(parent.moved())
        elif isinstance(owner, Iterate):
            if owner.count is not None:
                if done < body.total:
                    self._enter(parent, owner, done, body.total)
                    return
                self.events.append(ControlEvent(owner.node_id, "loop", done))
                self._replace_top(parent.moved())
                return
            assert owner.while_ is not None
            every = 1 if owner.guarded else owner.check_every  # stepping, a guarded loop reads each time
            if done % every and done < owner.limit:  # unguarded until the next check
                self._enter(parent, owner, done, 0)
                return
            value = int(read_flag(owner.while_))
            scope = parent.prefix + ids.last(owner.node_id)
            if value and done < owner.limit:
                self.reads.append(FlagRead(owner.node_id, scope, "loop", value, "again"))
                self._enter(parent, owner, done, 0)
                return
            self.reads.append(FlagRead(owner.node_id, scope, "loop", value, "limit" if value else "done"))
            self.events.append(ControlEvent(owner.node_id, "loop", done, limit_reached=bool(value)))
            self._replace_top(parent.moved())


#: Launches a loop body of one segment ``times`` times in a row (one compiled graph holding them),
#: or returns False when it has no such graph for that segment and count.
LaunchBatch = Callable[[Segment, int], bool]


class Rollback(Protocol):
    """Copies what a guarded loop's body writes aside, and back (the caller knows where buffers live).

    Both are queued on the device in order with launches, like a segment."""

    def save(self, loop: Iterate) -> None: ...

    def restore(self, loop: Iterate) -> None: ...


def run_plan(
    plan: Plan,
    launch: Callable[[Segment], None],
    read_flag: ReadFlag,
    read_count: ReadFlag,
    launch_batch: LaunchBatch | None = None,
    rollback: Rollback | None = None,
    reads: list[FlagRead] | None = None,
) -> list[ControlEvent]:
    """Run a plan to its end: ``launch`` each segment visit in order; returns the control events.

    The cursor's semantics without its step bookkeeping (frames, step ids, the flag-read log), which
    only the debugger needs: a tight loop's iteration then costs a launch, not a cursor step
    (``tests/analysis/test_check_every.py`` and ``tests/model/test_plan.py`` hold the two to the same events).
    ``launch_batch``: a ``while_`` loop with ``check_every=k`` whose body is one segment runs the
    k unguarded iterations between two flag reads as one launch when it returns True (same
    iterations, same events; one launch instead of k). ``rollback`` saves and restores the buffers of
    a ``guarded`` loop; a plan with one needs it. ``reads``, when given, gets the flag reads this run
    makes and acts on, with their scopes (a field capture's decisions: a guarded loop's read of 0 that
    starts its replay is no decision, the replay's reads are)."""
    runner = _PlanRunner(launch, read_flag, read_count, launch_batch, rollback, reads=reads)
    runner.run(plan.body)
    return runner.events


@dataclass
class _PlanRunner:
    launch: Callable[[Segment], None]
    read_flag: ReadFlag
    read_count: ReadFlag
    launch_batch: LaunchBatch | None
    rollback: Rollback | None = None
    events: list[ControlEvent] = field(default_factory=list)
    reads: list[FlagRead] | None = None
    prefix: str = ""  # the instance the ops being run belong to (``outer[1]/solve/iter[2]/``), for ``reads``

    def run(self, ops: tuple[Op, ...]) -> None:
        for op in ops:
            if isinstance(op, Segment):
                self.launch(op)
            elif isinstance(op, Repeat):
                for k in range(op.times):
                    self.inside(ids.repetition(self.prefix + ids.last(op.node_id), k), op.body)
            elif isinstance(op, Branch):
                value = int(self.read_flag(op.flag))
                taken = "then" if value else ("else" if op.else_ is not None else "skip")
                self.read(op, "cond", value, taken)
                self.events.append(ControlEvent(op.node_id, "cond", taken))
                body = op.then if taken == "then" else op.else_
                if body is not None:
                    self.inside(ids.branch(self.prefix + ids.last(op.node_id), taken), body)
            elif op.count is not None:
                total = max(int(self.read_count(op.count)), 0)
                for k in range(total):
                    self.iteration(op, k)
                self.events.append(ControlEvent(op.node_id, "loop", total))
            else:
                self.run_while(op)

    def inside(self, instance: str, body: tuple[Op, ...]) -> None:
        outer, self.prefix = self.prefix, f"{instance}/"
        try:
            self.run(body)
        finally:
            self.prefix = outer

    def iteration(self, op: Iterate, k: int) -> None:
        self.inside(ids.iteration(self.prefix + ids.last(op.node_id), k), op.body)

    def read(self, op: Branch | Iterate, kind: Literal["cond", "loop"], value: int, outcome: str) -> None:
        if self.reads is not None:
            self.reads.append(FlagRead(op.node_id, self.prefix + ids.last(op.node_id), kind, value, outcome))

    def run_while(self, op: Iterate) -> None:
        assert op.while_ is not None
        done, limit, every = 0, op.limit, op.check_every
        guard = self.rollback if op.guarded else None
        if op.guarded and guard is None:
            raise GraphError(f"guarded loop {op.node_id!r} needs a rollback to run (a graphlab bug: please report it)")
        while True:
            group = min(every - done % every, limit - done)  # iterations until the next flag read
            if guard is not None and group > 1:
                guard.save(op)
            self.run_group(op, group, done)
            done += group
            value = int(self.read_flag(op.while_))
            if value and done < limit:
                self.read(op, "loop", value, "again")
                continue
            if guard is not None and group > 1 and not value:
                done = self.replay(op, guard, done - group, group)
            else:
                self.read(op, "loop", value, "limit" if value else "done")
            self.events.append(ControlEvent(op.node_id, "loop", done, limit_reached=bool(value)))
            break

    def run_group(self, op: Iterate, group: int, start: int) -> None:
        """``group`` iterations with no read between them: one batch launch when the caller has one."""
        only = op.body[0] if len(op.body) == 1 and isinstance(op.body[0], Segment) else None
        if group > 1 and only is not None and self.launch_batch is not None and self.launch_batch(only, group):
            return
        for i in range(group):
            self.iteration(op, start + i)

    def replay(self, op: Iterate, guard: Rollback, start: int, group: int) -> int:
        """Put back the buffers saved before the last group and run it again reading every iteration:
        the iterations a loop reading each time would have run."""
        assert op.while_ is not None
        guard.restore(op)
        for step in range(1, group + 1):
            self.iteration(op, start + step - 1)
            value = int(self.read_flag(op.while_))
            if not value:
                self.read(op, "loop", value, "done")
                return start + step
            self.read(op, "loop", value, "again")
        raise GuardedLoopReplayError(
            f"guarded loop {op.node_id!r}: its flag read 0 after iteration {start + group}, but replaying "
            f"iterations {start + 1}-{start + group} from the saved buffers never cleared it, so the body is not "
            "safe to repeat (ti.random, atomics in another order, or state outside the graph's args). "
            "Drop guarded=True to run it unguarded"
        )
