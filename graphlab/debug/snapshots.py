"""Device-side snapshots of ndarrays, the memory behind stepping back in the debugger.

Stepping back to step ``k`` means putting every buffer back as it was after step ``k``. Copying
buffers to the host and back would cost far more than the step itself on a GPU, so a snapshot is a
second ndarray on the same device, filled by a copy kernel (no host round trip, no sync).
``Ndarray.copy_from`` exists in Taichi 1.7.4 but synchronises after each copy and checks shapes
with ``assert``; the kernel here does neither.

The store has a byte budget. By default it is a quarter of the device memory that is free when the
store is made: queried from the CUDA driver on CUDA, from the operating system on CPU archs (where
ndarrays live in host memory), and 1 GiB where nothing can be queried (Vulkan, Metal, OpenGL).
When a save goes over the budget, whole steps are evicted, the step saved first going first, and
``save`` returns what it evicted.

Examples
--------
>>> import numpy as np, taichi as ti
>>> ti.init(arch=ti.cpu, log_level=ti.ERROR)  # doctest: +ELLIPSIS
[Taichi] Starting on arch=...
>>> x = ti.ndarray(ti.f32, shape=(4,))
>>> x.from_numpy(np.arange(4, dtype=np.float32))
>>> store = SnapshotStore(budget_bytes=1 << 20)
>>> store.save(0, "x", x)
[]
>>> x.fill(7.0)
>>> store.restore(0, "x", x)
>>> x.to_numpy().tolist()
[0.0, 1.0, 2.0, 3.0]
"""

import ctypes
import ctypes.util
import math
import os
from collections import OrderedDict
from typing import Any

import taichi as ti

from graphlab.bridge.runtime import RuntimeToken, current_arch
from graphlab.bridge.types import to_numpy_dtype
from graphlab.core.errors import GraphlabError

__all__ = ["SnapshotError", "SnapshotMissingError", "SnapshotStore", "default_budget", "nbytes"]

_FALLBACK_BUDGET = 1 << 30


class SnapshotError(GraphlabError, ValueError):
    """A snapshot cannot be saved or restored as asked."""


class SnapshotMissingError(SnapshotError, LookupError):
    """No snapshot of that buffer at that step (never saved, evicted, or cleared)."""


def nbytes(arr: Any) -> int:
    """Bytes an ndarray holds on its device."""
    itemsize = to_numpy_dtype(arr.dtype).itemsize
    return math.prod(arr.shape) * math.prod(arr.element_shape) * itemsize


def _cuda_free_bytes() -> int | None:
    """Free memory of the current CUDA context (Taichi's), from the driver; None if unknown."""
    name = ctypes.util.find_library("cuda") or "libcuda.so.1"
    try:
        cuda = ctypes.CDLL(name)
        ctx = ctypes.c_void_p()
        if cuda.cuCtxGetCurrent(ctypes.byref(ctx)) != 0 or not ctx.value:
            return None
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        if cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) != 0:
            return None
        return int(free.value)
    except (OSError, AttributeError):
        return None


def default_budget() -> int:
    """A quarter of the free memory of the current Taichi device, else 1 GiB (see module docs)."""
    arch = current_arch()
    free: int | None = None
    if arch in ("x64", "arm64"):
        try:
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            free = None
    elif arch == "cuda":
        free = _cuda_free_bytes()
    return free // 4 if free else _FALLBACK_BUDGET


def _like(arr: Any) -> Any:
    """A new ndarray of the same dtype, shape and element shape on the same device."""
    esh = tuple(arr.element_shape)
    shape = tuple(arr.shape)
    if len(esh) == 0:
        return ti.ndarray(arr.dtype, shape=shape)
    if len(esh) == 1:
        return ti.Vector.ndarray(esh[0], arr.dtype, shape=shape)
    return ti.Matrix.ndarray(esh[0], esh[1], arr.dtype, shape=shape)


@ti.kernel
def _k_copy(dst: ti.types.ndarray(), src: ti.types.ndarray()):
    for ij in ti.grouped(src):
        dst[ij] = src[ij]


def _copy(dst: Any, src: Any) -> None:
    if len(src.shape) == 0:  # a struct-for needs at least one axis
        dst.copy_from(src)
    else:
        _k_copy(dst, src)


def _spec(arr: Any) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    return str(arr.dtype), tuple(arr.shape), tuple(arr.element_shape)


def _fmt(spec: tuple[str, tuple[int, ...], tuple[int, ...]]) -> str:
    dt, shape, esh = spec
    return f"{dt}{list(shape)}" + (f" of {list(esh)}" if esh else "")


class SnapshotStore:
    """Device copies of buffers keyed by (step, name), within a byte budget.

    Parameters
    ----------
    budget_bytes
        Most bytes held at once; ``None`` for :func:`default_budget` (taken when the store is made).
    """

    def __init__(self, budget_bytes: int | None = None) -> None:
        if budget_bytes is not None and (not isinstance(budget_bytes, int) or budget_bytes <= 0):
            raise SnapshotError(
                f"SnapshotStore(budget_bytes={budget_bytes!r}): give a positive int of bytes, "
                "or None for a quarter of the free device memory"
            )
        self.budget_bytes = default_budget() if budget_bytes is None else budget_bytes
        self._steps: OrderedDict[int, dict[str, Any]] = OrderedDict()  # first-saved step first
        self._bytes = 0
        self._runtime: RuntimeToken | None = None
        self.stale_note = ""

    # -- runtime guard: a ti.init / ti.reset frees every ndarray of the old runtime
    def _check_runtime(self) -> None:
        if self._runtime is None or not self._runtime.is_current():
            if self._steps:
                self.stale_note = (
                    f"{len(self)} snapshots were dropped: the Taichi runtime was reset "
                    "(ti.init / ti.reset) after they were saved"
                )
                self._steps.clear()
                self._bytes = 0
            self._runtime = RuntimeToken()

    @property
    def bytes_held(self) -> int:
        """Bytes of device memory the snapshots hold now."""
        self._check_runtime()
        return self._bytes

    @property
    def steps(self) -> list[int]:
        """Steps with at least one snapshot, in the order they were first saved."""
        self._check_runtime()
        return list(self._steps)

    def names(self, step: int) -> list[str]:
        """Buffers saved at ``step``."""
        self._check_runtime()
        return sorted(self._steps.get(step, {}))

    def __len__(self) -> int:
        return sum(len(v) for v in self._steps.values())

    def has(self, step: int, name: str) -> bool:
        """Whether a snapshot of ``name`` at ``step`` is held."""
        self._check_runtime()
        return name in self._steps.get(step, {})

    def save(self, step: int, name: str, arr: Any) -> list[tuple[int, str]]:
        """Copy ``arr`` on its device as the snapshot of ``name`` at ``step``.

        Returns the (step, name) pairs evicted to stay within the budget, oldest first. A snapshot
        that already exists for (step, name) is overwritten in place. Nothing is evicted if the new
        snapshot cannot fit even with every other step gone: that raises :class:`SnapshotError`.
        """
        self._check_runtime()
        if not isinstance(arr, ti.Ndarray):
            raise SnapshotError(
                f"save(step={step}, name={name!r}): expected a Taichi ndarray, got {type(arr).__name__}"
            )
        size = nbytes(arr)
        old = self._steps.get(step, {}).get(name)
        if old is not None and _spec(old) == _spec(arr):
            _copy(old, arr)
            return []
        same_step = sum(nbytes(a) for n, a in self._steps.get(step, {}).items() if n != name)
        if size + same_step > self.budget_bytes:
            raise SnapshotError(
                f"save(step={step}, name={name!r}): {size + same_step} bytes for step {step} exceed the "
                f"budget of {self.budget_bytes} bytes; make the store with a larger budget_bytes "
                "or snapshot fewer buffers"
            )
        if old is not None:
            self._drop(step, name)
        evicted = self._evict_for(size, keep=step)
        copy = _like(arr)
        _copy(copy, arr)
        self._steps.setdefault(step, {})[name] = copy
        self._bytes += size
        return evicted

    def _evict_for(self, size: int, *, keep: int) -> list[tuple[int, str]]:
        evicted: list[tuple[int, str]] = []
        for step in list(self._steps):
            if self._bytes + size <= self.budget_bytes:
                break
            if step == keep:
                continue
            evicted += [(step, n) for n in sorted(self._steps[step])]
            self._bytes -= sum(nbytes(a) for a in self._steps.pop(step).values())
        return evicted

    def _drop(self, step: int, name: str) -> None:
        arr = self._steps[step].pop(name)
        self._bytes -= nbytes(arr)
        if not self._steps[step]:
            del self._steps[step]

    def get(self, step: int, name: str) -> Any:
        """The device copy itself (read it, diff it; do not write it)."""
        self._check_runtime()
        try:
            return self._steps[step][name]
        except KeyError:
            held = [s for s, names in self._steps.items() if name in names]
            note = f"; {self.stale_note}" if self.stale_note else ""
            raise SnapshotMissingError(
                f"no snapshot of {name!r} at step {step}; steps held for it: {held or 'none'}{note}"
            ) from None

    def restore(self, step: int, name: str, into: Any) -> None:
        """Copy the snapshot of ``name`` at ``step`` back into ``into``, on the device."""
        snap = self.get(step, name)
        if not isinstance(into, ti.Ndarray) or _spec(into) != _spec(snap):
            got = _fmt(_spec(into)) if isinstance(into, ti.Ndarray) else type(into).__name__
            raise SnapshotError(
                f"restore(step={step}, name={name!r}): the snapshot is {_fmt(_spec(snap))}, "
                f"into is {got}; restore into the buffer it was saved from"
            )
        _copy(into, snap)

    def drop(self, step: int) -> None:
        """Forget every snapshot of ``step`` (say, steps after the one the user went back to)."""
        self._check_runtime()
        for name in list(self._steps.get(step, {})):
            self._drop(step, name)

    def clear(self) -> None:
        """Forget every snapshot and free its device memory."""
        self._steps.clear()
        self._bytes = 0

    def __repr__(self) -> str:
        return (
            f"SnapshotStore({len(self)} snapshots over {len(self._steps)} steps, "
            f"{self._bytes} of {self.budget_bytes} bytes)"
        )
