"""Kernels and graphs with temps for the tests of one sizing rule and of comparing with temps.

``issue_graph`` is the graph of issue 19 (``t = 2x; y = t + 1``, ``t`` a temp). ``temps_graph``
has what every runner must size alike: a temp sized by the inputs' dim ``n``, a temp ``grid`` sized
by a dim ``m`` that only temps use, a 0-d temp ``total`` declared with no ``shape=()``, a scalar, a
0-d state arg ``it`` and a do-while loop. The CLI loads this file with ``--kernels``.
"""

import numpy as np
import taichi as ti

import graphlab as gl

F1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
I1 = ti.types.ndarray(dtype=ti.i32, ndim=1)
F0 = ti.types.ndarray(dtype=ti.f32, ndim=0)
N, M = 8, 4


@ti.kernel
def twice(a: F1, b: F1):
    for i in a:
        b[i] = 2.0 * a[i]


@ti.kernel
def thrice(a: F1, b: F1):
    for i in a:
        b[i] = 3.0 * a[i]


@ti.kernel
def plus1(a: F1, b: F1):
    for i in a:
        b[i] = a[i] + 1.0


@ti.kernel
def total_of(t: F1, total: F0):
    total[None] = 0.0
    for i in t:
        total[None] += t[i]


@ti.kernel
def ramp(c: ti.f32, grid: F1):
    for j in grid:
        grid[j] = c * j


@ti.kernel
def gather(t: F1, total: F0, grid: F1, y: F1):
    m = grid.shape[0]
    for i in y:
        y[i] += t[i] + 0.001 * total[None] + grid[i % m]


@ti.kernel
def tick(it: ti.types.ndarray(dtype=ti.i32, ndim=0), flag: I1):
    for _ in range(1):
        it[None] += 1
        flag[0] = 1 if it[None] < 3 else 0


def issue_graph(first=twice) -> gl.Graph:
    """The graph of issue 19: ``t = 2x`` (a temp), then ``y = t + 1``."""
    g = gl.Graph("tmp_demo")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    t = g.ndarray("t", ti.f32, ndim=1, shape="n", role="temp")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(first, x, t, name="double")
    g.dispatch(plus1, t, y)
    return g


def temps_graph() -> gl.Graph:
    """Temps sized by ``n``, by ``m`` (temps only) and 0-d, a scalar ``c`` and a loop run 3 times."""
    g = gl.Graph("temps")
    c = g.scalar("c", ti.f32)
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    t = g.ndarray("t", ti.f32, ndim=1, shape="n", role="temp")
    total = g.ndarray("total", ti.f32, ndim=0, role="temp")  # no shape=(): one element all the same
    grid = g.ndarray("grid", ti.f32, ndim=1, shape="m", role="temp")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n")
    it = g.ndarray("it", ti.i32, ndim=0)  # a 0-d state arg: compared at the end too
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.dispatch(twice, x, t)
    g.dispatch(total_of, t, total)
    g.dispatch(ramp, c, grid)
    body = g.define("body")
    body.dispatch(gather, t, total, grid, y)
    body.dispatch(tick, it, flag)
    g.loop(body, while_=flag, max_iter=5, name="solve")
    return g


def temps_values() -> dict:
    """Start values of ``temps_graph`` (no temps: the runner sizes them, ``m`` by name)."""
    return {
        "c": 0.5,
        "x": np.arange(N, dtype=np.float32),
        "y": np.zeros(N, np.float32),
        "it": np.zeros((), np.int32),
        "flag": np.zeros(1, np.int32),
    }


def temps_expected() -> np.ndarray:
    """``y`` after a run of ``temps_graph`` from :func:`temps_values` with ``m = M``, computed by hand."""
    x = np.arange(N, dtype=np.float32)
    t = 2 * x
    grid = 0.5 * np.arange(M, dtype=np.float32)
    once = t + np.float32(0.001) * t.sum(dtype=np.float32) + grid[np.arange(N) % M]
    return (once * 3).astype(np.float32)


def slot_graph() -> gl.Graph:
    """Two temps of one spec with lifetimes apart: run() and debug() give them one memory-plan slot."""
    g = gl.Graph("slots")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    t1 = g.ndarray("t1", ti.f32, ndim=1, shape="n", role="temp")
    t2 = g.ndarray("t2", ti.f32, ndim=1, shape="n", role="temp")
    y1 = g.ndarray("y1", ti.f32, ndim=1, shape="n", role="output")
    y2 = g.ndarray("y2", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(twice, x, t1)
    g.dispatch(plus1, t1, y1)
    g.dispatch(thrice, x, t2)
    g.dispatch(plus1, t2, y2)
    return g


@ti.kernel
def paint(tex: ti.types.rw_texture(num_dimensions=1, fmt=ti.Format.r32f, lod=0), t: F1):
    for i in t:
        tex.store(ti.Vector([i]), ti.Vector([t[i], 0.0, 0.0, 0.0]))


def painted_graph() -> gl.Graph:
    """A graph binding a texture, which compare refuses on every path."""
    g = gl.Graph("painted")
    g.dispatch(paint, g.rw_texture("tex", 1, ti.Format.r32f), g.ndarray("t", ti.f32, ndim=1, role="input"))
    return g
