"""The step debugger on graphs with loops and conditionals: the timeline is recorded as it runs.

The Jacobi solve and the branch kernels come from ``test_control_flow``. One CPU thread (the
``ti_cpu`` fixture): the stepped, replayed and compiled runs then give the same bits, so any
difference is the debugger's fault. Kernels live here too (no ``from __future__ import
annotations``: Taichi reads the annotations).
"""

import numpy as np
import pytest
import taichi as ti
from test_compiled import N, add_one, halve, init_flag, jacobi, jacobi_graph, residual_flag, threshold

import graphlab as gl
from graphlab.debug import DebugError
from graphlab.model.plan import ControlEvent

TOL = 1e-4


@ti.kernel
def count_up(counter: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    counter[0] += 1


@ti.kernel
def plant_nan(x: ti.types.ndarray(dtype=ti.f32, ndim=1), counter: ti.types.ndarray(dtype=ti.i32, ndim=1), at: ti.i32):
    for i in x:
        if counter[0] == at and i == 3:
            x[i] = ti.bit_cast(ti.u32(0x7FC00000), ti.f32)


@ti.kernel
def checked_add(x: ti.types.ndarray(dtype=ti.f32, ndim=1), limit: ti.f32):
    for i in x:
        x[i] += 1.0
        assert x[i] < limit, "x grew past the limit"


def jacobi_values():
    """Device buffers for the Jacobi graph: u = 0, f = 0.01, the flag set."""
    u = ti.ndarray(ti.f32, shape=N)
    f = ti.ndarray(ti.f32, shape=N)
    f.from_numpy(np.full(N, 0.01, np.float32))
    flag = ti.ndarray(ti.i32, shape=1)
    flag.fill(1)
    return {"u": u, "f": f, "tol": TOL, "flag": flag}


def compiled_jacobi():
    """The compiled graph's run: its events and final u."""
    compiled = jacobi_graph().compile()
    u = np.zeros(N, np.float32)
    compiled.run(u=u, f=np.full(N, 0.01, np.float32), tol=TOL, flag=np.ones(1, np.int32))
    return compiled.last_events, u


def bits(values, names=("u", "flag")):
    return {n: values[n].to_numpy().tobytes() for n in names}


def branch_graph():
    g = gl.Graph("branchy")
    x = g.ndarray("x", ti.f32, ndim=1)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    limit = g.scalar("limit", ti.f32)
    g.dispatch(threshold, x, limit, flag)
    g.define("too_big").dispatch(halve, x)
    g.define("small").dispatch(add_one, x)
    g.cond(flag, then="too_big", else_="small", name="branch")
    return g


def nested_graph():
    """``outer`` twice: set the flag, a Jacobi loop (while, max 6), then add one ``n`` times."""
    g = gl.Graph("nested")
    u = g.ndarray("u", ti.f32, ndim=1, shape="n")
    f = g.ndarray("f", ti.f32, ndim=1, shape="n", role="input")
    u_new = g.ndarray("u_new", ti.f32, ndim=1, shape="n", role="temp")
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    body = g.define("iterate")
    body.dispatch(jacobi, u, f, u_new)
    body.dispatch(residual_flag, u, u_new, g.scalar("tol", ti.f32), flag)
    g.define("inc").dispatch(add_one, u)
    with g.sequence("outer", repeat=2) as outer:
        outer.dispatch(init_flag, flag)
        g.loop(body, while_=flag, max_iter=6, name="solve", into=outer)
        g.loop("inc", count=g.scalar("n", ti.i32), name="times", into=outer)
    return g


def test_stepping_the_jacobi_solve_matches_the_compiled_graph_bit_for_bit(ti_cpu):
    events, expected = compiled_jacobi()
    values = jacobi_values()
    dbg = jacobi_graph().debug(values)
    first = dbg.position
    assert (first.step_id, first.node_id, first.total_known) == ("solve/iter[0]/jacobi", "solve/jacobi", False)
    stops = []
    while (stop := dbg.step()).reason == "step":
        stops.append(stop)
    iterations = events[0].value
    assert stop.reason == "end" and stop.total_known and stop.index == 2 * iterations == dbg.step_count
    assert [s.step_id for s in stops[1:4]] == [
        "solve/iter[1]/jacobi",
        "solve/iter[1]/residual_flag",
        "solve/iter[2]/jacobi",
    ]
    assert stops[-1].last_step_id == f"solve/iter[{iterations - 1}]/jacobi"
    assert dbg.events == events  # same iteration count, same event
    assert values["u"].to_numpy().tobytes() == expected.tobytes()
    last = dbg.decisions[-1]
    assert (last.node_id, last.value, last.outcome, last.index) == ("solve", 0, "done", 2 * iterations)
    assert len(dbg.decisions) == iterations


def test_continue_runs_the_programs_segments_and_records_the_path(ti_cpu):
    events, expected = compiled_jacobi()
    values = jacobi_values()
    dbg = jacobi_graph().debug(values)
    dbg.step()  # mid-iteration: the rest of iteration 0 is planned from the recorded steps
    stop = dbg.continue_()
    assert (stop.reason, stop.index, stop.step_id) == ("end", 2 * events[0].value, None)
    assert dbg.events == events and values["u"].to_numpy().tobytes() == expected.tobytes()
    assert dbg.segments == []  # whole iterations ran as the Program's own compiled segment
    assert "fast-forward" in str(dbg.timing())
    assert dbg.parity().identical


def test_continue_from_inside_a_repeated_sequence_in_a_loop_body(ti_cpu):
    g = gl.Graph("chunks")
    x = g.ndarray("x", ti.f32, ndim=1)
    body = g.define("body")
    with body.sequence("sub", repeat=4) as sub:
        sub.dispatch(add_one, x)
        sub.dispatch(halve, x)
    g.loop(body, count=g.scalar("n", ti.i32), name="again")
    expected = np.arange(4, dtype=np.float32)
    g.compile().run(x=expected, n=3)
    values = ti.ndarray(ti.f32, shape=4)
    values.from_numpy(np.arange(4, dtype=np.float32))
    dbg = g.debug(x=values, n=3)
    for _ in range(3):
        dbg.step()
    assert dbg.position.step_id == "again/iter[0]/sub[1]/halve" and dbg.position.node_id == "again/sub/halve"
    assert dbg.step_over().last_step_id == "again/iter[0]/sub[1]/halve"  # the rest of repetition sub[1]
    assert dbg.continue_().reason == "end" and values.to_numpy().tobytes() == expected.tobytes()
    assert ("reps", "again/sub", 2) in dbg.segments  # the rest of iteration 0: whole repetitions as one segment
    assert dbg.goto("again/iter[1]/sub[2]").index == 8 + 4 and dbg.step_count == 24


def test_breakpoint_at_one_iteration_and_at_a_node_in_every_iteration(ti_cpu):
    dbg = jacobi_graph().debug(jacobi_values())
    one = dbg.break_at("solve/iter[3]/jacobi")
    stop = dbg.continue_()
    assert (stop.reason, stop.index, stop.step_id, stop.node_id, stop.breakpoint) == (
        "breakpoint",
        6,
        "solve/iter[3]/jacobi",
        "solve/jacobi",
        one,
    )
    assert "6/8+" in str(stop)  # the total is not known before the loop ends
    dbg.remove_breakpoint(one)
    every = dbg.break_at("solve/residual_flag")
    assert [dbg.continue_().step_id for _ in range(2)] == ["solve/iter[3]/residual_flag", "solve/iter[4]/residual_flag"]
    dbg.break_at("solve/iter[9]")  # an iteration: before its first dispatch
    dbg.remove_breakpoint(every)
    assert dbg.continue_().step_id == "solve/iter[9]/jacobi"
    with pytest.raises(gl.GraphError, match="runs at most 5000 iterations"):
        dbg.break_at("solve/iter[5000]/jacobi")
    with pytest.raises(gl.GraphError, match="no node 'jacobbi'"):
        dbg.break_at("solve/iter[2]/jacobbi")
    with pytest.raises(gl.GraphError, match=r"is a loop: its iterations are '.../iter\[k\]'"):
        dbg.break_at("solve[2]/jacobi")


def test_breakpoints_in_the_taken_branch_stop_and_in_the_other_do_not(ti_cpu):
    g = branch_graph()
    x = ti.ndarray(ti.f32, shape=2)
    x.from_numpy(np.array([4.0, 8.0], np.float32))
    dbg = g.debug(x=x, flag=ti.ndarray(ti.i32, shape=1), limit=5.0)
    taken = dbg.break_at("branch/then/halve")
    untaken = dbg.break_at("branch/else/add_one")
    stop = dbg.continue_()
    assert (stop.reason, stop.index, stop.step_id, stop.breakpoint) == ("breakpoint", 1, "branch/then/halve", taken)
    assert dbg.decisions[0].outcome == "then" and dbg.decisions[0].value == 1
    end = dbg.continue_()
    assert end.reason == "end" and untaken.hits == 0 and x.to_numpy().tolist() == [2.0, 4.0]
    assert dbg.events == [ControlEvent("branch", "cond", "then")]
    # the other way round: small values take the else branch
    x.from_numpy(np.array([1.0, 2.0], np.float32))
    other = g.debug(x=x, flag=ti.ndarray(ti.i32, shape=1), limit=5.0)
    other.break_at("branch/then/halve")
    whole = other.break_at("branch")  # before the taken branch, whichever it is
    stop = other.continue_()
    assert (stop.step_id, stop.breakpoint) == ("branch/else/add_one", whole)
    assert other.continue_().reason == "end" and x.to_numpy().tolist() == [2.0, 3.0]


def test_back_across_iterations_restores_exactly(ti_cpu):
    values = jacobi_values()
    dbg = jacobi_graph().debug(values)
    states = [bits(values)]
    for _ in range(9):
        dbg.step()
        states.append(bits(values))
    for k in (8, 7, 6):  # 6: back over the decision between iterations 2 and 3
        assert dbg.back().index == k and bits(values) == states[k], k
    assert dbg.back(3).step_id == "solve/iter[1]/residual_flag" and bits(values) == states[3]
    assert dbg.goto("solve/iter[4]/jacobi").index == 8 and bits(values) == states[8]  # forward on the record
    assert dbg.goto(1).index == 1 and bits(values) == states[1]
    assert dbg.inspect("u", at=7).numpy().tobytes() == states[7]["u"]
    dbg.continue_()  # past the recorded end: decided anew, then back over hundreds of iterations
    for k in (5, 2, 9):
        assert dbg.goto(k).index == k and bits(values) == states[k], k


def test_timing_counts_the_loops_iterations(ti_cpu):
    g = nested_graph()
    u = np.zeros(N, np.float32)
    compiled = g.compile()
    f = np.full(N, 0.01, np.float32)
    compiled.run(u=u, f=f, tol=1e-3, flag=np.ones(1, np.int32), n=3)
    values = {"u": ti.ndarray(ti.f32, shape=N), "f": ti.ndarray(ti.f32, shape=N), "flag": ti.ndarray(ti.i32, shape=1)}
    values["f"].from_numpy(f)
    dbg = g.debug(values, tol=1e-3, n=3)
    dbg.break_at("outer[1]/solve/iter[2]/jacobi")
    stop = dbg.continue_()
    assert (stop.step_id, stop.node_id) == ("outer[1]/solve/iter[2]/jacobi", "outer/solve/jacobi")
    assert stop.index == 1 + 12 + 3 + 1 + 4  # outer[0]: flag, 6 iterations, 3 adds; outer[1]: flag, 2 iterations
    assert dbg.step_over().last_step_id == "outer[1]/solve/iter[2]/residual_flag"  # the rest of the iteration
    assert dbg.run_to("outer/times/add_one").step_id == "outer[1]/times/iter[0]/add_one"
    for _ in range(3):
        dbg.step()
    assert dbg.position.at_end and dbg.events == compiled.last_events
    assert values["u"].to_numpy().tobytes() == u.tobytes()
    report = dbg.timing()
    solve, times = report.loop("outer/solve"), report.loop("outer/times")
    assert (solve.runs, solve.iterations, solve.limit_reached) == (2, 12, 2)
    assert (times.runs, times.iterations, times.mean_iterations) == (2, 6, 3.0)
    add = report.node("outer/times/add_one")
    assert add.calls == 3 and add.mean_s == pytest.approx(add.total_s / 3)
    assert times.stepped_s == pytest.approx(add.total_s)
    text = str(report)
    assert "iterations" in text and "outer/solve" in text
    assert report.to_dict()["loops"][0]["iterations"] == 12


def test_restart_forgets_the_timeline_and_goto_past_the_end_says_so(ti_cpu):
    values = jacobi_values()
    dbg = jacobi_graph(max_iter=5).debug(values)
    end = dbg.goto(10_000)
    assert end.reason == "end" and end.index == 10 and "without reaching step 10000" in end.note
    assert dbg.events == [ControlEvent("solve", "loop", 5, limit_reached=True)]
    assert dbg.decisions[-1].outcome == "limit"
    start = dbg.restart()
    assert start.index == 0 and not start.total_known and dbg.step_count == 2 and dbg.events == []
    assert values["u"].to_numpy().tolist() == [0.0] * N
    with pytest.raises(DebugError, match="has not run yet"):
        dbg.inspect("u", at="solve/iter[3]/jacobi")
    assert dbg.run_to("solve/iter[3]").index == 6
    branchy = branch_graph().debug(x=np.array([9.0], np.float32), flag=np.zeros(1, np.int32), limit=5.0)
    assert branchy.goto("branch/then/halve").index == 1  # a node that runs at most once names its step
    branchy.continue_()
    with pytest.raises(DebugError, match="does not pass there"):
        branchy.goto("branch/else/add_one")


def test_nonfinite_hunt_inside_a_loop(ti_cpu):
    g = gl.Graph("hunt")
    x = g.ndarray("x", ti.f32, ndim=1)
    counter = g.ndarray("counter", ti.i32, ndim=1)
    body = g.define("body")
    body.dispatch(count_up, counter)
    body.dispatch(plant_nan, x, counter, g.scalar("at", ti.i32))
    body.dispatch(add_one, x)
    g.loop(body, count=g.scalar("n", ti.i32), name="again")
    values = {"x": ti.ndarray(ti.f32, shape=8), "counter": ti.ndarray(ti.i32, shape=1)}
    dbg = g.debug(values, at=7, n=10)
    dbg.watch("counter.max()")
    stop = dbg.find_first_nonfinite()
    hit = stop.nonfinite
    assert stop.reason == "nonfinite" and hit.step.step_id == "again/iter[6]/plant_nan"
    assert (hit.buffer, hit.nan, hit.first_index) == ("x", 1, (3,)) and stop.watches == {"counter.max()": 7}
    assert dbg.back().index == 19 and dbg.inspect("x").stats.nan == 0
    dbg.break_when("counter.max() >= 9")  # a condition inside a loop stops after the dispatch that made it true
    cond = dbg.continue_()
    assert (cond.reason, cond.last_step_id) == ("condition", "again/iter[8]/count_up")


def test_a_fault_in_a_loop_is_located_and_undone():
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, debug=True, log_level=ti.WARN)
    g = gl.Graph("guarded")
    x = g.ndarray("x", ti.f32, ndim=1)
    g.define("body").dispatch(checked_add, x, g.scalar("limit", ti.f32))
    g.loop("body", count=g.scalar("n", ti.i32), name="again")
    values = ti.ndarray(ti.f32, shape=4)
    dbg = g.debug(x=values, limit=5.0, n=10)
    stop = dbg.continue_()
    assert (stop.reason, stop.index, stop.step_id) == ("fault", 4, "again/iter[4]/checked_add")
    assert isinstance(stop.error, AssertionError) and values.to_numpy().tolist() == [4.0] * 4
    assert dbg.back(2).index == 2 and values.to_numpy()[0] == 2.0
