"""The watches of a debug session: expressions evaluated at every stop.

:class:`WatchList` keeps the watch expressions :class:`~graphlab.debug.session.DebugSession`'s
``watch()``/``unwatch()`` add and remove, one per text. Breakpoints live in the session's
:class:`~graphlab.debug.breakpoints.BreakpointSet`; both are what a stop checks and shows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from graphlab.debug.breakpoints import Watch, compile_watch
from graphlab.debug.session_errors import DebugError

if TYPE_CHECKING:
    from graphlab.core.spec import Arg


class WatchList:
    """The watch expressions of a session, in the order they were added, each text once."""

    def __init__(self, args: Mapping[str, Arg]) -> None:
        self._args = args
        self._watches: list[Watch] = []

    def add(self, expression: str) -> Watch:
        """Compile ``expression`` against the graph's args; the existing watch when its text is watched."""
        watch = compile_watch(expression, self._args)
        for existing in self._watches:
            if existing.text == watch.text:
                return existing
        self._watches.append(watch)
        return watch

    def remove(self, expression: str | None) -> None:
        """Remove the watch with this text (or every watch for None); an unknown text is an error."""
        if expression is None:
            self._watches.clear()
            return
        kept = [w for w in self._watches if w.text != expression.strip()]
        if len(kept) == len(self._watches):
            listed = ", ".join(repr(w.text) for w in self._watches) or "none"
            raise DebugError(f"unwatch({expression!r}): no such watch; watches: {listed}")
        self._watches = kept

    def __iter__(self) -> Iterator[Watch]:
        return iter(self._watches)

    def __len__(self) -> int:
        return len(self._watches)
