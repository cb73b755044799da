"""A ``break`` or ``continue`` of an inner loop ends that loop only: the outer body's accesses stay certain.

``lam[i] = s`` after an inner loop with an early ``break`` runs on every iteration of the outer
loop, so ``lam.shape[0] >= a.shape[0]`` is certain (``run()`` checks it), and ``lam``, written at
the loop index and read back at the same index in the next top-level loop, is written before it is
read (no GL009 "may be read before written", no GL010 "never read"). A leave of the outer loop
itself still stops what it can skip.

The corpus's ``normalise_rows`` is the pattern itself; the other kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import numpy as np
import pytest
import taichi as ti
from workloads.row_normalise import normalise_rows  # the corpus kernel: break in its inner loop

import graphlab as gl
from graphlab.kernelfacts.access_ast import ast_access
from graphlab.kernelfacts.access_order import FirstAccess, kernel_order
from graphlab.kernelfacts.shape_facts import kernel_shape_facts

V1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
V2 = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.kernel
def row_sums(a: V2, lam: V1):
    for i in range(a.shape[0]):
        s = 0.0
        for j in range(a.shape[1]):
            if a[i, j] < 0.0:
                break
            s += a[i, j]
        lam[i] = s


@ti.kernel
def before_inner_continue(a: V2, first: V1):
    for i in range(a.shape[0]):
        first[i] = 0.0
        for j in range(a.shape[1]):
            if a[i, j] > 0.0:
                continue
            first[i] += 1.0


@ti.kernel
def outer_continue(a: V2, x: V1, y: V1):
    for i in range(a.shape[0]):
        x[i] = 1.0
        if a[i, 0] < 0.0:
            continue
        y[i] = 2.0


def facts(kernel) -> list[str]:
    return [str(f) for f in kernel_shape_facts(kernel)]


def test_accesses_around_an_inner_loop_with_a_break_stay_certain():
    assert "lam.shape[0] >= a.shape[0] (lam[i] in for i in range(a.shape[0]))" in facts(normalise_rows)
    assert facts(before_inner_continue) == ["first.shape[0] >= a.shape[0] (first[i] in for i in range(a.shape[0]))"]


def test_a_continue_of_the_outer_loop_still_stops_what_follows_it():
    # x[i] comes before the continue: certain; y[i] after it: not
    assert facts(outer_continue) == ["x.shape[0] >= a.shape[0] (x[i] in for i in range(a.shape[0]))"]


def test_the_buffer_written_after_the_inner_loop_is_write_first():
    order = kernel_order(normalise_rows, ast_access(normalise_rows))
    assert order.first["lam"] is FirstAccess.WRITE


def rows_graph() -> gl.Graph:
    g = gl.Graph("rows")
    a = g.ndarray("a", ti.f32, ndim=2, shape=("n", "m"))
    lam = g.ndarray("lam", ti.f32, ndim=1, shape=("n",), role="temp")
    g.dispatch(normalise_rows, a, lam, g.ndarray("out", ti.f32, ndim=2, shape=("n", "m"), role="output"))
    return g


@pytest.mark.parametrize("access", ["ast", "auto"])
def test_no_false_gl009_or_gl010_for_the_temp(access):
    found = [str(d) for d in rows_graph().validate(access=access) if d.code in ("GL009", "GL010")]
    assert found == []


@pytest.mark.usefixtures("ti_cpu")
def test_a_too_short_array_after_the_inner_loop_is_refused_before_anything_runs():
    # small enough not to crash this process on code without the check (one float past the end)
    g = gl.Graph("g")
    g.dispatch(row_sums, g.ndarray("a", ti.f32, ndim=2), g.ndarray("lam", ti.f32, ndim=1))
    lam = np.zeros(3, np.float32)
    with pytest.raises(gl.GraphRunError) as err:
        g.run(a=np.ones((4, 2), np.float32), lam=lam)
    assert err.value.arg == "lam"
    assert "indexes lam[i] in for i in range(a.shape[0])" in str(err.value) and "got 3 < 4" in str(err.value)
    assert lam.tolist() == [0.0] * 3
