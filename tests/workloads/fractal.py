"""Julia set: an ndarray port of Taichi's ``examples/simulation/fractal.py``.

What it exercises: a scalar time arg, a data-dependent ``while`` loop inside a kernel, and an output
image written in full by a struct-for over it.

Where it differs from the example:
- the field ``pixels`` is a 2-D f32 ndarray parameter; its size comes from its shape (64x32
  instead of 640x320);
- a frame paints at the time given by the scalar arg ``t`` (the example advances it by 0.03 per
  frame in Python);
- the GUI is removed.
"""

import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

N = 32
FRAMES = 1


@ti.func
def complex_sqr(z):
    return ti.Vector([z[0] ** 2 - z[1] ** 2, z[1] * z[0] * 2])


@ti.kernel
def paint(t: ti.f32, pixels: ti.types.ndarray(dtype=ti.f32, ndim=2)):
    n = pixels.shape[1]
    for i, j in pixels:
        c = ti.Vector([-0.8, ti.cos(t) * 0.2])
        z = ti.Vector([i / n - 1, j / n - 0.5]) * 2
        iterations = 0
        while z.norm() < 20 and iterations < 50:
            z = complex_sqr(z) + c
            iterations += 1
        pixels[i, j] = 1 - iterations * 0.02


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("julia")
    g.dispatch(m.paint, g.scalar("t", ti.f32), g.ndarray("pixels", ti.f32, ndim=2, shape=("w", "h"), role="output"))
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    m.paint(v["t"], v["pixels"])


def values(m: ModuleType) -> dict[str, Any]:
    return {"t": 0.9, "pixels": np.zeros((2 * N, N), np.float32)}
