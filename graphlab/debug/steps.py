"""The unrolled steps of a graph and the lookups the debugger asks of them.

:class:`StepTable` answers where a node runs, where a repetition (or loop iteration, or taken
branch) starts and ends, and which buffers a span of steps writes. A plain graph's table holds every
step from the start; with control flow it is the timeline recorded so far (see
:mod:`graphlab.debug.flow`). :class:`Block` and :class:`Chunk` are the runs of steps the table
groups them into; :func:`step_kind` and :func:`unknown_id` read and explain step ids.
Compiled segments that run spans of these steps are in :mod:`graphlab.debug.runner`; the copies
kept to go back are in :mod:`graphlab.debug.timeline`.
"""

from __future__ import annotations

import bisect
import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from graphlab.core.errors import GraphError
from graphlab.debug.report import StepRef
from graphlab.model.ids import REPETITION_INDEX

if TYPE_CHECKING:
    from graphlab.model.unroll import Step

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
    shapes: dict[str, str] = {}
    for candidate in known:
        shapes.setdefault(REPETITION_INDEX.sub("[]", candidate), candidate)
    close = difflib.get_close_matches(REPETITION_INDEX.sub("[]", target[:_MAX_ID]), list(shapes), n=5, cutoff=0.5)
    hint = f"; did you mean {', '.join(repr(shapes[c]) for c in close)}?" if close else ""
    shown = target if len(target) <= 80 else f"{target[:77]}..."
    return GraphError(f"{what} {shown!r} is not in the graph{hint}")


_MAX_ID = 2_048  # longer ids are compared by their start only
