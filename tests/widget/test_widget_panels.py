"""The widget's debug and inspect panels, driven the way the browser drives them: custom messages in,
traits (JSON, and bytes for arrays) and replies out, over a real debug session on Taichi's CPU backend.
"""

import numpy as np
import pytest
import taichi as ti
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl


@ti.kernel
def place(x: ti.types.ndarray(dtype=ti.math.vec2, ndim=1)):
    for i in x:
        x[i] = ti.Vector([0.1 + 0.8 * (i % 8) / 8.0, 0.1 + 0.8 * (i // 8) / 8.0])


@ti.kernel
def splat(x: ti.types.ndarray(dtype=ti.math.vec2, ndim=1), grid: ti.types.ndarray(dtype=ti.f32, ndim=2)):
    for i in x:
        c = ti.cast(x[i] * grid.shape[0], ti.i32)
        grid[c[0], c[1]] += 1.0


@ti.kernel
def drift(x: ti.types.ndarray(dtype=ti.math.vec2, ndim=1), dt: ti.f32):
    for i in x:
        x[i] += ti.Vector([dt, 0.5 * dt])


@ti.kernel
def clear(grid: ti.types.ndarray(dtype=ti.f32, ndim=2)):
    for I in ti.grouped(grid):
        grid[I] = 0.0


@ti.kernel
def poison(grid: ti.types.ndarray(dtype=ti.f32, ndim=2), at: ti.i32):
    for I in ti.grouped(grid):
        if I[0] == at and I[1] == at:
            grid[I] = ti.math.nan


@ti.kernel
def checked(x: ti.types.ndarray(dtype=ti.math.vec2, ndim=1), limit: ti.f32):
    for i in x:
        assert x[i][0] < limit, "a particle left the box"


def particle_graph(repeat=3, with_poison=False, with_check=False):
    g = gl.Graph("particles")
    x = g.ndarray("x", ti.math.vec2, ndim=1, shape="n")
    grid = g.ndarray("grid", ti.f32, ndim=2, shape=("G", "G"))
    dt = g.scalar("dt", ti.f32)
    g.dispatch(place, x)
    with g.sequence("substep", repeat=repeat) as s:
        s.dispatch(clear, grid)
        s.dispatch(splat, x, grid)
        s.dispatch(drift, x, dt)
        if with_check:
            s.dispatch(checked, x, g.scalar("limit", ti.f32))
    if with_poison:
        g.dispatch(poison, grid, g.scalar("at", ti.i32))
    return g


def values(**extra):
    return {
        "x": ti.Vector.ndarray(2, ti.f32, shape=64),
        "grid": ti.ndarray(ti.f32, shape=(16, 16)),
        "dt": 0.01,
        **extra,
    }


@pytest.fixture
def ed(ti_cpu):
    widget = gl.editor(particle_graph(), kernels=[], access="ast", values=values())
    yield widget
    widget.close()


def debug(widget, action, request=1, **fields):
    session = widget.debugger["session"]
    return deliver(widget, {"kind": "debug", "action": action, "request": request, "session": session, **fields})


def started(widget):
    reply = deliver(widget, {"kind": "debug", "action": "start", "request": 1})
    assert reply["ok"], reply
    return widget.session


def floats(data, dtype, shape):
    return np.frombuffer(data, dtype="<f4" if dtype == "f32" else "<f8").reshape(shape)


# --- the debug panel ------------------------------------------------------------------------------------


def test_start_uses_the_values_the_editor_was_given(ed):
    assert ed.debugger["active"] is False and ed.debugger["session"] == 0
    session = started(ed)
    view = ed.debugger
    assert view["active"] and view["session"] == 1
    assert view["position"] == {
        "index": 0,
        "total": 1 + 3 * 3,
        "step_id": "place",
        "node_id": "place",
        "last_step_id": None,
        "total_known": True,
    }
    assert view["buffers"] == ["x", "grid"] and session.step_count == 10


def test_start_without_values_says_how_to_give_them(ti_cpu):
    widget = gl.editor(particle_graph(), kernels=[], access="ast")
    reply = deliver(widget, {"kind": "debug", "action": "start", "request": 4})
    assert reply["ok"] is False and reply["request"] == 4
    assert "values=" in reply["error"] and "editor.debug" in reply["error"]
    assert widget.debugger["active"] is False and widget.session is None


def test_step_moves_the_session_and_the_panel_shows_the_stop(ed):
    started(ed)
    reply = debug(ed, "step", request=2)
    assert reply == {"kind": "reply", "request": 2, "ok": True, "error": None}
    view = ed.debugger
    assert view["position"]["index"] == 1 and view["position"]["step_id"] == "substep[0]/clear"
    assert view["reason"] == "step" and view["message"].startswith("stepped at step 1/10")
    assert [t["node_id"] for t in view["timing"]] == ["place"] and view["timing"][0]["calls"] == 1


@pytest.mark.parametrize(
    ("action", "index", "reason"),
    [("step_over", 4, "step"), ("continue", 10, "end"), ("restart", 0, "start"), ("back", 1, "step")],
)
def test_each_control_is_the_session_call_of_that_name(ed, action, index, reason):
    started(ed)
    debug(ed, "step")
    debug(ed, "step")
    assert debug(ed, action)["ok"]
    assert (ed.debugger["position"]["index"], ed.debugger["reason"]) == (index, reason)
    assert ed.session.position.index == index


def test_goto_travels_the_timeline_both_ways(ed):
    started(ed)
    assert debug(ed, "goto", target=7)["ok"] and ed.session.position.index == 7
    assert debug(ed, "goto", target=2)["ok"] and ed.debugger["position"]["step_id"] == "substep[0]/splat"


def test_toggling_a_node_sets_then_removes_its_breakpoint_and_continue_stops_there(ed):
    started(ed)
    toggle = {"kind": "breakpoint", "op": "toggle", "request": 3, "session": 1, "node": "substep/drift"}
    assert deliver(ed, toggle)["ok"]
    assert [(b["kind"], b["target"]) for b in ed.debugger["breakpoints"]] == [("node", "substep/drift")]
    debug(ed, "continue")
    assert ed.debugger["reason"] == "breakpoint" and ed.debugger["position"]["step_id"] == "substep[0]/drift"
    assert ed.debugger["breakpoints"][0]["hits"] == 1
    assert deliver(ed, toggle)["ok"] and ed.debugger["breakpoints"] == []
    debug(ed, "continue")
    assert ed.debugger["reason"] == "end"


def test_a_condition_breakpoint_and_a_watch_come_from_the_panel(ed):
    started(ed)
    cond = {"kind": "breakpoint", "op": "condition", "request": 5, "session": 1, "expression": "grid.max() > 0"}
    assert deliver(ed, cond)["ok"]
    assert deliver(ed, {"kind": "watch", "op": "add", "request": 6, "session": 1, "expression": "grid.sum()"})["ok"]
    debug(ed, "continue")
    view = ed.debugger
    assert view["reason"] == "condition" and view["position"]["last_step_id"] == "substep[0]/splat"
    assert view["watches"] == [{"text": "grid.sum()", "value": 64.0}]
    bp = view["breakpoints"][0]
    assert deliver(ed, {"kind": "breakpoint", "op": "remove", "request": 7, "session": 1, "id": bp["id"]})["ok"]
    assert deliver(ed, {"kind": "watch", "op": "remove", "request": 8, "session": 1, "expression": "grid.sum()"})["ok"]
    assert ed.debugger["breakpoints"] == [] and ed.debugger["watches"] == []


def test_a_bad_expression_is_refused_and_nothing_is_added(ed):
    started(ed)
    reply = deliver(ed, {"kind": "watch", "op": "add", "request": 9, "session": 1, "expression": "grid.max("})
    assert reply["ok"] is False and "syntax" in reply["error"]
    reply = deliver(ed, {"kind": "breakpoint", "op": "condition", "request": 10, "session": 1, "expression": "nope > 1"})
    assert reply["ok"] is False and "nope" in reply["error"]
    assert ed.debugger["watches"] == [] and ed.debugger["breakpoints"] == []


def test_find_nonfinite_stops_at_the_planted_nan_and_inspects_it(ti_cpu):
    widget = gl.editor(particle_graph(with_poison=True), kernels=[], access="ast", values=values(at=5))
    started(widget)
    assert debug(widget, "find_nonfinite")["ok"]
    view = widget.debugger
    assert view["reason"] == "nonfinite"
    assert view["nonfinite"] == {"step_id": "poison", "node_id": "poison", "buffer": "grid", "nan": 1, "inf": 0,
                                 "first_index": [5, 5]}  # fmt: skip
    inspect = widget.inspect
    assert inspect["buffer"] == "grid" and inspect["stats"]["nan"] == 1 and inspect["stats"]["first_nonfinite"] == [5, 5]
    page = inspect["page"]
    assert page["offset"] <= 5 * 16 + 5 < page["offset"] + page["count"]
    values_ = floats(widget.inspect_page, "f64", (page["count"], 1))
    assert np.isnan(values_[5 * 16 + 5 - page["offset"], 0])
    pic = floats(widget.inspect_picture, inspect["picture"]["dtype"], inspect["picture"]["shape"])
    assert np.isnan(pic[5, 5]) and np.isfinite(np.delete(pic.ravel(), 5 * 16 + 5)).all()


def test_a_failing_kernel_shows_on_its_node_and_the_session_stays_usable(ti_cpu):
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, debug=True, log_level=ti.WARN)
    widget = gl.editor(particle_graph(repeat=8, with_check=True), kernels=[], access="ast",
                       values=values(limit=0.85, dt=0.05))  # fmt: skip
    started(widget)
    assert debug(widget, "continue")["ok"], "a fault is a stop, not a refused message"
    view = widget.debugger
    assert view["reason"] == "fault"
    assert view["fault"]["node_id"] == "substep/checked" and "left the box" in view["fault"]["error"]
    assert [f["node_id"] for f in view["faults"]] == ["substep/checked"]
    failed_at = view["position"]["index"]
    assert debug(widget, "back")["ok"] and widget.debugger["position"]["index"] == failed_at - 1
    assert debug(widget, "restart")["ok"] and widget.debugger["position"]["index"] == 0
    assert widget.inspect["stats"]["count"] > 0


# --- the inspect panel ----------------------------------------------------------------------------------


def test_statistics_are_the_debuggers_device_statistics(ed):
    session = started(ed)
    debug(ed, "goto", target=3)
    assert deliver(ed, {"kind": "inspect", "request": 2, "session": 1, "buffer": "grid", "component": None})["ok"]
    stats = session.inspect("grid").stats
    shown = ed.inspect["stats"]
    assert (shown["min"], shown["max"], shown["mean"], shown["std"]) == (stats.min, stats.max, stats.mean, stats.std)
    assert (shown["nan"], shown["inf"], shown["zeros"], shown["count"]) == (0, 0, stats.zeros, 256)
    assert ed.inspect["position"] == 3 and ed.inspect["last_writer"] == "substep[0]/splat"


def test_a_heat_map_travels_as_bytes_with_its_shape(ed):
    session = started(ed)
    debug(ed, "goto", target=3)
    deliver(ed, {"kind": "inspect", "request": 2, "session": 1, "buffer": "grid", "component": None})
    pic = ed.inspect["picture"]
    assert pic["kind"] == "heatmap" and pic["shape"] == [16, 16] and pic["dtype"] == "f32" and pic["step"] == [1, 1]
    assert isinstance(ed.inspect_picture, bytes) and len(ed.inspect_picture) == 16 * 16 * 4
    np.testing.assert_array_equal(floats(ed.inspect_picture, "f32", (16, 16)), session.inspect("grid").numpy())


def test_particles_are_a_scatter_plot_and_one_component_a_line(ed):
    session = started(ed)
    debug(ed, "step")
    pic = ed.inspect["picture"]
    assert ed.inspect["buffer"] == "x" and pic["kind"] == "scatter" and pic["shape"] == [64, 2]
    np.testing.assert_array_equal(floats(ed.inspect_picture, "f32", (64, 2)), session.inspect("x").numpy())
    assert ed.inspect["components"] == ["[0]", "[1]"]
    assert [s["label"] for s in ed.inspect["component_stats"]] == ["[0]", "[1]"]
    deliver(ed, {"kind": "inspect", "request": 2, "session": 1, "buffer": "x", "component": 1})
    pic = ed.inspect["picture"]
    assert pic["kind"] == "line" and pic["shape"] == [64, 2] and pic["label"] == "x[1]"
    env = floats(ed.inspect_picture, "f32", (64, 2))
    np.testing.assert_array_equal(env[:, 0], session.inspect("x").numpy()[:, 1])


def test_the_value_table_pages_through_the_buffer(ed):
    session = started(ed)
    debug(ed, "step")
    deliver(ed, {"kind": "inspect", "request": 2, "session": 1, "buffer": "x", "component": None, "page": 1})
    page = ed.inspect["page"]
    assert page == {"page": 1, "pages": 2, "size": 50, "offset": 50, "count": 14, "total": 64, "columns": ["[0]", "[1]"]}
    np.testing.assert_array_equal(floats(ed.inspect_page, "f64", (14, 2)), session.inspect("x").numpy()[50:])
    deliver(ed, {"kind": "inspect", "request": 3, "session": 1, "buffer": "x", "component": None, "page": 99})
    assert ed.inspect["page"]["page"] == 1, "a page past the end shows the last one"


def test_the_diff_is_against_the_previous_position(ed):
    session = started(ed)
    debug(ed, "goto", target=3)
    debug(ed, "step")  # substep[0]/drift moves every particle
    diff = ed.inspect["diff"]
    expected = session.diff("x", 3)
    assert (diff["from"], diff["to"], diff["changed"], diff["count"]) == (3, 4, expected.stats.changed, 128)
    assert diff["changed"] == 128 and diff["max_abs"] == pytest.approx(0.01)
    assert diff["picture"]["kind"] == "line"
    dmap = floats(ed.inspect_diff, "f32", diff["picture"]["shape"])
    np.testing.assert_allclose(dmap[:, 1], expected.map(), rtol=1e-6)


def test_bytes_travel_as_binary_buffers_not_json(ed):
    started(ed)
    debug(ed, "step")
    state, paths, buffers = next(u for u in reversed(ed.comm.updates_with_buffers()) if "inspect_picture" in u[0] or
                                 ["inspect_picture"] in u[1])  # fmt: skip
    assert ["inspect_picture"] in paths and "inspect_picture" not in state
    assert any(bytes(b) == ed.inspect_picture for b in buffers)


def test_a_big_buffer_is_downsampled_in_python_keeping_its_nans(ti_cpu):
    g = gl.Graph("big")
    grid = g.ndarray("grid", ti.f32, ndim=2)
    g.dispatch(poison, grid, g.scalar("at", ti.i32))
    field = ti.ndarray(ti.f32, shape=(1000, 700))
    field.from_numpy(np.random.default_rng(0).random((1000, 700), dtype=np.float32))
    widget = gl.editor(g, kernels=[], access="ast", values={"grid": field, "at": 333})
    started(widget)
    debug(widget, "step")
    pic = widget.inspect["picture"]
    assert pic["shape"] == [250, 234] and pic["step"] == [4, 3]  # at most 256 a side
    values_ = floats(widget.inspect_picture, "f32", pic["shape"])
    assert np.isnan(values_[333 // 4, 333 // 3]) and np.isnan(values_).sum() == 1
    assert len(widget.inspect_picture) == 250 * 234 * 4


# --- changes made from Python ---------------------------------------------------------------------------


def test_a_session_started_in_python_shows_in_the_panel(ed):
    session = ed.debug(values(dt=0.02))
    assert ed.session is session and ed.debugger["active"] and ed.debugger["session"] == 1
    session.step()
    session.break_at("substep/splat")
    assert ed.refresh() is True
    assert ed.debugger["position"]["index"] == 1 and ed.debugger["breakpoints"][0]["target"] == "substep/splat"
    assert ed.inspect["diff"]["from"] == 0
    assert ed.refresh() is False, "nothing changed since"
    assert ed.debugger["reason"] is None, "without the Stop the panel knows where, not why"


def test_values_given_by_name_replace_the_editors_of_that_name(ed):
    ed.debug(x=ti.Vector.ndarray(2, ti.f32, shape=32))  # the editor has an x of 64 already: no clash
    assert ed.debugger["active"] and ed.inspect["buffer"] == "x" and ed.inspect["shape"] == [32]
    debug(ed, "stop")
    assert started(ed) is not None and ed.inspect["shape"] == [32], "the Debug button uses them next"


def test_the_stop_a_cell_ends_with_says_why_the_session_stopped(ti_cpu):
    widget = gl.editor(particle_graph(with_poison=True), kernels=[], access="ast", values=values(at=2))
    session = widget.debug()
    stop = session.find_first_nonfinite()
    assert widget.refresh(stop) is True
    assert widget.debugger["reason"] == "nonfinite" and widget.debugger["nonfinite"]["buffer"] == "grid"
    assert widget.inspect["buffer"] == "grid" and widget.inspect["stats"]["nan"] == 1


def test_editing_the_graph_ends_the_session(ed):
    started(ed)
    ed.model.set_repeat("substep", 5)
    assert ed.debugger["active"] is False and "edited" in ed.debugger["ended"]
    reply = debug(ed, "step")
    assert reply["ok"] is False and "edited" in reply["error"]


# --- robustness -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ({"kind": "debug", "action": "fly", "request": 1, "session": 1}, "unknown action 'fly'"),
        ({"kind": "debug", "action": "step", "request": 1}, "field 'session' is missing"),
        ({"kind": "debug", "action": "step", "session": 1}, "field 'request' is missing"),
        ({"kind": "debug", "action": "goto", "request": 1, "session": 1, "target": "3"}, "must be a step index"),
        ({"kind": "debug", "action": "step", "request": 1, "session": 1, "extra": 1}, "unexpected field(s) 'extra'"),
        ({"kind": "breakpoint", "op": "toggle", "request": 1, "session": 1, "node": 3}, "must be a node id"),
        ({"kind": "breakpoint", "op": "condition", "request": 1, "session": 1, "expression": " "}, "must be a condition"),
        ({"kind": "breakpoint", "op": "condition", "request": 1, "session": 1, "expression": "x.max() > 1",
          "every": "often"}, "'repetition' or 'dispatch'"),
        ({"kind": "watch", "op": "peek", "request": 1, "session": 1, "expression": "x"}, "unknown op 'peek'"),
        ({"kind": "inspect", "request": 1, "session": 1, "buffer": "x", "page": -1.5}, "must be a page number"),
        ({"kind": "inspect", "request": 1, "session": 1, "buffer": ["x"]}, "must be a buffer"),
        ({"kind": "export", "request": 1, "arch": "metal", "path": "out"}, "'x64', 'vulkan' or 'cuda'"),
        ({"kind": "export", "request": 1, "arch": "x64", "path": "out", "dims": {"n": 0}}, "positive int"),
        ({"kind": "export", "request": 1, "arch": "x64", "path": "out", "overwrite": "yes"}, "true or false"),
    ],
)
def test_a_malformed_panel_message_gets_an_error_reply_and_changes_nothing(ed, message, reason):
    started(ed)
    debug(ed, "step")
    before = (dict(ed.debugger), dict(ed.inspect), ed.inspect_picture, dict(ed.export), ed.session.position)
    reply = deliver(ed, message)
    assert reply["ok"] is False and reason in reply["error"], reply["error"]
    assert reply["request"] == message.get("request")
    assert (dict(ed.debugger), dict(ed.inspect), ed.inspect_picture, dict(ed.export), ed.session.position) == before
    assert ed.error == "", "panel refusals use the reply, not the edit error banner"


@pytest.mark.parametrize(
    "message",
    [
        {"kind": "debug", "action": "step", "request": 1, "session": 7},
        {"kind": "debug", "action": "goto", "request": 1, "session": 1, "target": 11},
        {"kind": "breakpoint", "op": "toggle", "request": 1, "session": 1, "node": "substep/gone"},
        {"kind": "breakpoint", "op": "remove", "request": 1, "session": 1, "id": 42},
        {"kind": "watch", "op": "remove", "request": 1, "session": 1, "expression": "never.max()"},
        {"kind": "inspect", "request": 1, "session": 1, "buffer": "dt"},
        {"kind": "inspect", "request": 1, "session": 1, "buffer": "grid", "component": 0},
        {"kind": "inspect", "request": 1, "session": 1, "buffer": "x", "component": 2},
    ],
)
def test_a_stale_or_impossible_request_is_refused_and_changes_nothing(ed, message):
    started(ed)
    debug(ed, "step")
    before = (dict(ed.debugger), dict(ed.inspect), ed.inspect_picture, ed.session.position)
    reply = deliver(ed, message)
    assert reply["ok"] is False and reply["error"]
    assert (dict(ed.debugger), dict(ed.inspect), ed.inspect_picture, ed.session.position) == before


def test_a_message_for_an_ended_session_is_stale(ed):
    started(ed)
    debug(ed, "stop")
    assert ed.debugger["active"] is False
    started(ed)
    reply = deliver(ed, {"kind": "debug", "action": "step", "request": 3, "session": 1})
    assert reply["ok"] is False and "stale" in reply["error"] and "session 2" in reply["error"]
    assert ed.session.position.index == 0


# --- the wire contract: what Python sends has exactly the fields graphlab.widget.protocol declares ----------


def declared_fields(record):
    """The fields of a record of graphlab.widget.protocol (protocol.gen.ts is generated from it)."""
    from graphlab.widget import protocol

    return set(getattr(protocol, record).__annotations__)


def test_panel_views_have_the_fields_the_protocol_declares(ti_cpu):
    widget = gl.editor(particle_graph(with_poison=True), kernels=[], access="ast", values=values(at=3))
    deliver(widget, {"kind": "debug", "action": "start", "request": 1})
    debug(widget, "find_nonfinite")
    view = widget.debugger
    assert set(view) == declared_fields("DebugView")
    assert set(view["position"]) == declared_fields("PositionView")
    assert set(view["nonfinite"]) == declared_fields("NonfiniteView")
    assert set(view["timing"][0]) == declared_fields("NodeTimeView")
    deliver(widget, {"kind": "breakpoint", "op": "toggle", "request": 2, "session": 1, "node": "poison"})
    deliver(widget, {"kind": "watch", "op": "add", "request": 3, "session": 1, "expression": "grid.max()"})
    assert set(widget.debugger["breakpoints"][0]) == declared_fields("BreakpointView")
    assert set(widget.debugger["watches"][0]) == declared_fields("WatchView")
    inspect = widget.inspect
    assert set(inspect) <= declared_fields("InspectView") and set(inspect) >= declared_fields("InspectView") - {"problem"}
    assert set(inspect["stats"]) == declared_fields("StatsView")
    assert set(inspect["picture"]) == declared_fields("PictureView")
    assert set(inspect["page"]) == declared_fields("PageView")
    assert set(inspect["diff"]) == declared_fields("DiffView")
    assert set(widget.export) == declared_fields("ExportView")


def test_a_fault_view_has_the_fields_the_protocol_declares(ti_cpu):
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, debug=True, log_level=ti.WARN)
    widget = gl.editor(particle_graph(repeat=8, with_check=True), kernels=[], access="ast",
                       values=values(limit=0.85, dt=0.05))  # fmt: skip
    started(widget)
    debug(widget, "continue")
    assert set(widget.debugger["fault"]) == declared_fields("FaultView")


@ti.kernel
def fill3(v: ti.types.ndarray(dtype=ti.f64, ndim=3)):
    for I in ti.grouped(v):
        v[I] = I[0] * 1000.0 + I[1] * 10.0 + I[2]


def test_a_3d_field_shows_its_first_slice_and_f64_travels_as_f64(ti_cpu):
    g = gl.Graph("cube")
    g.dispatch(fill3, g.ndarray("v", ti.f64, ndim=3))
    widget = gl.editor(g, kernels=[], access="ast", values={"v": ti.ndarray(ti.f64, shape=(3, 20, 30))})
    started(widget)
    debug(widget, "step")
    pic = widget.inspect["picture"]
    assert (pic["kind"], pic["dtype"], pic["shape"], pic["origin"]) == ("heatmap", "f64", [20, 30], [0])
    assert pic["note"] == "slice [0, :, :] of (3, 20, 30)"
    values_ = floats(widget.inspect_picture, "f64", (20, 30))
    assert values_[7, 9] == 79.0
    assert widget.inspect["stats"]["max"] == 2000.0 + 190.0 + 29.0
    page = widget.inspect["page"]
    assert page["total"] == 3 * 20 * 30 and page["columns"] == ["value"]
