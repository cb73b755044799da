"""Device statistics kernels: the Taichi reductions behind :mod:`graphlab.debug.stats`, and their caches.

Each reduction runs as Taichi kernels over the ndarray where it lives: a first kernel reduces
contiguous (CPU) or interleaved (GPU) blocks of elements to partial summaries, a few combine kernels
fold the partials, and only one row of numbers per component crosses to the host. A :class:`Spec`
is what a kernel instance needs to know statically (Taichi compiles one instance per spec);
partial-result ndarrays are kept between calls in a small cache. The host API that turns these rows
into records (:class:`~graphlab.debug.stats.BufferStats` ...) is :mod:`graphlab.debug.stats`.

Over 500 lines on purpose: the kernels share the Taichi functions above them and the :class:`Spec`
they are compiled for (one compile-time contract), and the launchers here are their only callers.
"""

import math
from collections import OrderedDict
from typing import Any, NamedTuple

import numpy as np
import taichi as ti

from graphlab.bridge.runtime import RuntimeToken, current_arch
from graphlab.bridge.types import to_numpy_dtype

NONE = 2**31 - 1  # "no index" sentinel; indices are i32 on every Taichi backend
CNT, VAL, ACC = 6, 2, 7  # columns of the partial arrays (see _k_stats)
_CPU_ARCHS = ("x64", "arm64")
_F64_ARCHS = ("x64", "arm64", "cuda", "amdgpu")


# ---------------------------------------------------------------------------------------------
# What a kernel instance needs to know statically (a tuple, so Taichi caches instances by value).


class Spec(NamedTuple):
    """What a kernel instance needs to know statically about a buffer (its dtype, layout, components)."""

    nd: int
    comps: tuple[tuple[int, ...], ...]
    ncomp: int
    slots: int
    interleaved: bool
    is_float: bool
    utype: Any
    mbits: int
    emax: int
    dt: Any
    adt: Any
    with_abs: bool


_FLOAT_BITS = {"f16": (10, 0x1F, "u16"), "f32": (23, 0xFF, "u32"), "f64": (52, 0x7FF, "u64")}


def _arch_name() -> str:
    return current_arch()


def _f64_works() -> bool:
    """Whether f64 arithmetic compiles and runs on the current device (Vulkan/Metal may lack it)."""
    try:
        out = ti.ndarray(ti.f64, shape=(1,))
        _k_probe_f64(out)
        return float(out.to_numpy()[0]) == 2.0**-40
    except Exception:  # any failure means "no usable f64 on this device"
        return False


_F64_PROBE: list[Any] = [None, False]  # (token of the runtime probed, result)


def accumulator_dtype() -> Any:
    """The dtype sums are accumulated in on the current device: ``ti.f64``, else ``ti.f32``.

    LLVM archs always have f64; other archs are probed once per Taichi runtime.
    """
    if _arch_name() in _F64_ARCHS:
        return ti.f64
    if _F64_PROBE[0] is None or not _F64_PROBE[0].is_current():
        _F64_PROBE[:] = [RuntimeToken(), _f64_works()]
    return ti.f64 if _F64_PROBE[1] else ti.f32


def spec(arr: Any, *, per_component: bool, with_abs: bool) -> Spec:
    dt = str(arr.dtype)
    esh = tuple(arr.element_shape)
    comps = tuple(np.ndindex(*esh)) if esh else ((),)
    fb = _FLOAT_BITS.get(dt)
    return Spec(
        nd=len(arr.shape),
        comps=comps,
        ncomp=len(comps),
        slots=len(comps) if per_component else 1,
        interleaved=_arch_name() not in _CPU_ARCHS,
        is_float=fb is not None,
        utype=getattr(ti, fb[2]) if fb else ti.u32,
        mbits=fb[0] if fb else 0,
        emax=fb[1] if fb else 0,
        dt=arr.dtype,
        adt=accumulator_dtype(),
        with_abs=with_abs,
    )


def _plan(n: int, slots: int) -> tuple[int, int]:
    """(blocks, chunk): few long blocks for CPU threads, many short interleaved ones for GPUs.

    Every block holds at least one element, which the kernels rely on.
    """
    if _arch_name() in _CPU_ARCHS:
        nblk = max(1, min(-(-n // 16384), 64))
    else:
        nblk = max(1, min(-(-n // 32), 131072 // slots))
    chunk = -(-n // nblk)
    return -(-n // chunk), chunk


# ---------------------------------------------------------------------------------------------
# Taichi functions and kernels. No Inf constants and no float compares on NaN/Inf: under fast math
# (Taichi's default) compilers may assume neither occurs, so classification works on the bits.


@ti.kernel
def _k_probe_f64(out: ti.types.ndarray(dtype=ti.f64, ndim=1)):
    one = ti.cast(1.0, ti.f64)
    out[0] = (one + one / ti.cast(1099511627776.0, ti.f64)) - one


@ti.func
def _fclass(x, s: ti.template()):
    """0 finite, 1 +Inf, 2 -Inf, 3 NaN."""
    r = 0
    if ti.static(s.is_float):
        b = ti.bit_cast(x, s.utype)
        one = ti.cast(1, s.utype)
        emax = ti.cast(s.emax, s.utype)
        if ((b >> s.mbits) & emax) == emax:
            if (b & ((one << s.mbits) - one)) != ti.cast(0, s.utype):
                r = 3
            else:
                r = 1 + ti.cast((b >> s.mbits) > emax, ti.i32)  # the sign bit sits above the exponent
    return r


@ti.func
def _is_zero(x, s: ti.template()):
    r = x == ti.cast(0, s.dt)
    if ti.static(s.is_float):
        r = (ti.bit_cast(x, s.utype) << ti.cast(1, s.utype)) == ti.cast(0, s.utype)
    return r


@ti.func
def _lo(a, b):
    """min by compare and select: ti.min on 8-bit ints aborts the process on x64 in Taichi 1.7.4."""
    return ti.select(b < a, b, a)


@ti.func
def _hi(a, b):
    return ti.select(b > a, b, a)


@ti.func
def _comp(v, c: ti.template()):
    """Component ``c`` (a static index tuple, ``()`` for scalar elements) of element ``v``."""
    if ti.static(len(c) == 0):
        return v
    if ti.static(len(c) == 1):
        return v[c[0]]
    return v[c[0], c[1]]


@ti.func
def _numel_k(arr: ti.template(), nd: ti.template()):
    n = 1
    for k in ti.static(range(nd)):
        n *= arr.shape[k]
    return n


@ti.func
def _unflat(arr: ti.template(), e, nd: ti.template()):
    """Field index of flat element ``e`` (C order)."""
    idx = ti.Vector([0] * nd, ti.i32)
    r = e
    for j in ti.static(range(nd - 1)):
        k = ti.static(nd - 1 - j)
        idx[k] = r % arr.shape[k]
        r = r // arr.shape[k]
    idx[0] = r
    return idx


@ti.func
def _step(arr: ti.template(), idx: ti.template(), nd: ti.template()):
    """Advance ``idx`` by one element in C order (a carry instead of a division per element)."""
    idx[nd - 1] += 1
    for j in ti.static(range(nd - 1)):
        k = ti.static(nd - 1 - j)
        if idx[k] == arr.shape[k]:
            idx[k] = 0
            idx[k - 1] += 1


@ti.func
def _at(arr: ti.template(), idx: ti.template(), e, s: ti.template()):
    """Element ``e`` (interleaved blocks) or ``idx`` (contiguous blocks, advanced by ``_step``).

    Written as a function on purpose: in Taichi 1.7.4, re-assigning a variable from a ``ti.func``
    that returns a vector inside a loop can leave reads at the old index (CPU and Vulkan).
    """
    if ti.static(s.interleaved):
        return arr[_unflat(arr, e, s.nd)]
    return arr[idx]


@ti.func
def _block(b, nblk, chunk, n, s: ti.template()):
    """First flat element, stride and element count of block ``b`` (never empty)."""
    first = b * chunk
    stride = 1
    m = ti.min(chunk, n - first)
    if ti.static(s.interleaved):
        first = b
        stride = nblk
        m = (n - b + nblk - 1) // nblk
    return first, stride, m


@ti.kernel
def _k_stats(
    arr: ti.types.ndarray(),
    cnt: ti.types.ndarray(),
    val: ti.types.ndarray(),
    acc: ti.types.ndarray(),
    nblk: ti.i32,
    chunk: ti.i32,
    s: ti.template(),
):
    n = _numel_k(arr, s.nd)
    for b in range(nblk):
        first, stride, m = _block(b, nblk, chunk, n, s)
        idx = _unflat(arr, first, s.nd)
        v0 = arr[idx]
        c = ti.Matrix([[0] * 6] * s.slots, ti.i32)  # finite, +inf, -inf, nan (= class), zeros, first bad
        a = ti.Matrix([[0.0] * 7] * s.slots, s.adt)  # shift, s1, s2, |shift|, s1, s2 of |x|, min |x|
        mm = ti.Matrix([[0] * 2] * s.slots, s.dt)  # finite min, finite max
        for k in ti.static(range(s.slots)):
            c[k, 5] = NONE
            x0 = _comp(v0, s.comps[k])
            if _fclass(x0, s) == 0:
                a[k, 0] = ti.cast(x0, s.adt)
                a[k, 3] = ti.abs(a[k, 0])
        for j in range(m):
            e = first + j * stride
            v = _at(arr, idx, e, s)
            for q in ti.static(range(s.ncomp)):
                k = ti.static(q if s.slots > 1 else 0)
                x = _comp(v, s.comps[q])
                cls = _fclass(x, s)
                c[k, 4] += ti.cast(_is_zero(x, s), ti.i32)
                if cls == 0:
                    xa = ti.cast(x, s.adt)
                    if c[k, 0] == 0:
                        mm[k, 0], mm[k, 1] = x, x
                        a[k, 6] = ti.abs(xa)
                    mm[k, 0] = _lo(mm[k, 0], x)
                    mm[k, 1] = _hi(mm[k, 1], x)
                    c[k, 0] += 1
                    d = xa - a[k, 0]
                    a[k, 1] += d
                    a[k, 2] += d * d
                    if ti.static(s.with_abs):
                        a[k, 6] = ti.min(a[k, 6], ti.abs(xa))
                        ad = ti.abs(xa) - a[k, 3]
                        a[k, 4] += ad
                        a[k, 5] += ad * ad
                else:
                    if cls == 1:
                        c[k, 1] += 1
                    elif cls == 2:
                        c[k, 2] += 1
                    else:
                        c[k, 3] += 1
                    if c[k, 5] == NONE:
                        if ti.static(s.slots > 1):
                            c[k, 5] = e
                        else:
                            c[k, 5] = e * s.ncomp + q
            if ti.static(not s.interleaved):
                _step(arr, idx, s.nd)
        for k in ti.static(range(s.slots)):
            for j in ti.static(range(6)):
                cnt[b, k, j] = c[k, j]
            val[b, k, 0], val[b, k, 1] = mm[k, 0], mm[k, 1]
            nf = ti.cast(c[k, 0], s.adt)
            nn = ti.max(nf, ti.cast(1, s.adt))
            for h in ti.static((0, 3)):
                acc[b, k, h] = ti.select(c[k, 0] > 0, a[k, h] + a[k, h + 1] / nn, ti.cast(0, s.adt))
                acc[b, k, h + 1] = ti.max(a[k, h + 2] - a[k, h + 1] * a[k, h + 1] / nn, ti.cast(0, s.adt))
                acc[b, k, h + 2] = a[k, h + 1] + nf * a[k, h]
            acc[b, k, 6] = a[k, 6]


@ti.func
def _chan(na, ma, qa, nb, mb, qb, adt: ti.template()):
    """Merge (count, mean, M2) of two parts (Chan et al.), stable for any sizes."""
    n = na + nb
    d = mb - ma
    w = nb / ti.max(n, ti.cast(1, adt))
    return ma + d * w, qa + qb + d * d * na * w


@ti.kernel
def _k_stats_combine(
    cnt: ti.types.ndarray(),
    val: ti.types.ndarray(),
    acc: ti.types.ndarray(),
    ocnt: ti.types.ndarray(),
    oval: ti.types.ndarray(),
    oacc: ti.types.ndarray(),
    nsrc: ti.i32,
    nout: ti.i32,
    group: ti.i32,
    adt: ti.template(),
):
    for ob, k in ti.ndrange(nout, ocnt.shape[1]):
        lo = ob * group
        c = ti.Vector([cnt[lo, k, j] for j in range(6)])
        v = ti.Vector([val[lo, k, 0], val[lo, k, 1]])
        a = ti.Vector([acc[lo, k, j] for j in range(7)])
        for i in range(lo + 1, ti.min(lo + group, nsrc)):
            if cnt[i, k, 0] > 0:
                if c[0] == 0:
                    v[0], v[1], a[6] = val[i, k, 0], val[i, k, 1], acc[i, k, 6]
                v[0] = _lo(v[0], val[i, k, 0])
                v[1] = _hi(v[1], val[i, k, 1])
                a[6] = ti.min(a[6], acc[i, k, 6])
                na, nb = ti.cast(c[0], adt), ti.cast(cnt[i, k, 0], adt)
                a[0], a[1] = _chan(na, a[0], a[1], nb, acc[i, k, 0], acc[i, k, 1], adt)
                a[3], a[4] = _chan(na, a[3], a[4], nb, acc[i, k, 3], acc[i, k, 4], adt)
                a[2] += acc[i, k, 2]
                a[5] += acc[i, k, 5]
            for j in ti.static(range(5)):
                c[j] += cnt[i, k, j]
            c[5] = ti.min(c[5], cnt[i, k, 5])
        for j in ti.static(range(6)):
            ocnt[ob, k, j] = c[j]
        for j in ti.static(range(7)):
            oacc[ob, k, j] = a[j]
        oval[ob, k, 0], oval[ob, k, 1] = v[0], v[1]


@ti.kernel
def _k_pack(cnt: ti.types.ndarray(), val: ti.types.ndarray(), acc: ti.types.ndarray(), out: ti.types.ndarray()):
    """Row 0 of the three partial arrays as one f64 row per slot: one read instead of three."""
    for k in range(out.shape[0]):
        for j in ti.static(range(6)):
            out[k, j] = ti.cast(cnt[0, k, j], ti.f64)
        for j in ti.static(range(2)):
            out[k, 6 + j] = ti.cast(val[0, k, j], ti.f64)
        for j in ti.static(range(7)):
            out[k, 8 + j] = ti.cast(acc[0, k, j], ti.f64)


@ti.kernel
def _k_first_bad(arr: ti.types.ndarray(), out: ti.types.ndarray(), nblk: ti.i32, chunk: ti.i32, s: ti.template()):
    n = _numel_k(arr, s.nd)
    for b in range(nblk):
        first, stride, m = _block(b, nblk, chunk, n, s)
        idx = _unflat(arr, first, s.nd)
        best = NONE
        for j in range(m):
            e = first + j * stride
            v = _at(arr, idx, e, s)
            for q in ti.static(range(s.ncomp)):
                if _fclass(_comp(v, s.comps[q]), s) != 0:
                    best = ti.min(best, e * s.ncomp + q)
            if ti.static(not s.interleaved):
                _step(arr, idx, s.nd)
        out[b, 0] = best


@ti.kernel
def _k_diff(
    a: ti.types.ndarray(),
    b: ti.types.ndarray(),
    cnt: ti.types.ndarray(),
    acc: ti.types.ndarray(),
    nblk: ti.i32,
    chunk: ti.i32,
    sa: ti.template(),
    sb: ti.template(),
):
    n = _numel_k(a, sa.nd)
    for blk in range(nblk):
        first, stride, m = _block(blk, nblk, chunk, n, sa)
        idx = _unflat(a, first, sa.nd)
        changed, mismatch, firstc = 0, 0, NONE
        mabs, mrel = ti.cast(0, sa.adt), ti.cast(0, sa.adt)
        for j in range(m):
            e = first + j * stride
            va, vb = _at(a, idx, e, sa), _at(b, idx, e, sa)
            for q in ti.static(range(sa.ncomp)):
                xa, xb = _comp(va, sa.comps[q]), _comp(vb, sa.comps[q])
                ca, cb = _fclass(xa, sa), _fclass(xb, sb)
                differs = ca != cb
                if ca == 0 and cb == 0:
                    fa, fb = ti.cast(xa, sa.adt), ti.cast(xb, sa.adt)
                    if ti.static(sa.dt == sb.dt):
                        differs = xa != xb
                    else:
                        differs = fa != fb
                    d = ti.abs(fa - fb)
                    mabs = ti.max(mabs, d)
                    den = ti.max(ti.abs(fa), ti.abs(fb))
                    if den > ti.cast(0, sa.adt):
                        mrel = ti.max(mrel, d / den)
                if differs:
                    changed += 1
                    firstc = ti.min(firstc, e * sa.ncomp + q)
                mismatch += ti.cast(ca != cb, ti.i32)
            if ti.static(not sa.interleaved):
                _step(a, idx, sa.nd)
        cnt[blk, 0], cnt[blk, 1], cnt[blk, 2] = changed, mismatch, firstc
        acc[blk, 0], acc[blk, 1] = mabs, mrel


@ti.kernel
def _k_fold(
    src: ti.types.ndarray(), dst: ti.types.ndarray(), nsrc: ti.i32, nout: ti.i32, group: ti.i32, ops: ti.template()
):
    """Fold rows of ``src`` in groups: column ``j`` by ``ops[j]`` (``+``, ``min`` or ``max``)."""
    for ob in range(nout):
        lo = ob * group
        for j in ti.static(range(len(ops))):
            r = src[lo, j]
            for i in range(lo + 1, ti.min(lo + group, nsrc)):
                if ti.static(ops[j] == "+"):
                    r += src[i, j]
                elif ti.static(ops[j] == "min"):
                    r = ti.min(r, src[i, j])
                else:
                    r = ti.max(r, src[i, j])
            dst[ob, j] = r


@ti.kernel
def _k_diff_map(a: ti.types.ndarray(), b: ti.types.ndarray(), out: ti.types.ndarray(), sa: ti.template()):
    for ij in ti.grouped(out):
        va, vb = a[ij], b[ij]
        r = ti.cast(0, sa.adt)
        for q in ti.static(range(sa.ncomp)):
            xa, xb = _comp(va, sa.comps[q]), _comp(vb, sa.comps[q])
            d = ti.cast(xa, sa.adt) - ti.cast(xb, sa.adt)
            if _fclass(xa, sa) == 3 and _fclass(xb, sa) == 3:
                d = ti.cast(0, sa.adt)
            if ti.static(sa.ncomp == 1):
                r = d
            else:
                r += d * d
        if ti.static(sa.ncomp > 1):
            r = ti.sqrt(r)
        out[ij] = r


# ---------------------------------------------------------------------------------------------
# Launching: scratch arrays kept between calls, folding partials, one row per component to the host.


def _group(nrows: int) -> int:
    return nrows if _arch_name() in _CPU_ARCHS else 64


class _Scratch:
    """Partial-result ndarrays kept between calls: allocating one costs about 0.1 ms in Taichi 1.7.4
    (it records a Python traceback), a fair part of a small buffer's statistics. Rows are rounded up
    to a power of two so buffers of many sizes share them; a ``ti.init``/``ti.reset`` empties it.
    """

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._runtime: RuntimeToken | None = None
        self._items: OrderedDict[tuple[Any, ...], Any] = OrderedDict()

    def get(self, role: str, dtype: Any, rows: int, tail: tuple[int, ...]) -> Any:
        if self._runtime is None or not self._runtime.is_current():
            self._items.clear()
            self._runtime = RuntimeToken()
        rows = 1 << max(rows - 1, 0).bit_length()
        key = (role, str(dtype), rows, tail)
        if key in self._items:
            self._items.move_to_end(key)
        else:
            self._items[key] = ti.ndarray(dtype, shape=(rows, *tail))
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return self._items[key]


_SCRATCH = _Scratch()


def _fold(part: Any, nrows: int, ops: tuple[str, ...], role: str) -> np.ndarray:
    level = 0
    while nrows > 1:
        group = _group(nrows)
        nout = -(-nrows // group)
        level += 1
        dst = _SCRATCH.get(f"{role}{level}", part.dtype, nout, (len(ops),))
        _k_fold(part, dst, nrows, nout, group, ops)
        part, nrows = dst, nout
    return part.to_numpy()[0]


def device_rows(arr: Any, s: Spec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(counts, min/max, sums) rows per slot of ``arr`` (1-d or more), reduced on the device."""
    n = math.prod(arr.shape)
    nblk, chunk = _plan(n, s.slots)

    def alloc(rows: int, level: int) -> tuple[Any, Any, Any]:
        return (
            _SCRATCH.get(f"cnt{level}", ti.i32, rows, (s.slots, CNT)),
            _SCRATCH.get(f"val{level}", s.dt, rows, (s.slots, VAL)),
            _SCRATCH.get(f"acc{level}", s.adt, rows, (s.slots, ACC)),
        )

    parts = alloc(nblk, 0)
    _k_stats(arr, *parts, nblk, chunk, s)
    level = 0
    while nblk > 1:
        group = _group(nblk)
        nout = -(-nblk // group)
        level += 1
        out = alloc(nout, level)
        _k_stats_combine(*parts, *out, nblk, nout, group, s.adt)
        parts, nblk = out, nout
    if s.adt == ti.f64 and str(s.dt) not in ("i64", "u64"):  # every value is exact in f64
        packed = _SCRATCH.get("packed", ti.f64, s.slots, (CNT + VAL + ACC,))
        _k_pack(*parts, packed)
        rows = packed.to_numpy()[: s.slots]
        cnt, val, acc = rows[:, :CNT], rows[:, CNT : CNT + VAL], rows[:, CNT + VAL :]
        return cnt.astype(np.int64), val.astype(to_numpy_dtype(s.dt)), acc
    cnt, val, acc = (p.to_numpy()[0] for p in parts)
    return cnt.astype(np.int64), val, acc.astype(np.float64)


def device_first_bad(arr: Any, s: Spec) -> int:
    """Flat index (C order, components included) of the first NaN/Inf of ``arr``, or :data:`NONE`."""
    nblk, chunk = _plan(math.prod(arr.shape), 1)
    part = _SCRATCH.get("bad0", ti.i32, nblk, (1,))
    _k_first_bad(arr, part, nblk, chunk, s)
    return int(_fold(part, nblk, ("min",), "bad")[0])


def device_diff(a: Any, b: Any, sa: Spec, sb: Spec) -> tuple[np.ndarray, np.ndarray]:
    """(changed, nonfinite mismatches, first changed flat index) and (max abs, max rel) of ``a`` vs ``b``."""
    nblk, chunk = _plan(math.prod(a.shape), 1)
    cnt_p = _SCRATCH.get("dcnt0", ti.i32, nblk, (3,))
    acc_p = _SCRATCH.get("dacc0", sa.adt, nblk, (2,))
    _k_diff(a, b, cnt_p, acc_p, nblk, chunk, sa, sb)
    cnt = _fold(cnt_p, nblk, ("+", "+", "min"), "dcnt")
    accv = _fold(acc_p, nblk, ("max", "max"), "dacc")
    return cnt, accv


def device_diff_map(a: Any, b: Any, sa: Spec) -> np.ndarray:
    """``a - b`` per element (the norm of it for vectors/matrices), computed on the device."""
    out = ti.ndarray(sa.adt, shape=tuple(a.shape))
    _k_diff_map(a, b, out, sa)
    return out.to_numpy()
