"""A group dragged as a whole: one ``place`` edit naming the group moves all its members by one offset, is one undo
step, and is kept in the graph file; a drag that would leave a member behind, move a node outside the group or move
members apart is refused, naming the node and the fix, and changes nothing."""

import pytest
from test_compiled import add_one, halve
from test_widget_paste import conditional, counted_loop, edit
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl

MEMBERS = {"times/add_one": [10, 20], "times/halve": [10, 90]}


@pytest.fixture
def ed(ti_cpu):
    graph, _ = counted_loop()
    graph.dispatch(add_one, "x", name="after")
    widget = gl.editor(graph, kernels=[], access="ast")
    assert edit(widget, "place", positions={**MEMBERS, "after": [0, 300]})["ok"]
    yield widget
    widget.close()


def test_dragging_a_group_moves_its_members_together_in_one_undo_step(ed, tmp_path):
    moved = {"times/add_one": [110, 70], "times/halve": [110, 140]}
    reply = edit(ed, "place", positions=moved, group="times", request=2)
    assert reply["ok"], reply
    assert ed.history["undo"][-1] == "move times"
    assert ed.graph["layout"] == {**{k: [float(a), float(b)] for k, (a, b) in moved.items()}, "after": [0.0, 300.0]}
    path = tmp_path / "g.graph.json"
    ed.model.save(path)
    loaded = gl.load(path, kernels=[add_one, halve])
    assert {k: list(v) for k, v in loaded.layout.positions.items()} == ed.graph["layout"]
    assert ed.handle_message({"kind": "undo", "request": 3})["ok"]
    assert ed.graph["layout"]["times/halve"] == [10.0, 90.0] and ed.graph["layout"]["times/add_one"] == [10.0, 20.0]


@pytest.mark.parametrize(
    ("group", "positions", "needle"),
    [
        ("times", {"times/add_one": [50, 60]}, "member 'times/halve' of group 'times' has a saved position"),
        ("times", {"times/add_one": [50, 60], "times/halve": [50, 130], "after": [40, 340]}, "'after' is not inside"),
        ("times", {"times/add_one": [50, 60], "times/halve": [10, 90]}, "a group moves as a whole"),
        ("after", {"after": [5, 5]}, "'after' is a dispatch, not a group"),
        ("nope", {"times/add_one": [5, 5]}, "no node 'nope'"),
        ("times", {}, "none given"),
    ],
)
def test_a_drag_that_breaks_the_group_is_refused_and_changes_nothing(ed, group, positions, needle):
    before = dict(ed.graph["layout"])
    reply = edit(ed, "place", positions=positions, group=group, request=2)
    assert not reply["ok"]
    assert needle in reply["error"]
    assert ed.graph["layout"] == before


def test_a_branch_of_a_conditional_drags_as_a_group(ti_cpu):
    graph, _ = conditional()
    ed = gl.editor(graph, kernels=[], access="ast")
    try:
        assert edit(ed, "place", positions={"big/then/halve": [0, 0], "big/else/add_one": [200, 0]})["ok"]
        assert edit(ed, "place", positions={"big/then/halve": [30, 40]}, group="big/then", request=2)["ok"]
        assert ed.graph["layout"] == {"big/then/halve": [30.0, 40.0], "big/else/add_one": [200.0, 0.0]}
        assert ed.history["undo"][-1] == "move big/then"
        reply = edit(ed, "place", positions={"big/then/halve": [0, 0]}, group="big/other", request=3)
        assert not reply["ok"] and "no node 'big/other'" in reply["error"]
    finally:
        ed.close()
