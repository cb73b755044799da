"""Device statistics kernels: the Taichi reductions behind :mod:`graphlab.debug.stats`, and their caches.

Each reduction runs as Taichi kernels over the ndarray where it lives. Buffer statistics take one
pass where the device has f64 atomics (:func:`onepass_kernel`: per-thread partials, one atomic
step into a few hundred rows that the host folds; launched by :mod:`graphlab.debug.stats_launch`);
elsewhere a first kernel reduces contiguous (CPU) or interleaved (GPU) blocks of elements to partial
summaries, a few combine kernels fold the partials, and only one row of numbers per component
crosses to the host. A :class:`Spec` is what a kernel instance needs to know statically (Taichi
compiles one instance per spec);
partial-result ndarrays are kept between calls in a small cache. The host API that turns these rows
into records (:class:`~graphlab.debug.stats.BufferStats` ...) is :mod:`graphlab.debug.stats`.

Over 500 lines on purpose: the kernels share the Taichi functions above them and the :class:`Spec`
they are compiled for (one compile-time contract), and the launchers here (and the one-pass launch
cache in :mod:`graphlab.debug.stats_launch`) are their only callers.
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
def _advance(arr: ti.template(), idx: ti.template(), delta: ti.template(), nd: ti.template()):
    """Add the mixed-radix step ``delta`` (a flat stride as a field index) to ``idx``, with carries."""
    carry = 0
    for j in ti.static(range(nd)):
        k = ti.static(nd - 1 - j)
        idx[k] += delta[k] + carry
        carry = 0
        if ti.static(k > 0):  # the first index is never wrapped: it stays below its extent while e < n
            wrap = idx[k] >= arr.shape[k]
            idx[k] -= ti.select(wrap, arr.shape[k], 0)
            carry = ti.cast(wrap, ti.i32)


@ti.func
def _shift(arr: ti.template(), s: ti.template(), k: ti.template()):
    """The value sums of slot ``k`` are taken around: its first value if finite, else 0."""
    x0 = _comp(arr[ti.Vector([0] * s.nd, ti.i32)], s.comps[k])
    r = ti.cast(0, s.adt)
    if _fclass(x0, s) == 0:
        r = ti.cast(x0, s.adt)
    return r


@ti.func
def _take(
    x,
    e,
    q: ti.template(),
    c: ti.template(),
    a: ti.template(),
    lo: ti.template(),
    hi: ti.template(),
    sh: ti.template(),
    s: ti.template(),
    o: ti.template(),
):
    """Add component ``q`` of element ``e`` to a thread's partials: finite values by selects (no branch
    on the common path), non-finite ones counted in a branch taken rarely."""
    k = ti.static(q if s.slots > 1 else 0)
    cls = _fclass(x, s)
    fin = cls == 0
    c[k, 4] += ti.cast(_is_zero(x, s), ti.i32)
    c[k, 0] += ti.cast(fin, ti.i32)
    xv = ti.cast(x, o.vdt)
    lo[k] = ti.select(fin and xv < lo[k], xv, lo[k])
    hi[k] = ti.select(fin and xv > hi[k], xv, hi[k])
    xa = ti.cast(x, s.adt)
    d = ti.select(fin, xa - sh[k], ti.cast(0, s.adt))
    a[k, 0] += d
    a[k, 1] += d * d
    if ti.static(s.with_abs):
        ax = ti.select(fin, ti.abs(xa), s.adt(o.ahigh))
        a[k, 4] = ti.min(a[k, 4], ax)
        ad = ti.select(fin, ax - ti.abs(sh[k]), ti.cast(0, s.adt))
        a[k, 2] += ad
        a[k, 3] += ad * ad
    if not fin:
        c[k, 1] += ti.cast(cls == 1, ti.i32)
        c[k, 2] += ti.cast(cls == 2, ti.i32)
        c[k, 3] += ti.cast(cls == 3, ti.i32)
        if c[k, 5] == NONE:
            if ti.static(s.slots > 1):
                c[k, 5] = e
            else:
                c[k, 5] = e * s.ncomp + q


def onepass_kernel(s: Spec, o: "OnePass") -> Any:
    """The one-pass kernel for ``(s, o)``, built once: see :func:`_build_onepass`."""
    key = (s, o)
    kernel = _ONEPASS_KERNELS.get(key)
    if kernel is None:
        kernel = _ONEPASS_KERNELS[key] = _build_onepass(s, o)
    return kernel


_ONEPASS_KERNELS: dict[tuple[Any, ...], Any] = {}  # Taichi keeps every kernel object anyway; specs are few


def _build_onepass(s: Spec, o: "OnePass") -> Any:
    """A kernel reading the buffer once, with ``s`` and ``o`` as constants it closes over instead of
    ``ti.template()`` parameters: a ``ti.graph`` cannot take those, and Taichi's Python launch of a
    templated kernel costs about 0.1 ms (hashing the template key) on a call that should take 0.5 ms.

    Each of ``nthr`` threads keeps its partial sums in registers over the elements
    ``t, t + nthr, ...`` on a GPU (coalesced; ``o.unroll`` loads in flight) or over the ``chunk``
    elements from ``t * chunk`` on a CPU (one cache line after another), then adds them atomically
    into row ``t % rows`` of ``part[slot, column, row]`` (f64: counts, min and max of 32-bit values
    are exact in it; columns as :data:`PACKED` says: the first 9 add up, the next 4 take their
    minimum; a row is the last index so the host folds contiguous memory). Sums are taken around one
    shift per slot (:func:`_shift`), so partials simply add. Two offloaded tasks of one launch:
    clear the rows, then reduce; the host folds the rows (:func:`fold_onepass`)."""

    @ti.kernel
    def k_stats_onepass(
        arr: ti.types.ndarray(),
        part: ti.types.ndarray(dtype=ti.f64, ndim=3),
        nthr: ti.i32,
        chunk: ti.i32,
        rows: ti.i32,
    ):
        for r in range(rows):
            for k in ti.static(range(s.slots)):
                for j in ti.static(range(PACKED)):
                    part[k, j, r] = 0.0
                part[k, 9, r] = ti.cast(NONE, ti.f64)
                part[k, 10, r] = ti.cast(o.vdt(o.vhigh), ti.f64)
                part[k, 11, r] = -ti.cast(o.vdt(o.vlow), ti.f64)
                part[k, 12, r] = ti.f64(o.ahigh)
                part[k, 13, r] = ti.cast(_shift(arr, s, k), ti.f64)
        for t in range(nthr):
            n = _numel_k(arr, s.nd)
            first, step, m = t, nthr, (n - t + nthr - 1) // nthr
            if ti.static(not s.interleaved):
                first, step = t * chunk, 1
                m = ti.max(ti.min(chunk, n - first), 0)
            idx = _unflat(arr, ti.min(first, n - 1), s.nd)
            delta = _unflat(arr, step, s.nd)
            c = ti.Matrix([[0] * 6] * s.slots, ti.i32)  # finite, +inf, -inf, nan, zeros, first bad
            a = ti.Matrix([[0.0] * 5] * s.slots, s.adt)  # sum d, sum d^2, sum ad, sum ad^2, min |x|
            lo = ti.Vector([o.vdt(o.vhigh)] * s.slots, o.vdt)
            hi = ti.Vector([o.vdt(o.vlow)] * s.slots, o.vdt)
            sh = ti.Vector([0.0] * s.slots, s.adt)
            for k in ti.static(range(s.slots)):
                c[k, 5] = NONE
                a[k, 4] = s.adt(o.ahigh)
                sh[k] = _shift(arr, s, k)
            e = first
            full = m // o.unroll
            for _ in range(full):  # o.unroll loads issued before any is used
                vs = ti.Matrix([[0] * s.ncomp] * o.unroll, s.dt)
                for u in ti.static(range(o.unroll)):
                    v = arr[idx]
                    for q in ti.static(range(s.ncomp)):
                        vs[u, q] = _comp(v, s.comps[q])
                    _advance(arr, idx, delta, s.nd)
                for u in ti.static(range(o.unroll)):
                    for q in ti.static(range(s.ncomp)):
                        _take(vs[u, q], e + u * step, q, c, a, lo, hi, sh, s, o)
                e += o.unroll * step
            for _ in range(m - full * o.unroll):
                v = arr[idx]
                for q in ti.static(range(s.ncomp)):
                    _take(_comp(v, s.comps[q]), e, q, c, a, lo, hi, sh, s, o)
                _advance(arr, idx, delta, s.nd)
                e += step
            r = t % rows
            for k in ti.static(range(s.slots)):  # read before an atomic: most threads change no min/max
                for j in ti.static(range(5)):
                    if c[k, j] != 0:
                        ti.atomic_add(part[k, j, r], ti.cast(c[k, j], ti.f64))
                fb = ti.cast(c[k, 5], ti.f64)
                if c[k, 5] != NONE and fb < part[k, 9, r]:
                    ti.atomic_min(part[k, 9, r], fb)
                if c[k, 0] > 0:
                    lo64, nhi64 = ti.cast(lo[k], ti.f64), -ti.cast(hi[k], ti.f64)
                    if lo64 < part[k, 10, r]:
                        ti.atomic_min(part[k, 10, r], lo64)
                    if nhi64 < part[k, 11, r]:
                        ti.atomic_min(part[k, 11, r], nhi64)
                    for j in ti.static(range(4)):
                        if ti.static(j < 2 or s.with_abs):
                            ti.atomic_add(part[k, 5 + j, r], ti.cast(a[k, j], ti.f64))
                    if ti.static(s.with_abs):
                        am = ti.cast(a[k, 4], ti.f64)
                        if am < part[k, 12, r]:
                            ti.atomic_min(part[k, 12, r], am)

    return k_stats_onepass


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

    def get(self, role: str, dtype: Any, rows: int, tail: tuple[int, ...], head: tuple[int, ...] = ()) -> Any:
        """An ndarray of shape ``(*head, rows rounded up, *tail)``."""
        if self._runtime is None or not self._runtime.is_current():
            self._items.clear()
            self._runtime = RuntimeToken()
        rows = 1 << max(rows - 1, 0).bit_length()
        key = (role, str(dtype), head, rows, tail)
        if key in self._items:
            self._items.move_to_end(key)
        else:
            self._items[key] = ti.ndarray(dtype, shape=(*head, rows, *tail))
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
    """(counts, min/max, sums) rows per slot of ``arr`` (1-d or more), by the blockwise kernels.

    Where :func:`onepass` gives facts, :mod:`graphlab.debug.stats_launch` reads the buffer once instead."""
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


# ---------------------------------------------------------------------------------------------
# The one-pass path (CUDA): one launch reads the buffer once, per-thread partials meet in atomics.


class OnePass(NamedTuple):
    """Static facts of :func:`_k_stats_onepass` beyond the :class:`Spec` (a tuple: one instance each)."""

    vdt: Any  # the dtype min/max are reduced in: 32/64-bit, what atomics take
    vlow: float | int  # its lowest finite value (where a max starts)
    vhigh: float | int  # its highest finite value (where a min starts)
    ahigh: float  # the accumulator's highest finite value (where min |x| starts)
    unroll: int  # loads in flight per thread


_ONEPASS_ARCHS = ("cuda", "amdgpu", "x64", "arm64")  # f64 atomics; Vulkan/Metal may lack them: blockwise
_ONEPASS_THREADS = 1 << 19  # with 8 loads each, 16 MiB of f32 asked for at once: HBM3 stays busy
_ONEPASS_ROWS = 256  # atomics spread over this many rows, folded on the host
_ONEPASS_CPU_CHUNKS = 8192  # contiguous chunks on a CPU; Taichi hands its threads 32 at a time
_ONEPASS_UNROLL = 8
_VALUE_DTYPES = {
    "f16": "f32",
    "f32": "f32",
    "f64": "f64",
    "i8": "i32",
    "i16": "i32",
    "i32": "i32",
    "u8": "i32",
    "u16": "i32",
    "u32": "i64",
}
# Columns of a one-pass row: finite, +inf, -inf, nan, zero counts and the four sums (added up), then
# first non-finite index, min, -max, min |x| (their minimum is taken), then the shift.
PACKED = 14


def tuning() -> tuple[Any, ...]:
    """The module settings a one-pass launch depends on (tests and the bench change them)."""
    return (_ONEPASS_ARCHS, _CPU_ARCHS, _ONEPASS_THREADS, _ONEPASS_ROWS, _ONEPASS_CPU_CHUNKS, _ONEPASS_UNROLL)


def onepass(s: Spec) -> OnePass | None:
    """The one-pass kernel's facts for ``s``, or None where the arch or dtype takes the blockwise path."""
    vname = _VALUE_DTYPES.get(str(s.dt))
    if _arch_name() not in _ONEPASS_ARCHS or s.adt != ti.f64 or vname is None or s.nd == 0:
        return None
    vdt = getattr(ti, vname)
    if vname[0] == "f":
        finfo = np.finfo(to_numpy_dtype(vdt))
        low, high = float(finfo.min), float(finfo.max)
    else:
        iinfo = np.iinfo(to_numpy_dtype(vdt))
        low, high = int(iinfo.min), int(iinfo.max)
    return OnePass(vdt, low, high, float(np.finfo(np.float64).max), _ONEPASS_UNROLL)


def onepass_part(s: Spec, rows: int) -> Any:
    """Scratch rows of the one-pass kernel, ``(slots, PACKED, rows rounded up)`` f64, kept between calls."""
    return _SCRATCH.get("onepass", ti.f64, rows, (), head=(s.slots, PACKED))


def onepass_plan(n: int, s: Spec) -> tuple[int, int, int]:
    """(threads, chunk, rows) of the one-pass kernel for ``n`` elements: ``chunk`` elements a thread on a
    CPU; on a GPU each thread strides by the thread count."""
    nthr = min(n, (_ONEPASS_THREADS if s.interleaved else _ONEPASS_CPU_CHUNKS) // s.slots)
    return nthr, -(-n // nthr), min(_ONEPASS_ROWS, nthr)


def fold_onepass(p: np.ndarray, dt: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fold one-pass rows (slots, :data:`PACKED`, rows) into per-slot (counts, min/max, sums).

    Sums were taken around a shift ``c`` per slot: with ``n`` finite values, ``S1 = sum(x - c)`` and
    ``S2 = sum((x - c)^2)`` give the mean ``c + S1/n`` and ``M2 = S2 - S1^2/n``. Two numpy reductions
    over contiguous rows, then plain floats per slot (a few numbers: numpy calls would cost more than
    the arithmetic), once per statistics call."""
    added, least = p[:, :9].sum(axis=2).tolist(), p[:, 9:13].min(axis=2).tolist()
    cnt, val, acc = [], [], []
    for sums, mins, c in zip(added, least, p[:, 13, 0].tolist(), strict=True):
        n = sums[0]
        cnt.append((*sums[:5], mins[0]))
        val.append((mins[1], -mins[2]) if n > 0 else (0, 0))
        row: list[float] = []
        for shift, t1, t2 in ((c, sums[5], sums[6]), (abs(c), sums[7], sums[8])):
            mean, m2 = (shift + t1 / n, max(t2 - t1 * t1 / n, 0.0)) if n > 0 else (0.0, 0.0)
            row += (mean, m2, t1 + n * shift)
        acc.append((*row, mins[3]))
    np_dt = _NUMPY_DTYPES.get(dt)
    if np_dt is None:
        np_dt = _NUMPY_DTYPES[dt] = to_numpy_dtype(dt)
    return np.array(cnt, np.int64), np.array(val, np_dt), np.array(acc, np.float64)


_NUMPY_DTYPES: dict[Any, np.dtype[Any]] = {}  # Taichi dtype -> numpy's: the lookup by name costs 1-4 us
