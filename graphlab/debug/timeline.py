"""The copies kept to go back: buffer values held per position of the timeline.

:class:`Timeline` keeps device copies of the buffers each step writes, within a memory budget, and
rebuilds the buffers as at an earlier position from them (see :mod:`graphlab.debug.session` for how
``back()`` and ``goto()`` use it). Which step writes what comes from
:class:`~graphlab.debug.steps.StepTable`.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphlab.bridge import runtime as bridge
from graphlab.debug.snapshots import SnapshotError, SnapshotMissingError, SnapshotStore, default_budget, nbytes
from graphlab.debug.steps import StepTable


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
