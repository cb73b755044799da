"""Explicit mass-spring system: an ndarray port of Taichi's ``examples/simulation/mass_spring_game.py``.

What it exercises: f32 and i32 scalar args, a 0-d i32 ndarray (the particle count) read by every
kernel, an (n, n) matrix of rest lengths indexed by particle ids, a force buffer filled and then
used within one kernel, and a frame of ``attract`` followed by a substep sequence repeated ten times.

Where it differs from the example:
- the fields become ndarray parameters: ``x``, ``v``, ``f`` (vec2), ``fixed`` (i32), ``rest_length``
  (2-D f32) and ``num_particles`` (0-d i32); the 0-d fields ``spring_Y``, ``drag_damping`` and
  ``dashpot_damping`` become f32 scalar args;
- 64 particle slots instead of 1024;
- the particles are added by ``new_particle`` called from Python at fixed positions (a 4x4 lattice,
  two of them fixed) instead of by mouse clicks; the cursor of ``attract`` is a pair of scalar args;
- the GUI, key bindings and ``paused`` are removed.
"""

import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

MAX_PARTICLES = 64
PARTICLE_MASS = 1.0
DT = 1e-3
SUBSTEPS = 10
CONNECTION_RADIUS = 0.15
FRAMES = 2

Vecs = ti.types.ndarray(dtype=ti.math.vec2, ndim=1)
Flags = ti.types.ndarray(dtype=ti.i32, ndim=1)
Lengths = ti.types.ndarray(dtype=ti.f32, ndim=2)
Count = ti.types.ndarray(dtype=ti.i32, ndim=0)


@ti.kernel
def substep(
    x: Vecs,
    v: Vecs,
    f: Vecs,
    fixed: Flags,
    rest_length: Lengths,
    num_particles: Count,
    spring_Y: ti.f32,
    drag_damping: ti.f32,
    dashpot_damping: ti.f32,
):
    n = num_particles[None]
    for i in range(n):
        f[i] = ti.Vector([0, -9.8]) * PARTICLE_MASS
        for j in range(n):
            if rest_length[i, j] != 0:
                x_ij = x[i] - x[j]
                d = x_ij.normalized()
                f[i] += -spring_Y * (x_ij.norm() / rest_length[i, j] - 1) * d
                v_rel = (v[i] - v[j]).dot(d)
                f[i] += -dashpot_damping * v_rel * d
    for i in range(n):
        if not fixed[i]:
            v[i] += DT * f[i] / PARTICLE_MASS
            v[i] *= ti.exp(-DT * drag_damping)
            x[i] += v[i] * DT
        else:
            v[i] = ti.Vector([0, 0])
        for d in ti.static(range(2)):
            if x[i][d] < 0:
                x[i][d] = 0
                v[i][d] = 0
            if x[i][d] > 1:
                x[i][d] = 1
                v[i][d] = 0


@ti.kernel
def new_particle(
    x: Vecs,
    v: Vecs,
    fixed: Flags,
    rest_length: Lengths,
    num_particles: Count,
    pos_x: ti.f32,
    pos_y: ti.f32,
    fixed_: ti.i32,
):
    new_id = num_particles[None]
    x[new_id] = [pos_x, pos_y]
    v[new_id] = [0, 0]
    fixed[new_id] = fixed_
    num_particles[None] += 1
    for i in range(new_id):
        dist = (x[new_id] - x[i]).norm()
        if dist < CONNECTION_RADIUS:
            rest_length[i, new_id] = 0.1
            rest_length[new_id, i] = 0.1


@ti.kernel
def attract(x: Vecs, v: Vecs, num_particles: Count, pos_x: ti.f32, pos_y: ti.f32):
    for i in range(num_particles[None]):
        p = ti.Vector([pos_x, pos_y])
        v[i] += -DT * SUBSTEPS * (x[i] - p) * 100


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("springs")
    x = g.ndarray("x", ti.math.vec2, ndim=1, shape=("n",))
    v = g.ndarray("v", ti.math.vec2, ndim=1, shape=("n",))
    f = g.ndarray("f", ti.math.vec2, ndim=1, shape=("n",), role="temp")
    fixed = g.ndarray("fixed", ti.i32, ndim=1, shape=("n",), role="input")
    rest = g.ndarray("rest_length", ti.f32, ndim=2, shape=("n", "n"), role="input")
    count = g.ndarray("num_particles", ti.i32, ndim=0, role="input")
    g.dispatch(m.attract, x, v, count, g.scalar("cursor_x", ti.f32), g.scalar("cursor_y", ti.f32))
    with g.sequence("step", repeat=SUBSTEPS) as s:
        s.dispatch(
            m.substep,
            x,
            v,
            f,
            fixed,
            rest,
            count,
            g.scalar("spring_Y", ti.f32),
            g.scalar("drag_damping", ti.f32),
            g.scalar("dashpot_damping", ti.f32),
        )
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    m.attract(v["x"], v["v"], v["num_particles"], v["cursor_x"], v["cursor_y"])
    for _ in range(SUBSTEPS):
        m.substep(
            v["x"],
            v["v"],
            v["f"],
            v["fixed"],
            v["rest_length"],
            v["num_particles"],
            v["spring_Y"],
            v["drag_damping"],
            v["dashpot_damping"],
        )


def values(m: ModuleType) -> dict[str, Any]:
    """The state after sixteen clicks, made by the example's own ``new_particle`` kernel."""
    x = ti.ndarray(ti.math.vec2, shape=MAX_PARTICLES)
    v = ti.ndarray(ti.math.vec2, shape=MAX_PARTICLES)
    fixed = ti.ndarray(ti.i32, shape=MAX_PARTICLES)
    rest = ti.ndarray(ti.f32, shape=(MAX_PARTICLES, MAX_PARTICLES))
    count = ti.ndarray(ti.i32, shape=())
    for k in range(16):
        pinned = int(k in (12, 15))  # the top row's two ends hang the lattice
        m.new_particle(x, v, fixed, rest, count, 0.3 + 0.1 * (k % 4), 0.3 + 0.1 * (k // 4), pinned)
    state = {"x": x, "v": v, "fixed": fixed, "rest_length": rest, "num_particles": count}
    out: dict[str, Any] = {name: arr.to_numpy() for name, arr in state.items()}
    out["f"] = np.zeros((MAX_PARTICLES, 2), np.float32)
    out.update(cursor_x=0.6, cursor_y=0.8, spring_Y=1000.0, drag_damping=1.0, dashpot_damping=100.0)
    return out
