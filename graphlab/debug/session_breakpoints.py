"""Breakpoints and watches of a debug session: where a run stops, and what a stop shows.

:class:`SessionBreakpoints` is the part of :class:`~graphlab.debug.session.DebugSession` that sets
and removes breakpoints (locations and conditions, kept in a
:class:`~graphlab.debug.breakpoints.BreakpointSet`) and watch expressions (evaluated at every stop).
It is a mixin: the session's state it reads is declared below and set by ``DebugSession.__init__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphlab.debug.breakpoints import Breakpoint, BreakpointSet, Every, Watch, compile_watch
from graphlab.debug.session_errors import DebugError

if TYPE_CHECKING:
    from graphlab.graph import Graph


class SessionBreakpoints:
    """Breakpoints and watches of a debug session (a mixin of ``DebugSession``)."""

    graph: Graph
    _breaks: BreakpointSet
    _watches: list[Watch]

    def break_at(self, target: str | int) -> Breakpoint:
        """Stop before a node's every dispatch (``substep/p2g``), one step (``substep[37]/p2g``), a
        repetition (``substep[37]``), every repetition of a sequence (``substep``) or a step index.

        Parameters
        ----------
        target
            A node id, step id, repetition id, sequence use id or step index, as above.

        Returns
        -------
        Breakpoint
            The record (``id``, ``kind``, ``hits``); :meth:`remove_breakpoint` takes it or its id.

        Raises
        ------
        GraphError
            No such node, step or repetition; the message lists the ids nearby.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.break_at("steps/again")
        Breakpoint(id=1, kind='node', target='steps/again', every=None, enabled=True, hits=0)
        >>> dbg.continue_().step_id, dbg.continue_().step_id
        ('steps[0]/again', 'steps[1]/again')
        """
        return self._breaks.add_location(target)

    def break_when(self, condition: str, *, every: Every = "repetition") -> Breakpoint:
        """Stop after the dispatch where ``condition`` turns true (reduced on the device; see
        :mod:`graphlab.debug.breakpoints` for when it is checked)."""
        return self._breaks.add_condition(condition, every)

    @property
    def breakpoints(self) -> list[Breakpoint]:
        """The breakpoints, in the order they were set.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> bp = dbg.break_at("steps/again")
        >>> bp = dbg.break_at("steps[2]")
        >>> stop = dbg.continue_()
        >>> [str(bp) for bp in dbg.breakpoints]
        ['#1 at node steps/again, 1 hits', '#2 at repetition steps[2], 0 hits']
        """
        return list(self._breaks)

    def remove_breakpoint(self, which: Breakpoint | int | str) -> None:
        """Remove one breakpoint (the record, its id, or its target text)."""
        self._breaks.remove(which)

    def clear_breakpoints(self) -> None:
        """Remove every breakpoint."""
        self._breaks.clear()

    def watch(self, expression: str) -> Watch:
        """Add an expression evaluated (on the device) at every stop: ``stop.watches[text]``.

        Parameters
        ----------
        expression
            Reductions of buffers and arithmetic on them, e.g. ``"y.max()"``,
            ``"isnan(x).any() or x.mean() > 1"`` (the grammar: :mod:`graphlab.debug.expr`). Nothing
            typed is executed as Python.

        Returns
        -------
        Watch
            The watch (the same one when that expression is watched already).

        Raises
        ------
        ExprError
            The expression does not parse, or names no buffer of the graph.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.watch("y.max() - y.min()")
        Watch(text='y.max() - y.min()')
        >>> dbg.watch("y.sum()")
        Watch(text='y.sum()')
        >>> dbg.run_to(3).watches
        {'y.max() - y.min()': 0.0, 'y.sum()': 12.0}
        """
        watch = compile_watch(expression, self.graph.args)
        for existing in self._watches:
            if existing.text == watch.text:
                return existing
        self._watches.append(watch)
        return watch

    def unwatch(self, expression: str | None = None) -> None:
        """Remove one watch (by its text), or every watch."""
        if expression is None:
            self._watches.clear()
            return
        kept = [w for w in self._watches if w.text != expression.strip()]
        if len(kept) == len(self._watches):
            listed = ", ".join(repr(w.text) for w in self._watches) or "none"
            raise DebugError(f"unwatch({expression!r}): no such watch; watches: {listed}")
        self._watches = kept

    @property
    def watches(self) -> list[str]:
        """The watch expressions."""
        return [w.text for w in self._watches]
