"""The widget on a graph with a loop and a conditional: the graph trait shows them (a conditional's
branches as containers the drawing names), edits inside them work, and the debug panel steps through
the branch taken and the loop's iterations as the session records them."""

import re

import pytest
import taichi as ti
from test_compiled import add_one, halve, threshold
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl


@pytest.fixture
def ed(ti_cpu):
    g = gl.Graph("control")
    x = g.ndarray("x", ti.f32, ndim=1)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    n = g.scalar("n", ti.i32)
    limit = g.scalar("limit", ti.f32)
    g.dispatch(threshold, x, limit, flag)
    big = g.define("big")
    big.dispatch(halve, x)
    small = g.define("small")
    small.dispatch(add_one, x)
    g.cond(flag, then=big, else_=small, name="decide")
    body = g.define("body")
    body.dispatch(add_one, x, name="inc")
    g.loop(body, count=n, name="again")
    values = {"x": ti.ndarray(ti.f32, shape=4), "flag": ti.ndarray(ti.i32, shape=1), "n": 2, "limit": 1.0}
    widget = gl.editor(g, kernels=[halve, add_one], access="ast", values=values)
    yield widget
    widget.close()


def test_loops_conditionals_and_branches_are_in_the_graph_trait(ed):
    nodes = {n["id"]: n for n in ed.graph["nodes"]}
    assert ed.graph["body"] == ["threshold", "decide", "again"]
    assert nodes["decide"]["kind"] == "cond" and nodes["decide"]["flag"] == "flag"
    assert nodes["decide"]["children"] == ["decide/then", "decide/else"]
    assert nodes["decide/then"] == {"id": "decide/then", "name": "then", "parent": "decide", "index": 0,
                                        "kind": "branch", "sequence": "big", "children": ["decide/then/halve"]}  # fmt: skip
    assert nodes["decide/else/add_one"]["parent"] == "decide/else"
    assert (nodes["again"]["kind"], nodes["again"]["count"], nodes["again"]["children"]) == ("loop", "n", ["again/inc"])
    for node in nodes.values():
        parent = node["parent"]
        siblings = ed.graph["body"] if parent is None else nodes[parent]["children"]
        assert siblings[node["index"]] == node["id"], "every node sits at its index among its parent's children"


def test_the_drawing_names_every_container_the_trait_has(ed):
    drawn = set(re.findall(r'\bid="?([^",\]]+)"?', ed.dot)) | set(re.findall(r'^\s*"?([\w/]+)"? \[', ed.dot, re.M))
    for node in ed.graph["nodes"]:
        assert node["id"] in drawn, f"{node['id']} is not in the DOT"


def test_a_branch_can_be_selected_and_a_dispatch_added_into_it(ed):
    assert deliver(ed, {"kind": "select", "node": "decide/then", "request": 1})["ok"]
    assert ed.selected == "decide/then"
    reply = deliver(ed, {"kind": "edit", "op": "dispatch", "request": 2, "kernel": f"{add_one.__module__}:add_one",
                      "bindings": {"x": "x"}, "into": "decide/then", "index": None, "name": None})  # fmt: skip
    assert reply["ok"], reply
    assert ed.selected == "decide/then/add_one"
    assert [n["id"] for n in ed.graph["nodes"] if n["parent"] == "decide/then"] == ["decide/then/halve", "decide/then/add_one"]


def test_deleting_inside_a_branch_selects_the_neighbour(ed):
    deliver(ed, {"kind": "edit", "op": "dispatch", "request": 1, "kernel": f"{halve.__module__}:halve",
              "bindings": {"x": "x"}, "into": "decide/else", "index": None, "name": None})  # fmt: skip
    assert deliver(ed, {"kind": "edit", "op": "remove", "request": 2, "node": "decide/else/halve"})["ok"]
    assert ed.selected == "decide/else/add_one"


def test_the_debugger_steps_through_branches_and_loop_iterations(ed):
    assert deliver(ed, {"kind": "debug", "action": "start", "request": 3})["ok"]
    steps = []
    while ed.debugger["position"]["step_id"] is not None:
        steps.append(ed.debugger["position"]["step_id"])
        assert deliver(ed, {"kind": "debug", "action": "step", "request": 4, "session": 1})["ok"]
    assert steps == ["threshold", "decide/else/add_one", "again/iter[0]/inc", "again/iter[1]/inc"]
    position = ed.debugger["position"]
    assert position["index"] == position["total"] == 4 and position["total_known"] is True
    decisions = [(d["scope"], d["kind"], d["outcome"]) for d in ed.debugger["decisions"]]
    assert decisions == [("decide", "cond", "else")], "a count loop reads no flag"


def test_a_breakpoint_in_a_loop_body_stops_each_iteration(ed):
    deliver(ed, {"kind": "debug", "action": "start", "request": 1})
    assert ed.debugger["position"]["total_known"] is False, "the steps past a decision are not known yet"
    assert deliver(ed, {"kind": "breakpoint", "op": "toggle", "request": 2, "session": 1, "node": "again/inc"})["ok"]
    deliver(ed, {"kind": "debug", "action": "continue", "request": 3, "session": 1})
    assert (ed.debugger["reason"], ed.debugger["position"]["step_id"]) == ("breakpoint", "again/iter[0]/inc")
    assert ed.debugger["position"]["node_id"] == "again/inc"
    deliver(ed, {"kind": "debug", "action": "continue", "request": 4, "session": 1})
    assert ed.debugger["position"]["step_id"] == "again/iter[1]/inc"


def test_tidy_places_a_conditional_s_branches_and_the_file_keeps_them(ed, tmp_path):
    # Tidy sends every box it drew; a branch (an empty one has a place of its own) was refused as stale
    positions = {"decide/then": [10, 40], "decide/else": [200, 40], "decide/then/halve": [20, 60], "again": [0, 300]}
    reply = deliver(ed, {"kind": "edit", "op": "place", "request": 2, "positions": positions})
    assert reply["ok"], reply
    assert ed.graph["layout"] == {k: [float(x), float(y)] for k, (x, y) in positions.items()}
    path = tmp_path / "control.graph.json"
    ed.model.save(path)
    loaded = gl.load(path, kernels=[threshold, halve, add_one])
    assert dict(loaded.layout.positions) == {k: (float(x), float(y)) for k, (x, y) in positions.items()}
