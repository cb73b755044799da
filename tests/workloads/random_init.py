"""Particles seeded with ``ti.random``, splatted onto a grid whose border copies its neighbours.

What it exercises: the three kernel facts that make runs differ (:mod:`graphlab.kernelfacts.effects`):
- ``init_particles`` draws random positions and velocities, in the kernel and in a ``ti.func``
  (``jitter``), as Taichi's particle examples (nbody, mpm) initialise;
- ``splat`` adds float mass into grid cells other particles add into too (atomic adds);
- ``boundary`` copies an interior cell onto each border cell inside its parallel loop
  (``grid[i, j] = grid[inb, jnb]``, the shape of the vortex-street example's boundary kernel): a
  write at one index and a read at another, which ``validate()`` reports as a race (GL028).

Not a port of one example: a small composite of the patterns above, 256 particles on a 16x16 grid.
A run draws other random numbers each time; with ``ti.init(random_seed=...)`` on one CPU thread a
fresh runtime repeats them, which is how the corpus checks compare it bit for bit.
"""

import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

N = 256
G = 16
DT = 0.01
STEPS = 3
FRAMES = 2
#: Dispatches that draw random numbers: the corpus checks compare them on fresh runtimes.
DRAWS_RANDOM = ("init_particles",)

Points = ti.types.ndarray(dtype=ti.math.vec2, ndim=1)
Grid = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.func
def jitter():
    return ti.random() - 0.5


@ti.kernel
def init_particles(pos: Points, vel: Points):
    for i in pos:
        pos[i] = [ti.random(), ti.random()]
        vel[i] = [jitter(), jitter()]


@ti.kernel
def clear(grid: Grid):
    for i, j in grid:
        grid[i, j] = 0.0


@ti.kernel
def advect(pos: Points, vel: Points):
    for i in pos:
        pos[i] = ti.math.clamp(pos[i] + DT * vel[i], 0.0, 0.999)


@ti.kernel
def splat(pos: Points, grid: Grid):
    for p in pos:
        cell = ti.cast(pos[p] * grid.shape[0], ti.i32)
        grid[cell[0], cell[1]] += 1.0


@ti.kernel
def boundary(grid: Grid):
    for i, j in grid:
        n = grid.shape[0]
        if i == 0 or j == 0 or i == n - 1 or j == n - 1:
            inb = ti.min(ti.max(i, 1), n - 2)
            jnb = ti.min(ti.max(j, 1), n - 2)
            grid[i, j] = grid[inb, jnb]


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("particles")
    pos = g.ndarray("pos", ti.math.vec2, ndim=1, shape=("n",), role="output")
    vel = g.ndarray("vel", ti.math.vec2, ndim=1, shape=("n",), role="output")
    grid = g.ndarray("grid", ti.f32, ndim=2, shape=("g", "g"), role="output")
    g.dispatch(m.init_particles, pos, vel)
    with g.sequence("step", repeat=STEPS) as s:
        s.dispatch(m.advect, pos, vel)
    g.dispatch(m.clear, grid)
    g.dispatch(m.splat, pos, grid)
    g.dispatch(m.boundary, grid)
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    m.init_particles(v["pos"], v["vel"])
    for _ in range(STEPS):
        m.advect(v["pos"], v["vel"])
    m.clear(v["grid"])
    m.splat(v["pos"], v["grid"])
    m.boundary(v["grid"])


def values(m: ModuleType) -> dict[str, Any]:
    return {
        "pos": np.zeros((N, 2), np.float32),
        "vel": np.zeros((N, 2), np.float32),
        "grid": np.zeros((G, G), np.float32),
    }
