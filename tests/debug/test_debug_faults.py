"""A kernel that fails (an assert or an out-of-bounds index under ``ti.init(debug=True)``) leaves the
debug session usable at the step before it, with its buffers restored and the error attached."""

import weakref

import numpy as np
import pytest
import taichi as ti

import graphlab as gl


@ti.kernel
def bump(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] += 1.0


@ti.kernel
def bump_checked(x: ti.types.ndarray(dtype=ti.f32, ndim=1), limit: ti.f32):
    for i in x:
        x[i] += 1.0
        assert x[i] < limit, "x grew past the limit"


@ti.kernel
def poke(x: ti.types.ndarray(dtype=ti.f32, ndim=1), where: ti.i32):
    for i in x:
        x[i] = -1.0
        x[where] = 7.0


@pytest.fixture
def debug_cpu():
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, debug=True, log_level=ti.WARN)


def guarded(x, limit: float = 9.0):
    g = gl.Graph("guarded")
    arg = g.ndarray("x", ti.f32, ndim=1)
    lim = g.scalar("limit", ti.f32)
    with g.sequence("loop", repeat=10) as s:
        s.dispatch(bump, arg)
        s.dispatch(bump_checked, arg, lim)
    return g.debug(x=x, limit=limit)


def test_fault_inside_a_compiled_segment_is_located_and_undone(debug_cpu):
    x = ti.ndarray(ti.f32, shape=8)
    dbg = guarded(x)
    stop = dbg.continue_()
    assert (stop.reason, stop.index, stop.step_id) == ("fault", 9, "loop[4]/bump_checked")
    assert isinstance(stop.error, AssertionError) and "limit" in str(stop.error)
    assert stop.fault.step.kernel == "bump_checked" and dbg.faults == [stop.fault]
    assert x.to_numpy().tolist() == [9.0] * 8  # as before the failing dispatch, not half-written
    assert "FAULT" in str(stop) and "loop[4]/bump_checked failed" in str(stop)
    # the session goes on working
    assert dbg.back().index == 8 and x.to_numpy()[0] == 8.0
    assert dbg.step().index == 9
    again = dbg.step()
    assert again.reason == "fault" and again.index == 9 and x.to_numpy()[0] == 9.0
    assert dbg.goto(2).index == 2 and x.to_numpy()[0] == 2.0
    assert dbg.inspect("x").stats.max == 2.0
    assert dbg.restart().index == 0 and x.to_numpy()[0] == 0.0
    assert dbg.continue_().step_id == "loop[4]/bump_checked"
    assert "TaichiAssertionError" in stop.fault.traceback and "_step_one" in stop.fault.traceback


def test_a_faulted_session_is_freed_at_once(debug_cpu):
    # No reference cycle through the error's traceback: a session collected later, after the next
    # ti.init, would tear down launch state of a dead Taichi runtime and crash the process.
    dbg = guarded(ti.ndarray(ti.f32, shape=8))
    stop = dbg.continue_()
    assert stop.error.__traceback__ is None
    alive = weakref.ref(dbg)
    del dbg
    assert alive() is None


def test_out_of_bounds_write_is_a_fault_not_a_crash(debug_cpu):
    x = ti.ndarray(ti.f32, shape=8)
    x.from_numpy(np.arange(8, dtype=np.float32))
    g = gl.Graph("poking")
    arg = g.ndarray("x", ti.f32, ndim=1)
    g.dispatch(bump, arg)
    g.dispatch(poke, arg, g.scalar("where", ti.i32))
    dbg = g.debug(x=x, where=8)
    stop = dbg.continue_()
    assert (stop.reason, stop.step_id) == ("fault", "poke")
    assert "Out of bound" in str(stop.error)
    assert x.to_numpy().tolist() == [float(i + 1) for i in range(8)]
    assert dbg.step().reason == "fault" and dbg.position.index == 1
