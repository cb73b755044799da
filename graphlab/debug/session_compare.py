"""The other sides a debug session compares against: warm processes of other archs, exported modules, captures.

``dbg.compare("vulkan")`` runs the same graph elsewhere and stops at the first dispatch where the two
runs disagree (the search is :mod:`graphlab.debug.compare`'s). :class:`OtherSides` is the part of
:class:`~graphlab.debug.session.DebugSession` that owns what the far side runs in: the processes of
other archs, kept warm for the next comparison (:mod:`graphlab.debug.compare_children`), and, for an
exported module folder, the runner the layer above builds (:data:`ModuleRunnerFactory`, given by
``g.debug``; the debugger does not import the exporter), and a field capture, which runs nothing: it
holds the recorded answers (:mod:`graphlab.debug.compare_capture`).
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from graphlab.core.capture_format import is_capture_folder
from graphlab.debug.capture import Capture, read_capture
from graphlab.debug.compare import (
    Divergence,
    ModuleLike,
    Progress,
    StepsView,
    compare_module,
    compare_runs,
)
from graphlab.debug.compare_capture import compare_capture
from graphlab.debug.compare_children import ChildPool, child_threads
from graphlab.debug.session_errors import DebugError

if TYPE_CHECKING:
    from graphlab.debug.session import DebugSession
    from graphlab.model.graph import Graph

#: Builds the far side of ``compare(folder)``: ``factory(folder, graph, start_values)`` gives an
#: exported module run from the start values (``graphlab.deploy.module_runner.ModuleRunner`` is one).
ModuleRunnerFactory = Callable[[str | os.PathLike[str], "Graph", Mapping[str, Any]], ModuleLike]


class OtherSides:
    """The far sides of one session's comparisons: warm arch processes and the module runner factory."""

    def __init__(self, module_runner: ModuleRunnerFactory | None) -> None:
        self._module_runner = module_runner
        self._children: ChildPool | None = None

    def against_module(
        self, mine: DebugSession, view: StepsView, folder: str | os.PathLike[str], start: Mapping[str, Any],
        *, rtol: float, atol: float, progress: Progress | None,
    ) -> Divergence | None:  # fmt: skip
        """Compare ``mine`` (a session on copies of ``start``) against the module exported to ``folder``."""
        runner = self.check_module(folder)(folder, mine.graph, start)
        try:
            return compare_module(mine, view, runner, rtol=rtol, atol=atol, progress=progress)
        finally:
            runner.close()

    def against_capture(
        self, mine: DebugSession, view: StepsView, capture: Capture,
        *, rtol: float, atol: float, progress: Progress | None,
    ) -> Divergence | None:  # fmt: skip
        """Compare ``mine`` (a session on copies of the captured inputs) against a run recorded in the field."""
        return compare_capture(mine, view, capture, rtol=rtol, atol=atol, progress=progress)

    def capture_of(self, against: object, graph: Graph) -> Capture | None:
        """``against`` as a capture (read and checked against ``graph`` when it names a capture folder);
        None when it is an arch or a module folder."""
        if isinstance(against, Capture):
            if against.record.graph != graph.name:
                raise DebugError(
                    f"compare(capture): the capture is of graph {against.record.graph!r}, this session's is "
                    f"{graph.name!r}; compare a session of that graph"
                )
            if against.graph is not graph:  # checked against another Graph object: check it against this one
                return read_capture(against.folder, graph=graph)
            return against
        if is_capture_folder(against):
            assert isinstance(against, (str, os.PathLike))
            return read_capture(against, graph=graph)
        return None

    def check_module(self, folder: str | os.PathLike[str]) -> ModuleRunnerFactory:
        """What runs an exported module; raised before anything runs when this session was given none."""
        if self._module_runner is None:
            raise DebugError(
                f"compare({os.fspath(folder)!r}): this session cannot run exported modules; make it with "
                "g.debug(...), or pass DebugSession(..., module_runner=graphlab.deploy.module_runner.ModuleRunner)"
            )
        return self._module_runner

    def against_arch(
        self, mine: DebugSession, view: StepsView, arch: str, start: Mapping[str, Any],
        *, rtol: float, atol: float, progress: Progress | None, timeout: float, keep: bool,
    ) -> Divergence | None:  # fmt: skip
        """Compare ``mine`` against the same graph on ``arch``, in this session's warm process for it."""
        return compare_runs(
            mine, view, start, arch, rtol=rtol, atol=atol, progress=progress, timeout=timeout,
            children=self._warm(), keep=keep,
        )  # fmt: skip

    def prepare(
        self, graph: Graph, arch: str, *, here: str, start: Mapping[str, Any], timeout: float, wait: bool
    ) -> None:
        """Start (and rehearse from ``start``) the process ``arch`` runs in; ``here``: this side's arch."""
        children = self._warm()
        children.prepare(graph, arch, child_threads(here), timeout, rehearse=start)
        if wait:
            children.ready(arch)

    def pid(self, arch: str) -> int | None:
        """The process id of the warm process for ``arch``, or None when none runs."""
        return None if self._children is None else self._children.pid(arch)

    def close(self) -> None:
        """Stop the warm processes (a later comparison starts new ones)."""
        if self._children is not None:
            self._children.close()

    def _warm(self) -> ChildPool:
        """The warm processes; closed by ``close()``, when this object is collected, or at exit."""
        if self._children is None:
            self._children = ChildPool()
            weakref.finalize(self, self._children.close)
        return self._children
