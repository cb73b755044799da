"""Differential debugging from a session: ``dbg.compare("vulkan")`` runs the same graph elsewhere and
stops at the first dispatch where the two runs disagree (the search is :mod:`graphlab.debug.compare`'s).

A mixin of :class:`~graphlab.debug.session.DebugSession`, like the other ``session_*`` modules. The
other arch's process stays warm for the session's next comparison (:mod:`graphlab.debug.compare_children`).
"""

from __future__ import annotations

import os
import warnings
import weakref
from typing import TYPE_CHECKING, Any

from graphlab import conveniences
from graphlab.debug.compare import (
    Divergence,
    Progress,
    StepsView,
    check_options,
    compare_module,
    compare_runs,
    flag_buffers,
    is_module_folder,
)
from graphlab.debug.compare_children import ChildPool, child_threads
from graphlab.debug.compare_sides import COMMAND_TIMEOUT
from graphlab.debug.redraws import RandomReplayWarning
from graphlab.debug.session_errors import DebugError

if TYPE_CHECKING:
    from graphlab.compiled import CompiledGraph
    from graphlab.debug.steps import StepTable
    from graphlab.graph import Graph


class SessionCompare:
    """``compare()`` of a debug session (a mixin of ``DebugSession``)."""

    graph: Graph
    _compiled: CompiledGraph
    _table: StepTable
    _canon: dict[str, str]
    arch: str
    _children: ChildPool | None = None

    if TYPE_CHECKING:  # defined by DebugSession

        def _alive(self) -> None: ...

        def _detached(self, q: int) -> dict[str, Any]: ...

        def _known(self, k: int) -> bool: ...

        def _ordered(self, names: set[str] | frozenset[str]) -> list[str]: ...

    def compare(
        self,
        against: str | os.PathLike[str],
        *,
        rtol: float = 0.0,
        atol: float = 0.0,
        progress: Progress | None = None,
        timeout: float = COMMAND_TIMEOUT,
        keep: bool = True,
    ) -> Divergence | None:
        """Run this graph from this session's start values here and on arch ``against``; the first
        dispatch where they disagree, or None when every buffer agrees to the end.

        The session does not move: both runs work on copies of the start values. The other arch runs
        in a child process (one Taichi runtime holds one arch). The runs are compared at segment
        boundaries first, then the first span that differs is replayed dispatch by dispatch, so
        each side costs about one run of the graph. A branch or loop iteration count that differs is
        reported as a ``"control"`` divergence. The other arch's process is kept for the next
        comparison against it (see ``keep`` and :meth:`prepare_compare`).

        Parameters
        ----------
        against
            An arch name (``"x64"``, ``"vulkan"``, ``"cuda"``, ``"metal"`` ...), or the folder of a
            module ``gl.export`` wrote: its deployed graph is compared at the end of the run, and
            when it differs a debug variant (one module graph per dispatch, exported on the fly for
            the same arch) names the dispatch.
        rtol, atol
            Tolerances as in ``numpy.isclose`` (NaN equals NaN); both 0 (the default): bit for bit.
        progress
            Called as ``progress(stage, fraction)`` as the comparison goes (the notebook widget's bar).
        timeout
            Seconds the other arch's process may take over one command (start, a span, a dispatch)
            before it is taken as hung: it is stopped and the comparison fails naming the command.
        keep
            Keep the other arch's process alive, owned by this session, so the next comparison
            against that arch skips its start (Taichi, ``ti.init``, compiling the graph) and pays
            only the search; it is closed by ``close()``, when the session goes away, and at exit.
            ``False``: close it after the answer. A process whose comparison failed is never kept.

        Returns
        -------
        Divergence or None
            The step, node, buffer, first differing index, both values, count and errors;
            ``str()`` says it in a sentence and ``picture()`` draws the difference.

        Examples
        --------
        >>> g = demo_graph()  # steps x3: saxpy, again; y counts the dispatches run
        >>> dbg = g.debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.compare("x64") is None  # the same arch in another process: bit for bit the same
        True
        >>> dbg.position.index  # the session did not move
        0
        """
        kinds = [arg.kind for arg in self.graph.args.values()]
        check_options(self.graph.name, kinds, against, rtol, atol, timeout)
        self._alive()
        with warnings.catch_warnings():  # the search goes back and forth on copies; a random dispatch is
            warnings.simplefilter("ignore", RandomReplayWarning)  # reported as the divergence itself
            return self._compare(against, rtol, atol, progress, timeout, keep)

    def _compare(
        self,
        against: str | os.PathLike[str],
        rtol: float,
        atol: float,
        progress: Progress | None,
        timeout: float,
        keep: bool,
    ) -> Divergence | None:
        start = {k: v for k, v in self._detached(0).items() if k in self._compiled.args}  # written: new copies
        mine: Any = type(self)(self._compiled, start)  # type: ignore[call-arg]  # a DebugSession
        if is_module_folder(against):
            if conveniences.USES is None:  # pragma: no cover - set by `import graphlab`, which loads this module
                raise DebugError("compare(folder): import graphlab first (it connects the debugger to the exporter)")
            runner = conveniences.USES.module_runner(against, self.graph, start)
            try:
                view = mine._steps_view()
                return compare_module(mine, view, runner, rtol=float(rtol), atol=float(atol), progress=progress)
            finally:
                runner.close()
        view = mine._steps_view()
        return compare_runs(
            mine, view, start, str(against), rtol=float(rtol), atol=float(atol), progress=progress, timeout=timeout,
            children=self._warm_children(), keep=bool(keep),
        )  # fmt: skip

    def prepare_compare(self, against: str, *, timeout: float = COMMAND_TIMEOUT, wait: bool = False) -> None:
        """Start the process a later ``compare(against)`` runs the other side in, and return at once.

        It imports Taichi, starts ``against``, compiles this graph and runs it once there from the
        session's start values (so the kernels are compiled too) while you work, so the comparison
        then pays only the search. Errors of the start (Taichi falls back to another
        arch, the kernels fail to load there) are raised by that ``compare``, as without
        ``prepare_compare``, or here with ``wait=True`` (which returns once the process is ready).
        An exported module folder needs no preparing; calling again is harmless.

        Examples
        --------
        >>> dbg = demo_graph().debug(a=1.0, x=np.ones(4, np.float32), y=np.zeros(4, np.float32))
        >>> dbg.prepare_compare("x64", wait=True)
        >>> dbg.compare("x64") is None  # the prepared process runs the other side
        True
        >>> dbg.close()  # stops it (so does the session going away)
        """
        kinds = [arg.kind for arg in self.graph.args.values()]
        check_options(self.graph.name, kinds, against, 0.0, 0.0, timeout)
        self._alive()
        if is_module_folder(against):
            return
        children = self._warm_children()
        start = {k: v for k, v in self._detached(0).items() if k in self._compiled.args}
        children.prepare(self.graph, str(against), child_threads(self.arch), timeout, rehearse=start)
        if wait:
            children.ready(str(against))

    def compare_pid(self, against: str) -> int | None:
        """The process id of the warm process for ``compare(against)``, or None when none runs."""
        return None if self._children is None else self._children.pid(against)

    def _warm_children(self) -> ChildPool:
        """This session's warm processes; closed when it is closed, collected, or at exit."""
        if self._children is None:
            self._children = ChildPool()
            weakref.finalize(self, self._children.close)
        return self._children

    def _close_children(self) -> None:
        if self._children is not None:
            self._children.close()

    def _steps_view(self) -> StepsView:
        """What the comparison reads of this session's steps (see :class:`~graphlab.debug.compare.StepsView`)."""
        return StepsView(self._table, self._known, self._ordered, flag_buffers(self.graph, self._canon))
