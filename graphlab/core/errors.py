"""One error hierarchy for graphlab.

Every error a user can act on is a :class:`GraphlabError`; each child also subclasses the builtin
that describes it (``ValueError`` for bad input, ``TypeError`` for the wrong kind of object,
``RuntimeError`` for a state problem), so ``except ValueError`` keeps working for callers that do
not know graphlab.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphlab.core.diagnostics import Diagnostic


class GraphlabError(Exception):
    """Base of every error graphlab raises on purpose."""


class GraphError(GraphlabError, ValueError):
    """The graph is not valid, or an edit would make it invalid.

    ``diagnostics`` lists the located problems when the error comes from validation.
    """

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class KernelError(GraphlabError, TypeError):
    """A function is not a ``@ti.kernel`` that a compute graph can dispatch."""


class GraphFileError(GraphlabError, ValueError):
    """A graph file cannot be loaded; ``json_path`` names the place (``$.body[2].kernel``)."""

    def __init__(self, message: str, *, file: str | None = None, json_path: str = "$") -> None:
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{json_path}: {message}")
        self.file = file
        self.json_path = json_path
        self.reason = message


class GraphRunError(GraphlabError, ValueError):
    """A value given to ``run`` does not fit the graph; nothing was dispatched."""

    def __init__(self, message: str, *, arg: str | None = None) -> None:
        super().__init__(message)
        self.arg = arg


class OutOfBoundsError(GraphRunError):
    """A checked run (``bounds="check"``) found a dispatch indexing an ndarray out of bounds; nothing ran here.

    ``node`` is the dispatch's node id, ``step`` its step id (``substep[3]/p2g``), ``param`` the kernel
    parameter, ``arg`` the graph arg bound to it, ``index`` the index Taichi reported and ``shape``
    the arg's field dims in that run.
    """

    def __init__(
        self,
        message: str,
        *,
        node: str | None = None,
        step: str | None = None,
        arg: str | None = None,
        param: str | None = None,
        index: tuple[int, ...] = (),
        shape: tuple[int, ...] | None = None,
    ) -> None:
        super().__init__(message, arg=arg)
        self.node, self.step, self.param, self.index, self.shape = node, step, param, index, shape


class ReplayError(GraphlabError, RuntimeError):
    """Running dispatches again, to get back a state they made before, failed or came out otherwise.

    The base of every replay failure, so ``except gl.ReplayError`` catches them all: a guarded
    loop's (:class:`GuardedLoopReplayError`) and the debugger's rebuilding of a past step
    (:class:`graphlab.debug.RebuildError`).
    """


class GuardedLoopReplayError(ReplayError):
    """A guarded loop's replay did not clear its flag as the first run did: the body is not safe to repeat."""


class StaleGraphError(GraphlabError, RuntimeError):
    """A compiled graph outlived the Taichi runtime it was compiled for (``ti.reset``/``ti.init``)."""


class ToolMissingError(GraphlabError, RuntimeError):
    """A system component (dot, a C compiler, Vulkan) is missing; the message says how to install it."""


class FileWriteError(GraphlabError, OSError):
    """A file or folder could not be written (a full or read-only file system, no permission, a size limit).

    Also an ``OSError`` with the ``errno`` of the failure; ``filename`` is the path the caller
    named (never a temporary name) and the message says the fix. Nothing the caller had is lost:
    the old file, if any, is unchanged.
    """

    def __init__(self, message: str, *, path: str, errno: int | None = None) -> None:
        super().__init__(errno, message)
        self.filename = path
        self.message = message

    def __str__(self) -> str:  # OSError would show "[Errno 28] ..." without the path and the fix
        return self.message


class CaptureError(GraphlabError, ValueError):
    """A field capture (``graphlab.capture/1`` folder) is missing, incomplete, corrupt or not of this graph.

    ``file`` names the file and ``json_path`` the place in ``capture.json`` (``$.inputs.x``); the
    message says what was expected and the fix.
    """

    def __init__(self, message: str, *, file: str | None = None, json_path: str = "$") -> None:
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{json_path}: {message}")
        self.file, self.json_path, self.reason = file, json_path, message
