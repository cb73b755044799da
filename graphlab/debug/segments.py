"""The unrolled graph as a timeline: the compiled segments that run spans of it, and the copies kept to go back.

A debugger stepping every dispatch from Python is several times slower than the compiled graph
(3.1x for mpm88 on an H100), so a span with nothing to stop at runs as a compiled segment: a
``ti.graph`` built from the same kernels and symbolic args as the graph itself. Segments are cached
by their shape, not by where they start: ``k`` whole repetitions of a sequence are one Sequential
appended ``k`` times, with ``k`` a power of two, so a 500-repetition continue compiles at most nine
graphs and a later one reuses them. A span from the first to the last dispatch is the compiled
graph itself. In a graph with conditionals or loops, a whole run of one of the segments its
plan is made of (:mod:`graphlab.plan`: a loop body, a branch) is that segment itself.

:class:`StepTable` answers the questions the debugger asks about the unrolled steps: where a node
runs, where a repetition (or loop iteration, or taken branch) starts and ends, which buffers a span
writes; with control flow it is the timeline recorded so far. :class:`Timeline` keeps
device copies of buffers per step (see :mod:`graphlab.debug.session` for how going back uses them).
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from graphlab.bridge import runtime as bridge
from graphlab.compiled import build_ti_graph
from graphlab.debug.report import StepRef
from graphlab.debug.snapshots import SnapshotError, SnapshotMissingError, SnapshotStore, default_budget, nbytes
from graphlab.errors import GraphError
from graphlab.ids import REPETITION_INDEX
from graphlab.nodes import Dispatch, Node, SequenceUse

if TYPE_CHECKING:
    from graphlab.compiled import CompiledGraph
    from graphlab.graph import Graph, Step

Granularity = Literal["span", "repetition", "dispatch"]
Scope = tuple[str, str]  # (definition id, instance id): a sequence repetition, a loop iteration or a taken branch


@dataclass(frozen=True)
class Block:
    """A top-level run of steps: one top-level dispatch, or every repetition of one sequence use.

    In a graph with control flow, blocks are top-level within one :class:`Chunk`.
    """

    start: int
    use_id: str | None
    rep_len: int
    reps: int

    @property
    def stop(self) -> int:
        """One past the block's last step."""
        return self.start + self.rep_len * self.reps


@dataclass(frozen=True)
class Chunk:
    """Steps ``[start, stop)`` that one compiled segment of a control-flow graph's plan runs whole.

    ``simple``: the segment holds only dispatches, so a checked run may run it as one piece (a loop
    iteration, say) and step it again only when the check fires.
    """

    start: int
    stop: int
    segment: int
    simple: bool


@dataclass(frozen=True)
class Piece:
    """A span ``[start, stop)`` run in one go: one dispatch, a compiled segment, the whole graph, or
    one segment of a control-flow graph's plan (``"program"``)."""

    start: int
    stop: int
    kind: Literal["dispatch", "segment", "graph", "program"]
    key: tuple[Any, ...] = ()


class StepTable:
    """Lookups over the unrolled steps: ids, node occurrences, scopes (repetitions, loop iterations,
    taken branches) and buffer writes.

    ``writes[k]`` names the buffers step ``k`` writes (the debugger's canonical names: one per
    distinct ndarray). A plain graph's table holds every step from the start (``complete``). A
    control-flow graph's table is the recorded timeline: it starts empty and grows by
    :meth:`append` as the session reaches new steps (see :mod:`graphlab.debug.flow`); ``written``
    then names every buffer a dispatch of the graph may write.
    """

    def __init__(
        self,
        steps: Sequence[Step] = (),
        writes: Sequence[frozenset[str]] = (),
        *,
        written: Iterable[str] | None = None,
        complete: bool = True,
    ) -> None:
        self._fixed_written = None if written is None else frozenset(written)
        self.reset(complete=complete)
        if steps:
            self._add(steps, writes, _plain_scopes(steps))
            for block in _blocks(self.steps):
                self._add_block(block)
        if self._fixed_written is None:
            self.written = frozenset(self.write_at)

    def reset(self, *, complete: bool = False) -> None:
        """Forget every step (a control-flow session restarting its timeline)."""
        self.steps: list[Step] = []
        self.writes: list[frozenset[str]] = []
        self.scopes: list[tuple[Scope, ...]] = []
        self.complete = complete
        self.by_id: dict[str, int] = {}
        self.by_node: dict[str, list[int]] = {}
        self.write_at: dict[str, list[int]] = {}
        self.scope_starts: dict[str, list[int]] = {}
        self.scope_first: dict[str, int] = {}
        self.blocks: list[Block] = []
        self._block_starts: list[int] = []
        self._block_writes: list[frozenset[str]] = []
        self.chunks: list[Chunk] = []
        self._chunk_starts: list[int] = []
        self.written = self._fixed_written if self._fixed_written is not None else frozenset()

    @property
    def count(self) -> int:
        """Steps known: all of them for a plain graph, those recorded so far with control flow."""
        return len(self.steps)

    def append(
        self,
        steps: Sequence[Step],
        writes: Sequence[frozenset[str]],
        scopes: Sequence[tuple[Scope, ...]],
        blocks: Sequence[Block],
        chunk: Chunk,
    ) -> None:
        """Record the steps of one run of a compiled segment (indices continue the table)."""
        self._add(steps, writes, scopes)
        for block in blocks:
            self._add_block(block)
        self.chunks.append(chunk)
        self._chunk_starts.append(chunk.start)

    def _add(
        self, steps: Sequence[Step], writes: Sequence[frozenset[str]], scopes: Sequence[tuple[Scope, ...]]
    ) -> None:
        previous = self.scopes[-1] if self.scopes else ()
        index = len(self.steps)
        self.steps += steps
        self.writes += writes
        self.scopes += scopes
        by_id, by_node, write_at = self.by_id, self.by_node, self.write_at
        for step, written, scope in zip(steps, writes, scopes):
            by_id[step.id] = index
            by_node.setdefault(step.node_id, []).append(index)
            for name in written:
                write_at.setdefault(name, []).append(index)
            if scope is not previous:
                depth = 0
                while depth < min(len(scope), len(previous)) and scope[depth][1] == previous[depth][1]:
                    depth += 1
                for def_id, instance in scope[depth:]:
                    self.scope_starts.setdefault(def_id, []).append(index)
                    self.scope_first.setdefault(instance, index)
                previous = scope
            index += 1

    def _add_block(self, block: Block) -> None:
        self.blocks.append(block)
        self._block_starts.append(block.start)
        self._block_writes.append(self._union(block.start, block.start + block.rep_len))

    # --- where things are -----------------------------------------------------------------------

    def ref(self, index: int) -> StepRef:
        """A record naming step ``index``."""
        step = self.steps[index]
        return StepRef(index, step.id, step.node_id, step.dispatch.kernel.name)

    def block_of(self, index: int) -> Block:
        """The top-level block holding step ``index``."""
        return self.blocks[bisect.bisect_right(self._block_starts, index) - 1]

    def chunk_of(self, index: int) -> Chunk | None:
        """The visit of a plan segment holding step ``index`` (None in a plain graph)."""
        if not self.chunks:
            return None
        return self.chunks[bisect.bisect_right(self._chunk_starts, index) - 1]

    def scope_end(self, index: int, scan: int | None = None) -> tuple[int | None, int]:
        """One past the last step of the innermost scope (repetition, loop iteration, branch) holding
        step ``index`` (a top-level dispatch is its own), or None when the recorded steps end inside
        it; and where the scan stopped, to go on from there (``scan``) once more steps are recorded."""
        scope = self.scopes[index]
        if not scope:
            return index + 1, index + 1
        depth, instance = len(scope) - 1, scope[-1][1]
        end = index + 1 if scan is None else scan
        while end < self.count:
            here = self.scopes[end]
            if here is not scope and (len(here) <= depth or here[depth][1] != instance):
                return end, end
            end += 1
        return (end if self.complete else None), end

    def scope_start(self, instance: str) -> int | None:
        """First step of a repetition, iteration or branch instance (``substep[37]``, ``solve/iter[7]``)."""
        return self.scope_first.get(instance)

    def next_in_scope(self, def_id: str, after: int) -> int | None:
        """First step after ``after`` that begins a repetition, iteration or taken branch of ``def_id``."""
        return _first_after(self.scope_starts.get(def_id, []), after)

    def next_of_node(self, node_id: str, after: int) -> int | None:
        """First step of ``node_id`` with an index greater than ``after``."""
        return _first_after(self.by_node.get(node_id, []), after)

    # --- writes ---------------------------------------------------------------------------------

    def first_write(self, name: str, at: int) -> int:
        """Index of the first step at or after ``at`` writing ``name`` (``count`` if none)."""
        where = self.write_at.get(name, [])
        i = bisect.bisect_left(where, at)
        return where[i] if i < len(where) else self.count

    def last_write_before(self, name: str, at: int) -> int | None:
        """Index of the last step before ``at`` writing ``name``, or None."""
        where = self.write_at.get(name, [])
        i = bisect.bisect_left(where, at)
        return where[i - 1] if i > 0 else None

    def written_between(self, start: int, stop: int) -> set[str]:
        """Buffers written by the steps ``[start, stop)``; whole repetitions are looked up, not walked."""
        out: set[str] = set()
        if start >= stop:
            return out
        first = bisect.bisect_right(self._block_starts, start) - 1
        for b in range(max(first, 0), len(self.blocks)):
            block = self.blocks[b]
            if block.start >= stop:
                break
            lo, hi = max(start, block.start), min(stop, block.stop)
            if hi - lo >= block.rep_len:
                out |= self._block_writes[b]
            else:
                out |= self._union(lo, hi)
            if out == self.written:
                break
        return out

    def _union(self, start: int, stop: int) -> frozenset[str]:
        out: set[str] = set()
        for k in range(start, stop):
            out |= self.writes[k]
        return frozenset(out)


def _first_after(indices: Sequence[int], after: int) -> int | None:
    i = bisect.bisect_right(indices, after)
    return indices[i] if i < len(indices) else None


def _plain_scopes(steps: Sequence[Step]) -> list[tuple[Scope, ...]]:
    """A plain graph's step scopes, from repetitions and ids (``substep[3]/p2g`` is in ``substep[3]``);
    steps of one repetition share one tuple (they share their ``repetitions`` too)."""
    out: list[tuple[Scope, ...]] = []
    last_reps: Any = None
    last: tuple[Scope, ...] = ()
    for step in steps:
        if step.repetitions is not last_reps:
            last_reps, last = step.repetitions, _scopes_of(step)
        out.append(last)
    return out


def _scopes_of(step: Step) -> tuple[Scope, ...]:
    if not step.repetitions:
        return ()
    parts = step.id.split("]/")  # node names hold no ']': "a[3]/b[1]/k" -> "a[3", "b[1", "k"
    out: list[Scope] = []
    prefix = ""
    for (use_id, _), part in zip(step.repetitions, parts):
        prefix += part + "]"
        out.append((use_id, prefix))
        prefix += "/"
    return tuple(out)


def _blocks(steps: Sequence[Step]) -> list[Block]:
    blocks: list[Block] = []
    i, n = 0, len(steps)
    while i < n:
        reps = steps[i].repetitions
        if not reps:
            blocks.append(Block(i, None, 1, 1))
            i += 1
            continue
        use = reps[0][0]
        j = i
        while j < n and steps[j].repetitions and steps[j].repetitions[0][0] == use:
            j += 1
        rep_len = sum(1 for k in range(i, j) if steps[k].repetitions[0] == reps[0])
        blocks.append(Block(i, use, rep_len, (j - i) // rep_len))
        i = j
    return blocks


class SegmentRunner:
    """Plans spans of the timeline into pieces and runs them: a dispatch by a direct kernel call,
    a longer span by a cached compiled segment.

    Parameters
    ----------
    compiled
        The session's compiled graph (its frozen graph gives the kernels and args).
    table
        The steps of that graph (recorded as the session runs, for a graph with control flow).
    max_chunk
        Most repetitions in one segment: bounds the size of the graphs built.
    cache_size
        Most segment graphs kept (least recently used go first).
    """

    def __init__(
        self, compiled: CompiledGraph, table: StepTable, *, max_chunk: int = 1024, cache_size: int = 64
    ) -> None:
        self.graph: Graph = compiled.graph
        self.table = table
        self.max_chunk = max(1, max_chunk)
        self._compiled = compiled
        self._symbols: dict[str, Any] | None = None
        self._cache: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._cache_size = cache_size
        self.builds = 0
        self._launchers: dict[str, Callable[[Mapping[str, Any]], None]] = {}
        # a control-flow graph's plan segments (graphlab.plan) are compiled already; whole visits of them are reused
        self._control = compiled.graph.has_control_flow

    @property
    def cached(self) -> list[tuple[Any, ...]]:
        """Keys of the segment graphs compiled and kept (``("reps", "substep", 256)`` ...)."""
        return list(self._cache)

    # --- planning -------------------------------------------------------------------------------

    def plan(self, start: int, stop: int, granularity: Granularity = "span") -> list[Piece]:
        """Pieces covering ``[start, stop)`` in order.

        ``"span"``: as few pieces as the segment shapes allow; ``"repetition"``: one piece per
        repetition of a top-level sequence (and per top-level dispatch), so a condition can be
        checked between them; ``"dispatch"``: one piece per dispatch. In a control-flow graph, a
        whole visit of one of its plan's segments is one piece (in ``"repetition"`` too when the
        segment holds only dispatches, a loop iteration say); a partial run is planned as above.
        """
        if granularity == "dispatch":
            return [Piece(k, k + 1, "dispatch") for k in range(start, stop)]
        table = self.table
        if granularity == "span" and not self._control and start == 0 and stop == table.count and stop > 1:
            return [Piece(0, stop, "graph", ("graph",))]
        pieces: list[Piece] = []
        i = start
        while i < stop:
            chunk = table.chunk_of(i)
            if (
                chunk is not None
                and i == chunk.start
                and chunk.stop <= stop
                and (granularity == "span" or chunk.simple)
            ):
                pieces.append(Piece(i, chunk.stop, "program", ("program", chunk.segment)))
                i = chunk.stop
                continue
            end = stop if chunk is None else min(stop, chunk.stop)
            block = table.block_of(i)
            if block.use_id is None:
                j = i + 1
                if granularity == "span":
                    while j < end and table.block_of(j).use_id is None:
                        j += 1
                pieces.append(self._steps_piece(i, j))
                i = j
                continue
            offset = (i - block.start) % block.rep_len
            rep_stop = i - offset + block.rep_len
            if offset or rep_stop > stop:
                j = min(rep_stop, stop)
                pieces.append(self._steps_piece(i, j))
                i = j
                continue
            whole_reps = min((block.stop - i) // block.rep_len, (stop - i) // block.rep_len)
            sizes = [1] * whole_reps if granularity == "repetition" else _chunks(whole_reps, self.max_chunk)
            for size in sizes:
                j = i + size * block.rep_len
                if block.rep_len == 1 and size == 1:
                    pieces.append(Piece(i, j, "dispatch"))
                else:
                    pieces.append(Piece(i, j, "segment", ("reps", block.use_id, size)))
                i = j
        return pieces

    def _steps_piece(self, start: int, stop: int) -> Piece:
        if stop - start == 1:
            return Piece(start, stop, "dispatch")
        return Piece(start, stop, "segment", ("steps", *(self.table.steps[k].node_id for k in range(start, stop))))

    # --- running --------------------------------------------------------------------------------

    def run(self, piece: Piece, values: Mapping[str, Any]) -> None:
        """Launch a piece with ``values`` (every arg by name; Taichi ignores the ones a piece lacks).

        Returns without waiting for the device; exceptions from Taichi propagate.
        """
        if piece.kind == "dispatch":
            self.launch(piece.start, values)
        elif piece.kind == "graph":  # the whole graph: the compiled graph itself, values checked as by run()
            self._compiled.run({k: v for k, v in values.items() if k in self._compiled.args})
        elif piece.kind == "program":  # one plan segment of the control-flow graph, as compiled.run runs it
            self._compiled.run_segment(piece.key[1], values)
        else:
            self.segment(piece.key).run(dict(values))

    def run_chunk(self, chunk: Chunk, values: Mapping[str, Any]) -> None:
        """Launch a whole visit of a plan segment (what ``plan`` makes one ``"program"`` piece)."""
        self._compiled.run_segment(chunk.segment, values)

    def launch(self, index: int, values: Mapping[str, Any]) -> None:
        """Call step ``index``'s kernel directly with the values in parameter order."""
        self.launch_step(self.table.steps[index], values)

    def launch_step(self, step: Step, values: Mapping[str, Any]) -> None:
        """Call a step's kernel directly (also a step not in the table: a run ahead on copies)."""
        launcher = self._launchers.get(step.node_id)
        if launcher is None:
            launcher = _launcher(step.dispatch)
            self._launchers[step.node_id] = launcher
        launcher(values)

    def segment(self, key: tuple[Any, ...]) -> Any:
        """The compiled ``ti.graph`` for a segment key, built on first use."""
        graph = self._cache.get(key)
        if graph is not None:
            self._cache.move_to_end(key)
            return graph
        graph = self._build(key)
        self._cache[key] = graph
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return graph

    def _build(self, key: tuple[Any, ...]) -> Any:
        """Compile a segment with the compiled graph's own builder (same Sequentials, same order)."""
        if self._symbols is None:
            self._symbols = {name: bridge.to_graph_arg(arg) for name, arg in self.graph.args.items()}
        nodes: list[tuple[str, Node]]
        if key[0] == "reps":
            _, use_id, size = key
            use = self.graph.node(use_id)
            if not isinstance(use, SequenceUse):  # pragma: no cover - keys come from plan()
                raise GraphError(f"segment {key!r}: {use_id!r} is not a sequence use")
            nodes = [(use_id, replace(use, repeat=size))]
        else:
            nodes = [(node_id, self.graph.node(node_id)) for node_id in key[1:]]
        name = f"{self.graph.name}_debug_segment{self.builds}"
        compiled = build_ti_graph(self.graph, nodes, self._symbols, name)
        self.builds += 1
        return compiled


def _chunks(count: int, largest: int) -> list[int]:
    """``count`` as powers of two no larger than ``largest``, largest first (500 -> 256, 128, ...)."""
    cap = 1 << (max(largest, 1).bit_length() - 1)
    sizes: list[int] = []
    while count >= cap:
        sizes.append(cap)
        count -= cap
    bit = cap >> 1
    while count:
        if count >= bit:
            sizes.append(bit)
            count -= bit
        bit >>= 1
    return sizes


def _launcher(dispatch: Dispatch) -> Callable[[Mapping[str, Any]], None]:
    fn = dispatch.kernel.fn
    names = [bound for _, bound in dispatch.bindings if bound is not None]

    def launch(values: Mapping[str, Any]) -> None:
        fn(*[values[name] for name in names])

    return launch


def step_kind(target: str) -> Literal["step", "repetition", "node"]:
    """Whether an id names one step (``substep[3]/p2g``), a repetition (``substep[3]``) or a node."""
    if not REPETITION_INDEX.search(target):
        return "node"
    return "repetition" if target.endswith("]") else "step"


def unknown_id(target: str, known: Iterable[str], what: str) -> GraphError:
    """An error naming ``target`` and the closest known ids.

    Ids are compared by their shape (repetition indexes blanked: ``substep[]/p2g``), one known id per
    shape, so the cost follows the graph's node count, not its step count (100k steps are 100k ids).
    """
    import difflib  # only for this message

    shapes: dict[str, str] = {}
    for candidate in known:
        shapes.setdefault(REPETITION_INDEX.sub("[]", candidate), candidate)
    close = difflib.get_close_matches(REPETITION_INDEX.sub("[]", target[:_MAX_ID]), list(shapes), n=5, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(shapes[c]) for c in close)}?" if close else ""
    shown = target if len(target) <= 80 else f"{target[:77]}..."
    return GraphError(f"{what} {shown!r} is not in the graph{hint}")


_MAX_ID = 2_048  # longer ids are compared by their start only


# ---------------------------------------------------------------------------------------------
# What is kept to go back


@dataclass(frozen=True)
class Held:
    """Where a buffer's value at some position is: a held copy, or (``store`` None) the live buffer."""

    store: SnapshotStore | None
    position: int = 0

    def array(self, name: str, live: Mapping[str, Any]) -> Any:
        """The ndarray holding the value (read it; do not write it)."""
        return live[name] if self.store is None else self.store.get(self.position, name)


_LIVE = Held(None)


class Timeline:
    """Buffer values held per position: the memory behind ``back()`` and ``goto()``.

    ``store`` holds (position, buffer) -> the buffer's value at that position. The value of buffer
    ``b`` at position ``q`` is any held ``(j, b)`` with ``q <= j <= first write of b at or after q``;
    the live buffer when nothing wrote ``b`` between ``q`` and the current position ``p``.

    ``marks`` is a ring of two slots for the starts of the latest compiled runs (a fast-forward, one
    repetition of a checked run): overwritten in place, so running at compiled speed allocates
    nothing once warm. Both slots come out of the budget; when two copies of the written buffers
    do not fit in half of it, there are no marks and going back replays from older copies.
    """

    def __init__(self, live: Mapping[str, Any], table: StepTable, budget: int | None) -> None:
        self.live = live
        self.table = table
        names = sorted(table.written)
        self.initial_bytes = sum(nbytes(live[n]) for n in names)
        self.base = SnapshotStore(budget_bytes=max(1, self.initial_bytes))
        for name in names:
            self.base.save(0, name, live[name])
        total = default_budget() if budget is None else budget
        ring = 2 * self.initial_bytes
        self.marks: SnapshotStore | None = None
        if 0 < ring <= total // 2:
            self.marks = SnapshotStore(budget_bytes=ring)
            total -= ring
        self.store = SnapshotStore(total)
        self._mark_at: list[int | None] = [None, None]
        self._mark_names: list[frozenset[str]] = [frozenset(), frozenset()]
        self._next_slot = 0
        self.held: dict[str, list[int]] = {n: [] for n in names}
        self.skipped = 0

    def mark(self, position: int, names: set[str] | frozenset[str]) -> None:
        """Copy ``names`` as at ``position`` into the older ring slot (no-op without marks, or at 0)."""
        if self.marks is None or position == 0 or not names:
            return
        slot = self._next_slot
        self._next_slot ^= 1
        self._mark_at[slot] = None
        for name in names:
            self.marks.save(slot, name, self.live[name])  # in place once the slot holds this buffer
        self._mark_at[slot] = position
        self._mark_names[slot] = frozenset(names)

    @property
    def mark_bytes(self) -> int:
        """Device memory of the ring of marks."""
        return 0 if self.marks is None else self.marks.bytes_held

    def save(self, position: int, names: set[str] | frozenset[str]) -> None:
        """Copy ``names`` as their values at ``position`` (evicting the oldest copies if needed)."""
        if position == 0:
            return  # the initial state is held in full
        for name in names:
            try:
                evicted = self.store.save(position, name, self.live[name])
            except SnapshotError:
                self.skipped += 1  # larger than the whole budget: going back will replay instead
                continue
            held = self.held[name]
            i = bisect.bisect_left(held, position)
            if i == len(held) or held[i] != position:
                held.insert(i, position)
            for step, evicted_name in evicted:
                self._forget(step, evicted_name)

    def _forget(self, position: int, name: str) -> None:
        held = self.held[name]
        i = bisect.bisect_left(held, position)
        if i < len(held) and held[i] == position:
            del held[i]

    def source(self, name: str, q: int, p: int) -> Held | None:
        """Where the value of ``name`` at ``q`` is, seen from position ``p >= q``; None if lost."""
        first = self.table.first_write(name, q)
        if first >= p:
            return _LIVE
        if q == 0:
            return Held(self.base, 0)
        for slot, at in enumerate(self._mark_at):
            if self.marks is not None and at is not None and q <= at <= first and name in self._mark_names[slot]:
                return Held(self.marks, slot)
        held = self.held[name]
        i = bisect.bisect_left(held, q)
        if i < len(held) and held[i] <= first:
            return Held(self.store, held[i])
        return None

    def sources(self, q: int, p: int) -> dict[str, Held] | None:
        """Sources of every buffer written between ``q`` and ``p``, or None if one is lost."""
        out: dict[str, Held] = {}
        for name in self.table.written_between(q, p):
            src = self.source(name, q, p)
            if src is None:
                return None
            out[name] = src
        return out

    def restore(self, q: int, p: int) -> bool:
        """Put the live buffers back to position ``q``; False (nothing touched) if a copy is lost."""
        sources = self.sources(q, p)
        if sources is None:
            return False
        for name, src in sources.items():
            if src.store is not None:
                src.store.restore(src.position, name, self.live[name])
        return True

    def best_start(self, q: int, p: int) -> int:
        """The latest position at or before ``q`` that can be rebuilt from ``p`` (0 always can)."""
        held = {j for positions in self.held.values() for j in positions if j <= q}
        marked = {j for j in self._mark_at if j is not None and j <= q}
        candidates = sorted(held | marked | {q}, reverse=True)
        for c in candidates:
            if c == 0 or self.sources(c, p) is not None:
                return c
        return 0

    def drop_after(self, q: int) -> None:
        """Forget the copies of positions after ``q`` (the session went back: they are the future)."""
        for step in self.store.steps:
            if step > q:
                self.store.drop(step)
        for held in self.held.values():
            del held[bisect.bisect_right(held, q) :]
        self._mark_at = [None if at is None or at > q else at for at in self._mark_at]

    def copies_at(self, q: int, p: int) -> dict[str, Any]:
        """New device copies of every written buffer as at ``q`` (which must be rebuildable from ``p``)."""
        out = {}
        for name in self.table.written:
            src = self.source(name, q, p)
            if src is None:  # pragma: no cover - callers pass best_start() positions
                raise SnapshotMissingError(f"no copy of {name!r} at step {q} is held; rebuild from best_start()")
            array = src.array(name, self.live)
            twin = bridge.new_ndarray(str(array.dtype), tuple(array.shape), tuple(array.element_shape))
            twin.copy_from(array)
            out[name] = twin
        return out

    def clear(self) -> None:
        """Forget every budgeted copy (the initial state stays)."""
        self.store.clear()
        for held in self.held.values():
            held.clear()
        self._mark_at = [None, None]
