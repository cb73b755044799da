"""Kernels and graphs for the capture tests: each notebook kernel has a variant of the same signature
that computes something else, so a module exported from the variant graph is a "field" build that
departs from the notebook at a known dispatch."""

import taichi as ti

import graphlab as gl

F1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
I1 = ti.types.ndarray(dtype=ti.i32, ndim=1)


@ti.kernel
def halve(x: F1, y: F1):
    for i in x:
        y[i] = x[i] * 0.5


@ti.kernel
def shift(y: F1, w: F1):
    for i in y:
        w[i] = y[i] + 1.0


@ti.kernel
def shift_off(y: F1, w: F1):  # the field build's bug: + 2 where the notebook adds 1
    for i in y:
        w[i] = y[i] + 2.0


@ti.kernel
def accumulate(w: F1, x: F1):
    for i in x:
        x[i] += w[i] * 0.25


@ti.kernel
def count_to(limit: ti.i32, it: I1, flag: I1):
    for _ in range(1):
        it[0] += 1
        flag[0] = 1 if it[0] < limit else 0


@ti.kernel
def count_to_off(limit: ti.i32, it: I1, flag: I1):  # the field build's bug: one iteration more
    for _ in range(1):
        it[0] += 1
        flag[0] = 1 if it[0] < limit + 1 else 0


@ti.kernel
def parity(it: I1, odd: I1):
    for _ in range(1):
        odd[0] = it[0] & 1


def stages_graph(*, field: bool = False) -> gl.Graph:
    """``halve`` then ``rounds`` count-loop iterations of (halve, shift, accumulate): one segment per
    iteration; the field build's ``shift`` adds 2, so the first iteration's segment departs at ``shift``."""
    g = gl.Graph("stages")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n")
    w = g.ndarray("w", ti.f32, ndim=1, shape="n")
    rounds = g.scalar("rounds", ti.i32)
    g.dispatch(halve, x, y, name="prepare")
    body = g.define("body")
    body.dispatch(halve, x, y, name="halve")
    body.dispatch(shift_off if field else shift, y, w, name="shift")
    body.dispatch(accumulate, w, x, name="accumulate")
    g.loop(body, count=rounds, name="iterate")
    return g


def steer_graph(*, field: bool = False) -> gl.Graph:
    """A while loop counting to ``limit``, then a conditional on the count's parity; the field build
    counts one more, so the two part at the loop's last flag read."""
    g = gl.Graph("steer")
    limit = g.scalar("limit", ti.i32)
    it = g.ndarray("it", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    odd = g.ndarray("odd", ti.i32, ndim=1, shape=(1,))
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n")
    body = g.define("body")
    body.dispatch(count_to_off if field else count_to, limit, it, flag, name="count")
    g.loop(body, while_=flag, max_iter=20, name="solve")
    g.dispatch(parity, it, odd)
    then, other = g.define("odd_path"), g.define("even_path")
    then.dispatch(halve, x, y)
    other.dispatch(shift, x, y)
    g.cond(odd, then, else_=other, name="choose")
    return g


def temps_graph(*, field: bool = False) -> gl.Graph:
    """``y = shift(halve(x))`` through a temp ``t`` sized only by the dim ``m`` (not given by any value)."""
    g = gl.Graph("tempo")
    x = g.ndarray("x", ti.f32, ndim=1, shape="m")
    t = g.ndarray("t", ti.f32, ndim=1, shape="m", role="temp")
    y = g.ndarray("y", ti.f32, ndim=1, shape="m")
    g.dispatch(halve, x, t)
    g.dispatch(shift_off if field else shift, t, y, name="shift")
    return g
