"""Where a target is: the position a step index, step id, repetition id or node id names.

:class:`Targets` is what :class:`~graphlab.debug.session.DebugSession` asks to turn what
a control is given (``run_to("substep[37]")``, ``goto(12)``, ``inspect(at=...)``) into a position,
or into a :class:`~graphlab.debug.session_running.Goal` when, with control flow, the step is not
recorded yet; bad targets get an error naming the nearby ids. It reads the graph and the session's
step table, given when the session is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlab.debug.session_errors import DebugError
from graphlab.debug.session_running import Goal
from graphlab.debug.steps import step_kind, unknown_id
from graphlab.model.ids import parse_id, runs_once

if TYPE_CHECKING:
    from graphlab.debug.steps import StepTable
    from graphlab.model.graph import Graph


class Targets:
    """Positions and goals from the targets a control is given; ``flow``: the graph has control flow
    (its steps are recorded as the session runs)."""

    def __init__(self, graph: Graph, table: StepTable, *, flow: bool) -> None:
        self.graph = graph
        self._table = table
        self._flow = flow

    def index(self, target: str | int, what: str) -> int:
        """The position ``target`` names, which must be known (recorded, with control flow)."""
        q = self.lookup(target, what)
        if q is None:
            raise DebugError(
                f"{what}({target!r}): that step has not run yet, and which steps run depends on the graph's flags; "
                "run there first (run_to, continue_ with a breakpoint)"
            )
        return q

    def lookup(self, target: str | int, what: str) -> int | None:
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
        kind = self.id_kind(target)
        if kind == "node" and self._flow and runs_once(self.graph, target):
            kind = "step"  # its step id is its node id (branch/then/halve)
        if kind == "repetition" and table.scope_start(target) is not None:
            return table.scope_start(target)
        if kind == "node":
            known = table.by_node.get(target)
            if known is None and not self._flow:
                raise unknown_id(target, table.by_node, f"{what}(): node")
            self.graph.node(target)  # raises for an id that is no node
            example = f"e.g. {table.steps[known[0]].id!r}, " if known else ""
            raise DebugError(f"{what}({target!r}): a node runs at many steps; name one, {example}or give a step index")
        if not self._flow:
            if kind == "step":
                raise unknown_id(target, table.by_id, f"{what}(): step")
            raise DebugError(f"{what}({target!r}): no such repetition")
        if table.complete:
            raise DebugError(
                f"{what}({target!r}): the recorded run does not pass there (its flags took another path); "
                "restart() to decide anew"
            )
        return None

    def id_kind(self, target: str) -> str:
        """``"node"``, ``"step"`` or ``"repetition"``; with control flow, checked against the graph."""
        if self._flow:
            return parse_id(self.graph, target)[0]
        return step_kind(target)

    def goal(self, target: str | int, q: int | None) -> Goal:
        """Where a forward run to ``target`` stops: a known position ``q``, else where it gets recorded."""
        if q is not None:
            return Goal(lambda t: q, "")
        if isinstance(target, int):
            return Goal(lambda t: target if target <= t.count else None, f"step {target}")
        if self.id_kind(target) == "repetition":
            return Goal(lambda t: t.scope_start(target), repr(target))
        return Goal(lambda t: t.by_id.get(target), repr(target))
