"""The editor's home thread: where every widget message runs, because Taichi runs only there.

Taichi's LLVM backends remember the thread that called ``ti.init`` and assert that later
compilation happens on it (``llvm_context.cpp: add_struct_module ... main_thread_id_``). In a
notebook that thread is the kernel's main thread: cells run there. ipykernel 7 no longer handles
every comm message there: JupyterLab 4.4+ sends a widget's messages to a kernel *subshell* (one
thread per comm target, ``commsOverSubshells``), and ipykernel routes a comm's messages to the
subshell its last reply went out on. A Debug click handled there compiled the graph's kernels off
the ``ti.init`` thread, and the first compile that added a struct module failed.

:class:`HomeThread` is the one place that decides where the editor's work runs: on the thread that
made the editor (a notebook cell's thread, as ``ti.init`` was), now when called there, else queued
on that thread's event loop in arrival order. Each queued item runs in the context (contextvars)
it was posted from, so ipykernel still sends its replies as answers to the message that asked.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from graphlab.core.errors import GraphlabError

__all__ = ["HomeThread", "HomeThreadError"]

_log = logging.getLogger(__name__)

T = TypeVar("T")


class HomeThreadError(GraphlabError, RuntimeError):
    """Work for the editor came from another thread, and its home thread has no event loop to run it."""


class HomeThread:
    """The thread that made an editor, and a way to run the editor's work there (see the module docs).

    Examples
    --------
    >>> home = HomeThread()
    >>> home.here
    True
    >>> home.call(lambda: 6 * 7)
    42
    """

    def __init__(self) -> None:
        self.thread = threading.current_thread()
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # a script or a test: no loop, so messages can only come from here
            self._loop = None
        self._queue: deque[tuple[contextvars.Context, Callable[[], object]]] = deque()
        self._lock = threading.Lock()

    @property
    def here(self) -> bool:
        """Whether the caller runs on the home thread."""
        return threading.current_thread() is self.thread

    def post(self, work: Callable[[], object]) -> None:
        """Run ``work`` on the home thread, after the work posted before it; returns at once off it.

        On the home thread with nothing queued it runs now. ``HomeThreadError`` when called from
        another thread and the home thread has no running event loop to hand it to. An exception
        raised by queued work is logged (no caller waits for it).
        """
        now: list[tuple[contextvars.Context | None, Callable[[], object]]] = []
        with self._lock:
            if self.here:
                if self._queue and self._usable():
                    self._queue.append((contextvars.copy_context(), work))  # a run is scheduled already
                else:  # nothing queued, or a loop gone with work left in it: run all of it here, in order
                    now = [*self._queue, (None, work)]
                    self._queue.clear()
            else:
                self._reachable()
                self._queue.append((contextvars.copy_context(), work))
                if len(self._queue) == 1:
                    self._schedule()
        for context, item in now[:-1]:
            self._run(context, item)
        if now:
            now[-1][1]()  # the caller's own work: its exception is the caller's

    def call(self, work: Callable[[], T]) -> T:
        """Run ``work`` on the home thread and return its result (or raise its exception).

        From another thread this waits until the home thread has run it (after what was posted
        before); ``HomeThreadError`` when nothing runs there to take it.
        """
        if self.here:
            return work()
        future: Future[T] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(work())
            except BaseException as exc:  # handed to the waiting thread
                future.set_exception(exc)

        self.post(run)
        return future.result()

    def _usable(self) -> bool:
        return self._loop is not None and not self._loop.is_closed()

    def _reachable(self) -> None:
        if not self._usable():
            where = "no event loop runs there to take it" if self._loop is None else "its event loop there has closed"
            raise HomeThreadError(
                f"the editor got work on thread {threading.current_thread().name!r}, but it works on the thread "
                f"that made it ({self.thread.name!r}; Taichi compiles only on the thread of ti.init) and {where}; "
                "call the editor from that thread, or make the editor inside a "
                "running event loop (a notebook cell is one)"
            )

    def _schedule(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._run_one)
        # else: the loop closed; the next post on the home thread runs what is left

    def _run_one(self) -> None:
        """Run the oldest queued item, then let the loop take other events before the next one."""
        with self._lock:
            if not self._queue:
                return
            context, work = self._queue.popleft()
        try:
            self._run(context, work)
        finally:
            with self._lock:
                if self._queue:
                    self._schedule()

    @staticmethod
    def _run(context: contextvars.Context | None, work: Callable[[], object]) -> None:
        try:
            if context is None:
                work()
            else:
                context.run(work)
        except Exception:  # queued work has no caller to raise to
            _log.exception("graphlab: the editor's work on its home thread failed")
