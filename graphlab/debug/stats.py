"""Statistics of Taichi ndarrays, reduced on the device.

The debugger refreshes the statistics of every buffer a step wrote, so copying buffers to the host
(gigabytes on a GPU) is out of the question. Each reduction runs as Taichi kernels
(:mod:`graphlab.debug.stats_kernels`) over the ndarray where it lives. Where the device has f64
atomics (CUDA, CPUs, and every dtype but 64-bit integers) one launch reads the buffer once: each
thread keeps partials in registers, adds them atomically into a few hundred rows, and the host folds
those rows (a few KiB); that kernel is launched through a one-dispatch ``ti.graph`` compiled on the
first call for each buffer dtype/layout (:mod:`graphlab.debug.stats_launch`), so later calls skip
Taichi's Python argument handling. Elsewhere a first kernel reduces contiguous (CPU) or interleaved
(GPU) blocks to partial summaries and combine kernels fold them. This module is the host API: it checks the
buffers, picks the kernels' spec and assembles the records.

Numerics: the one-pass kernel sums ``x - c`` and ``(x - c)^2`` around one shift ``c`` per component
(the buffer's first value, when finite), in f64; the blockwise kernels accumulate per block around
the block's first value and merge blocks with Chan's parallel formula, in f64 where the device
has it (most desktop Vulkan devices) and in f32 where it does not (some Vulkan/Metal devices:
:func:`accumulator_dtype`), which keeps mean and std to about 1e-6 relative there. ``min``/``max``
skip NaN; ``mean``, ``std`` and ``sum`` are over the finite values only (one Inf would make them
meaningless; ``inf`` counts those).

Examples
--------
>>> import numpy as np, taichi as ti
>>> ti.init(arch=ti.cpu, log_level=ti.ERROR)  # doctest: +ELLIPSIS
[Taichi] Starting on arch=...
>>> x = ti.ndarray(ti.f32, shape=(4,))
>>> x.from_numpy(np.array([1.0, np.nan, 3.0, 0.0], dtype=np.float32))
>>> s = buffer_stats(x)
>>> (s.min, s.max, s.mean, s.nan, s.zeros, s.first_nonfinite)
(0.0, 3.0, 1.3333333333333333, 1, 1, (1,))
"""

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import taichi as ti

from graphlab.bridge.runtime import value_is_current
from graphlab.core.errors import GraphlabError
from graphlab.debug.stats_kernels import (
    ACC,
    CNT,
    NONE,
    VAL,
    Spec,
    accumulator_dtype,
    device_diff,
    device_diff_map,
    device_first_bad,
    device_rows,
    spec,
)
from graphlab.debug.stats_launch import Prepared, onepass_rows, prepare

__all__ = [
    "BufferStats",
    "BufferTypeError",
    "DiffStats",
    "MagnitudeStats",
    "StatsError",
    "accumulator_dtype",
    "buffer_stats",
    "diff_map",
    "diff_stats",
    "first_nonfinite",
]


class StatsError(GraphlabError, ValueError):
    """Buffers cannot be reduced as asked (shapes differ, too many elements)."""


class BufferTypeError(StatsError, TypeError):
    """A value given as a buffer is not a Taichi ndarray."""


@dataclass(frozen=True)
class MagnitudeStats:
    """Statistics of ``abs(x)``: NaN skipped for ``min``/``max``, finite values for the rest."""

    min: float | int | None
    max: float | int | None
    mean: float
    std: float
    sum: float | int


@dataclass(frozen=True)
class BufferStats:
    """Summary of one ndarray: what the debugger shows for a buffer after each step.

    ``count`` counts scalar values (elements times components); ``finite`` how many of them are
    finite. ``min``/``max`` are ``None`` when every value is NaN; ``mean``/``std`` (population std)
    are NaN when none is finite. ``first_nonfinite`` is the numpy index (field index, then component
    index) of the first NaN or Inf in C order. ``components`` holds one ``BufferStats`` per component
    (C order) when asked for with ``per_component=True``; ``magnitude`` the stats of ``abs(x)`` when
    asked for with ``with_abs=True``.
    """

    shape: tuple[int, ...]
    dtype: str
    element_shape: tuple[int, ...]
    count: int
    min: float | int | None
    max: float | int | None
    mean: float
    std: float
    nan: int
    inf: int
    zeros: int
    first_nonfinite: tuple[int, ...] | None
    finite: int = 0
    sum: float | int = 0.0
    components: "tuple[BufferStats, ...]" = field(default=(), repr=False)
    magnitude: MagnitudeStats | None = field(default=None, repr=False)

    def __str__(self) -> str:
        bad = f", first non-finite at {self.first_nonfinite}" if self.first_nonfinite is not None else ""
        return (
            f"{self.dtype}{list(self.shape)}{list(self.element_shape) if self.element_shape else ''}: "
            f"min {self.min} max {self.max} mean {self.mean:.6g} std {self.std:.6g}, "
            f"{self.nan} NaN, {self.inf} Inf, {self.zeros} zeros{bad}"
        )


@dataclass(frozen=True)
class DiffStats:
    """How two same-shaped ndarrays differ (a step replayed, a module run as deployed).

    ``changed`` counts scalar values that differ (two NaN at one place are equal);
    ``nonfinite_mismatch`` those where one side is NaN/Inf and the other is not the same kind of
    value; ``max_abs`` and ``max_rel`` (``|a-b| / max(|a|, |b|)``, in [0, 2]) are over the places
    where both are finite; ``first_changed`` is the numpy index of the first change in C order.
    """

    shape: tuple[int, ...]
    element_shape: tuple[int, ...]
    count: int
    changed: int
    max_abs: float
    max_rel: float
    nonfinite_mismatch: int
    first_changed: tuple[int, ...] | None


# ---------------------------------------------------------------------------------------------
# Host side: check the buffers, launch the device reductions (graphlab.debug.stats_kernels), assemble the records.


def _check_ndarray(arr: Any, what: str) -> None:
    if not isinstance(arr, ti.Ndarray):
        raise BufferTypeError(
            f"{what}: expected a Taichi ndarray (ti.ndarray / ti.Vector.ndarray / ti.Matrix.ndarray), "
            f"got {type(arr).__name__}; wrap numpy data with nd = ti.ndarray(dtype, shape); "
            "nd.from_numpy(a)"
        )
    if not value_is_current(arr):
        raise StatsError(
            f"{what}: this ndarray was made in a Taichi runtime that ti.init()/ti.reset() replaced, and "
            "reading it would crash the process; make it again (ti.ndarray(...)) after ti.init"
        )


def _numel(arr: Any) -> int:
    return math.prod(arr.shape) * math.prod(arr.element_shape)


def _check_size(arr: Any, what: str) -> None:
    if _numel(arr) >= NONE:
        raise StatsError(
            f"{what}: {_numel(arr)} scalar values is more than the 2**31 - 1 that 32-bit indices reach; "
            "reduce a slice of it (copy part of it into a smaller ndarray)"
        )


def _unravel(flat: int, arr: Any) -> tuple[int, ...]:
    full = tuple(arr.shape) + tuple(arr.element_shape)
    return tuple(int(i) for i in np.unravel_index(flat, full))


def _host_rows(values: np.ndarray, s: Spec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The same rows as the kernels, from a (elements, components) array: for 0-d ndarrays."""
    ncomp = values.shape[1]
    groups = [values[:, [k]] for k in range(ncomp)] if s.slots > 1 else [values]
    cnt = np.zeros((len(groups), CNT), np.int64)
    val = np.zeros((len(groups), VAL), values.dtype)
    acc = np.zeros((len(groups), ACC), np.float64)
    for k, g in enumerate(groups):
        flat = g.reshape(-1)
        fin = np.isfinite(flat) if s.is_float else np.ones(flat.shape, bool)
        bad = np.flatnonzero(~fin)
        f = flat[fin].astype(np.float64)
        cnt[k, :5] = (
            fin.sum(),
            np.sum(np.isposinf(flat) if s.is_float else 0),
            np.sum(np.isneginf(flat) if s.is_float else 0),
            np.sum(np.isnan(flat) if s.is_float else 0),
            np.sum(flat == 0),
        )
        cnt[k, 5] = bad[0] if bad.size else NONE  # flat in one slot, an element index per slot
        if f.size:
            val[k] = flat[fin].min(), flat[fin].max()
            acc[k] = (
                f.mean(),
                ((f - f.mean()) ** 2).sum(),
                f.sum(),
                np.abs(f).mean(),
                ((np.abs(f) - np.abs(f).mean()) ** 2).sum(),
                np.abs(f).sum(),
                np.abs(f).min(),
            )
    return cnt, val, acc


def _merge(rows: list[tuple[np.ndarray, Any, np.ndarray]]) -> tuple[np.ndarray, Any, np.ndarray]:
    """Merge per-component rows into one (counts add, min/max, Chan for mean and M2)."""
    cnt, val, acc = (np.array(r, copy=True) for r in rows[0])
    for c2, v2, a2 in rows[1:]:
        if c2[0] > 0:
            if cnt[0] == 0:
                val[:], acc[6] = v2, a2[6]
            val[0], val[1], acc[6] = min(val[0], v2[0]), max(val[1], v2[1]), min(acc[6], a2[6])
            na, nb = float(cnt[0]), float(c2[0])
            for h in (0, 3):
                d = a2[h] - acc[h]
                acc[h] += d * nb / (na + nb)
                acc[h + 1] += a2[h + 1] + d * d * na * nb / (na + nb)
                acc[h + 2] += a2[h + 2]
        cnt[:5] += c2[:5]
        cnt[5] = min(cnt[5], c2[5])
    return cnt, val, acc


def _record(
    arr: Any,
    row: tuple[np.ndarray, Any, np.ndarray],
    *,
    count: int,
    is_float: bool,
    with_abs: bool,
    element_shape: tuple[int, ...],
) -> BufferStats:
    cnt, val, acc = row
    finite, pinf, ninf, nan, zeros, first = (int(x) for x in cnt)
    num = float if is_float else int
    has = finite > 0
    lo = -math.inf if ninf else (num(val[0]) if has else (math.inf if pinf else None))
    hi = math.inf if pinf else (num(val[1]) if has else (-math.inf if ninf else None))
    total = float(acc[2]) if is_float else round(float(acc[2]))
    mag = None
    if with_abs:
        amax = math.inf if pinf or ninf else (max(abs(num(val[0])), abs(num(val[1]))) if has else None)
        amin = num(acc[6]) if has else (math.inf if pinf or ninf else None)
        atot = float(acc[5]) if is_float else round(float(acc[5]))
        mag = MagnitudeStats(
            amin, amax, float(acc[3]) if has else math.nan, math.sqrt(acc[4] / finite) if has else math.nan, atot
        )
    return BufferStats(
        shape=tuple(arr.shape),
        dtype=str(arr.dtype),
        element_shape=element_shape,
        count=count,
        min=lo,
        max=hi,
        mean=float(acc[0]) if has else math.nan,
        std=math.sqrt(acc[1] / finite) if has else math.nan,
        nan=nan,
        inf=pinf + ninf,
        zeros=zeros,
        first_nonfinite=_unravel(first, arr) if first != NONE else None,
        finite=finite,
        sum=total,
        magnitude=mag,
    )


def _device_rows(arr: Any, prepared: Prepared) -> tuple[np.ndarray, Any, np.ndarray]:
    """One pass where the device has f64 atomics (:mod:`graphlab.debug.stats_launch`), else blockwise."""
    if prepared.launch is not None:
        return onepass_rows(arr, prepared)
    return device_rows(arr, prepared.spec)


def buffer_stats(arr: Any, *, per_component: bool = False, with_abs: bool = False) -> BufferStats:
    """Summarise ``arr`` on its device; only one row of numbers per component reaches the host.

    Parameters
    ----------
    arr
        A scalar, vector or matrix ``ti.ndarray`` of any float or integer dtype, 0 to 4 dims.
    per_component
        Also give one :class:`BufferStats` per vector/matrix component (``.components``).
    with_abs
        Also give the statistics of ``abs(arr)`` (``.magnitude``), in the same pass.
    """
    _check_ndarray(arr, "buffer_stats(arr)")
    _check_size(arr, "buffer_stats(arr)")
    if not arr.shape:
        s = spec(arr, per_component=per_component, with_abs=with_abs)
        rows = _host_rows(np.asarray(arr.to_numpy()).reshape(1, s.ncomp), s)
    else:
        prepared = prepare(arr, per_component=per_component, with_abs=with_abs)
        s = prepared.spec
        rows = _device_rows(arr, prepared)
    ncomp = s.ncomp
    per = [(rows[0][k].copy(), rows[1][k], rows[2][k]) for k in range(s.slots)]
    if s.slots > 1:  # first bad index of slot k is an element index: make it a flat scalar index
        for k, (c, _, _) in enumerate(per):
            c[5] = c[5] * ncomp + k if c[5] != NONE else NONE
    n = math.prod(arr.shape)
    total = _record(
        arr,
        _merge(per) if len(per) > 1 else per[0],
        count=n * ncomp,
        is_float=s.is_float,
        with_abs=with_abs,
        element_shape=tuple(arr.element_shape),
    )
    if not per_component or not arr.element_shape:
        return total
    comps = tuple(_record(arr, r, count=n, is_float=s.is_float, with_abs=with_abs, element_shape=()) for r in per)
    return BufferStats(**{**total.__dict__, "components": comps})


def first_nonfinite(arr: Any) -> tuple[int, ...] | None:
    """Numpy index of the first NaN/Inf of ``arr`` in C order, or None; one cheap device pass."""
    _check_ndarray(arr, "first_nonfinite(arr)")
    _check_size(arr, "first_nonfinite(arr)")
    s = spec(arr, per_component=False, with_abs=False)
    if not s.is_float:
        return None
    if s.nd == 0:
        bad = np.flatnonzero(~np.isfinite(np.asarray(arr.to_numpy()).reshape(-1)))
        return _unravel(int(bad[0]), arr) if bad.size else None
    flat = device_first_bad(arr, s)
    return _unravel(flat, arr) if flat != NONE else None


def _check_pair(a: Any, b: Any, what: str) -> None:
    _check_ndarray(a, f"{what}(a, b): a")
    _check_ndarray(b, f"{what}(a, b): b")
    _check_size(a, f"{what}(a, b): a")
    if tuple(a.shape) != tuple(b.shape) or tuple(a.element_shape) != tuple(b.element_shape):
        raise StatsError(
            f"{what}(a, b): shapes differ: a is {tuple(a.shape)} of {tuple(a.element_shape) or 'scalars'}, "
            f"b is {tuple(b.shape)} of {tuple(b.element_shape) or 'scalars'}; compare buffers of one spec"
        )


def diff_stats(a: Any, b: Any) -> DiffStats:
    """How ``a`` differs from ``b`` (same shape and element shape), reduced on the device."""
    _check_pair(a, b, "diff_stats")
    sa = spec(a, per_component=False, with_abs=False)
    sb = spec(b, per_component=False, with_abs=False)
    count = _numel(a)
    if sa.nd == 0:
        x = np.asarray(a.to_numpy(), np.float64).reshape(-1)
        y = np.asarray(b.to_numpy(), np.float64).reshape(-1)
        both = np.isfinite(x) & np.isfinite(y)
        same = (x == y) | (np.isnan(x) & np.isnan(y))
        d = np.abs(x - y)[both]
        den = np.maximum(np.abs(x), np.abs(y))[both]
        rel = np.divide(d, den, out=np.zeros_like(d), where=den > 0)
        kind = np.where(np.isnan(x), 3, np.sign(x) * np.isinf(x)) != np.where(np.isnan(y), 3, np.sign(y) * np.isinf(y))
        first = int(np.flatnonzero(~same)[0]) if (~same).any() else NONE
        cnt = np.array([(~same).sum(), kind.sum(), first])
        accv = np.array([d.max(initial=0.0), rel.max(initial=0.0)])
    else:
        cnt, accv = device_diff(a, b, sa, sb)
    first = int(cnt[2])
    return DiffStats(
        shape=tuple(a.shape),
        element_shape=tuple(a.element_shape),
        count=count,
        changed=int(cnt[0]),
        max_abs=float(accv[0]),
        max_rel=float(accv[1]),
        nonfinite_mismatch=int(cnt[1]),
        first_changed=_unravel(first, a) if first != NONE else None,
    )


def diff_map(a: Any, b: Any) -> np.ndarray:
    """``a - b`` per element (the norm of the difference for vectors/matrices), for pictures.

    Two NaN at one place give 0; one NaN gives NaN. The map has ``a.shape`` and is computed on the
    device; only the map itself is copied to the host.
    """
    _check_pair(a, b, "diff_map")
    sa = spec(a, per_component=False, with_abs=False)
    if sa.nd == 0:
        x = np.asarray(a.to_numpy(), np.float64)
        y = np.asarray(b.to_numpy(), np.float64)
        d = np.where(np.isnan(x) & np.isnan(y), 0.0, x - y)
        return np.asarray(np.sqrt((d**2).sum()) if a.element_shape else d)
    return device_diff_map(a, b, sa)
