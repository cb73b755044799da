"""Breakpoints, watches and run checks: where a run stops, and what is shown when it does.

A location breakpoint names a node (``substep/p2g``: every repetition), one step
(``substep[37]/p2g``), a repetition (``substep[37]``: before its first dispatch), a sequence use
(``substep``: before every repetition) or a step index; a run stops *before* that dispatch. In a
graph with control flow the same holds inside loops and branches: ``solve/jacobi`` stops in every
iteration, ``solve/iter[7]/jacobi`` in iteration 7 only, ``solve/iter[7]`` before that iteration,
``solve`` before every iteration and ``branch`` before the taken branch (a node in a branch not
taken never stops the run). Breakpoints are looked up in the steps as they are recorded, so one may
name a step that has not run yet; its id is checked against the graph when it is set. A condition
(``grid_m.max() > 1e3``, the language of :mod:`graphlab.debug.expr`, reduced on the device) stops a
run *after* the dispatch that makes it turn true: it must have been false at the previous check. A
condition already true when the first run after setting it begins stops that run at once, saying so
(nothing turned it true, but running past it silently would hide it). Checking after every dispatch
would defeat running at compiled speed, so by default a condition is checked after every repetition
of a top-level sequence, and the repetition where it turned true is stepped again dispatch by
dispatch to find the exact one; a condition that turns true and false again inside one repetition is
seen only with ``every="dispatch"``. The NaN/Inf hunt (:class:`NonfiniteHunt`) is a check of the
same kind over the buffers a span wrote; NaN/Inf already there (reported once) stop it only where
they spread to new elements.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np

from graphlab.core.errors import GraphError
from graphlab.debug.expr import Expr, compile_expr
from graphlab.debug.report import Halt, NonfiniteHit
from graphlab.debug.stats import buffer_stats, first_nonfinite
from graphlab.debug.steps import StepTable, step_kind, unknown_id
from graphlab.model.ids import parse_id
from graphlab.model.nodes import Dispatch

if TYPE_CHECKING:
    from graphlab.core.spec import Arg
    from graphlab.debug.report import WatchValue
    from graphlab.model.graph import Graph

BreakKind = Literal["node", "step", "repetition", "sequence", "condition"]
Every = Literal["repetition", "dispatch"]


@dataclass(eq=False)
class Breakpoint:
    """One breakpoint; ``hits`` counts the stops it caused.

    ``kind`` ``"sequence"`` also covers a loop (before each iteration) and a conditional (before
    its taken branch); ``index`` is set for a breakpoint at a step index.
    """

    id: int
    kind: BreakKind
    target: str
    every: Every | None = None
    enabled: bool = True
    hits: int = 0
    expr: Expr | None = field(default=None, repr=False)
    index: int | None = field(default=None, repr=False)

    def __str__(self) -> str:
        what = f"when {self.target}" if self.kind == "condition" else f"at {self.kind} {self.target}"
        every = f" (checked every {self.every})" if self.every else ""
        off = "" if self.enabled else " [disabled]"
        return f"#{self.id} {what}{every}, {self.hits} hits{off}"


@dataclass(frozen=True)
class Watch:
    """An expression evaluated at every stop."""

    text: str
    expr: Expr = field(repr=False)


class BreakpointSet:
    """The session's breakpoints and the lookups a run needs: the next location, the conditions."""

    def __init__(self, graph: Graph, table: StepTable, buffers: Mapping[str, Arg]) -> None:
        self._graph = graph
        self._table = table
        self._buffers = buffers
        self._items: dict[int, Breakpoint] = {}
        self._ids = itertools.count(1)
        self._previous: dict[int, bool] = {}
        self._checked: set[int] = set()  # conditions evaluated at the start of some run
        self._control = graph.has_control_flow

    def __iter__(self) -> Iterator[Breakpoint]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    # --- adding and removing --------------------------------------------------------------------

    def add_location(self, target: str | int) -> Breakpoint:
        """A breakpoint before a node's dispatches, one step, a repetition or a step index."""
        table = self._table
        if isinstance(target, bool) or not isinstance(target, (str, int)):
            raise GraphError(
                f"break_at({target!r}): give a node id ('substep/p2g'), a step id ('substep[3]/p2g'), "
                "a repetition ('substep[3]') or a step index"
            )
        if isinstance(target, int):
            if target < 0 or (table.complete and target >= table.count):
                raise GraphError(f"break_at({target}): a step index must lie in 0..{table.count - 1}")
            text = table.steps[target].id if target < table.count else str(target)
            return self._add("step", text, index=target)
        if self._control:
            return self._add_in_flow(target)
        kind = step_kind(target)
        if kind == "step":
            if target not in table.by_id:
                raise unknown_id(target, table.by_id, "break_at(): step")
            return self._add("step", target)
        if kind == "repetition":
            if table.scope_start(target) is None:
                raise GraphError(
                    f"break_at({target!r}): no such repetition; repetition ids look like "
                    f"'substep[3]' with an index below the sequence's repeat count"
                )
            return self._add("repetition", target)
        node = self._graph.node(target)  # raises with the ids nearby
        return self._add("node" if isinstance(node, Dispatch) else "sequence", target)

    def _add_in_flow(self, target: str) -> Breakpoint:
        """A location in a graph with control flow: checked against the graph, found when recorded."""
        if target in self._table.by_id and step_kind(target) == "step":
            return self._add("step", target)
        kind, _ = parse_id(self._graph, target)  # raises naming the part that does not fit
        if kind != "node":
            return self._add(kind, target)
        node = self._graph.node(target)
        return self._add("node" if isinstance(node, Dispatch) else "sequence", target)

    def add_condition(self, text: str, every: Every = "repetition") -> Breakpoint:
        """A breakpoint that stops after the dispatch where ``text`` turns true."""
        if every not in ("repetition", "dispatch"):
            raise GraphError(f"break_when(..., every={every!r}): choose 'repetition' or 'dispatch'")
        expr = compile_expr(text, self._buffers)
        return self._add("condition", expr.text, every=every, expr=expr)

    def _add(self, kind: BreakKind, target: str, **extra: Any) -> Breakpoint:
        for bp in self._items.values():
            if bp.kind == kind and bp.target == target and bp.every == extra.get("every"):
                bp.enabled = True
                return bp
        bp = Breakpoint(next(self._ids), kind, target, **extra)
        self._items[bp.id] = bp
        return bp

    def remove(self, which: Breakpoint | int | str) -> None:
        """Remove one breakpoint, by record, id or target text."""
        for bp in list(self._items.values()):
            if which is bp or which == bp.id or which == bp.target:
                del self._items[bp.id]
                self._previous.pop(bp.id, None)
                return
        listed = "; ".join(str(bp) for bp in self._items.values()) or "none"
        raise GraphError(f"no breakpoint {which!r}; breakpoints: {listed}")

    def clear(self) -> None:
        """Remove every breakpoint."""
        self._items.clear()
        self._previous.clear()

    # --- lookups for a run ------------------------------------------------------------------------

    def next_location(self, after: int) -> tuple[int, list[Breakpoint]] | None:
        """The first step index greater than ``after`` with an enabled location breakpoint."""
        best: int | None = None
        hits: list[Breakpoint] = []
        for bp in self._items.values():
            if not bp.enabled or bp.kind == "condition":
                continue
            nxt = self._next(bp, after)
            if nxt is None:
                continue
            if best is None or nxt < best:
                best, hits = nxt, [bp]
            elif nxt == best:
                hits.append(bp)
        return None if best is None else (best, hits)

    def _next(self, bp: Breakpoint, after: int) -> int | None:
        """The first recorded step after ``after`` where ``bp`` stops a run."""
        table = self._table
        at: int | None
        if bp.index is not None:
            at = bp.index
        elif bp.kind == "node":
            return table.next_of_node(bp.target, after)
        elif bp.kind == "sequence":
            return table.next_in_scope(bp.target, after)
        elif bp.kind == "repetition":
            at = table.scope_start(bp.target)
        else:
            at = table.by_id.get(bp.target)
        return at if at is not None and at > after else None

    def conditions(self) -> list[Breakpoint]:
        """The enabled condition breakpoints."""
        return [bp for bp in self._items.values() if bp.enabled and bp.kind == "condition"]

    def evaluate(self, resolve: Callable[[str], Any]) -> dict[int, bool]:
        """Each enabled condition's truth now, on the device (by breakpoint id)."""
        return {bp.id: bool(bp.expr.evaluate(resolve)) for bp in self.conditions() if bp.expr is not None}

    def arm(self, resolve: Callable[[str], Any]) -> list[Breakpoint]:
        """Take each condition's value where a run begins (a condition fires when it turns true);
        return the conditions that are true there and were never checked before (new ones)."""
        values = self.evaluate(resolve)
        fresh = [self._items[i] for i, now in values.items() if now and i not in self._checked]
        self._checked.update(values)
        self._previous = values
        return fresh

    def edges(self, values: Mapping[int, bool]) -> list[Breakpoint]:
        """Conditions true in ``values`` that were false at the last committed check."""
        return [self._items[i] for i, now in values.items() if now and not self._previous.get(i, False)]

    def commit(self, values: Mapping[int, bool]) -> None:
        """Remember ``values`` as the last check (not done for a look-ahead that fired)."""
        self._previous.update(values)


class Check(Protocol):
    """Something a run looks at after each piece: ``look`` may halt it; ``commit`` accepts the look."""

    def look(self, start: int, stop: int) -> Halt | None: ...

    def commit(self) -> None: ...


class ConditionCheck:
    """Condition breakpoints as a check: fires when one turns true."""

    def __init__(self, breaks: BreakpointSet, resolve: Callable[[str], Any]) -> None:
        self._breaks = breaks
        self._resolve = resolve
        self._pending: dict[int, bool] = {}

    def look(self, start: int, stop: int) -> Halt | None:
        """Evaluate every condition now (after steps ``start..stop-1`` ran)."""
        self._pending = self._breaks.evaluate(self._resolve)
        fired = self._breaks.edges(self._pending)
        return Halt("condition", tuple(fired)) if fired else None

    def commit(self) -> None:
        """Remember the values of the last look."""
        self._breaks.commit(self._pending)


class NonfiniteHunt:
    """The NaN/Inf hunt as a check: fires when a buffer written in the span holds NaN or Inf it did not.

    ``order`` lists the buffers in the order to report them (the graph's args). ``known`` maps the
    buffers that already held NaN/Inf where the hunt began to where (a boolean mask): for those it
    fires only where NaN/Inf spread to new elements, so a hunt gets past values already reported.
    """

    def __init__(
        self,
        table: StepTable,
        live: Mapping[str, Any],
        order: Sequence[str],
        known: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        self._table = table
        self._live = live
        self._order = list(order)
        self._known = dict(known or {})
        self._pending: dict[str, np.ndarray] = {}

    def look(self, start: int, stop: int) -> Halt | None:
        """Check, on the device, the buffers steps ``start..stop-1`` wrote (on the host: those with known NaN/Inf)."""
        written = self._table.written_between(start, stop)
        self._pending = {}
        step = self._table.ref(start) if stop - start == 1 else None
        for name in (n for n in self._order if n in written):
            before = self._known.get(name)
            if before is not None:
                now = nonfinite_mask(self._live[name])
                self._pending[name] = now
                new = np.argwhere(now & ~before)
                if new.size:
                    stats = buffer_stats(self._live[name])
                    first = tuple(int(i) for i in new[0])
                    hit = NonfiniteHit(step, name, stats.nan, stats.inf, first, before=int(before.sum()))
                    return Halt("nonfinite", nonfinite=hit)
                continue
            index = first_nonfinite(self._live[name])
            if index is not None:
                stats = buffer_stats(self._live[name])
                return Halt("nonfinite", nonfinite=NonfiniteHit(step, name, stats.nan, stats.inf, index))
        return None

    def commit(self) -> None:
        """Take where the known NaN/Inf are now as the baseline (a clean buffer stays clean, or the hunt fired)."""
        self._known.update(self._pending)


def nonfinite_mask(arr: Any) -> np.ndarray:
    """Where ``arr`` (a ``ti.ndarray``) holds NaN or Inf, on the host (element components as axes)."""
    values = np.asarray(arr.to_numpy())
    return ~np.isfinite(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)


def compile_watch(text: str, buffers: Mapping[str, Arg]) -> Watch:
    """A checked watch expression."""
    expr = compile_expr(text, buffers)
    return Watch(expr.text, expr)


def evaluate_watches(watches: list[Watch], resolve: Callable[[str], Any]) -> dict[str, WatchValue]:
    """Every watch's value now (each buffer reduced at most once per watch)."""
    return {w.text: w.expr.evaluate(resolve) for w in watches}
