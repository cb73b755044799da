"""The canvas's edits: positions kept in the model and the file, multi-delete, paste, guessed bindings.

Messages go in through ipywidgets' comm handler, as a browser's do; the model is the real one.
"""

import json

import pytest
from editor_demo import axpy, fill
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.core.errors import GraphError, GraphFileError
from graphlab.model import graphfile
from graphlab.model.layout import Layout
from graphlab.widget import editor

KERNELS = [fill, axpy]


@pytest.fixture
def ed(graph):
    widget = editor(graph, kernels=KERNELS, access="ast")
    yield widget
    widget.close()


def edit(widget, op, **fields):
    return deliver(widget, {"kind": "edit", "request": 7, "op": op, **fields})


def by_id(widget):
    return {n["id"]: n for n in widget.graph["nodes"]}


def test_place_shows_in_the_view_and_undo_puts_it_back(ed):
    assert ed.graph["layout"] == {}
    assert edit(ed, "place", positions={"init": [10, 20], "step/axpy": [30.5, -4]})["ok"]
    assert ed.graph["layout"] == {"init": [10.0, 20.0], "step/axpy": [30.5, -4.0]}
    version = ed.model.version
    assert edit(ed, "place", positions={"init": [100, 200]})["ok"]
    assert ed.model.version == version, "a drag is not an edit of what the graph computes"
    assert ed.graph["layout"]["init"] == [100.0, 200.0]
    assert ed.history["undo"][-1] == "place init"
    assert deliver(ed, {"kind": "undo", "request": 8})["ok"]
    assert ed.graph["layout"]["init"] == [10.0, 20.0]


@pytest.mark.parametrize(
    ("positions", "needle"),
    [
        ({"nope": [0, 0]}, "no node 'nope'"),
        ({"init": [float("nan"), 0]}, "positions"),
        ({"init": [0]}, "positions"),
        ({"init": [0, 1e12]}, "positions"),
    ],
)
def test_place_refuses_unknown_nodes_and_bad_positions(ed, positions, needle):
    reply = edit(ed, "place", positions=positions)
    assert not reply["ok"]
    assert needle in reply["error"]
    assert ed.graph["layout"] == {}


def test_adding_a_node_with_a_position_moves_no_other(ed):
    edit(ed, "place", positions={"init": [0, 0], "step/axpy": [0, 120]})
    reply = edit(ed, "dispatch", kernel=f"{fill.__module__}:fill", position=[300, 40])
    assert reply["ok"], reply
    assert ed.graph["layout"] == {"init": [0.0, 0.0], "step/axpy": [0.0, 120.0], "fill": [300.0, 40.0]}


def test_rename_and_delete_carry_positions(ed):
    edit(ed, "place", positions={"init": [5, 6]})
    assert edit(ed, "rename", node="init", name="setup")["ok"]
    assert ed.graph["layout"] == {"setup": [5.0, 6.0]}
    assert edit(ed, "remove", node="setup")["ok"]
    assert ed.graph["layout"] == {}


def test_remove_nodes_is_one_undo_step(ed):
    assert edit(ed, "remove_nodes", nodes=["init", "step", "step/axpy"])["ok"]
    assert ed.graph["body"] == []
    assert ed.history["undo"][-1] == "delete 2 nodes"
    assert deliver(ed, {"kind": "undo", "request": 9})["ok"]
    assert ed.graph["body"] == ["init", "step"]
    reply = edit(ed, "remove_nodes", nodes=[])
    assert not reply["ok"] and "select one or more nodes" in reply["error"]


def test_paste_duplicates_with_bindings_under_unique_names(ed):
    edit(ed, "place", positions={"init": [10, 10]})
    assert edit(ed, "paste", nodes=["init"], index=1)["ok"]
    nodes = by_id(ed)
    assert ed.graph["body"] == ["init", "init#2", "step"]
    assert nodes["init#2"]["bindings"] == nodes["init"]["bindings"] == {"x": "x", "value": "a"}
    assert ed.graph["layout"]["init#2"] == [50.0, 50.0]
    assert ed.selected == "init#2"
    assert edit(ed, "paste", nodes=["step/axpy"], into="step")["ok"]
    assert by_id(ed)["step"]["children"] == ["step/axpy", "step/axpy#2"]
    assert edit(ed, "paste", nodes=["step"])["ok"]  # a group too, with its own copy of the body
    assert by_id(ed)["step#2"]["children"] == ["step#2/axpy", "step#2/axpy#2"]


def test_guessed_bindings_are_marked_until_accepted(ed):
    reply = edit(
        ed,
        "dispatch",
        kernel=f"{axpy.__module__}:axpy",
        bindings={"a": "a", "x": "x", "y": "y"},
        guessed=["x", "y"],
    )
    assert reply["ok"], reply
    assert by_id(ed)["axpy"]["guessed"] == ["x", "y"]
    assert edit(ed, "accept_guess", node="axpy", param="x")["ok"]
    assert by_id(ed)["axpy"]["guessed"] == ["y"]
    assert edit(ed, "rebind", node="axpy", param="y", arg="x")["ok"]
    assert "guessed" not in by_id(ed)["axpy"], "a binding made by hand is no guess"
    reply = edit(ed, "accept_guess", node="axpy", param="y")
    assert not reply["ok"] and "holds no guessed binding" in reply["error"]


def test_a_new_arg_made_for_a_guessed_parameter_is_no_guess(ed):
    # the canvas guessed a for axpy.a; the user made a new arg "gain" for it in the Node tab's form
    assert edit(ed, "dispatch", kernel=f"{axpy.__module__}:axpy", bindings={"a": "a", "x": "x", "y": "y"},
                guessed=["a", "x"])["ok"]  # fmt: skip
    spec = {"name": "gain", "kind": "scalar", "dtype": "f32", "ndim": 0, "element_shape": [], "fmt": None,
            "role": "input"}  # fmt: skip
    assert edit(ed, "new_arg", arg=spec, bind={"node": "axpy", "param": "a"})["ok"]
    assert by_id(ed)["axpy"]["bindings"]["a"] == "gain"
    assert by_id(ed)["axpy"]["guessed"] == ["x"], "a binding the user made is drawn solid"
    assert deliver(ed, {"kind": "undo", "request": 9})["ok"]
    assert by_id(ed)["axpy"]["guessed"] == ["a", "x"], "undo gives the guess back"


def test_a_guess_that_would_alias_is_left_unbound(ed):
    # the front-end guessed x for both x and y; the user asked for neither: no GL012 made for them
    reply = edit(
        ed,
        "dispatch",
        kernel=f"{axpy.__module__}:axpy",
        bindings={"a": "a", "x": "x", "y": "x"},
        guessed=["y"],
    )
    assert reply["ok"], reply
    node = by_id(ed)["axpy"]
    assert node["bindings"] == {"a": "a", "x": "x", "y": None}
    assert "guessed" not in node
    assert not any(d["code"] == "GL012" for d in ed.diagnostics)


def test_layout_saves_and_loads(graph, tmp_path):
    graph.layout = graph.layout.placed({"init": (1.5, 2), "step/axpy": (3, 4)})
    path = tmp_path / "demo.graph.json"
    graph.save(path)
    assert json.loads(path.read_text())["layout"] == {"init": [1.5, 2.0], "step/axpy": [3.0, 4.0]}
    loaded = gl.load(path, kernels=KERNELS)
    assert dict(loaded.layout.positions) == {"init": (1.5, 2.0), "step/axpy": (3.0, 4.0)}


def test_old_files_without_layout_load(graph):
    text = graphfile.dumps(graph)
    assert "layout" not in json.loads(text), "no section when nothing was placed: files stay as before"
    assert graphfile.loads(text, kernels=KERNELS).layout == Layout()


@pytest.mark.parametrize(
    ("layout", "path", "needle"),
    [
        ([1, 2], "$.layout", "expected an object"),
        ({"ghost": [0, 0]}, '$.layout["ghost"]', "no node 'ghost'"),
        ({"init": [0, "y"]}, '$.layout["init"]', "y must be a number"),
        ({"init": [0, 1, 2]}, '$.layout["init"]', "expected a position [x, y]"),
        ({"init": [1e300, 0]}, '$.layout["init"]', "outside the canvas"),
    ],
)
def test_bad_layout_sections_name_the_json_path(graph, layout, path, needle):
    data = json.loads(graphfile.dumps(graph))
    data["layout"] = layout
    with pytest.raises(GraphFileError) as caught:
        graphfile.loads(json.dumps(data), kernels=KERNELS, file="demo.graph.json")
    assert caught.value.json_path == path
    assert needle in caught.value.reason


def test_layout_takes_only_a_layout(graph):
    with pytest.raises(GraphError, match="graphlab.model.layout.Layout"):
        graph.layout = {"init": (0, 0)}


def test_args_are_placed_like_nodes_and_follow_a_rename(ed, tmp_path):
    assert edit(ed, "place", positions={"arg:x": [7, 8]})["ok"]
    assert ed.graph["layout"] == {"arg:x": [7.0, 8.0]}
    assert edit(ed, "rename_arg", arg="x", name="xs")["ok"]
    assert ed.graph["layout"] == {"arg:xs": [7.0, 8.0]}
    path = tmp_path / "args.graph.json"
    ed.model.save(path)
    assert dict(gl.load(path, kernels=KERNELS).layout.positions) == {"arg:xs": (7.0, 8.0)}
    reply = edit(ed, "place", positions={"arg:nope": [0, 0]})
    assert not reply["ok"] and "no node 'arg:nope'" in reply["error"]
