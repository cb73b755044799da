"""Inspection in a debug session: views of a buffer at any position, diffs, and who wrote it last.

:class:`SessionInspection` is the part of :class:`~graphlab.debug.session.DebugSession` that reads
buffers without moving the session: now, or at a past or future position rebuilt on copies
(:class:`~graphlab.debug.inspect.BufferView`, :class:`~graphlab.debug.inspect.DiffView`). It is a
mixin: the session's state it reads is declared below and set by ``DebugSession.__init__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphlab.bridge import runtime as bridge
from graphlab.debug.inspect import BufferView, DiffView, Where
from graphlab.debug.report import Position, StepRef
from graphlab.debug.session_errors import DebugError

if TYPE_CHECKING:
    from graphlab.debug.steps import StepTable
    from graphlab.graph import Graph


class SessionInspection:
    """Buffer views, diffs and last writers in a debug session (a mixin of ``DebugSession``)."""

    graph: Graph
    _canon: dict[str, str]
    _values: dict[str, Any]
    _table: StepTable
    _pos: int
    _state: int

    if TYPE_CHECKING:  # defined by DebugSession

        def _alive(self) -> None: ...

        def _index(self, target: str | int, what: str) -> int: ...

        def _value_at(self, canon: str, q: int) -> Any: ...

        def _position_at(self, k: int) -> Position: ...

    def inspect(self, name: str, *, at: str | int | None = None) -> BufferView:
        """A view of buffer ``name`` now (or at a past or future position ``at``, rebuilt on copies;
        with control flow, a position of the recorded timeline).

        Parameters
        ----------
        name
            An ndarray arg of the graph.
        at
            A step index, step id or repetition id; ``None`` for the current position. The session
            does not move.

        Returns
        -------
        BufferView
            Shape, dtype, device statistics, ``numpy()`` values and pictures (in a notebook: a heat
            map) of the buffer at that position.

        Raises
        ------
        DebugError
            ``name`` is no ndarray arg, or ``at`` is out of range.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> stop = dbg.run_to(3)
        >>> print(dbg.inspect("y"))
        y: f32[4] before steps[1]/again (step 3; 3 of 6 dispatches done); last written by steps[1]/saxpy (saxpy, step 2)
          f32[4]: min 3.0 max 3.0 mean 3 std 0, 0 NaN, 0 Inf, 0 zeros
        >>> dbg.inspect("y", at="steps[2]").numpy()  # ahead, on copies
        array([4., 4., 4., 4.], dtype=float32)
        """
        self._alive()
        canon = self._buffer(name)
        q = self._pos if at is None else self._index(at, "inspect")
        if q == self._pos:
            state = self._state
            array = self._values[name]
            view = BufferView(name, array, self._where(canon, q), fresh=lambda: self._state == state)
            return view
        array = self._value_at(canon, q)
        twin = bridge.new_ndarray(str(array.dtype), tuple(array.shape), tuple(array.element_shape))
        twin.copy_from(array)
        return BufferView(name, twin, self._where(canon, q))

    def diff(self, name: str, a: str | int, b: str | int | None = None) -> DiffView:
        """How buffer ``name`` changed from position ``a`` to ``b`` (default: the current position)."""
        self._alive()
        canon = self._buffer(name)
        qa = self._index(a, "diff")
        qb = self._pos if b is None else self._index(b, "diff")
        return DiffView(name, qa, qb, self._value_at(canon, qa), self._value_at(canon, qb))

    def last_writer(self, name: str, *, at: str | int | None = None) -> StepRef | None:
        """The step that last wrote buffer ``name`` before the current position (or ``at``)."""
        canon = self._buffer(name)
        q = self._pos if at is None else self._index(at, "last_writer")
        k = self._table.last_write_before(canon, q)
        return None if k is None else self._table.ref(k)

    def _where(self, canon: str, q: int) -> Where:
        k = self._table.last_write_before(canon, q)
        return Where(self._position_at(q), None if k is None else self._table.ref(k))

    def _buffer(self, name: str) -> str:
        if name not in self._canon:
            known = ", ".join(self._canon) or "none"
            raise DebugError(f"{name!r} is not an ndarray arg of graph {self.graph.name!r}; buffers: {known}")
        return self._canon[name]
