"""Multigrid-preconditioned conjugate gradients: an ndarray port of Taichi's ``examples/algorithm/mgpcg.py``.

What it exercises: a ``while`` loop node that stops when a kernel clears a convergence flag,
reductions into an accumulator cleared and then summed with atomic ``+=``, one kernel dispatched on
several buffer bindings (each multigrid level), a sequence defined once and used twice (the
preconditioner, before the loop and in every iteration), nested repeated sequences (the smoothing
sweeps), 3-D ndarrays of three sizes, 0-d ndarrays and i32 scalars.

Where it differs from the example:
- the pointer-sparse fields become dense 3-D ndarrays with a one-cell border that stays zero: the
  stencil loops run over the interior instead of over the active blocks;
- the per-level field lists ``r[l]``, ``z[l]`` become separate ndarrays (``r0``..``r2``,
  ``z0``..``z2``) and the ``ti.template()`` level argument becomes the binding; the template
  ``phase`` of ``smooth`` is an i32 scalar (args ``even`` = 0 and ``odd`` = 1);
- the reduction storage ``sum_`` is the 0-d ndarray ``total``; ``clear`` replaces ``sum_[None] = 0.0``, and
  small kernels compute alpha, beta and the convergence flag into 0-d ndarrays (``alpha``, ``beta``,
  ``old_zTr``, ``initial_rTr``) where the example divides Python floats; ``.fill(0)`` is ``zero``;
- the CG loop is a graphlab ``loop`` on the flag written after ``update_r``: the rest of that last
  iteration (preconditioner, beta, ``update_p``) still runs, which changes ``z`` and ``p`` but not
  ``x`` or ``r``; ``max_iter`` bounds it at 40 iterations instead of 400;
- a 16^3 grid (N = 8), three multigrid levels and 10 bottom smoothing sweeps instead of 256^3, four
  levels and 50; the tolerance on rTr relative to the first is 1e-6 instead of 1e-12, which f32
  does not reach on this grid (it stalls near 1e-9): the solve stops after 8 iterations;
- the GUI, ``paint`` and the kernel profiler are removed.
"""

import math
import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

N = 8
N_EXT = N // 2
N_TOT = 2 * N
LEVELS = 3
PRE_AND_POST_SMOOTHING = 2
BOTTOM_SMOOTHING = 10
TOLERANCE = 1.0e-6
MAX_ITER = 40
FRAMES = 1

Grid = ti.types.ndarray(dtype=ti.f32, ndim=3)
Scalar = ti.types.ndarray(dtype=ti.f32, ndim=0)
Flag = ti.types.ndarray(dtype=ti.i32, ndim=1)


@ti.kernel
def init(r0: Grid, z0: Grid, Ap: Grid, p: Grid, x: Grid):
    n = r0.shape[0]
    ext = n // 4
    for i, j, k in ti.ndrange((ext, n - ext), (ext, n - ext), (ext, n - ext)):
        xl = (i - ext) * 2.0 / n
        yl = (j - ext) * 2.0 / n
        zl = (k - ext) * 2.0 / n
        r0[i, j, k] = ti.sin(2.0 * math.pi * xl) * ti.sin(2.0 * math.pi * yl) * ti.sin(2.0 * math.pi * zl)
        z0[i, j, k] = 0.0
        Ap[i, j, k] = 0.0
        p[i, j, k] = 0.0
        x[i, j, k] = 0.0


@ti.kernel
def compute_Ap(p: Grid, Ap: Grid):
    n = p.shape[0]
    for i, j, k in ti.ndrange((1, n - 1), (1, n - 1), (1, n - 1)):
        Ap[i, j, k] = (
            6.0 * p[i, j, k]
            - p[i + 1, j, k]
            - p[i - 1, j, k]
            - p[i, j + 1, k]
            - p[i, j - 1, k]
            - p[i, j, k + 1]
            - p[i, j, k - 1]
        )


@ti.kernel
def clear(total: Scalar):
    total[None] = 0.0


@ti.kernel
def reduce(p_: Grid, q_: Grid, total: Scalar):
    for I in ti.grouped(p_):
        total[None] += p_[I] * q_[I]


@ti.kernel
def keep(total: Scalar, into: Scalar):
    into[None] = total[None]


@ti.kernel
def compute_alpha(total: Scalar, old_zTr: Scalar, alpha: Scalar):
    alpha[None] = old_zTr[None] / total[None]  # total holds pAp


@ti.kernel
def residual_flag(total: Scalar, initial_rTr: Scalar, flag: Flag):
    flag[0] = 0
    if total[None] >= initial_rTr[None] * TOLERANCE:  # total holds rTr
        flag[0] = 1


@ti.kernel
def compute_beta(total: Scalar, old_zTr: Scalar, beta: Scalar):
    beta[None] = total[None] / old_zTr[None]  # total holds the new zTr
    old_zTr[None] = total[None]


@ti.kernel
def update_x(x: Grid, p: Grid, alpha: Scalar):
    for I in ti.grouped(p):
        x[I] += alpha[None] * p[I]


@ti.kernel
def update_r(r0: Grid, Ap: Grid, alpha: Scalar):
    for I in ti.grouped(Ap):
        r0[I] -= alpha[None] * Ap[I]


@ti.kernel
def update_p(p: Grid, z0: Grid, beta: Scalar):
    for I in ti.grouped(p):
        p[I] = z0[I] + beta[None] * p[I]


@ti.kernel
def zero(a: Grid):
    for I in ti.grouped(a):
        a[I] = 0.0


@ti.kernel
def restrict(r_fine: Grid, z_fine: Grid, r_coarse: Grid):
    n = r_fine.shape[0]
    for i, j, k in ti.ndrange((1, n - 1), (1, n - 1), (1, n - 1)):
        res = r_fine[i, j, k] - (
            6.0 * z_fine[i, j, k]
            - z_fine[i + 1, j, k]
            - z_fine[i - 1, j, k]
            - z_fine[i, j + 1, k]
            - z_fine[i, j - 1, k]
            - z_fine[i, j, k + 1]
            - z_fine[i, j, k - 1]
        )
        r_coarse[i // 2, j // 2, k // 2] += res * 0.5


@ti.kernel
def prolongate(z_fine: Grid, z_coarse: Grid):
    for I in ti.grouped(z_fine):
        z_fine[I] = z_coarse[I // 2]


@ti.kernel
def smooth(r: Grid, z: Grid, phase: ti.i32):
    n = r.shape[0]
    for i, j, k in ti.ndrange((1, n - 1), (1, n - 1), (1, n - 1)):
        if (i + j + k) & 1 == phase:
            z[i, j, k] = (
                r[i, j, k]
                + z[i + 1, j, k]
                + z[i - 1, j, k]
                + z[i, j + 1, k]
                + z[i, j - 1, k]
                + z[i, j, k + 1]
                + z[i, j, k - 1]
            ) / 6.0


def kernels() -> ModuleType:
    return sys.modules[__name__]


def _grids(g: gl.Graph, prefix: str, first_role: str) -> list[gl.Arg]:
    """One grid per level; the coarse ones are scratch, zeroed before each use."""
    roles = [first_role] + ["temp"] * (LEVELS - 1)
    return [
        g.ndarray(f"{prefix}{level}", ti.f32, ndim=3, shape=(f"n{level}",) * 3, role=role)
        for level, role in enumerate(roles)
    ]


def _preconditioner(g: gl.Graph, m: ModuleType, r: list[gl.Arg], z: list[gl.Arg]) -> gl.SequenceBuilder:
    even, odd = g.scalar("even", ti.i32, role="input"), g.scalar("odd", ti.i32, role="input")
    pre = g.define("precondition")
    pre.dispatch(m.zero, z[0], name="zero_z0")
    for level in range(LEVELS - 1):
        with pre.sequence(f"down{level}", repeat=PRE_AND_POST_SMOOTHING << level) as s:
            s.dispatch(m.smooth, r[level], z[level], even, name="smooth_even")
            s.dispatch(m.smooth, r[level], z[level], odd, name="smooth_odd")
        pre.dispatch(m.zero, z[level + 1], name=f"zero_z{level + 1}")
        pre.dispatch(m.zero, r[level + 1], name=f"zero_r{level + 1}")
        pre.dispatch(m.restrict, r[level], z[level], r[level + 1], name=f"restrict{level}")
    with pre.sequence("bottom", repeat=BOTTOM_SMOOTHING) as s:
        s.dispatch(m.smooth, r[-1], z[-1], even, name="smooth_even")
        s.dispatch(m.smooth, r[-1], z[-1], odd, name="smooth_odd")
    for level in reversed(range(LEVELS - 1)):
        pre.dispatch(m.prolongate, z[level], z[level + 1], name=f"prolongate{level}")
        with pre.sequence(f"up{level}", repeat=PRE_AND_POST_SMOOTHING << level) as s:
            s.dispatch(m.smooth, r[level], z[level], odd, name="smooth_odd")
            s.dispatch(m.smooth, r[level], z[level], even, name="smooth_even")
    return pre


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("mgpcg")
    r = _grids(g, "r", "state")  # r0's border is never written: it keeps the initial zeros
    z = _grids(g, "z", "temp")
    x, p, Ap = (g.ndarray(name, ti.f32, ndim=3, shape=("n0",) * 3) for name in ("x", "p", "Ap"))
    total = g.ndarray("total", ti.f32, ndim=0, role="temp")
    alpha = g.ndarray("alpha", ti.f32, ndim=0, role="temp")
    beta = g.ndarray("beta", ti.f32, ndim=0)  # the first update_p reads the example's initial 0
    old_zTr = g.ndarray("old_zTr", ti.f32, ndim=0, role="temp")
    initial_rTr = g.ndarray("initial_rTr", ti.f32, ndim=0, role="temp")
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    pre = _preconditioner(g, m, r, z)

    g.dispatch(m.init, r[0], z[0], Ap, p, x)
    g.dispatch(m.clear, total)
    g.dispatch(m.reduce, r[0], r[0], total, name="reduce_rr")
    g.dispatch(m.keep, total, initial_rTr, name="keep_initial_rTr")
    g.append(pre)
    g.dispatch(m.update_p, p, z[0], beta)
    g.dispatch(m.clear, total, name="clear_zr")
    g.dispatch(m.reduce, z[0], r[0], total, name="reduce_zr")
    g.dispatch(m.keep, total, old_zTr, name="keep_old_zTr")

    body = g.define("iteration")
    body.dispatch(m.compute_Ap, p, Ap)
    body.dispatch(m.clear, total, name="clear_pAp")
    body.dispatch(m.reduce, p, Ap, total, name="reduce_pAp")
    body.dispatch(m.compute_alpha, total, old_zTr, alpha)
    body.dispatch(m.update_x, x, p, alpha)
    body.dispatch(m.update_r, r[0], Ap, alpha)
    body.dispatch(m.clear, total, name="clear_rr")
    body.dispatch(m.reduce, r[0], r[0], total, name="reduce_rr")
    body.dispatch(m.residual_flag, total, initial_rTr, flag)
    body.append(pre)
    body.dispatch(m.clear, total, name="clear_zr")
    body.dispatch(m.reduce, z[0], r[0], total, name="reduce_zr")
    body.dispatch(m.compute_beta, total, old_zTr, beta)
    body.dispatch(m.update_p, p, z[0], beta)
    g.loop(body, while_=flag, max_iter=MAX_ITER, name="cg")
    return [g]


def _precondition_by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    r = [v[f"r{level}"] for level in range(LEVELS)]
    z = [v[f"z{level}"] for level in range(LEVELS)]
    m.zero(z[0])
    for level in range(LEVELS - 1):
        for _ in range(PRE_AND_POST_SMOOTHING << level):
            m.smooth(r[level], z[level], v["even"])
            m.smooth(r[level], z[level], v["odd"])
        m.zero(z[level + 1])
        m.zero(r[level + 1])
        m.restrict(r[level], z[level], r[level + 1])
    for _ in range(BOTTOM_SMOOTHING):
        m.smooth(r[-1], z[-1], v["even"])
        m.smooth(r[-1], z[-1], v["odd"])
    for level in reversed(range(LEVELS - 1)):
        m.prolongate(z[level], z[level + 1])
        for _ in range(PRE_AND_POST_SMOOTHING << level):
            m.smooth(r[level], z[level], v["odd"])
            m.smooth(r[level], z[level], v["even"])


def by_hand(m: ModuleType, v: dict[str, Any]) -> int:
    """One solve, kernel by kernel; returns the number of CG iterations it took."""
    m.init(v["r0"], v["z0"], v["Ap"], v["p"], v["x"])
    m.clear(v["total"])
    m.reduce(v["r0"], v["r0"], v["total"])
    m.keep(v["total"], v["initial_rTr"])
    _precondition_by_hand(m, v)
    m.update_p(v["p"], v["z0"], v["beta"])
    m.clear(v["total"])
    m.reduce(v["z0"], v["r0"], v["total"])
    m.keep(v["total"], v["old_zTr"])
    for iteration in range(1, MAX_ITER + 1):
        m.compute_Ap(v["p"], v["Ap"])
        m.clear(v["total"])
        m.reduce(v["p"], v["Ap"], v["total"])
        m.compute_alpha(v["total"], v["old_zTr"], v["alpha"])
        m.update_x(v["x"], v["p"], v["alpha"])
        m.update_r(v["r0"], v["Ap"], v["alpha"])
        m.clear(v["total"])
        m.reduce(v["r0"], v["r0"], v["total"])
        m.residual_flag(v["total"], v["initial_rTr"], v["flag"])
        _precondition_by_hand(m, v)
        m.clear(v["total"])
        m.reduce(v["z0"], v["r0"], v["total"])
        m.compute_beta(v["total"], v["old_zTr"], v["beta"])
        m.update_p(v["p"], v["z0"], v["beta"])
        if v["flag"].to_numpy()[0] == 0:
            return iteration
    return MAX_ITER


def values(m: ModuleType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for level in range(LEVELS):
        size = N_TOT >> level
        out[f"r{level}"] = np.zeros((size,) * 3, np.float32)
        out[f"z{level}"] = np.zeros((size,) * 3, np.float32)
    for name in ("x", "p", "Ap"):
        out[name] = np.zeros((N_TOT,) * 3, np.float32)
    for name in ("total", "alpha", "beta", "old_zTr", "initial_rTr"):
        out[name] = np.zeros((), np.float32)
    out["flag"] = np.ones(1, np.int32)
    out.update(even=0, odd=1)
    return out
