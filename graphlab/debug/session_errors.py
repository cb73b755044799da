"""Errors of a debug session, apart so that the session's parts (its mixins) can raise them too.

:mod:`graphlab.debug.session` exports them with :class:`~graphlab.debug.session.DebugSession`.
"""

from graphlab.core.errors import GraphlabError, ReplayError

__all__ = ["DebugError", "RebuildError", "StaleViewError"]


class DebugError(GraphlabError, ValueError):
    """A debugger control was asked for something it cannot do (a position out of range, a run
    backwards); nothing ran."""


class RebuildError(ReplayError):
    """Replaying dispatches that ran before, to rebuild a past step's buffers, failed.

    A :class:`graphlab.ReplayError`, so ``except gl.ReplayError`` catches it with a guarded loop's.
    """


class StaleViewError(GraphlabError, RuntimeError):
    """Values of a live buffer (a view, a stop's statistics) were read after the session moved on."""
