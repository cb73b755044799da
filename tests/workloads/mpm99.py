"""MLS-MPM with fluid, jelly and snow: an ndarray port of Taichi's ``examples/simulation/mpm99.py``.

What it exercises: one kernel of four loops (clear the grid, scatter with atomic ``+=``, normalise,
gather), 2x2 matrix ndarrays (``C``, ``F``) with SVD, an i32 material id that branches per particle,
particles indexing the grid through computed coordinates, and a substep repeated twenty times.

Where it differs from the example:
- the fields become ndarray parameters of ``substep``: ``x``, ``v`` (vec2), ``C``, ``F`` (mat2),
  ``material`` (i32), ``Jp`` (f32) per particle and ``grid_v`` (vec2), ``grid_m`` (f32) per node;
- 768 particles on a 32x32 grid instead of 9000 on 128x128 (``quality`` is gone: the constants are
  the example's at quality 1 with the smaller grid);
- the random ``initialize`` kernel is a seeded numpy draw of the same three blocks;
- the GUI is removed; one frame is twenty substeps (the example's 2e-3 // dt).
"""

import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

N_PARTICLES, N_GRID = 768, 32
DX, INV_DX = 1 / N_GRID, float(N_GRID)
DT = 1e-4
P_VOL, P_RHO = (DX * 0.5) ** 2, 1
P_MASS = P_VOL * P_RHO
E, NU = 0.1e4, 0.2
MU_0, LAMBDA_0 = E / (2 * (1 + NU)), E * NU / ((1 + NU) * (1 - 2 * NU))
SUBSTEPS = 20
FRAMES = 2

Vecs = ti.types.ndarray(dtype=ti.math.vec2, ndim=1)
Mats = ti.types.ndarray(dtype=ti.math.mat2, ndim=1)


@ti.kernel
def substep(
    x: Vecs,
    v: Vecs,
    C: Mats,
    F: Mats,
    material: ti.types.ndarray(dtype=ti.i32, ndim=1),
    Jp: ti.types.ndarray(dtype=ti.f32, ndim=1),
    grid_v: ti.types.ndarray(dtype=ti.math.vec2, ndim=2),
    grid_m: ti.types.ndarray(dtype=ti.f32, ndim=2),
):
    for i, j in grid_m:
        grid_v[i, j] = [0, 0]
        grid_m[i, j] = 0
    for p in x:  # particle to grid
        base = (x[p] * INV_DX - 0.5).cast(int)
        fx = x[p] * INV_DX - base.cast(float)
        w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
        F[p] = (ti.Matrix.identity(float, 2) + DT * C[p]) @ F[p]
        h = ti.exp(10 * (1.0 - Jp[p]))  # snow hardens when compressed
        if material[p] == 1:  # jelly
            h = 0.3
        mu, la = MU_0 * h, LAMBDA_0 * h
        if material[p] == 0:  # liquid
            mu = 0.0
        U, sig, V = ti.svd(F[p])
        for d in ti.static(range(2)):
            sig[d, d] = ti.max(sig[d, d], 1e-6)
        J = 1.0
        for d in ti.static(range(2)):
            new_sig = sig[d, d]
            if material[p] == 2:  # snow: plasticity
                new_sig = ti.min(ti.max(sig[d, d], 1 - 2.5e-2), 1 + 4.5e-3)
            Jp[p] *= sig[d, d] / new_sig
            sig[d, d] = new_sig
            J *= new_sig
        if material[p] == 0:
            F[p] = ti.Matrix.identity(float, 2) * ti.sqrt(J)
        elif material[p] == 2:
            F[p] = U @ sig @ V.transpose()
        stress = 2 * mu * (F[p] - U @ V.transpose()) @ F[p].transpose() + ti.Matrix.identity(float, 2) * la * J * (
            J - 1
        )
        stress = (-DT * P_VOL * 4 * INV_DX * INV_DX) * stress
        affine = stress + P_MASS * C[p]
        for i, j in ti.static(ti.ndrange(3, 3)):
            offset = ti.Vector([i, j])
            dpos = (offset.cast(float) - fx) * DX
            weight = w[i][0] * w[j][1]
            grid_v[base + offset] += weight * (P_MASS * v[p] + affine @ dpos)
            grid_m[base + offset] += weight * P_MASS
    for i, j in grid_m:
        if grid_m[i, j] > 0:
            grid_v[i, j] = (1 / grid_m[i, j]) * grid_v[i, j]
            grid_v[i, j][1] -= DT * 50
            if i < 3 and grid_v[i, j][0] < 0:
                grid_v[i, j][0] = 0
            if i > N_GRID - 3 and grid_v[i, j][0] > 0:
                grid_v[i, j][0] = 0
            if j < 3 and grid_v[i, j][1] < 0:
                grid_v[i, j][1] = 0
            if j > N_GRID - 3 and grid_v[i, j][1] > 0:
                grid_v[i, j][1] = 0
    for p in x:  # grid to particle
        base = (x[p] * INV_DX - 0.5).cast(int)
        fx = x[p] * INV_DX - base.cast(float)
        w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
        new_v = ti.Vector.zero(float, 2)
        new_C = ti.Matrix.zero(float, 2, 2)
        for i, j in ti.static(ti.ndrange(3, 3)):
            dpos = ti.Vector([i, j]).cast(float) - fx
            g_v = grid_v[base + ti.Vector([i, j])]
            weight = w[i][0] * w[j][1]
            new_v += weight * g_v
            new_C += 4 * INV_DX * weight * g_v.outer_product(dpos)
        v[p], C[p] = new_v, new_C
        x[p] += DT * v[p]


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("mpm99")
    particle = ("n",)
    node = ("G", "G")
    with g.sequence("frame", repeat=SUBSTEPS) as s:
        s.dispatch(
            m.substep,
            g.ndarray("x", ti.math.vec2, ndim=1, shape=particle),
            g.ndarray("v", ti.math.vec2, ndim=1, shape=particle),
            g.ndarray("C", ti.math.mat2, ndim=1, shape=particle),
            g.ndarray("F", ti.math.mat2, ndim=1, shape=particle),
            g.ndarray("material", ti.i32, ndim=1, shape=particle, role="input"),
            g.ndarray("Jp", ti.f32, ndim=1, shape=particle),
            g.ndarray("grid_v", ti.math.vec2, ndim=2, shape=node, role="temp"),
            g.ndarray("grid_m", ti.f32, ndim=2, shape=node, role="temp"),
        )
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    for _ in range(SUBSTEPS):
        m.substep(v["x"], v["v"], v["C"], v["F"], v["material"], v["Jp"], v["grid_v"], v["grid_m"])


def values(m: ModuleType) -> dict[str, Any]:
    rng = np.random.default_rng(99)
    group = np.arange(N_PARTICLES) // (N_PARTICLES // 3)
    x = np.stack(
        [rng.random(N_PARTICLES) * 0.2 + 0.3 + 0.10 * group, rng.random(N_PARTICLES) * 0.2 + 0.05 + 0.32 * group],
        axis=1,
    )
    return {
        "x": x.astype(np.float32),
        "v": np.zeros((N_PARTICLES, 2), np.float32),
        "C": np.zeros((N_PARTICLES, 2, 2), np.float32),
        "F": np.tile(np.eye(2, dtype=np.float32), (N_PARTICLES, 1, 1)),
        "material": group.astype(np.int32),
        "Jp": np.ones(N_PARTICLES, np.float32),
        "grid_v": np.zeros((N_GRID, N_GRID, 2), np.float32),
        "grid_m": np.zeros((N_GRID, N_GRID), np.float32),
    }
