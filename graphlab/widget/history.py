"""Undo and redo over graph snapshots (``Graph.snapshot()`` / ``Graph.restore(state)``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

State = TypeVar("State")


@dataclass
class History(Generic[State]):
    """Two stacks of ``(label, state)``: what undo and redo would put back.

    ``record`` is called with the state from *before* an edit; ``undo``/``redo`` take the current
    state (to move it to the other stack) and return the state to restore.

    >>> h = History(limit=2)
    >>> h.record("add a", "s0"); h.record("add b", "s1")
    >>> h.undo("s2")
    's1'
    >>> h.labels()
    {'undo': ['add a'], 'redo': ['add b']}
    >>> h.redo("s1")
    's2'
    """

    limit: int = 200
    _undo: list[tuple[str, State]] = field(default_factory=list)
    _redo: list[tuple[str, State]] = field(default_factory=list)

    def record(self, label: str, before: State) -> None:
        """Remember the state before an edit; a new edit clears what redo could redo."""
        self._undo.append((label, before))
        del self._undo[: -self.limit]
        self._redo.clear()

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo(self, current: State) -> State:
        """The state to restore to undo the last edit; IndexError when there is none."""
        label, state = self._undo.pop()
        self._redo.append((label, current))
        return state

    def redo(self, current: State) -> State:
        """The state to restore to redo the last undone edit; IndexError when there is none."""
        label, state = self._redo.pop()
        self._undo.append((label, current))
        return state

    def labels(self) -> dict[str, list[str]]:
        """The ``history`` trait: labels, the next step last."""
        return {"undo": [label for label, _ in self._undo], "redo": [label for label, _ in self._redo]}

    def clear(self) -> None:
        self._undo.clear()
        self._redo.clear()
