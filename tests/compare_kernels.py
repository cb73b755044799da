"""Kernels whose results really differ between Taichi's x64 and Vulkan (Mesa lavapipe) backends.

Measured on Taichi 1.7.4: ``ti.sin`` of arguments of a few hundred to tens of thousands differs in
the last bit between the two backends for about one argument in six. :func:`scramble` amplifies that
bit (``fract(sin(y) * 43758.5453)``) into differences of about 1e-3, which a tolerance of 1e-4 still
sees; :func:`wobble` keeps it at one ulp, which the same tolerance hides. :func:`count_up` turns it
into a loop iteration count: it stops after ``2 + (the low two bits of sin(c))`` iterations.
"""

import taichi as ti

import graphlab as gl

F1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
I1 = ti.types.ndarray(dtype=ti.i32, ndim=1)
#: An argument whose ``ti.sin`` differs in the last bit between x64 and Vulkan (measured).
SIN_SPLIT = 9.323565483093262


@ti.kernel
def scale(x: F1, y: F1):
    for i in x:
        y[i] = x[i] * 0.5


@ti.kernel
def wobble(y: F1, w: F1):
    for i in y:
        w[i] = ti.sin(y[i])


@ti.kernel
def scramble(y: F1, z: F1):
    for i in y:
        z[i] = ti.math.fract(ti.sin(y[i]) * 43758.5453)


@ti.kernel
def feed(z: F1, x: F1):
    for i in x:
        x[i] += z[i] * 0.001


@ti.kernel
def unscale(y: F1, x: F1):
    for i in x:
        x[i] = y[i] * 2.0


@ti.kernel
def blit(tex: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0), y: ti.types.ndarray(ndim=2)):
    for i, j in y:
        tex.store(ti.Vector([i, j]), ti.Vector([y[i, j], 0.0, 0.0, 0.0]))


@ti.kernel
def count_up(c: ti.f32, it: I1, flag: I1):
    for _ in range(1):
        it[0] += 1
        bits = ti.bit_cast(ti.sin(c), ti.i32)
        flag[0] = 1 if it[0] < 2 + (bits & 3) else 0


def planted_graph(rounds: int = 3) -> gl.Graph:
    """``rounds`` x (scale, wobble, scramble, feed): the first cross-arch difference is in ``rounds[0]/wobble``."""
    g = gl.Graph("planted")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n")
    w = g.ndarray("w", ti.f32, ndim=1, shape="n")
    z = g.ndarray("z", ti.f32, ndim=1, shape="n")
    with g.sequence("rounds", repeat=rounds) as s:
        s.dispatch(scale, x, y)
        s.dispatch(wobble, y, w)
        s.dispatch(scramble, y, z)
        s.dispatch(feed, z, x)
    return g


def loop_graph() -> gl.Graph:
    """A do-while loop whose iteration count depends on the last bits of ``sin(c)``."""
    g = gl.Graph("counted")
    c = g.scalar("c", ti.f32)
    it = g.ndarray("it", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    body = g.define("body")
    body.dispatch(count_up, c, it, flag)
    g.loop(body, while_=flag, max_iter=10, name="solve")
    return g


def late_graph(reps: int) -> gl.Graph:
    """``reps`` repetitions of (scale, unscale), which leave ``x`` as it was, then the cross-arch ``wobble``: it differs at step ``2 * reps``."""
    g = gl.Graph("late")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n")
    w = g.ndarray("w", ti.f32, ndim=1, shape="n")
    with g.sequence("warm", repeat=reps) as s:
        s.dispatch(scale, x, y)
        s.dispatch(unscale, y, x)
    g.dispatch(wobble, x, w)
    return g


@ti.kernel
def pick(c: ti.f32, flag: I1):
    for _ in range(1):
        flag[0] = ti.bit_cast(ti.sin(c), ti.i32) & 1


def branch_graph() -> gl.Graph:
    """A conditional on the last bit of ``sin(c)``: x64 and Vulkan take different branches."""
    g = gl.Graph("branchy")
    c = g.scalar("c", ti.f32)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n")
    g.dispatch(pick, c, flag)
    then, other = g.define("halve"), g.define("double")
    then.dispatch(scale, x, y)
    other.dispatch(unscale, x, y)
    g.cond(flag, then, else_=other, name="choose")
    return g
