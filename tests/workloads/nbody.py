"""Gravitational N-body: an ndarray port of Taichi's ``examples/simulation/nbody.py``.

What it exercises: vec2 ndarrays, an accumulator (``force``) cleared and then summed with ``+=`` in
one kernel and read by the next, an all-pairs inner loop, and a substep sequence repeated ten times.

Where it differs from the example:
- the fields ``pos``, ``vel`` and ``force`` are 1-D vec2 ndarray parameters; the body count comes
  from their shape;
- 64 bodies instead of 3000;
- the ``initialize`` kernel (random positions on a ring, ``ti.random``) is a seeded numpy draw of
  the same distribution; the ``center`` field is the constant it held;
- the GUI and the ``paused`` field are removed.
"""

import math
import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

G = 1.0
MASS = 1.0
N = 64
GALAXY_SIZE = 0.4
INIT_VEL = 120.0
H = 1e-4
SUBSTEPS = 10
FRAMES = 2

Bodies = ti.types.ndarray(dtype=ti.math.vec2, ndim=1)


@ti.kernel
def compute_force(pos: Bodies, force: Bodies):
    for i in force:
        force[i] = [0.0, 0.0]
    for i in pos:
        p = pos[i]
        for j in range(pos.shape[0]):
            if i != j:
                diff = p - pos[j]
                r = diff.norm(1e-5)
                f = -G * MASS * MASS * (1.0 / r) ** 3 * diff
                force[i] += f


@ti.kernel
def update(pos: Bodies, vel: Bodies, force: Bodies):
    dt = H / SUBSTEPS
    for i in pos:
        vel[i] += dt * force[i] / MASS
        pos[i] += dt * vel[i]


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("nbody")
    pos = g.ndarray("pos", ti.math.vec2, ndim=1, shape=("n",))
    vel = g.ndarray("vel", ti.math.vec2, ndim=1, shape=("n",))
    force = g.ndarray("force", ti.math.vec2, ndim=1, shape=("n",), role="temp")
    with g.sequence("substep", repeat=SUBSTEPS) as s:
        s.dispatch(m.compute_force, pos, force)
        s.dispatch(m.update, pos, vel, force)
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    for _ in range(SUBSTEPS):
        m.compute_force(v["pos"], v["force"])
        m.update(v["pos"], v["vel"], v["force"])


def values(m: ModuleType) -> dict[str, Any]:
    rng = np.random.default_rng(5)
    theta = rng.random(N) * 2 * math.pi
    r = (np.sqrt(rng.random(N)) * 0.6 + 0.4) * GALAXY_SIZE
    offset = r[:, None] * np.stack([np.cos(theta), np.sin(theta)], axis=1)
    return {
        "pos": (0.5 + offset).astype(np.float32),
        "vel": (np.stack([-offset[:, 1], offset[:, 0]], axis=1) * INIT_VEL).astype(np.float32),
        "force": np.zeros((N, 2), np.float32),
    }
