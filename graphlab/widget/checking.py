"""The debug panel's checked start: Debug with "check bounds first" (``bounds="check"``), as the panel shows it.

A checked start runs the graph once in a child process under Taichi's bounds checks
(:mod:`graphlab.run.boundscheck`) before the session opens; it takes seconds, and when a dispatch
indexes an ndarray out of bounds no session opens at all. So the panel needs to say two things the
session cannot: that the check is running, and why nothing started. :class:`BoundsCheck` keeps that
(the ``bounds`` field of the ``debugger`` trait, ``BoundsCheckView``); the check itself is the
session's (``DebugSession(..., bounds="check")``), the same one ``g.debug`` and ``graphlab run`` use.
"""

from __future__ import annotations

import time
from typing import Any, Literal

from graphlab.core.errors import OutOfBoundsError

__all__ = ["BoundsCheck"]

State = Literal["idle", "checking", "passed", "failed"]


class BoundsCheck:
    """The last start's bounds check: idle (unchecked start), checking, passed or failed (with the error)."""

    def __init__(self) -> None:
        self.state: State = "idle"
        self.error: str | None = None
        self.found: OutOfBoundsError | None = None
        self.seconds = 0.0
        self._started = 0.0

    def skip(self) -> None:
        """An unchecked start: forget the last check."""
        self.state, self.error, self.found, self.seconds = "idle", None, None, 0.0

    def begin(self) -> None:
        """A checked start begins (the panel says "checking bounds..." until it ends)."""
        self.skip()
        self.state = "checking"
        self._started = time.perf_counter()

    def passed(self) -> None:
        self.state = "passed"
        self.seconds = time.perf_counter() - self._started

    def failed(self, exc: BaseException) -> None:
        """The checked start raised ``exc`` (an ``OutOfBoundsError``, or what stopped the start before)."""
        self.state = "failed"
        self.seconds = time.perf_counter() - self._started
        self.error = f"{type(exc).__name__}: {exc}"
        self.found = exc if isinstance(exc, OutOfBoundsError) else None

    def view(self) -> dict[str, Any]:
        """A ``BoundsCheckView``."""
        found = self.found
        where = None
        if found is not None:
            where = {
                "node": found.node,
                "step": found.step,
                "arg": found.arg,
                "param": found.param,
                "index": [int(i) for i in found.index],
                "shape": None if found.shape is None else [int(n) for n in found.shape],
            }
        return {"state": self.state, "error": self.error, "out_of_bounds": where, "seconds": self.seconds}
