"""Launching the one-pass statistics kernel for little more than the time the device takes.

Taichi's Python launch of a kernel handles its arguments before the device starts: 87-142 us on
the H100 machine for the templated one-pass kernel, a fifth of the 0.55 ms that reading 1 GiB of
f32 at 60% of its bandwidth allows. A compiled one-dispatch ``ti.graph`` launches the same kernel
from C++ with the arguments as given. So the kernel of each buffer spec
(:func:`~graphlab.debug.stats_kernels.onepass_kernel`, its static facts closed over) is compiled
into a graph once per Taichi runtime and kept in a small LRU cache. A graph used after
``ti.init``/``ti.reset`` replaced its runtime crashes the process, so the cache empties itself then
(:class:`~graphlab.bridge.runtime.RuntimeToken`); it holds no user ndarray. What else a call needs
(spec, launch, scratch rows, thread plan) is worked out once per ndarray and kept on it
(:func:`prepare`).
"""

import math
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np
import taichi as ti

from graphlab.bridge.device_read import read_array
from graphlab.bridge.runtime import RuntimeToken
from graphlab.bridge.types import element_type
from graphlab.debug.stats_kernels import (
    OnePass,
    Spec,
    fold_onepass,
    onepass,
    onepass_kernel,
    onepass_part,
    onepass_plan,
    spec,
    tuning,
)

__all__ = ["LAUNCHES", "LaunchCache", "Prepared", "onepass_rows", "prepare"]


class _Launch(NamedTuple):
    kernel: Any
    graph: Any  # the compiled one-dispatch graph, or None where the kernel is launched directly


class LaunchCache:
    """Compiled one-pass graphs of the live Taichi runtime, by buffer spec (least recently used dropped).

    ``use_graphs = False`` launches the kernels directly (the bench compares both); ``builds``
    counts graphs compiled, so tests can see that a second call compiles nothing.
    """

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.use_graphs = True
        self.builds = 0
        self._runtime: RuntimeToken | None = None
        self._items: OrderedDict[tuple[Any, ...], _Launch] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, s: Spec, o: OnePass, element_shape: tuple[int, ...]) -> _Launch:
        """The launch of ``s``'s kernel, compiled into a graph on the first call in a runtime."""
        if self._runtime is None or not self._runtime.is_current():
            self._items.clear()
            self._runtime = RuntimeToken()
        key = (s, o, element_shape, self.use_graphs)
        launch = self._items.get(key)
        if launch is not None:
            self._items.move_to_end(key)
            return launch
        kernel = onepass_kernel(s, o)
        graph = _compile(kernel, s, element_shape) if self.use_graphs else None
        self.builds += graph is not None
        launch = self._items[key] = _Launch(kernel, graph)
        while len(self._items) > self.size:
            self._items.popitem(last=False)
        return launch


def _compile(kernel: Any, s: Spec, element_shape: tuple[int, ...]) -> Any:
    kinds = ti.graph.ArgKind
    builder = ti.graph.GraphBuilder()
    builder.dispatch(
        kernel,
        ti.graph.Arg(kinds.NDARRAY, "arr", element_type(str(s.dt), element_shape), ndim=s.nd),
        ti.graph.Arg(kinds.NDARRAY, "part", ti.f64, ndim=3),
        ti.graph.Arg(kinds.SCALAR, "nthr", ti.i32),
        ti.graph.Arg(kinds.SCALAR, "chunk", ti.i32),
        ti.graph.Arg(kinds.SCALAR, "rows", ti.i32),
    )
    return builder.compile()


LAUNCHES = LaunchCache()


class Prepared(NamedTuple):
    """What a statistics call of one ndarray needs, worked out on its first call: the kernel spec,
    and for the one-pass path its launch, scratch rows and thread plan (``launch`` None: blockwise)."""

    spec: Spec
    launch: _Launch | None
    part: Any
    nthr: int
    chunk: int
    rows: int


_PREPARED = "_graphlab_stats_prepared"  # on the ndarray: it holds no reference back to it


def prepare(arr: Any, *, per_component: bool, with_abs: bool) -> Prepared:
    """The :class:`Prepared` facts of ``arr`` (1-d or more), kept on the ndarray between calls.

    Python work per call costs more than it seems: on the H100 machine's host, spec, launch lookup
    and fold took about 0.1 ms against 0.4 ms of device time. An ndarray lives in one runtime and its
    dtype and shape never change, so the facts stay valid; the key holds what else they depend on."""
    key = (per_component, with_abs, LAUNCHES.use_graphs, tuning())
    held = arr.__dict__.get(_PREPARED)
    if held is not None and held[0] == key:
        return held[1]  # type: ignore[no-any-return]
    s = spec(arr, per_component=per_component, with_abs=with_abs)
    o = onepass(s)
    if o is None:
        prepared = Prepared(s, None, None, 0, 0, 0)
    else:
        nthr, chunk, rows = onepass_plan(math.prod(arr.shape), s)
        launch = LAUNCHES.get(s, o, tuple(arr.element_shape))
        prepared = Prepared(s, launch, onepass_part(s, rows), nthr, chunk, rows)
    arr.__dict__[_PREPARED] = (key, prepared)
    return prepared


def onepass_rows(arr: Any, p: Prepared) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts, min/max, sums) rows per slot of ``arr``, from one launch and one small read."""
    launch = p.launch
    assert launch is not None, "onepass_rows of a buffer prepared for the blockwise kernels"
    if launch.graph is not None:
        launch.graph.run({"arr": arr, "part": p.part, "nthr": p.nthr, "chunk": p.chunk, "rows": p.rows})
    else:
        launch.kernel(arr, p.part, p.nthr, p.chunk, p.rows)
    return fold_onepass(read_array(p.part)[:, :, : p.rows], p.spec.dt)
