"""The small graph most widget tests edit: ``fill`` into ``x``, then ``axpy`` three times in a sequence.

Its kernels live here, not in a test module, so every widget test imports the same kernel objects.
"""

import taichi as ti

import graphlab as gl


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), value: ti.f32):
    for i in x:
        x[i] = value


@ti.kernel
def axpy(a: ti.f32, x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] += a * x[i]


def demo_graph() -> gl.Graph:
    """``init`` fills ``x`` with ``a``; the sequence ``step`` adds ``a * x`` to ``y`` three times."""
    g = gl.Graph("demo")
    x = g.ndarray("x", ti.f32, ndim=1)
    g.ndarray("y", ti.f32, ndim=1)
    a = g.scalar("a", ti.f32)
    g.dispatch(fill, x, a, name="init")
    with g.sequence("step", repeat=3) as s:
        s.dispatch(axpy, a, x, "y")
    return g
