"""Names for the temporary files and folders graphlab makes, so that a killed process's can be found and removed.

A process killed with SIGKILL runs no cleanup: ``gl.export``'s child scratch folders, a compare
child's scratch, the hidden ``.tmp`` file of a save half written stay behind (a large graph's save
leaves megabytes). Each such name carries the host and the process id that made it
(``graphlab-child-<host>-<pid>-<random>``), so the next export or save deletes those whose
process is gone, and only those: never a name of another pattern, another machine's, or a live
process's.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

__all__ = ["host_tag", "owner_tag", "process_alive", "remove_stale", "scratch_prefix", "stale_owner"]

#: ``<host>-<pid>`` inside a name; the host is letters and digits only, so the dash splits it.
_OWNER = r"(?P<host>[A-Za-z0-9]{1,24})-(?P<pid>[1-9][0-9]{0,9})"


def host_tag() -> str:
    """This machine's name reduced to letters and digits (a shared /tmp can serve several machines)."""
    return re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:24] or "host"


def owner_tag() -> str:
    """``<host>-<pid>`` of this process, for a temporary name."""
    return f"{host_tag()}-{os.getpid()}"


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (one of another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True
    return True


def stale_owner(match: re.Match[str]) -> bool:
    """Whether a name matched with ``host`` and ``pid`` groups was made on this machine by a process that is gone."""
    return match["host"] == host_tag() and not process_alive(int(match["pid"]))


def remove_stale(folder: Path, pattern: str) -> list[Path]:
    """Delete the entries of ``folder`` whose whole name matches ``pattern`` and whose owner is gone.

    ``pattern`` is a regular expression with an ``{owner}`` placeholder (``graphlab-child-{owner}-\\w+``).
    A link is never followed nor deleted; a folder is deleted with what it holds. Errors (another
    process deleting the same entry, no permission) are ignored: this is housekeeping.
    """
    regex = re.compile(pattern.format(owner=_OWNER))
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = regex.fullmatch(entry.name)
        if match is None or not stale_owner(match) or entry.is_symlink():
            continue
        path = Path(entry.path)
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def scratch_prefix(kind: str) -> str:
    """The prefix of a new scratch folder of ``kind`` in the system's temporary folder.

    Stale ones of the same kind (``graphlab-<kind>-<host>-<pid>-<random>`` of a process that is
    gone) are deleted first, so each new one cleans up after killed ones.
    """
    remove_stale(Path(tempfile.gettempdir()), rf"graphlab-{re.escape(kind)}-{{owner}}-[a-z0-9_]{{{{8}}}}")
    return f"graphlab-{kind}-{owner_tag()}-"
