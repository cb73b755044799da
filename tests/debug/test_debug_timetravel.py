"""Going back and forth in a debug session gives the exact bits of a fresh run to that step.

One CPU thread (the ``mpm88`` fixture): float atomics then give repeatable bits, so any difference
is the debugger's fault.
"""

import pytest
import taichi as ti

import graphlab as gl
from graphlab.api.examples import copy_buffers, mpm88_buffers, mpm88_graph
from graphlab.debug import DebugOptions
from graphlab.debug.snapshots import nbytes

NAMES = ("x", "v", "C", "J", "grid_v", "grid_m")


@ti.kernel
def bump(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = x[i] * 1.5 + 1.0


def bits(buffers):
    return {n: buffers[n].to_numpy().tobytes() for n in NAMES}


def fresh_run_states(graph, initial):
    """The buffers after every step, by launching the kernels one by one on copies (no debugger)."""
    buffers = copy_buffers(initial)
    states = [bits(buffers)]
    for step in graph.steps():
        step.dispatch.kernel.fn(*[buffers[bound] for _, bound in step.dispatch.bindings])
        states.append(bits(buffers))
    return states


@pytest.fixture
def session(mpm88):
    def make(**options):
        g = mpm88_graph(mpm88, 20)
        buffers = mpm88_buffers(mpm88)
        states = fresh_run_states(g, buffers)
        return g.debug(buffers, options=DebugOptions(**options)), buffers, states

    return make


def test_back_and_goto_restore_exactly(session):
    dbg, buffers, states = session()
    for _ in range(40):
        dbg.step()
    for k in (39, 38, 37):
        assert dbg.back().index == k
        assert bits(buffers) == states[k]
    for k in (12, 33, 0, 57, 21):
        stop = dbg.goto(k)
        assert stop.index == k and bits(buffers) == states[k], k
    assert dbg.goto("substep[5]/substep_g2p").index == 23 and bits(buffers) == states[23]
    assert dbg.restart().reason == "start" and bits(buffers) == states[0]


def test_goto_after_running_ahead_matches_a_fresh_run(session):
    dbg, buffers, states = session()
    assert dbg.continue_().index == 80
    assert bits(buffers) == states[80]
    for k in (77, 50, 37, 3, 61, 1, 80):
        dbg.goto(k)
        assert bits(buffers) == states[k], k
    assert dbg.back(5).index == 75 and bits(buffers) == states[75]


def test_small_budget_evicts_the_oldest_and_replays(session):
    budget = 300_000  # about two steps' worth of grid copies
    dbg, buffers, states = session(budget_bytes=budget)
    for _ in range(40):
        dbg.step()
    usage = dbg.snapshots
    assert usage.held_bytes <= budget and usage.positions < 40
    assert usage.initial_bytes == sum(nbytes(buffers[n]) for n in NAMES)
    for k in (38, 5, 30, 2):
        dbg.goto(k)
        assert bits(buffers) == states[k], k


def test_budget_smaller_than_one_step_still_goes_back(session):
    dbg, buffers, states = session(budget_bytes=1024)
    for _ in range(10):
        dbg.step()
    assert dbg.snapshots.skipped > 0 and dbg.snapshots.held_bytes == 0
    assert dbg.back().index == 9 and bits(buffers) == states[9]
    assert dbg.goto(4).index == 4 and bits(buffers) == states[4]


def test_aliased_args_are_restored_once(ti_cpu):
    g = gl.Graph("aliased")
    a = g.ndarray("a", ti.f32, ndim=1)
    b = g.ndarray("b", ti.f32, ndim=1)
    with g.sequence("loop", repeat=3) as s:
        s.dispatch(bump, a)
        s.dispatch(bump, b, name="bump_b")
    shared = ti.ndarray(ti.f32, shape=4)
    dbg = g.debug(a=shared, b=shared)
    seen = []
    for _ in range(6):
        seen.append(shared.to_numpy().tobytes())
        dbg.step()
    for k in (4, 1, 3, 0):
        dbg.goto(k)
        assert shared.to_numpy().tobytes() == seen[k], k


def test_going_back_after_a_fast_run_from_mid_graph(session):
    dbg, buffers, states = session()
    dbg.step()
    dbg.continue_()  # compiled segments from step 1: one reused mark at step 1, no per-step copies
    usage = dbg.snapshots
    assert usage.mark_bytes > 0 and usage.held_bytes < usage.mark_bytes
    for k in (40, 39, 2, 1, 79):
        dbg.goto(k)
        assert bits(buffers) == states[k], k
