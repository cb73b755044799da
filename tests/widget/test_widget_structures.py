"""The loop form's edits: ``make_loop`` and ``make_cond`` wrap picked nodes (or an empty body) in a while loop,
a counted loop or a conditional, in the nodes' place, as one undo step; the graph they make runs as the same
graph built by hand in Python; a bad field is refused, named, before the graph changes."""

import numpy as np
import pytest
import taichi as ti
from test_compiled import add_one, halve, init_flag, threshold
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl


def _graph():
    g = gl.Graph("g")
    g.ndarray("x", ti.f32, ndim=1)
    g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.scalar("limit", ti.f32)
    g.scalar("n", ti.i32)
    g.dispatch(init_flag, "flag")
    g.dispatch(halve, "x")
    g.dispatch(threshold, "x", "limit", "flag")
    g.dispatch(add_one, "x")
    return g


@pytest.fixture
def ed(ti_cpu):
    widget = gl.editor(_graph(), kernels=[halve, add_one], access="ast")
    yield widget
    widget.close()


def edit(widget, op, request=1, **fields):
    return widget.handle_message({"kind": "edit", "op": op, "request": request, **fields})


def shape(widget):
    """(id, kind, parent) of every node, in the trait's order."""
    return [(n["id"], n["kind"], n["parent"]) for n in widget.graph["nodes"]]


def x0():
    return (np.arange(16, dtype=np.float32) + 1.0) * 3.0


def test_a_while_loop_with_check_every_wraps_the_picked_nodes_in_their_place(ed):
    reply = edit(ed, "make_loop", nodes=["halve", "threshold"], body="shrink", mode="while", flag="flag",
                 max_iter=50, check_every=4, name="until_small")  # fmt: skip
    assert reply["ok"], reply
    assert ed.graph["body"] == ["init_flag", "until_small", "add_one"]
    loop = next(n for n in ed.graph["nodes"] if n["id"] == "until_small")
    assert (loop["while"], loop["max_iter"], loop["check_every"], loop["guarded"]) == ("flag", 50, 4, False)
    assert loop["children"] == ["until_small/halve", "until_small/threshold"]
    assert ed.selected == "until_small"
    assert ed.history["undo"] == ["make loop until_small (while flag)"]


def test_the_loop_made_in_the_form_runs_as_the_loop_built_in_python(ed):
    edit(ed, "make_loop", nodes=["halve", "threshold"], body="shrink", mode="while", flag="flag",
         max_iter=50, check_every=4, guarded=True)  # fmt: skip
    by_hand = gl.Graph("g")
    by_hand.ndarray("x", ti.f32, ndim=1)
    by_hand.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    by_hand.scalar("limit", ti.f32)
    by_hand.scalar("n", ti.i32)
    by_hand.dispatch(init_flag, "flag")
    body = by_hand.define("shrink")
    body.dispatch(halve, "x")
    body.dispatch(threshold, "x", "limit", "flag")
    by_hand.loop(body, while_="flag", max_iter=50, check_every=4, guarded=True)
    by_hand.dispatch(add_one, "x")
    results = []
    for graph in (ed.model, by_hand):
        x, flag = x0(), np.zeros(1, np.int32)
        graph.run(x=x, flag=flag, limit=0.5)
        results.append(x)
    np.testing.assert_array_equal(results[0], results[1])
    assert not np.array_equal(results[0], x0() + 1), "the loop ran"


def test_one_undo_puts_the_nodes_back(ed):
    before = shape(ed)
    edit(ed, "make_loop", nodes=["halve", "threshold"], body="shrink", mode="while", flag="flag", max_iter=9)
    assert ed.handle_message({"kind": "undo", "request": 2})["ok"]
    assert shape(ed) == before
    assert "shrink" not in ed.model.sequences


def test_a_counted_loop_starts_empty_at_the_index_given(ed):
    reply = edit(ed, "make_loop", nodes=[], body="again", mode="count", count="n", index=1, name="repeat")
    assert reply["ok"], reply
    assert ed.graph["body"] == ["init_flag", "repeat", "halve", "threshold", "add_one"]
    loop = next(n for n in ed.graph["nodes"] if n["id"] == "repeat")
    assert (loop["count"], loop["while"], loop["children"]) == ("n", None, [])


def test_a_conditional_takes_the_picked_nodes_as_its_then_branch(ed):
    reply = edit(ed, "make_cond", nodes=["add_one"], body="grow", flag="flag", name="decide")
    assert reply["ok"], reply
    assert ed.graph["body"] == ["init_flag", "halve", "threshold", "decide"]
    nodes = {n["id"]: n for n in ed.graph["nodes"]}
    assert nodes["decide"]["flag"] == "flag"
    assert nodes["decide"]["children"] == ["decide/then"]
    assert nodes["decide/then"]["children"] == ["decide/then/add_one"]
    for limit, expected in ((1e9, x0() * np.float32(0.5)), (0.0, x0() * np.float32(0.5) + 1)):
        x = x0()
        ed.model.run(x=x, flag=np.zeros(1, np.int32), limit=limit)  # over the limit: flag 1, then runs
        np.testing.assert_array_equal(x, expected)


def test_a_conditional_can_start_with_an_empty_else_branch(ed):
    reply = edit(ed, "make_cond", nodes=[], body="grow", else_body="keep", flag="flag", index=3)
    assert reply["ok"], reply
    assert ed.graph["body"] == ["init_flag", "halve", "threshold", "cond", "add_one"]
    nodes = {n["id"]: n for n in ed.graph["nodes"]}
    assert nodes["cond"]["children"] == ["cond/then", "cond/else"]
    assert nodes["cond/then"]["sequence"] == "grow" and nodes["cond/else"]["sequence"] == "keep"


def test_a_loop_inside_a_sequence_stays_in_it(ed):
    assert edit(ed, "group", nodes=["halve", "threshold"], name="inner")["ok"]
    reply = edit(ed, "make_loop", 2, nodes=["inner/threshold"], body="body", mode="count", count="n")
    assert reply["ok"], reply
    assert [n["id"] for n in ed.graph["nodes"] if n["parent"] == "inner"] == ["inner/halve", "inner/loop"]


@pytest.mark.parametrize(
    ("op", "fields", "expected"),
    [
        ("make_loop", {"mode": "while", "max_iter": 5}, "field 'flag': a while loop needs a flag arg"),
        ("make_loop", {"mode": "while", "flag": "flag"}, "field 'max_iter': a while loop needs"),
        ("make_loop", {"mode": "while", "flag": "x", "max_iter": 5}, "field 'flag': 'x' is ndarray"),
        ("make_loop", {"mode": "while", "flag": "nope", "max_iter": 5}, "field 'flag': graph 'g' has no arg 'nope'"),
        ("make_loop", {"mode": "count", "count": "limit"}, "field 'count': 'limit' is scalar f32"),
        ("make_loop", {"mode": "count"}, "field 'count': a counted loop needs a count arg"),
        ("make_loop", {"mode": "count", "count": "n", "flag": "flag"}, "field 'flag': a counted loop reads no flag"),
        ("make_loop", {"mode": "count", "count": "n", "check_every": 3}, "field 'check_every'"),
        ("make_loop", {"mode": "while", "flag": "flag", "max_iter": 4, "check_every": 8}, "GL019"),
        ("make_loop", {"mode": "count", "count": "n", "body": "2x"}, "field 'body': '2x' is not a sequence name"),
        ("make_cond", {"flag": "flag", "else_body": "body"}, "field 'else_body': the else branch needs a name"),
        ("make_cond", {"flag": "limit"}, "field 'flag': 'limit' is scalar f32"),
    ],
)
def test_a_bad_field_is_refused_by_name_and_nothing_changes(ed, op, fields, expected):
    version, before = ed.model.version, shape(ed)
    reply = edit(ed, op, **{"nodes": ["halve"], "body": "body", **fields})
    assert reply["ok"] is False
    assert expected in reply["error"], reply["error"]
    assert reply["error"].startswith("making the ")
    assert ed.error == reply["error"]
    assert (ed.model.version, shape(ed)) == (version, before)


def test_a_body_name_taken_and_nodes_of_two_containers_are_refused(ed):
    edit(ed, "group", nodes=["halve"], name="inner")
    taken = edit(ed, "make_loop", 2, nodes=["add_one"], body="inner", mode="count", count="n")
    assert "field 'body': a sequence 'inner' exists already" in taken["error"]
    apart = edit(ed, "make_loop", 3, nodes=["inner/halve", "add_one"], body="b", mode="count", count="n")
    assert "field 'nodes': pick nodes of one container" in apart["error"]


def test_the_message_checker_names_a_bad_max_iter(ed):
    reply = edit(ed, "make_loop", nodes=[], body="b", mode="while", flag="flag", max_iter=0)
    assert "field 'max_iter' must be a positive int" in reply["error"]


@pytest.mark.parametrize(
    ("op", "fields", "inside"),
    [
        ("make_loop", {"mode": "while", "flag": "flag", "max_iter": 9, "name": "again"}, "again/"),
        ("make_cond", {"flag": "flag", "name": "decide"}, "decide/then/"),
    ],
)
def test_wrapped_nodes_keep_their_canvas_places_and_guesses(ed, op, fields, inside):
    # the user dragged halve and threshold; the canvas guessed threshold's limit: wrapping them keeps both
    ed.model.layout = ed.model.layout.placed({"halve": (10, 20), "threshold": (10, 90)}).guess("threshold", ["limit"])
    assert edit(ed, op, nodes=["halve", "threshold"], body="body", **fields)["ok"]
    assert ed.graph["layout"] == {f"{inside}halve": [10.0, 20.0], f"{inside}threshold": [10.0, 90.0]}
    assert next(n for n in ed.graph["nodes"] if n["id"] == f"{inside}threshold")["guessed"] == ["limit"]
    assert ed.handle_message({"kind": "undo", "request": 2})["ok"]
    assert ed.graph["layout"] == {"halve": [10.0, 20.0], "threshold": [10.0, 90.0]}
