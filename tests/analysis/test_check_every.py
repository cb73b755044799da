"""``check_every=k`` on while loops: the flag is read after iterations k, 2k, ... and after ``max_iter``.

The body runs unguarded between reads, so a loop may run up to k-1 iterations past the point where
its flag cleared; ``run()``, the debugger, ``gl.load_module`` and the generated C host must all run
(and report) the same iterations.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.
import json
import shutil

import numpy as np
import pytest
import taichi as ti
from hypothesis import given, settings
from hypothesis import strategies as st
from test_compiled import jacobi, jacobi_graph, residual_flag
from test_export_control_flow import export, run_host, run_module, run_python

import graphlab as gl
from graphlab.core.errors import GraphError
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.manifest import read_manifest
from graphlab.model.plan import Cursor, Iterate, build_plan, run_plan
from graphlab.run.compiled import MAX_BATCH_DISPATCHES, batched_bodies

ARCHS = ["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)]


@ti.kernel
def countdown(counter: ti.types.ndarray(dtype=ti.i32, ndim=1), flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    counter[0] -= 1
    flag[0] = 1 if counter[0] > 0 else 0


def countdown_graph(check_every: int, max_iter: int = 100) -> gl.Graph:
    g = gl.Graph("countdown")
    counter = g.ndarray("counter", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    body = g.define("tick")
    body.dispatch(countdown, counter, flag)
    g.loop(body, while_=flag, max_iter=max_iter, check_every=check_every, name="solve")
    return g


def documented(flag_clears_after: int, k: int, max_iter: int) -> tuple[int, bool]:
    """Iterations run and whether max_iter stopped the loop: the first multiple of k at or past the
    iteration that cleared the flag, or max_iter (read there too) when that comes first."""
    reads = [i for i in range(1, max_iter + 1) if i % k == 0 or i == max_iter]
    stop = next(i for i in reads if i >= flag_clears_after or i == max_iter)
    return stop, stop == max_iter and flag_clears_after > max_iter


def inputs(start: int) -> dict:
    return {"counter": np.array([start], np.int32), "flag": np.ones(1, np.int32)}


CASES = [(7, 1), (7, 3), (9, 3), (1, 4), (5, 8), (250, 8)]  # (iterations until the flag clears, k)


@pytest.mark.parametrize(("start", "k"), CASES)
def test_run_takes_the_documented_iterations(ti_cpu, start, k):
    compiled = countdown_graph(k).compile()
    values = inputs(start)
    compiled.run(values)
    [event] = compiled.last_events
    iterations, limited = documented(start, k, 100)
    assert (event.value, event.limit_reached) == (iterations, limited)
    assert int(values["counter"][0]) == start - iterations  # the body really ran that often


def test_the_debugger_runs_and_reads_the_same(ti_cpu):
    for start, k in CASES:
        values = {n: ti.ndarray(ti.i32, shape=1) for n in ("counter", "flag")}
        for n, v in inputs(start).items():
            values[n].from_numpy(v)
        dbg = countdown_graph(k).debug(values)
        stop = dbg.continue_()
        iterations, limited = documented(start, k, 100)
        assert stop.reason == "end" and stop.index == iterations
        [event] = dbg.events
        assert (event.value, event.limit_reached) == (iterations, limited)
        assert len(dbg.decisions) == -(-iterations // k)  # one read per k iterations
        assert int(values["counter"].to_numpy()[0]) == start - iterations


def test_stepping_over_unguarded_iterations(ti_cpu):
    dbg = countdown_graph(4).debug(counter=inputs(2)["counter"], flag=inputs(2)["flag"])
    ids = []
    while (stop := dbg.step()).reason == "step":
        ids.append(stop.step_id)
    assert ids[-1] == "solve/iter[3]/countdown" and stop.index == 4


def poisson_graph(k: int, *, guarded: bool = False) -> gl.Graph:
    """Jacobi on a 1-d Poisson problem until the update is below ``tol``, reading the flag every k."""
    g = gl.Graph("poisson")
    u = g.ndarray("u", ti.f32, ndim=1, shape="n")
    u_new = g.ndarray("u_new", ti.f32, ndim=1, shape="n", role="temp")
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    body = g.define("iterate")
    body.dispatch(jacobi, u, g.ndarray("f", ti.f32, ndim=1, shape="n", role="input"), u_new)
    body.dispatch(residual_flag, u, u_new, g.scalar("tol", ti.f32), flag)
    g.loop(body, while_=flag, max_iter=5000, check_every=k, guarded=guarded, name="solve")
    return g


@pytest.mark.parametrize("k", [1, 3])
def test_jacobi_stops_at_the_first_check_after_convergence(ti_cpu, k):
    base = jacobi_graph().compile()
    f = np.full(32, 0.01, np.float32)
    base.run(u=np.zeros(32, np.float32), f=f, tol=1e-4, flag=np.ones(1, np.int32))
    converged = base.last_events[0].value
    compiled = poisson_graph(k).compile()
    compiled.run(u=np.zeros(32, np.float32), f=f, tol=1e-4, flag=np.ones(1, np.int32))
    assert compiled.last_events[0].value == documented(converged, k, 5000)[0]


@pytest.fixture(scope="module", params=ARCHS)
def exported(request, tmp_path_factory):
    return export(tmp_path_factory, [countdown_graph(3, max_iter=10)], request.param, inputs(4))


def assert_every_runner_takes(exported, graph: gl.Graph, start: int, tmp_path, want: tuple[int, bool]) -> None:
    """run(), gl.load_module and the C host run ``want`` (iterations, limit reached) and leave the same counter."""
    expected, python_events = run_python(exported.arch, [graph], inputs(start))
    host, host_events = run_host(exported, inputs(start), tmp_path)
    module, module_events = run_module(exported, inputs(start))
    iterations, limited = want
    [event] = python_events
    assert (event.event.value, event.event.limit_reached) == (iterations, limited)
    assert host_events == python_events and module_events == python_events
    assert (
        host["counter"].tolist() == module["counter"].tolist() == expected["counter"].tolist() == [start - iterations]
    )


@pytest.mark.parametrize("start", [4, 6, 7, 30])
def test_module_and_c_host_take_the_same_iterations(exported, tmp_path, start):
    assert_every_runner_takes(exported, countdown_graph(3, max_iter=10), start, tmp_path, documented(start, 3, 10))


def test_manifest_carries_check_every_and_rejects_a_bad_one(exported, tmp_path):
    manifest = json.loads((exported.folder / "manifest.json").read_text())
    [loop] = [op for op in manifest["graphs"][0]["control"] if op["op"] == "loop"]
    assert loop["check_every"] == 3
    [graph] = read_manifest(exported.folder).graphs
    assert [op.check_every for op in graph.control or () if isinstance(op, Iterate)] == [3]
    loop["check_every"] = 0
    broken = tmp_path / "broken"
    shutil.copytree(exported.folder, broken)
    (broken / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ManifestError, match=r"check_every must be 1 or more, got 0"):
        read_manifest(broken)


def test_check_every_round_trips_through_the_graph_file(ti_cpu, tmp_path):
    path = tmp_path / "g.graph.json"
    countdown_graph(5).save(path)
    assert json.loads(path.read_text())["body"][0]["check_every"] == 5
    [op] = gl.load(path, kernels=[countdown]).compile().plan.body
    assert isinstance(op, Iterate) and op.check_every == 5
    countdown_graph(1).save(path)
    assert "check_every" not in json.loads(path.read_text())["body"][0]  # files without it stay as they were


def test_bad_check_every_is_refused_before_anything_runs(ti_cpu):
    with pytest.raises(GraphError, match=r"check_every must be an int in 1\.\."):
        countdown_graph(0)
    g = gl.Graph("count")
    g.define("inc").dispatch(countdown, g.ndarray("c", ti.i32, ndim=1), g.ndarray("f", ti.i32, ndim=1))
    with pytest.raises(GraphError, match="check_every applies to while_ loops only"):
        g.loop("inc", count=g.scalar("n", ti.i32), check_every=2)


def nested_plan(k: int):
    """A repeated sequence holding a while loop (check_every=k) with a conditional inside, and a count loop."""
    g = gl.Graph("nested")
    c = g.ndarray("counter", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    other = g.ndarray("other", ti.i32, ndim=1, shape=(1,))
    tick = g.define("tick")
    tick.dispatch(countdown, c, flag)
    g.define("extra").dispatch(countdown, c, other)
    g.cond(other, then="extra", name="maybe", into=tick)
    g.define("inc").dispatch(countdown, c, other)
    with g.sequence("outer", repeat=2) as outer:
        outer.dispatch(countdown, c, flag)
        g.loop(tick, while_=flag, max_iter=7, check_every=k, name="solve", into=outer)
        g.loop("inc", count=g.scalar("n", ti.i32), name="times", into=outer)
    return build_plan(g)


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 4), n=st.integers(0, 2), flags=st.lists(st.integers(0, 1), min_size=40, max_size=40))
def test_run_plan_and_the_debuggers_cursor_agree(k, n, flags):
    """``run()``/``load_module`` (run_plan) and the debugger (Cursor) launch, read and report alike."""
    plan = nested_plan(k)
    runs = []
    for drive in ("run_plan", "cursor"):
        source = iter(flags * 50)
        launched: list[int] = []
        reads: list[str] = []

        def read_flag(name: str) -> int:
            reads.append(name)
            return next(source)

        if drive == "run_plan":
            events = run_plan(plan, lambda seg: launched.append(seg.id), read_flag, lambda _: n)
        else:
            cursor = Cursor(plan)
            while (visit := cursor.advance(read_flag, lambda _: n)) is not None:
                launched.append(visit.segment.id)
            events = cursor.events
        runs.append((launched, reads, events))
    assert runs[0] == runs[1]


def test_the_unguarded_iterations_between_reads_are_one_compiled_launch(ti_cpu):
    """run() launches a one-segment body's k iterations (and the shorter group before max_iter) as
    one ti.graph holding them: the same iterations and events as k launches."""

    def groups(g: gl.Graph) -> set[int]:
        return {times for _, times in batched_bodies(g, build_plan(g))}

    assert groups(countdown_graph(8, max_iter=100)) == {8, 4}  # 12 groups of 8, then 4 before max_iter
    assert groups(countdown_graph(3, max_iter=100)) == {3}  # the last group is one iteration: no batch
    assert groups(countdown_graph(1)) == set()
    too_big = MAX_BATCH_DISPATCHES + 1  # check_every at most max_iter (GL019)
    assert groups(countdown_graph(too_big, max_iter=too_big)) == set()  # too big to compile as one graph
    for start, k, max_iter in [(5, 4, 10), (10, 4, 10), (3, 8, 100), (97, 8, 100), (200, 8, 100)]:
        compiled = countdown_graph(k, max_iter).compile()
        values = inputs(start)
        compiled.run(values)
        iterations, limited = documented(start, k, max_iter)
        [event] = compiled.last_events
        assert (event.value, event.limit_reached) == (iterations, limited), (start, k, max_iter)
        assert int(values["counter"][0]) == start - iterations
        assert len(compiled.last_segments) == iterations
