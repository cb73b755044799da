"""Heat diffusion on a grid sized by a module constant: the loop bound is ``GRID_SIZE``, not a shape.

Not a port: written for graphlab (issue 19) in the style of Taichi's examples that size their
fields by a module constant (``n = 320`` in ``fractal.py``, ``N = 64`` in ``game_of_life.py``),
here with ndarrays whose size Taichi never checks against that constant.

What it exercises: ``for i, j in ti.ndrange(GRID_SIZE, GRID_SIZE)`` with a module constant bound,
a 3-D ndarray indexed ``grid[src, i, j]`` with scalar layer parameters (two layers ping-ponged by
swapping the scalars), a literal-bound read ``grid[0, i, j]``, and stencil reads under ``if``
(checked only by ``bounds="check"``). The kernels' source makes ``grid.shape[1] >= 16`` and
``grid.shape[2] >= 16`` certain, so ``run()`` refuses a smaller grid before anything runs.
"""

import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

GRID_SIZE = 16
STEPS = 3
FRAMES = 2

Layers = ti.types.ndarray(dtype=ti.f32, ndim=3)
Image = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.kernel
def diffuse(grid: Layers, src: ti.i32, dst: ti.i32, rate: ti.f32):
    for i, j in ti.ndrange(GRID_SIZE, GRID_SIZE):
        centre = grid[src, i, j]
        total = 0.0
        count = 0.0
        if i > 0:
            total += grid[src, i - 1, j]
            count += 1.0
        if i < GRID_SIZE - 1:
            total += grid[src, i + 1, j]
            count += 1.0
        if j > 0:
            total += grid[src, i, j - 1]
            count += 1.0
        if j < GRID_SIZE - 1:
            total += grid[src, i, j + 1]
            count += 1.0
        grid[dst, i, j] = centre + rate * (total / count - centre)


@ti.kernel
def show(grid: Layers, image: Image):
    for i, j in ti.ndrange(GRID_SIZE, GRID_SIZE):
        image[i, j] = ti.min(grid[0, i, j], 1.0)


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("diffusion")
    grid = g.ndarray("grid", ti.f32, ndim=3, shape=("layers", "n", "n"))
    image = g.ndarray("image", ti.f32, ndim=2, shape=("n", "n"), role="output")
    zero, one, rate = g.scalar("zero", ti.i32), g.scalar("one", ti.i32), g.scalar("rate", ti.f32)
    with g.sequence("step", repeat=STEPS) as s:
        s.dispatch(m.diffuse, grid, zero, one, rate, name="forth")
        s.dispatch(m.diffuse, grid, one, zero, rate, name="back")
    g.dispatch(m.show, grid, image)
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    for _ in range(STEPS):
        m.diffuse(v["grid"], v["zero"], v["one"], v["rate"])
        m.diffuse(v["grid"], v["one"], v["zero"], v["rate"])
    m.show(v["grid"], v["image"])


def values(m: ModuleType) -> dict[str, Any]:
    rng = np.random.default_rng(19)
    return {
        "grid": rng.random((2, GRID_SIZE, GRID_SIZE)).astype(np.float32),
        "image": np.zeros((GRID_SIZE, GRID_SIZE), np.float32),
        "zero": 0,
        "one": 1,
        "rate": 0.25,
    }
