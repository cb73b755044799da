"""The guarded form of ``check_every=k``: the flag is read every k iterations, yet the loop stops,
and leaves its buffers, exactly where reading every iteration would (the body is saved before each
group and the last group replayed one read at a time)."""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.
import json
import shutil

import numpy as np
import pytest
import taichi as ti
from hypothesis import given, settings
from hypothesis import strategies as st
from test_check_every import assert_every_runner_takes, countdown, inputs, poisson_graph
from test_export_control_flow import export
from test_textures import fill

import graphlab as gl
from graphlab.core.errors import GraphError, GraphFileError, ReplayError
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.manifest import read_manifest
from graphlab.model.plan import Iterate, build_plan, run_plan
from graphlab.widget.view import graph_view


def countdown_graph(k: int, max_iter: int = 100, *, guarded: bool = True) -> gl.Graph:
    g = gl.Graph("countdown")
    counter = g.ndarray("counter", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.define("tick").dispatch(countdown, counter, flag)
    g.loop("tick", while_=flag, max_iter=max_iter, check_every=k, guarded=guarded, name="solve")
    return g


def exact(flag_clears_after: int, max_iter: int) -> tuple[int, bool]:
    """What a loop reading every iteration runs: until the flag clears, or max_iter."""
    return min(flag_clears_after, max_iter), flag_clears_after > max_iter


@pytest.mark.parametrize(("start", "k", "max_iter"), [(7, 3, 100), (9, 3, 100), (1, 4, 100), (5, 8, 100),
                                                      (13, 8, 100), (250, 8, 100), (19, 8, 20), (20, 8, 20)])  # fmt: skip
def test_run_stops_where_reading_every_iteration_would(ti_cpu, start, k, max_iter):
    guarded = countdown_graph(k, max_iter).compile()
    values = inputs(start)
    guarded.run(values)
    iterations, limited = exact(start, max_iter)
    [event] = guarded.last_events
    assert (event.value, event.limit_reached) == (iterations, limited)
    assert int(values["counter"][0]) == start - iterations  # the extra iterations were undone
    unguarded = countdown_graph(k, max_iter, guarded=False).compile()
    values = inputs(start)
    unguarded.run(values)
    if start % k and start < max_iter:  # the unguarded form overruns: the guard is what made the difference
        assert unguarded.last_events[0].value > iterations


@pytest.mark.parametrize("k", [3, 8])
def test_guarded_jacobi_equals_reading_every_iteration_bit_for_bit(ti_cpu, k):
    f = np.linspace(0.0, 0.02, 48, dtype=np.float32)
    results = {}
    for name, graph in (("every", poisson_graph(1)), ("guarded", poisson_graph(k, guarded=True))):
        compiled = graph.compile()
        u = np.zeros(48, np.float32)
        compiled.run(u=u, f=f, tol=1e-4, flag=np.ones(1, np.int32))
        results[name] = (compiled.last_events[0].value, u)
    assert results["guarded"][0] == results["every"][0]
    assert results["every"][0] % k  # a group was cut short, so the replay really ran
    np.testing.assert_array_equal(results["guarded"][1], results["every"][1])


def test_the_debugger_reads_a_guarded_loop_every_iteration(ti_cpu):
    values = {n: ti.ndarray(ti.i32, shape=1) for n in ("counter", "flag")}
    for n, v in inputs(6).items():
        values[n].from_numpy(v)
    dbg = countdown_graph(4).debug(values)
    stop = dbg.continue_()
    assert stop.reason == "end" and stop.index == 6
    assert [(e.value, e.limit_reached) for e in dbg.events] == [(6, False)]
    assert len(dbg.decisions) == 6
    assert int(values["counter"].to_numpy()[0]) == 0


class Recorder:
    """A rollback that records what run_plan asks of it, in order with launches and reads."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def save(self, loop: Iterate) -> None:
        self.log.append(f"save {loop.node_id}")

    def restore(self, loop: Iterate) -> None:
        self.log.append(f"restore {loop.node_id}")


@settings(max_examples=80, deadline=None)
@given(k=st.integers(2, 5), max_iter=st.integers(1, 12), clears=st.integers(1, 15))
def test_run_plan_saves_each_group_and_replays_only_the_last(k, max_iter, clears):
    """A monotone flag (0 from iteration ``clears`` on): the events of reading every iteration, one
    save per group, and a restore only when a group ended with the flag at 0."""
    plan = build_plan(countdown_graph(k, max_iter))
    log: list[str] = []
    state = {"done": 0, "saved": 0}

    def launch(_segment: object) -> None:
        log.append("launch")
        state["done"] += 1

    def read_flag(_name: str) -> int:
        log.append("read")
        return int(state["done"] < clears)

    class Rolling(Recorder):
        def save(self, loop: Iterate) -> None:
            super().save(loop)
            state["saved"] = state["done"]

        def restore(self, loop: Iterate) -> None:
            super().restore(loop)
            state["done"] = state["saved"]

    events = run_plan(plan, launch, read_flag, lambda _: 0, rollback=Rolling(log))
    iterations, limited = exact(clears, max_iter)
    assert [(e.value, e.limit_reached) for e in events] == [(iterations, limited)]
    last = (iterations - 1) // k  # the group holding the last iteration
    sizes = [min(k, max_iter - g * k) for g in range(last + 1)]
    assert log.count("save solve") == sum(size > 1 for size in sizes)  # one save per group of 2 or more
    replayed = not limited and sizes[-1] > 1  # the read after it found 0: go back and find where
    assert log.count("restore solve") == int(replayed)
    assert log.count("read") == len(sizes) + (iterations - last * k if replayed else 0)


def test_a_replay_that_does_not_clear_the_flag_again_is_an_error(ti_cpu):
    """State outside the graph's args (a Taichi field) is not saved: the replay then differs."""
    ticks = ti.field(ti.i32, shape=())

    @ti.kernel
    def tick_outside(flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
        ticks[None] += 1
        flag[0] = 0 if ticks[None] == 6 else 1  # clears once, at the 6th launch ever

    g = gl.Graph("outside")
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.define("tick").dispatch(tick_outside, flag)
    g.loop("tick", while_=flag, max_iter=100, check_every=3, guarded=True, name="solve")
    compiled = g.compile()
    with pytest.raises(ReplayError, match=r"guarded loop 'solve': its flag read 0 after iteration 6, but replaying "
                                          r"iterations 4-6 .* not safe to repeat .* Drop guarded=True"):  # fmt: skip
        compiled.run(flag=np.ones(1, np.int32))


def test_guarded_needs_check_every_and_a_bool(ti_cpu):
    for bad in ({"check_every": 1, "guarded": True}, {"check_every": 4, "guarded": 1}):
        with pytest.raises(GraphError, match=r"give guarded=True together with check_every=k > 1"):
            g = gl.Graph("g")
            g.define("tick").dispatch(countdown, g.ndarray("c", ti.i32, ndim=1), g.ndarray("f", ti.i32, ndim=1))
            g.loop("tick", while_="f", max_iter=9, name="solve", **bad)


def test_guarded_round_trips_through_the_graph_file(ti_cpu, tmp_path):
    path = tmp_path / "g.graph.json"
    countdown_graph(5).save(path)
    saved = json.loads(path.read_text())
    assert saved["body"][0]["guarded"] is True
    [op] = gl.load(path, kernels=[countdown]).compile().plan.body
    assert isinstance(op, Iterate) and op.guarded and op.check_every == 5
    countdown_graph(5, guarded=False).save(path)
    assert "guarded" not in json.loads(path.read_text())["body"][0]  # files without it stay as they were
    saved["body"][0]["guarded"] = "yes"
    path.write_text(json.dumps(saved))
    with pytest.raises(GraphFileError, match=r"\$\.body\[0\]\.guarded: expected true/false, got a string"):
        gl.load(path, kernels=[countdown])


# --- the exported module: gl.load_module and the generated C host ---------------------------------

ARCHS = ["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)]


@pytest.fixture(scope="module", params=ARCHS)
def exported(request, tmp_path_factory):
    return export(tmp_path_factory, [countdown_graph(4, max_iter=10)], request.param, inputs(6))


@pytest.mark.parametrize("start", [3, 4, 6, 10, 30])
def test_module_and_c_host_stop_where_reading_every_iteration_would(exported, tmp_path, start):
    assert_every_runner_takes(exported, countdown_graph(4, max_iter=10), start, tmp_path, exact(start, 10))


def test_the_manifest_lists_what_a_guarded_loop_saves(exported, tmp_path):
    manifest = json.loads((exported.folder / "manifest.json").read_text())
    [loop] = [op for op in manifest["graphs"][0]["control"] if op["op"] == "loop"]
    assert (loop["guarded"], loop["saves"]) == (True, ["counter", "flag"])
    [graph] = read_manifest(exported.folder).graphs
    [op] = [op for op in graph.control or () if isinstance(op, Iterate)]
    assert (op.guarded, op.saves) == (True, ("counter", "flag"))
    broken = [
        ({"guarded": "yes"}, r"\.guarded: expected true or false, got 'yes'"),
        ({"check_every": 1}, r"\.guarded: a guarded loop is a while loop with check_every above 1"),
        ({"saves": ["counter", "nope"]}, r"\.saves\[1\]: 'nope' is not an ndarray arg of this graph"),
    ]
    for i, (change, message) in enumerate(broken):
        folder = tmp_path / f"broken{i}"
        shutil.copytree(exported.folder, folder)
        (folder / "manifest.json").write_text(
            json.dumps(manifest).replace(json.dumps(loop), json.dumps({**loop, **change}))
        )
        with pytest.raises(ManifestError, match=message):
            read_manifest(folder)


@pytest.mark.vulkan
def test_a_guarded_loop_that_writes_a_texture_is_refused_before_anything_runs(ti_vulkan, tmp_path):
    g = gl.Graph("paint")
    counter = g.ndarray("counter", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    body = g.define("paint_once")
    body.dispatch(fill, g.rw_texture("tex", 2, ti.Format.r32f), g.ndarray("y", ti.f32, ndim=2), g.scalar("s", ti.f32))
    body.dispatch(countdown, counter, flag)
    g.loop(body, while_=flag, max_iter=9, check_every=3, guarded=True, name="solve")
    [found] = [d for d in g.validate() if d.code == "GL026"]
    assert (found.severity, found.node, found.arg) == ("error", "solve", "tex")
    message = r"guarded loop 'solve' writes texture 'tex', which graphlab cannot copy aside .* drop guarded=True"
    with pytest.raises(GraphError, match=message):
        g.compile()
    with pytest.raises(GraphError, match=message):
        gl.export([g], tmp_path / "paint", "vulkan", progress=False)
    assert not (tmp_path / "paint").exists()  # nothing half-written


def test_the_widget_view_says_how_a_loop_reads_its_flag(ti_cpu):
    """The side panel's loop text comes from these two fields (extension/test/loopText.test.ts)."""

    def loop_fields(g: gl.Graph) -> tuple[int, bool]:
        [loop] = [n for n in graph_view(g)["nodes"] if n["kind"] == "loop"]
        return loop["check_every"], loop["guarded"]

    assert loop_fields(countdown_graph(4)) == (4, True)
    assert loop_fields(countdown_graph(4, guarded=False)) == (4, False)


@ti.kernel
def every_third(counter: ti.types.ndarray(dtype=ti.i32, ndim=1), other: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    other[0] = 1 if counter[0] % 3 == 0 else 0


@ti.kernel
def add_ten(total: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    total[0] += 10


@pytest.mark.parametrize("k", [1, 4])
def test_a_guarded_body_with_a_branch_inside_is_saved_without_a_batch(ti_cpu, k):
    """A body holding control flow is several segments (no batch graph): the save then runs as its own
    copy graph before the group. The branch's writes are undone and replayed like the rest."""
    g = gl.Graph("branchy")
    counter = g.ndarray("counter", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    other = g.ndarray("other", ti.i32, ndim=1, shape=(1,))
    total = g.ndarray("total", ti.i32, ndim=1, shape=(1,))
    body = g.define("tick")
    body.dispatch(countdown, counter, flag)
    body.dispatch(every_third, counter, other)
    g.define("bonus").dispatch(add_ten, total)
    g.cond(other, then="bonus", name="maybe", into=body)
    g.loop(body, while_=flag, max_iter=50, check_every=k, guarded=k > 1, name="solve")
    compiled = g.compile()
    values = {**inputs(14), "other": np.zeros(1, np.int32), "total": np.zeros(1, np.int32)}
    compiled.run(values)
    loop = [e for e in compiled.last_events if e.node == "solve"]
    assert [(e.value, e.limit_reached) for e in loop] == [(14, False)]
    assert int(values["counter"][0]) == 0
    assert int(values["total"][0]) == 10 * len([c for c in range(13, -1, -1) if c % 3 == 0])  # counters 12, 9, ... 0


def test_run_plan_refuses_a_guarded_loop_without_a_rollback():
    """A caller of run_plan that cannot save and restore must not run a guarded loop unguarded."""
    plan = build_plan(countdown_graph(4))
    launched: list[object] = []
    with pytest.raises(GraphError, match=r"guarded loop 'solve' needs a rollback to run"):
        run_plan(plan, launched.append, lambda _: 1, lambda _: 0)
    assert launched == []  # refused before the first launch
