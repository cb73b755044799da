"""Laplace smoothing: an ndarray port of Taichi's ``examples/algorithm/laplace.py``, iterated.

What it exercises: temps the module allocates itself, the example's ``y`` (a 2-D temp sized by the
dims of ``x``) and ``total``, a 0-d temp declared with no ``shape=``, reduced with ``+=`` from a
struct-for and read back by the next dispatch; a scalar ``rate``; a sequence repeated per frame.

Where it differs from the example:
- the fields ``x`` and ``y`` are 2-D f32 ndarray parameters; the grid size comes from their shape
  (24x24 instead of 16x16), and ``y`` is a temp (the example prints it; here only ``x`` is kept);
- the example runs ``laplace`` once and prints ``y``; here two kernels of our own follow it, so the
  Laplacian is used: ``energy`` sums ``y**2`` into the 0-d temp ``total`` and ``relax`` moves ``x``
  against ``y``, scaled by ``rate / (1 + total)``; the three run ``STEPS`` times per frame;
- the example's start (``x[i, i + 1] = 1`` for ten ``i``) is kept, plus a seeded random bump so
  that every point moves;
- the printing is removed.
"""

import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

N = 24
STEPS = 3
FRAMES = 2

Grid = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.kernel
def laplace(x: Grid, y: Grid):
    n = x.shape[0]
    for i, j in x:
        if (i + j) % 3 == 0 and 1 <= i < n - 1 and 1 <= j < n - 1:
            y[i, j] = 4.0 * x[i, j] - x[i - 1, j] - x[i + 1, j] - x[i, j - 1] - x[i, j + 1]
        else:
            y[i, j] = 0.0


@ti.kernel
def energy(y: Grid, total: ti.types.ndarray(dtype=ti.f32, ndim=0)):
    total[None] = 0.0
    for i, j in y:
        total[None] += y[i, j] * y[i, j]


@ti.kernel
def relax(x: Grid, y: Grid, total: ti.types.ndarray(dtype=ti.f32, ndim=0), rate: ti.f32):
    scale = rate / (1.0 + total[None])
    for i, j in x:
        x[i, j] -= scale * y[i, j]


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("laplace")
    x = g.ndarray("x", ti.f32, ndim=2, shape=("n", "n"))
    y = g.ndarray("y", ti.f32, ndim=2, shape=("n", "n"), role="temp")
    total = g.ndarray("total", ti.f32, ndim=0, role="temp")  # no shape=(): a 0-d temp holds one element
    rate = g.scalar("rate", ti.f32)
    with g.sequence("smooth", repeat=STEPS) as s:
        s.dispatch(m.laplace, x, y)
        s.dispatch(m.energy, y, total)
        s.dispatch(m.relax, x, y, total, rate)
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    for _ in range(STEPS):
        m.laplace(v["x"], v["y"])
        m.energy(v["y"], v["total"])
        m.relax(v["x"], v["y"], v["total"], v["rate"])


def values(m: ModuleType) -> dict[str, Any]:
    x = np.random.default_rng(5).random((N, N)).astype(np.float32) * 0.1
    for i in range(10):
        x[i, i + 1] = 1.0
    return {"x": x, "y": np.zeros((N, N), np.float32), "total": np.zeros((), np.float32), "rate": 0.2}
