"""The static memory plan: temps with disjoint lifetimes share storage, and runs use it."""

import numpy as np
import pytest
import taichi as ti

import graphlab as gl

pytestmark = pytest.mark.usefixtures("ti_cpu")


@ti.kernel
def square(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        dst[i] = src[i] * src[i]


@ti.kernel
def add(a: ti.types.ndarray(dtype=ti.f32, ndim=1), b: ti.types.ndarray(dtype=ti.f32, ndim=1),
        out: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in a:
        out[i] = a[i] + b[i]


def _chain() -> gl.Graph:
    """src -> t1 -> t2 -> t3 -> out: t1 and t3 never live at once."""
    g = gl.Graph("chain")
    src = g.ndarray("src", ti.f32, ndim=1, shape="n", role="input")
    t1, t2, t3 = (g.ndarray(f"t{i}", ti.f32, ndim=1, shape="n", role="temp") for i in (1, 2, 3))
    out = g.ndarray("out", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(square, src, t1)
    g.dispatch(square, t1, t2)
    g.dispatch(square, t2, t3)
    g.dispatch(add, t3, src, out)
    return g


def test_plan_shares_storage_where_lifetimes_are_disjoint():
    plan = _chain().memory_plan(n=1000)
    assert plan.buffer("t1").lifetime == (0, 1) and plan.buffer("t3").lifetime == (2, 3)
    assert plan.buffer("t1").slot == plan.buffer("t3").slot != plan.buffer("t2").slot
    assert plan.buffer("src").slot is None
    assert plan.total_bytes == 5 * 4000 and plan.shared_bytes == 4 * 4000
    assert "with shared temps" in plan.table()


def test_run_with_the_planned_shared_temps_matches_separate_buffers():
    g = _chain()
    src = np.linspace(0.5, 1.5, 1000).astype(np.float32)
    shared_out = np.zeros(1000, np.float32)
    g.run(src=src, out=shared_out)  # temps allocated by the plan
    separate = {name: ti.ndarray(ti.f32, shape=1000) for name in ("t1", "t2", "t3")}
    separate_out = np.zeros(1000, np.float32)
    g.run(src=src, out=separate_out, **separate)
    assert shared_out.tobytes() == separate_out.tobytes()
    assert np.allclose(shared_out, src**8 + src)


def test_temps_of_different_shapes_do_not_share():
    g = _chain()
    g.redeclare(gl.Arg("t3", "ndarray", "f32", 1, role="temp", shape=("m",)))
    plan = g.memory_plan(n=10, m=10)
    assert plan.buffer("t1").slot == plan.buffer("t3").slot
    plan = g.memory_plan(n=10, m=20)
    assert plan.buffer("t1").slot != plan.buffer("t3").slot


def test_temp_without_a_shape_is_a_clear_error():
    g = _chain()
    g.redeclare(gl.Arg("t2", "ndarray", "f32", 1, role="temp"))
    with pytest.raises(gl.GraphError, match="temp 't2' has no concrete shape"):
        g.memory_plan(n=4)
    with pytest.raises(gl.GraphRunError, match="temp .t2. declares no shape.*pass t2 itself"):
        g.run(src=np.zeros(4, np.float32), out=np.zeros(4, np.float32))


@ti.kernel
def total_of(src: ti.types.ndarray(dtype=ti.f32, ndim=1), acc: ti.types.ndarray(dtype=ti.f32, ndim=0)):
    acc[None] = 0.0
    for i in src:
        acc[None] += src[i]


@ti.kernel
def scale_by(src: ti.types.ndarray(dtype=ti.f32, ndim=1), acc: ti.types.ndarray(dtype=ti.f32, ndim=0),
             out: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        out[i] = src[i] * acc[None]


def test_a_0d_temp_needs_no_declared_shape_to_be_planned_and_run():
    """A 0-d ndarray always has shape (): a scalar accumulator temp is sized without any dims."""
    g = gl.Graph("sum_scale")
    src = g.ndarray("src", ti.f32, ndim=1, role="input")
    acc = g.ndarray("acc", ti.f32, ndim=0, role="temp")
    out = g.ndarray("out", ti.f32, ndim=1, role="output")
    g.dispatch(total_of, src, acc)
    g.dispatch(scale_by, src, acc, out)
    assert g.memory_plan().buffer("acc").shape == ()
    x = np.arange(4, dtype=np.float32)
    result = np.zeros(4, dtype=np.float32)
    g.run(src=x, out=result)
    np.testing.assert_array_equal(result, x * x.sum())


def test_a_temp_no_dispatch_uses_is_not_allocated_and_the_run_goes_on():
    # GL007 warns of it; run() and debug() crashed with KeyError: 'spare' (the plan leaves it out)
    g = _chain()
    g.ndarray("spare", ti.f32, ndim=2, role="temp")
    src = np.linspace(0.5, 1.5, 16).astype(np.float32)
    out = np.zeros(16, np.float32)
    g.run(src=src, out=out)
    assert np.allclose(out, src**8 + src)
    dbg = g.debug(src=src, out=np.zeros(16, np.float32))
    assert dbg.continue_().reason == "end"
