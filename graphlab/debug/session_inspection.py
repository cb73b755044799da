"""Inspection in a debug session: which buffer a name means, where a view stands, views on copies.

:class:`~graphlab.debug.session.DebugSession`'s ``inspect``, ``diff`` and ``last_writer`` read
buffers without moving the session: now, or at a past or future position rebuilt on copies
(:class:`~graphlab.debug.inspect.BufferView`, :class:`~graphlab.debug.inspect.DiffView`). The
functions here are their parts, given the session's step table and buffers explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphlab.bridge import runtime as bridge
from graphlab.debug.inspect import BufferView, Where
from graphlab.debug.session_errors import DebugError

if TYPE_CHECKING:
    from graphlab.debug.report import Position
    from graphlab.debug.steps import StepTable


def buffer_of(name: str, canon: Mapping[str, str], graph_name: str) -> str:
    """The canonical buffer an ndarray arg ``name`` is bound to; an error listing the buffers otherwise."""
    if name not in canon:
        known = ", ".join(canon) or "none"
        raise DebugError(f"{name!r} is not an ndarray arg of graph {graph_name!r}; buffers: {known}")
    return canon[name]


def where(table: StepTable, position: Position, canon: str, q: int) -> Where:
    """Where a view of buffer ``canon`` at position ``q`` stands, and the step that last wrote it."""
    k = table.last_write_before(canon, q)
    return Where(position, None if k is None else table.ref(k))


def copied_view(name: str, array: Any, place: Where) -> BufferView:
    """A view of a new device copy of ``array`` (a buffer rebuilt at another position), so it stays valid."""
    twin = bridge.new_ndarray(str(array.dtype), tuple(array.shape), tuple(array.element_shape))
    twin.copy_from(array)
    return BufferView(name, twin, place)
