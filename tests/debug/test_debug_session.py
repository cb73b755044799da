"""The step debugger (graphlab.debug.session) on Taichi's mpm88 graph, on one CPU thread.

Kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import numpy as np
import pytest
import taichi as ti

import graphlab as gl
from graphlab.api.examples import copy_buffers, load_taichi_example, mpm88_buffers, mpm88_graph
from graphlab.debug import DebugError, DebugOptions, StaleViewError
from graphlab.debug.expr import ExprError
from graphlab.debug.pictures import png_size

NAMES = ("x", "v", "C", "J", "grid_v", "grid_m")
NAN_REP = 37


@ti.kernel
def plant_nan(grid_v: ti.types.ndarray(ndim=2), counter: ti.types.ndarray(dtype=ti.i32, ndim=1), at: ti.i32):
    for i, j in grid_v:
        if counter[0] == at and i == 64 and j == 65:
            q = ti.bit_cast(ti.u32(0x7FC00000), ti.f32)
            grid_v[i, j] = ti.Vector([q, q])


@ti.kernel
def tick(counter: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    counter[0] += 1


@ti.kernel
def bump(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] += 1.0


def bits(buffers, names=NAMES):
    return {n: buffers[n].to_numpy().tobytes() for n in names}


def planted_graph(m, reps: int = 40) -> gl.Graph:
    """mpm88's substep plus a kernel writing NaN into grid_v in repetition ``NAN_REP`` (after g2p
    read it, so the NaN never reaches the particles) and a repetition counter."""
    g = mpm88_graph(m, reps)
    counter = g.ndarray("counter", ti.i32, ndim=1)
    at = g.scalar("at", ti.i32)
    g.insert(plant_nan, into="substep", index=4, bindings={"grid_v": "grid_v", "counter": counter, "at": at})
    g.insert(tick, into="substep", index=5, bindings={"counter": counter})
    return g


@pytest.fixture
def planted(mpm88):
    g = planted_graph(mpm88)
    buffers = mpm88_buffers(mpm88)
    buffers["counter"] = ti.ndarray(ti.i32, shape=1)
    return g, buffers


def test_stepping_every_dispatch_matches_compiled_graph_bit_for_bit(mpm88):
    g = mpm88_graph(mpm88, 20)
    ours = mpm88_buffers(mpm88)
    theirs = copy_buffers(ours)
    g.compile().run(theirs)
    dbg = g.debug(ours)
    stops = [dbg.step() for _ in range(dbg.step_count)]
    assert [s.reason for s in stops] == ["step"] * 79 + ["end"]
    assert stops[1].step_id == "substep[0]/substep_update_grid_v" and stops[1].last_step_id == "substep[0]/substep_p2g"
    assert set(stops[1].stats) == {"grid_v", "grid_m"}  # what p2g wrote
    assert bits(ours) == bits(theirs)
    assert dbg.step().reason == "end" and dbg.position.at_end


def test_stop_statistics_are_read_on_the_device_while_they_describe_the_stop(mpm88):
    dbg = mpm88_graph(mpm88, 20).debug(mpm88_buffers(mpm88))
    dbg.step()
    fresh = dbg.step()  # p2g
    grid_m = dbg.buffers["grid_m"].to_numpy()
    assert fresh.stats["grid_m"].max == grid_m.max() and fresh.stats["grid_m"].sum == pytest.approx(grid_m.sum())
    late = dbg.step()
    dbg.step()
    assert list(late.stats) == ["grid_v"]  # the names are known without reducing anything
    with pytest.raises(StaleViewError, match="moved on"):
        late.stats["grid_v"]
    assert "statistics not read" in str(late) and "grid_m: min 0" in str(fresh)


def test_continue_runs_compiled_segments_with_the_same_bits(mpm88):
    g = mpm88_graph(mpm88, 20)
    ours = mpm88_buffers(mpm88)
    theirs = copy_buffers(ours)
    g.compile().run(theirs)
    dbg = g.debug(ours)
    dbg.step()  # from step 1 the span is no longer the whole graph: partial repetition + chunks
    stop = dbg.continue_()
    assert (stop.reason, stop.index, stop.step_id) == ("end", 80, None)
    assert bits(ours) == bits(theirs)
    keys = dbg.segments
    assert ("reps", "substep", 16) in keys and len(keys) <= 5
    assert "fast-forward" in str(dbg.timing())


def test_node_and_step_breakpoints_stop_before_the_dispatch(mpm88):
    dbg = mpm88_graph(mpm88, 20).debug(mpm88_buffers(mpm88))
    node = dbg.break_at("substep/substep_p2g")
    assert [dbg.continue_().index for _ in range(3)] == [1, 5, 9]
    assert node.hits == 3
    dbg.clear_breakpoints()
    one = dbg.break_at("substep[12]/substep_g2p")
    stop = dbg.continue_()
    assert (stop.reason, stop.index, stop.step_id, stop.breakpoint) == (
        "breakpoint",
        51,
        "substep[12]/substep_g2p",
        one,
    )
    dbg.break_at("substep[15]")  # a repetition: before its first dispatch
    assert dbg.continue_().step_id == "substep[15]/substep_reset_grid"
    assert [bp.target for bp in dbg.breakpoints] == ["substep[12]/substep_g2p", "substep[15]"]
    dbg.remove_breakpoint(one)
    assert dbg.continue_().reason == "end"


def test_step_over_and_run_to(mpm88):
    dbg = mpm88_graph(mpm88, 20).debug(mpm88_buffers(mpm88))
    dbg.step()
    stop = dbg.step_over()  # the rest of repetition 0
    assert (stop.reason, stop.index, stop.last_step_id) == ("step", 4, "substep[0]/substep_g2p")
    assert dbg.run_to("substep/substep_g2p").step_id == "substep[1]/substep_g2p"
    assert dbg.run_to("substep[10]/substep_p2g").index == 41
    assert dbg.run_to(60).index == 60
    with pytest.raises(DebugError, match="behind"):
        dbg.run_to(3)


def test_condition_stops_at_the_dispatch_where_it_turns_true(planted):
    g, buffers = planted
    dbg = g.debug(buffers, at=NAN_REP)
    bp = dbg.break_when("counter.max() >= 5")
    dbg.watch("counter.max()")
    stop = dbg.continue_()
    assert (stop.reason, stop.last_step_id, stop.index) == ("condition", "substep[4]/tick", 30)
    assert stop.breakpoint is bp and stop.watches == {"counter.max()": 5}
    dbg.break_at("substep[20]/substep_p2g")
    assert dbg.continue_().index == 20 * 6 + 1  # still true: a condition stops only when it turns true


def test_condition_already_true_stops_at_once_and_says_so(planted):
    g, buffers = planted
    dbg = g.debug(buffers, at=NAN_REP)
    dbg.break_when("counter.max() >= 5")
    assert dbg.continue_().last_step_id == "substep[4]/tick"  # turns true here
    bp = dbg.break_when("counter.max() >= 1")  # new, and true already
    stop = dbg.continue_()
    assert (stop.reason, stop.moved, stop.breakpoint) == ("condition", 0, bp)
    assert "already true at step 30" in stop.note
    assert dbg.continue_().reason == "end"  # known now: it stops again only when it turns true


def test_condition_checked_every_dispatch(planted):
    g, buffers = planted
    dbg = g.debug(buffers, at=NAN_REP)
    dbg.break_when("grid_m.max() > 0", every="dispatch")
    stops = [dbg.continue_() for _ in range(2)]
    assert [s.last_step_id for s in stops] == ["substep[0]/substep_p2g", "substep[1]/substep_p2g"]


def test_find_first_nonfinite_names_the_planted_dispatch(planted):
    g, buffers = planted
    dbg = g.debug(buffers, at=NAN_REP)
    dbg.break_at("substep/substep_p2g")  # the hunt does not stop at breakpoints
    stop = dbg.find_first_nonfinite()
    hit = stop.nonfinite
    assert stop.reason == "nonfinite"
    assert hit.step.step_id == f"substep[{NAN_REP}]/plant_nan" and hit.step.kernel == "plant_nan"
    assert (hit.buffer, hit.nan, hit.inf, hit.first_index) == ("grid_v", 2, 0, (64, 65, 0))
    assert stop.last_step_id == hit.step.step_id and stop.index == NAN_REP * 6 + 5
    assert dbg.inspect("grid_v").stats.nan == 2
    assert np.isfinite(dbg.inspect("x").numpy()).all()
    assert dbg.back().index == NAN_REP * 6 + 4 and dbg.inspect("grid_v").stats.nan == 0
    dbg.step()  # onto the NaN again: a hunt from here reports it once, then runs on to where it spreads
    again = dbg.find_first_nonfinite()
    assert again.nonfinite.step is None and "already" in again.note and again.already
    past = dbg.find_first_nonfinite()  # the next grid reset clears it before g2p reads: it never spreads
    assert (past.reason, past.nonfinite, past.index) == ("end", None, 40 * 6)
    assert np.isfinite(dbg.inspect("x").numpy()).all()


def test_inspect_stats_slices_and_pictures(mpm88):
    dbg = mpm88_graph(mpm88, 20).debug(mpm88_buffers(mpm88))
    dbg.run_to("substep[3]/substep_g2p")
    grid_m = dbg.inspect("grid_m")
    full = grid_m.numpy()
    assert grid_m.shape == (128, 128) and grid_m.dtype == "f32"
    assert grid_m.stats.max == full.max() and grid_m.stats.count == full.size
    assert np.array_equal(grid_m.numpy(np.s_[10:20, ::3]), full[10:20, ::3])
    assert np.array_equal(grid_m[-1, 5:1:-2], full[-1, 5:1:-2])
    assert grid_m.last_writer.step_id == "substep[3]/substep_p2g"
    bundle = grid_m._repr_mimebundle_()
    assert png_size(bundle["image/png"])[0] >= 128 and "<table>" in bundle["text/html"]
    grid_v = dbg.inspect("grid_v")
    assert len(grid_v.stats.components) == 2 and grid_v._repr_html_().count("<img") == 2
    assert np.array_equal(grid_v.numpy(np.s_[3, :, 1]), grid_v.numpy()[3, :, 1])
    assert "<svg" in dbg.inspect("x")._repr_mimebundle_()["image/svg+xml"]  # particles: a scatter
    assert "polyline" in dbg.inspect("J")._repr_html_()  # 1-D scalars: a line plot
    dbg.step()
    with pytest.raises(StaleViewError, match="inspect"):
        grid_m.numpy()
    past = dbg.inspect("grid_m", at="substep[3]/substep_g2p")
    assert past.numpy().tobytes() == full.tobytes()
    with pytest.raises(DebugError, match="buffers: x, v"):
        dbg.inspect("nope")


def test_diff_between_two_steps(mpm88):
    dbg = mpm88_graph(mpm88, 20).debug(mpm88_buffers(mpm88))
    dbg.run_to(10)
    a = dbg.inspect("grid_v").numpy()
    dbg.run_to(14)
    b = dbg.inspect("grid_v").numpy()
    dbg.continue_()
    d = dbg.diff("grid_v", 10, 14)  # both states are rebuilt: the session is at the end
    assert d.stats.changed == int((a != b).sum())
    assert np.allclose(d.map(), np.linalg.norm(b.astype(np.float64) - a, axis=-1))
    assert "<img" in d._repr_html_() and "step 10 -> step 14" in str(d)
    assert dbg.position.at_end


def test_timing_table_per_step_and_per_node(mpm88):
    dbg = mpm88_graph(mpm88, 20).debug(mpm88_buffers(mpm88))
    for _ in range(8):
        dbg.step()
    report = dbg.timing()
    p2g = report.node("substep/substep_p2g")
    assert p2g.calls == 2 and p2g.total_s > 0
    assert sum(r.share for r in report.nodes) == pytest.approx(1.0)
    assert [r.step_id for r in report.steps][:2] == ["substep[0]/substep_reset_grid", "substep[0]/substep_p2g"]
    text = str(report)
    assert "substep/substep_g2p" in text and "share" in text
    assert report.to_dict()["nodes"][0]["node_id"] == "substep/substep_reset_grid"
    profile = dbg.profile(steps=4)
    assert profile.steps[0].step_id == "substep[2]/substep_reset_grid"
    assert dbg.position.index == 8


def test_parity_one_thread_is_bit_identical(mpm88):
    dbg = mpm88_graph(mpm88, 20).debug(mpm88_buffers(mpm88))
    dbg.step()
    report = dbg.parity()
    assert report.identical and report.timing_dependent == ()
    assert [r.buffer for r in report.rows] == list(NAMES)
    assert "bit-identical" in str(report) and dbg.position.index == 1


def test_parity_names_float_atomics_on_several_threads():
    ti.init(arch=ti.cpu, cpu_max_num_threads=2, log_level=ti.WARN)
    m = load_taichi_example("mpm88_graph")
    report = mpm88_graph(m, 4).debug(mpm88_buffers(m)).parity()
    assert any(note.startswith("substep/substep_p2g") for note in report.timing_dependent)
    assert len(report.rows) == 6  # every buffer is reported, differences or not


def test_bad_targets_and_expressions_say_what_to_do(mpm88):
    dbg = mpm88_graph(mpm88, 20).debug(mpm88_buffers(mpm88))
    with pytest.raises(gl.GraphError, match="no node"):
        dbg.break_at("substep/nope")
    with pytest.raises(gl.GraphError, match="did you mean"):
        dbg.break_at("substep[2]/substep_p2q")
    with pytest.raises(ExprError, match="column"):
        dbg.break_when("grid_m.max( > 3")
    with pytest.raises(DebugError, match="substep\\[0\\]/substep_p2g"):
        dbg.goto("substep/substep_p2g")
    with pytest.raises(DebugError, match="0..80"):
        dbg.goto(81)
    with pytest.raises(gl.GraphRunError, match="missing"):
        mpm88_graph(mpm88, 2).debug(x=mpm88_buffers(mpm88)["x"])


def test_stale_runtime_is_refused(mpm88):
    dbg = mpm88_graph(mpm88, 2).debug(mpm88_buffers(mpm88))
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    with pytest.raises(gl.StaleGraphError, match="g.debug"):
        dbg.step()


def test_long_continue_compiles_few_segments():
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    g = gl.Graph("counting")
    x = g.ndarray("x", ti.f32, ndim=1)
    with g.sequence("loop", repeat=500) as s:
        s.dispatch(bump, x)
        s.dispatch(bump, x, name="bump_again")
    values = ti.ndarray(ti.f32, shape=8)
    dbg = g.debug(x=values, options=DebugOptions(stats_on_stop=False))
    dbg.step()
    assert dbg.continue_().reason == "end"
    assert values.to_numpy().tolist() == [1000.0] * 8
    first = list(dbg.segments)
    assert len(first) <= 10  # 499 repetitions in power-of-two chunks, plus the partial one
    dbg.restart()
    dbg.step()
    dbg.continue_()
    assert dbg.segments == first  # cached by shape: nothing new to build
    assert dbg.goto(3).index == 3 and values.to_numpy()[0] == 3.0
