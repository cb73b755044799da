"""The other-arch processes a debug session keeps warm between comparisons.

Starting the other side of ``dbg.compare(arch)`` (Python, Taichi, ``ti.init``, the kernels, the
graph compiled) costs seconds, often more than the search itself (about 5 s of CUDA's start on an
H100). So the process a comparison started stays alive, one per arch, owned by the session: the
next comparison against that arch sends it only the new start values (and the graph again when it
changed, compiled in the same runtime). ``prepare`` starts one ahead of the comparison.

A process whose comparison failed (it crashed, timed out, Taichi fell back to another arch, or the
search raised) is killed and forgotten: the next comparison starts a fresh one. The session closes
them all on ``close()``, when it is garbage-collected, and at interpreter exit (a
``weakref.finalize``); a child also exits by itself when its parent's pipe closes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlab.analysis.dataflow import access_mode
from graphlab.bridge.runtime import cpu_max_threads
from graphlab.child.carry import carry_kernels
from graphlab.debug.compare_sides import COMMAND_TIMEOUT, ChildSide
from graphlab.model.graphfile import dumps

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = ["ChildPool", "child_threads"]


def child_threads(this_arch: str) -> int | None:
    """CPU threads for an x64 other side: as many as this side uses when it is a CPU, else Taichi's default."""
    return cpu_max_threads() if this_arch in ("x64", "arm64") else None


def start_arrays(graph: Graph, values: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The run values the child needs, as numpy arrays (textures are refused before this).

    Names bound to one ndarray (temps sharing a memory-plan slot) get one numpy array, so the child
    binds them to one buffer too (:func:`graphlab.debug.compare_sides.save_values`).
    """
    out: dict[str, np.ndarray] = {}
    seen: dict[int, np.ndarray] = {}
    for name, value in values.items():
        arg = graph.args.get(name)
        if arg is None or arg.kind in ("texture", "rw_texture"):
            continue
        if arg.kind != "ndarray":
            out[name] = np.asarray(value)
        elif id(value) in seen:
            out[name] = seen[id(value)]
        else:
            out[name] = seen[id(value)] = value.to_numpy()
    return out


class ChildPool:
    """One warm :class:`~graphlab.debug.compare_sides.ChildSide` per arch."""

    def __init__(self) -> None:
        self._sides: dict[str, ChildSide] = {}

    def pid(self, arch: str) -> int | None:
        """The process id of the warm child for ``arch``, or None when there is none (or it died)."""
        side = self._sides.get(arch)
        return side.pid if side is not None and side.alive() else None

    def prepare(
        self,
        graph: Graph,
        arch: str,
        threads: int | None,
        timeout: float = COMMAND_TIMEOUT,
        rehearse: Mapping[str, Any] | None = None,
    ) -> ChildSide:
        """The child for ``arch``, started (or reused) and sent ``graph`` to compile; nothing waited for.

        ``rehearse``: run values on which the child also runs the graph once, so the kernels are
        compiled there (on a GPU, compiling and loading them takes seconds) before the comparison."""
        side = self._sides.get(arch)
        if side is not None and (side.threads != threads or not side.alive()):
            self.drop(arch, kill=True)
            side = None
        if side is None:
            side = self._sides[arch] = ChildSide(arch, threads, timeout)
        side.timeout = timeout
        payload = carry_kernels(dict.fromkeys(k.fn for k in graph.kernels)).to_dict()
        try:
            side.build(dumps(graph), payload, access_mode(graph))
            if rehearse is not None:
                side.rehearse(start_arrays(graph, rehearse), steps=len(graph.kernels))
        except BaseException:
            self.drop(arch, kill=True)
            raise
        return side

    @contextlib.contextmanager
    def lease(
        self,
        graph: Graph,
        arch: str,
        values: Mapping[str, Any],
        threads: int | None,
        timeout: float = COMMAND_TIMEOUT,
        *,
        keep: bool = True,
    ) -> Iterator[ChildSide]:
        """The child for one comparison, given its start values; killed if the comparison fails,
        closed after it unless ``keep``."""
        side = self.prepare(graph, arch, threads, timeout)
        try:
            side.load(start_arrays(graph, values))
            yield side
        except BaseException:
            self.drop(arch, kill=True)
            raise
        if not keep:
            self.drop(arch)

    def ready(self, arch: str) -> None:
        """Wait until the child for ``arch`` has started and compiled (its errors raised, and it dropped)."""
        side = self._sides.get(arch)
        if side is None:
            return
        try:
            side.ready()
        except BaseException:
            self.drop(arch, kill=True)
            raise

    def drop(self, arch: str, *, kill: bool = False) -> None:
        """Close the child for ``arch`` (if any) and forget it."""
        side = self._sides.pop(arch, None)
        if side is not None:
            side.close(kill=kill)

    def close(self) -> None:
        """Close every child (the owning session closes or goes away)."""
        for arch in list(self._sides):
            self.drop(arch)
