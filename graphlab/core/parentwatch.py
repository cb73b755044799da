"""A child process that dies with its parent, even one killed with SIGKILL.

graphlab's children (export, verify, the other side of ``dbg.compare``) can run for minutes; a
notebook killed with ``kill -9`` runs no cleanup, so without this its children would run on,
holding a GPU and memory, until they finished or read their closed pipe. The parent names itself
in the child's environment (:func:`child_env`); the child calls :func:`watch_parent` first thing,
which starts a thread that waits on the parent's pidfd (Linux 5.3+; else it polls the parent id)
and kills this process the moment the parent is gone.

Linux's ``prctl(PR_SET_PDEATHSIG)`` would do it without a thread, but it fires when the *thread*
that started the child exits, and graphlab starts children from worker threads that end while the
child should live on (a warm compare child), so the process is watched instead.
"""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Mapping

__all__ = ["PARENT_ENV", "child_env", "watch_parent"]

#: The environment variable a child reads its parent's process id from.
PARENT_ENV = "GRAPHLAB_PARENT_PID"
#: Seconds between two looks at the parent id where no pidfd can be had.
_POLL = 0.5


def child_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus this process's id, for a child that calls :func:`watch_parent`."""
    return {**env, PARENT_ENV: str(os.getpid())}


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def watch_parent() -> bool:
    """Kill this process as soon as the parent named in :data:`PARENT_ENV` is gone; False when none is named.

    Already gone (this process was handed to another parent before the watch began): killed at once.
    """
    text = os.environ.pop(PARENT_ENV, "")  # not inherited by what this child starts in turn
    if not text.isdigit():
        return False
    parent = int(text)
    try:
        handle: int | None = os.pidfd_open(parent)
    except (AttributeError, OSError):  # an old kernel, or the parent already gone
        handle = None
    if os.getppid() != parent:  # checked after opening: the pidfd cannot be a reused pid's
        _die()

    def wait() -> None:
        if handle is not None:
            select.select([handle], [], [])  # readable once the process has exited
        else:
            while os.getppid() == parent:
                time.sleep(_POLL)
        _die()

    threading.Thread(target=wait, name="graphlab-parent-watch", daemon=True).start()
    return True
