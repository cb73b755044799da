"""Reading the graph file the viewer is asked for: under the server's root, not hidden, opened once.

The drawing route takes a path of the server's contents API. Checking where the path leads and
then opening it by name leaves a gap in which a link can be swapped in (the file drawn would be one
outside the root); so the server reads the file itself, opening the checked path one folder at a
time with ``O_NOFOLLOW`` from the root's descriptor: a link that appears after the check makes the
open fail, and the bytes read are those of the file checked. The drawing child gets the bytes, never
the path.

Hidden files and folders (a name starting with ``.``) are refused as Jupyter's contents API refuses
them, unless the server's ``ContentsManager.allow_hidden`` is set (Jupyter's own test,
``jupyter_core.paths.is_hidden``, on the path asked for and on the path it leads to).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from jupyter_core.paths import is_hidden

from graphlab.core.errors import GraphFileError, GraphlabError
from graphlab.fileview.drawing import SUFFIX
from graphlab.model.graphfile import read_graph_file

__all__ = ["PathRefusedError", "read_under_root"]

#: The longest path the route takes, in characters (Linux's PATH_MAX is 4,096 bytes).
MAX_PATH_CHARS = 4096

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class PathRefusedError(GraphlabError, ValueError):
    """The route cannot answer with a drawing: ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def read_under_root(root: Path, relative: str, *, allow_hidden: bool = False) -> bytes:
    """The bytes of the ``.graph.json`` at ``relative`` under ``root`` (a resolved folder).

    Raises :class:`PathRefusedError` (400: outside the root, another suffix, a link loop, a path too long,
    not a regular file, over the size limit, changed while opened; 404: no such file or hidden).
    """
    shown = relative if len(relative) <= 200 else f"{relative[:200]}... ({len(relative):,} characters)"
    if len(relative) > MAX_PATH_CHARS or "\0" in relative:
        what = "a NUL character" if "\0" in relative else f"{len(relative):,} characters, over {MAX_PATH_CHARS:,}"
        raise PathRefusedError(400, f"{shown}: the path holds {what}; give the path of a file under the server's root")
    asked = Path(os.path.normpath(root / relative.lstrip("/")))
    if not asked.is_relative_to(root):
        raise PathRefusedError(400, f"{shown}: not under the server's root directory")
    if not asked.name.endswith(SUFFIX):
        raise PathRefusedError(400, f"{shown}: the viewer draws {SUFFIX} files only")
    try:
        real = Path(os.path.realpath(asked, strict=True))
    except FileNotFoundError:
        raise PathRefusedError(404, f"{shown}: no such file") from None
    except OSError as exc:
        raise PathRefusedError(400, f"{shown}: {_why(exc)}") from None
    if not real.is_relative_to(root) or real == root:
        raise PathRefusedError(400, f"{shown}: not under the server's root directory (it is a link that leads out)")
    if not allow_hidden and (is_hidden(asked, root) or is_hidden(real, root)):
        # as Jupyter's contents API answers for a hidden file (ContentsManager.allow_hidden)
        hidden = "hidden files are not shown; see ContentsManager.allow_hidden"
        raise PathRefusedError(404, f"{shown}: no such file ({hidden})")
    try:
        fd = _open_below(root, real.relative_to(root).parts)
    except FileNotFoundError:
        raise PathRefusedError(404, f"{shown}: no such file") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a link or file swapped in since the check
            raise PathRefusedError(400, f"{shown}: the path changed while it was opened; try again") from None
        raise PathRefusedError(400, f"{shown}: {_why(exc)}") from None
    try:
        return read_graph_file(fd, file=relative)
    except GraphFileError as exc:
        raise PathRefusedError(400, str(exc)) from None
    finally:
        os.close(fd)


def _open_below(root: Path, parts: tuple[str, ...]) -> int:
    """Open ``root/parts...`` following no link on the way (each step is opened from its parent's descriptor)."""
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            below = os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = below
        # O_NONBLOCK: a FIFO swapped in opens at once (then refused as not a regular file), never blocks
        flags = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        return os.open(parts[-1], flags, dir_fd=fd)
    finally:
        os.close(fd)


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "the path is a loop of symbolic links"
    if exc.errno == errno.ENAMETOOLONG:
        return "the path or one of its names is too long"
    return f"cannot open it ({exc.strerror or exc})"
