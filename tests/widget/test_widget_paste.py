"""The canvas's paste of groups: a sequence, a loop (while, guarded ``check_every``, counted) or a conditional is
copied with its whole body and bindings under new names, as one undo step, beside the original that stays put;
the copy runs as the original does."""

import numpy as np
import pytest
import taichi as ti
from test_compiled import add_one, halve, init_flag, threshold
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl


def _args(g):
    g.ndarray("x", ti.f32, ndim=1)
    g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.scalar("limit", ti.f32)
    g.scalar("n", ti.i32)


def while_loop():
    g = gl.Graph("g")
    _args(g)
    body = g.define("shrink")
    body.dispatch(halve, "x")
    body.dispatch(threshold, "x", "limit", "flag")
    g.loop(body, while_="flag", max_iter=50, check_every=4, guarded=True, name="until_small")
    return g, "until_small"


def counted_loop():
    g = gl.Graph("g")
    _args(g)
    body = g.define("bump")
    body.dispatch(add_one, "x")
    body.dispatch(halve, "x")
    g.loop(body, count="n", name="times")
    return g, "times"


def conditional():
    g = gl.Graph("g")
    _args(g)
    then, else_ = g.define("yes"), g.define("no")
    then.dispatch(halve, "x")
    else_.dispatch(add_one, "x")
    g.dispatch(init_flag, "flag")
    g.cond("flag", then, else_, name="big")
    return g, "big"


def nested_sequence():
    """A sequence holding a dispatch and a counted loop, the loop's body used twice."""
    g = gl.Graph("g")
    _args(g)
    inner = g.define("inner")
    inner.dispatch(add_one, "x")
    with g.sequence("outer", repeat=2) as s:
        s.dispatch(halve, "x")
    g.loop(inner, count="n", name="twice", into="outer")
    g.append("inner", into="outer", name="again")
    return g, "outer"


BUILDS = [while_loop, counted_loop, conditional, nested_sequence]


def edit(widget, op, request=1, **fields):
    return widget.handle_message({"kind": "edit", "op": op, "request": request, **fields})


def run(graph, times):
    x, flag = (np.arange(16, dtype=np.float32) + 1.0) * 3.0, np.zeros(1, np.int32)
    flag[0] = 1
    values = {"x": x, "flag": flag, "limit": 0.5, "n": 3}
    used = {name: value for name, value in values.items() if graph.uses_of(name)}  # run() takes only these
    for _ in range(times):
        graph.run(**used)
    return x


@pytest.mark.parametrize("build", BUILDS)
def test_a_pasted_group_runs_as_its_original_run_twice(ti_cpu, build):
    graph, group = build()
    twice = run(build()[0], 2)
    once = run(build()[0], 1)
    assert not np.array_equal(once, twice), "the group changes x each time it runs"
    ed = gl.editor(graph, kernels=[], access="ast")
    try:
        reply = edit(ed, "paste", nodes=[group], index=ed.graph["body"].index(group) + 1)
        assert reply["ok"], reply
        copy = ed.selected
        assert ed.graph["body"][-2:] == [group, copy] and copy == f"{group}#2"
        np.testing.assert_array_equal(run(ed.model, 1), twice)
    finally:
        ed.close()


def test_a_pasted_loop_keeps_its_settings_and_gets_its_own_body(ti_cpu):
    graph, _ = while_loop()
    ed = gl.editor(graph, kernels=[], access="ast")
    try:
        assert edit(ed, "paste", nodes=["until_small", "until_small/halve"])["ok"]
        nodes = {n["id"]: n for n in ed.graph["nodes"]}
        original, copy = nodes["until_small"], nodes["until_small#2"]
        for key in ("while", "count", "max_iter", "check_every", "guarded"):
            assert copy[key] == original[key], key
        assert (copy["sequence"], original["sequence"]) == ("shrink_2", "shrink")
        assert copy["children"] == ["until_small#2/halve", "until_small#2/threshold"]
        assert nodes["until_small#2/threshold"]["bindings"] == {"x": "x", "limit": "limit", "flag": "flag"}
        assert ed.history["undo"] == ["paste until_small#2"], "the loop inside took its body node with it"
        # editing the copy's body leaves the original's alone
        assert edit(ed, "remove", node="until_small#2/halve")["ok"]
        assert [n.name for n in ed.model.sequences["shrink"]] == ["halve", "threshold"]
    finally:
        ed.close()


def test_a_shared_definition_stays_shared_in_the_copy_and_names_stay_unique(ti_cpu):
    graph, _ = nested_sequence()
    ed = gl.editor(graph, kernels=[], access="ast")
    try:
        assert edit(ed, "paste", nodes=["outer"])["ok"]
        assert edit(ed, "paste", nodes=["outer"], request=2)["ok"]
        assert ed.graph["body"] == ["outer", "outer#2", "outer#3"]
        assert sorted(ed.model.sequences) == ["inner", "inner_2", "inner_3", "outer", "outer_2", "outer_3"]
        third = ed.model.sequences["outer_3"]
        assert [(type(n).__name__, getattr(n, "body", getattr(n, "sequence", None))) for n in third] == [
            ("Dispatch", None),
            ("Loop", "inner_3"),
            ("SequenceUse", "inner_3"),
        ]
        assert ed.graph["nodes"][0]["repeat"] == 2 and {n["id"]: n for n in ed.graph["nodes"]}["outer#3"]["repeat"] == 2
    finally:
        ed.close()


def test_undo_removes_the_whole_paste_and_the_copy_lands_beside_the_original(ti_cpu):
    graph, _ = counted_loop()
    ed = gl.editor(graph, kernels=[], access="ast")
    try:
        assert edit(ed, "place", positions={"times/add_one": [10, 20], "times/halve": [10, 90], "arg:x": [300, 0]})[
            "ok"
        ]
        before_layout, before_sequences = dict(ed.graph["layout"]), dict(ed.model.sequences)
        assert edit(ed, "paste", nodes=["times"], request=2)["ok"]
        layout = ed.graph["layout"]
        assert {k: layout[k] for k in before_layout} == before_layout, "no other node moved"
        assert layout["times#2/add_one"] == [50.0, 60.0] and layout["times#2/halve"] == [50.0, 130.0]
        assert ed.handle_message({"kind": "undo", "request": 3})["ok"]
        assert ed.graph["body"] == ["times"]
        assert dict(ed.model.sequences) == before_sequences
        assert ed.graph["layout"] == before_layout
    finally:
        ed.close()


def test_pasting_nothing_or_a_missing_node_is_refused(ti_cpu):
    graph, _ = counted_loop()
    ed = gl.editor(graph, kernels=[], access="ast")
    try:
        reply = edit(ed, "paste", nodes=[])
        assert not reply["ok"] and "copy one or more nodes" in reply["error"]
        reply = edit(ed, "paste", nodes=["nope"], request=2)
        assert not reply["ok"] and "'nope'" in reply["error"]
        assert ed.graph["body"] == ["times"] and sorted(ed.model.sequences) == ["bump"]
    finally:
        ed.close()


def test_a_paste_lands_where_the_canvas_found_room_and_a_bad_step_is_refused(ti_cpu):
    """The canvas sends how far right and down of the originals the copied block has room (dx, dy)."""
    graph, _ = counted_loop()
    ed = gl.editor(graph, kernels=[], access="ast")
    try:
        assert edit(ed, "place", positions={"times/add_one": [10, 20], "times/halve": [10, 90]})["ok"]
        assert edit(ed, "paste", nodes=["times"], dx=260, dy=0, request=2)["ok"]
        layout = ed.graph["layout"]
        assert layout["times#2/add_one"] == [270.0, 20.0] and layout["times#2/halve"] == [270.0, 90.0]
        before = dict(ed.graph["layout"])
        for bad in ("far", float("inf"), [1, 2]):
            reply = edit(ed, "paste", nodes=["times"], dx=bad, request=3)
            assert not reply["ok"] and "dx" in reply["error"] and "a step on the canvas" in reply["error"], reply
        assert ed.graph["layout"] == before and ed.graph["body"] == ["times", "times#2"]
    finally:
        ed.close()
