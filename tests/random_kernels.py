"""Kernels for tests/kernelfacts/test_effects.py: random draws through ti.funcs, atomics, races and red-black."""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import taichi as ti

Line = ti.types.ndarray(dtype=ti.f32, ndim=1)
Plane = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.func
def noise():
    return ti.randn()


@ti.func
def shaken(v):
    return v + noise()


@ti.kernel
def shake(x: Line):
    for i in x:
        x[i] = shaken(x[i])


@ti.kernel
def double(x: Line):
    for i in x:
        x[i] = 2.0 * x[i]


@ti.kernel
def histogram(x: Line, bins: Line):
    for i in x:
        bins[ti.cast(x[i], ti.i32) % bins.shape[0]] += 1.0


@ti.kernel
def accumulate(x: Line):
    for i in x:
        x[i] += 1.0


@ti.kernel
def wall(rho: Plane):
    for i, j in rho:
        inb, jnb = i, j
        if i == 0:
            inb = 1
        rho[i, j] = rho[inb, jnb]


@ti.kernel
def serial_wall(rho: Plane):
    ti.loop_config(serialize=True)
    for i, j in rho:
        rho[i, j] = rho[0, j]


@ti.kernel
def red_black(z: Plane, phase: ti.i32):
    n = z.shape[0]
    for i, j in ti.ndrange((1, n - 1), (1, n - 1)):
        if (i + j) & 1 == phase:
            z[i, j] = (z[i + 1, j] + z[i - 1, j] + z[i, j + 1] + z[i, j - 1]) / 4.0


@ti.func
def store(field: ti.template(), k, value):
    field[k] = value


@ti.func
def load(field: ti.template(), k):
    return field[k]


@ti.func
def shift_from(field: ti.template(), i):
    store(field, i, load(field, i - 1))  # two levels down: the caller's a[i] and a[i - 1]


@ti.kernel
def smear_through_funcs(a: Line):
    for i in a:
        if i > 0:
            shift_from(a, i)


@ti.kernel
def scale_through_funcs(a: Line):
    for i in a:
        store(a, i, load(a, i) * 2.0)  # one element per thread: no race


@ti.kernel
def ping_pong(grid: ti.types.ndarray(dtype=ti.f32, ndim=3), src: ti.i32, dst: ti.i32):
    for i, j in ti.ndrange(grid.shape[1], grid.shape[2]):
        if i > 0:
            grid[dst, i, j] = grid[src, i - 1, j]  # layers the whole loop keeps: not a race unless src == dst


@ti.kernel
def ping_pong_moving(grid: ti.types.ndarray(dtype=ti.f32, ndim=3)):
    for i, j in ti.ndrange(grid.shape[1], grid.shape[2]):
        src = i % 2
        if i > 0:
            grid[0, i, j] = grid[src, i - 1, j]  # a layer that changes with i: it may be the one written


Layers = ti.types.ndarray(ti.f32, ndim=3)


@ti.kernel
def fixed_layers(grid: Layers):
    for i, j in ti.ndrange(grid.shape[1], grid.shape[2]):
        grid[1, i, j] = grid[0, i, ti.max(j - 1, 0)]


@ti.kernel
def same_layer(grid: Layers, k: ti.i32):
    for i, j in ti.ndrange(grid.shape[1], grid.shape[2]):
        grid[k, i, j] = grid[k, ti.max(i - 1, 0), j]
