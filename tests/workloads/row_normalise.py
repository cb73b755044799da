"""Row normalisation with an early exit: a ``break`` in an inner loop, then a write at the outer index.

Not a port: written for graphlab (issue 19) after the pattern that hid every check of the outer
loop body. A row's sum stops at its first negative entry (``break`` in the inner loop); ``lam[i]``
is written after that inner loop and read back at the same index in the kernel's next top-level
loop. ``lam`` is a temp: written before it is read, and used.

What it exercises: a ``break`` that ends only the inner loop, so ``lam[i]`` stays a certain access
(``lam.shape[0] >= a.shape[0]``, checked by ``run()``), and ``lam``'s first access stays a proven
write (no false GL009 "may be read before written", no false GL010 "never read"); a second kernel
reads the normalised rows back into the state, a sequence repeats both.
"""

import sys
from types import ModuleType
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl

REPEAT = 3
FRAMES = 2
SHAPE = (24, 10)

Matrix = ti.types.ndarray(dtype=ti.f32, ndim=2)
Vector = ti.types.ndarray(dtype=ti.f32, ndim=1)


@ti.kernel
def normalise_rows(a: Matrix, lam: Vector, out: Matrix):
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            if a[i, j] < 0.0:
                break
            s += a[i, j]
        lam[i] = s
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] / (lam[i] + 1.0)


@ti.kernel
def relax(a: Matrix, out: Matrix):
    for i, j in a:
        a[i, j] = 0.5 * (a[i, j] + out[i, j]) - 0.05


def kernels() -> ModuleType:
    return sys.modules[__name__]


def graphs(m: ModuleType) -> list[gl.Graph]:
    g = gl.Graph("rows")
    a = g.ndarray("a", ti.f32, ndim=2, shape=("n", "m"))
    lam = g.ndarray("lam", ti.f32, ndim=1, shape=("n",), role="temp")
    out = g.ndarray("out", ti.f32, ndim=2, shape=("n", "m"), role="output")
    with g.sequence("sweep", repeat=REPEAT) as s:
        s.dispatch(m.normalise_rows, a, lam, out)
        s.dispatch(m.relax, a, out)
    return [g]


def by_hand(m: ModuleType, v: dict[str, Any]) -> None:
    for _ in range(REPEAT):
        m.normalise_rows(v["a"], v["lam"], v["out"])
        m.relax(v["a"], v["out"])


def values(m: ModuleType) -> dict[str, Any]:
    rng = np.random.default_rng(23)
    return {
        "a": (rng.random(SHAPE) * 1.2 - 0.2).astype(np.float32),
        "lam": np.zeros(SHAPE[0], np.float32),
        "out": np.zeros(SHAPE, np.float32),
    }
