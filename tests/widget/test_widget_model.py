"""The widget's Python side: traits from the real model, edits through front-end messages, undo.

Messages go in through ipywidgets' comm handler (``Widget._handle_msg``), the path a browser's
messages take; what the widget sends back (trait updates, replies) is recorded by a stand-in comm.
"""

import asyncio
import re
import subprocess
import sys
import types

import graphviz
import pytest
import taichi as ti
import traitlets
from editor_demo import axpy, fill
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.kernelfacts.access import source_cache_info
from graphlab.widget import GraphEditor, editor


@ti.kernel
def count(n: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    for i in n:
        n[i] += 1


@ti.kernel
def smooth(v: ti.types.ndarray(ndim=1)):
    for i in v:
        v[i] *= 0.5


@ti.kernel
def templated(x: ti.template()):
    pass


@pytest.fixture
def ed(graph):
    widget = editor(graph, kernels=[fill, axpy, count, smooth, templated], access="ast")
    yield widget
    widget.close()


def edit(widget, op, request=1, **fields):
    return deliver(widget, {"kind": "edit", "op": op, "request": request, **fields})


def ref(kernel):
    return f"{kernel.__module__}:{kernel.__name__}"


def node_view(widget, node_id):
    return next(n for n in widget.graph["nodes"] if n["id"] == node_id)


def test_graph_trait_is_a_json_view_of_the_model(ed):
    view = ed.graph
    assert view["name"] == "demo" and view["version"] == ed.model.version
    assert [a["name"] for a in view["args"]] == ["x", "y", "a"]
    assert view["args"][0] == {
        "name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": [], "fmt": None,
        "role": "state", "shape": None, "inferred_shape": None, "label": "ndarray f32, ndim=1",
    }  # fmt: skip
    assert view["body"] == ["init", "step"]
    assert [n["id"] for n in view["nodes"]] == ["init", "step", "step/axpy"]
    init = node_view(ed, "init")
    assert init["kind"] == "dispatch" and init["kernel"] == ref(fill) and init["kernel_name"] == "fill"
    assert init["bindings"] == {"x": "x", "value": "a"}
    assert [p["name"] for p in init["params"]] == ["x", "value"]
    step = node_view(ed, "step")
    assert step == {
        "id": "step", "name": "step", "parent": None, "index": 1, "kind": "sequence", "sequence": "step",
        "repeat": 3, "children": ["step/axpy"],
    }  # fmt: skip
    assert node_view(ed, "step/axpy")["parent"] == "step"


def test_params_left_open_by_the_annotation_are_null(ed):
    entry = next(k for k in ed.palette if k["name"] == "smooth")
    assert entry["params"] == [
        {"name": "v", "kind": "ndarray", "dtype": None, "ndim": 1, "element_shape": None, "fmt": None,
         "label": "ndarray any, ndim=1"},
    ]  # fmt: skip


def test_palette_lists_the_given_kernels_and_why_some_cannot_be_dispatched(ed):
    names = [k["name"] for k in ed.palette]
    assert names == ["axpy", "count", "fill", "smooth", "templated"]
    bad = next(k for k in ed.palette if k["name"] == "templated")
    assert bad["dispatchable"] is False and "template" in bad["why_not"]
    assert next(k for k in ed.palette if k["name"] == "fill")["dispatchable"] is True


def test_palette_includes_kernels_the_graph_uses(graph):
    widget = editor(graph, kernels=[], access="ast")
    assert {k["name"] for k in widget.palette} == {"fill", "axpy"}


def test_default_palette_is_the_notebook_kernels(graph, monkeypatch):
    notebook = types.ModuleType("__main__")
    notebook.count = count
    notebook.not_a_kernel = 42
    monkeypatch.setitem(sys.modules, "__main__", notebook)
    widget = editor(graph, access="ast")
    assert {k["name"] for k in widget.palette} == {"count", "fill", "axpy"}


def svg_ids(dot_source):
    """(id, class) of every node and cluster group in the SVG Graphviz makes of the DOT."""
    svg = graphviz.Source(dot_source).pipe(format="svg").decode()
    return set(re.findall(r'<g id="([^"]+)" class="(node|cluster)"', svg))


def test_dot_is_graphlabs_drawing_with_node_ids_the_front_end_can_map(ed):
    ids = svg_ids(ed.dot)
    assert {("init", "node"), ("step", "cluster"), ("step/axpy", "node")} <= ids
    assert "step \u00d73" in ed.dot


def test_diagnostics_trait_holds_what_validation_finds(ed):
    assert ed.diagnostics == []
    ed.model.rebind("init", "value", None)
    assert [(d["code"], d["node"], d["arg"]) for d in ed.diagnostics] == [("GL001", "init", "value")]
    assert set(ed.diagnostics[0]) == {"code", "severity", "message", "node", "arg", "hint"}


def test_editor_refuses_what_is_not_a_graph():
    with pytest.raises(TypeError, match="graphlab.Graph"):
        GraphEditor({"not": "a graph"})


def test_importing_graphlab_does_not_import_the_widget():
    code = "import graphlab, sys; print('graphlab.widget' in sys.modules, 'anywidget' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


# --- edits through messages ---------------------------------------------------------------------------


def test_dispatch_adds_a_node_and_selects_it(ed):
    reply = edit(ed, "dispatch", request=7, kernel=ref(count), bindings={"n": None}, into=None, index=None, name=None)
    assert reply == {"kind": "reply", "request": 7, "ok": True, "error": None}
    assert ed.graph["body"] == ["init", "step", "count"]
    assert ed.model.node("count").binding("n") is None
    assert ed.selected == "count"


def test_an_edit_and_its_undo_read_no_kernel_source_again(ed):
    read = source_cache_info()
    assert edit(ed, "dispatch", kernel=ref(fill), bindings={"x": "y", "value": "a"}, into="step", index=0)["ok"]
    assert deliver(ed, {"kind": "undo", "request": 2})["ok"]
    after = source_cache_info()
    assert after.misses == read.misses, "validation after an edit parsed an unchanged kernel again"
    assert after.hits > read.hits


def test_dispatch_goes_into_a_sequence_at_an_index_with_bindings(ed):
    reply = edit(ed, "dispatch", kernel=ref(fill), bindings={"x": "y", "value": "a"}, into="step", index=0,
                 name="reset")  # fmt: skip
    assert reply["ok"]
    assert node_view(ed, "step")["children"] == ["step/reset", "step/axpy"]
    assert ed.model.node("step/reset").bound == {"x": "y", "value": "a"}


def test_remove_deletes_the_node_and_selects_its_neighbour(ed):
    ed.selected = "init"
    assert edit(ed, "remove", node="init")["ok"]
    assert ed.graph["body"] == ["step"]
    assert ed.selected == "step"


def test_move_changes_the_order_among_siblings(ed):
    assert edit(ed, "move", node="step", index=0)["ok"]
    assert ed.graph["body"] == ["step", "init"]
    assert ed.selected == "step"


def test_rebind_binds_and_unbinds_a_parameter(ed):
    assert edit(ed, "rebind", node="step/axpy", param="y", arg="x")["ok"]
    assert ed.model.node("step/axpy").binding("y") == "x"
    assert edit(ed, "rebind", request=2, node="step/axpy", param="y", arg=None)["ok"]
    assert node_view(ed, "step/axpy")["bindings"]["y"] is None
    assert ("GL001", "step/axpy", "y") in [(d["code"], d["node"], d["arg"]) for d in ed.diagnostics]


def test_rename_gives_the_node_a_new_id_and_keeps_it_selected(ed):
    ed.selected = "step/axpy"
    assert edit(ed, "rename", node="step/axpy", name="update")["ok"]
    assert node_view(ed, "step")["children"] == ["step/update"]
    assert ed.selected == "step/update"


def test_set_repeat_changes_a_sequence_use(ed):
    assert edit(ed, "set_repeat", node="step", repeat=500)["ok"]
    assert ed.model.node("step").repeat == 500 and node_view(ed, "step")["repeat"] == 500
    assert "step \u00d7500" in ed.dot


def test_group_moves_consecutive_siblings_into_a_new_sequence(ed):
    assert edit(ed, "group", nodes=["init", "step"], name="all", repeat=2)["ok"]
    assert ed.graph["body"] == ["all"]
    assert node_view(ed, "all")["children"] == ["all/init", "all/step"]
    assert ed.selected == "all"


def test_new_arg_declares_an_arg_and_binds_it_in_one_undo_step(ed):
    spec = {"name": "n", "kind": "ndarray", "dtype": "i32", "ndim": 1, "element_shape": [], "fmt": None,
            "role": "state"}  # fmt: skip
    edit(ed, "dispatch", kernel=ref(count), bindings={}, into=None, index=None, name=None)
    assert edit(ed, "new_arg", request=2, arg=spec, bind={"node": "count", "param": "n"})["ok"]
    assert ed.model.args["n"] == gl.Arg("n", "ndarray", "i32", 1)
    assert ed.model.node("count").binding("n") == "n"
    assert ed.history["undo"][-1] == "new arg n for count.n"
    deliver(ed, {"kind": "undo", "request": 3})
    assert "n" not in ed.model.args and ed.model.node("count").binding("n") is None


def test_new_arg_without_binding_only_declares(ed):
    spec = {"name": "dt", "kind": "scalar", "dtype": "f32", "ndim": 0, "element_shape": [], "fmt": None,
            "role": "input"}  # fmt: skip
    assert edit(ed, "new_arg", arg=spec, bind=None)["ok"]
    assert ed.model.args["dt"].role == "input"
    assert [a["name"] for a in ed.graph["args"]] == ["x", "y", "a", "dt"]


# --- refused edits ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "fields", "reason"),
    [
        ("rename", {"node": "init", "name": "not valid"}, "must be an identifier"),
        ("rename", {"node": "step/axpy", "name": "axpy"}, None),  # same name: a no-op, not an error
        ("set_repeat", {"node": "step", "repeat": 0}, "GL014"),
        ("set_repeat", {"node": "init", "repeat": 2}, "only sequences have a repeat count"),
        ("rebind", {"node": "init", "param": "x", "arg": "nope"}, "has no arg 'nope'"),
        ("rebind", {"node": "init", "param": "nope", "arg": "x"}, "has no parameter 'nope'"),
        ("move", {"node": "init", "index": 9}, "out of range"),
        ("group", {"nodes": ["init", "step/axpy"], "name": "g2", "repeat": 1}, "consecutive nodes of one container"),
        ("dispatch", {"kernel": ref(templated), "bindings": {}}, "ti.template"),
        ("dispatch", {"kernel": "nowhere:nothing", "bindings": {}}, "not among the kernels given"),
        ("dispatch", {"kernel": ref(fill), "bindings": {"x": "missing"}}, "has no arg 'missing'"),
    ],
)
def test_a_refused_edit_sets_error_and_changes_nothing(ed, op, fields, reason):
    version, state = ed.model.version, ed.model.snapshot()
    reply = edit(ed, op, request=5, **fields)
    if reason is None:
        assert reply["ok"]
        return
    assert reply["ok"] is False and reply["request"] == 5
    assert reason in reply["error"] and ed.error == reply["error"]
    assert ed.model.version == version and ed.model.snapshot() == state
    assert ed.history["undo"] == []


def test_a_new_arg_whose_binding_is_refused_is_not_declared(ed):
    spec = {"name": "n", "kind": "ndarray", "dtype": "i32", "ndim": 1, "element_shape": [], "fmt": None,
            "role": "state"}  # fmt: skip
    state = ed.model.snapshot()
    reply = edit(ed, "new_arg", arg=spec, bind={"node": "init", "param": "no_such_param"})
    assert reply["ok"] is False and "no_such_param" in ed.error
    assert ed.model.snapshot() == state and "n" not in [a["name"] for a in ed.graph["args"]]
    assert ed.history["undo"] == []


def test_an_invalid_arg_spec_is_refused(ed):
    spec = {"name": "m", "kind": "matrix", "dtype": "f32", "ndim": 0, "element_shape": [], "fmt": None,
            "role": "state"}  # fmt: skip
    reply = edit(ed, "new_arg", arg=spec, bind=None)
    assert reply["ok"] is False and "vector or matrix dtype" in ed.error
    assert "m" not in ed.model.args


def test_a_successful_edit_clears_the_error(ed):
    edit(ed, "set_repeat", node="step", repeat=0)
    assert ed.error
    edit(ed, "set_repeat", request=2, node="step", repeat=4)
    assert ed.error == ""


# --- malformed and stale messages ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("undo", "must be an object"),
        ({"op": "remove", "node": "init", "request": 1}, "unknown message kind None"),
        ({"kind": "explode", "request": 1}, "unknown message kind 'explode'"),
        ({"kind": "edit", "op": "explode", "request": 1}, "unknown edit op 'explode'"),
        ({"kind": "edit", "op": "remove", "node": "init"}, "'request' is missing"),
        ({"kind": "edit", "op": "remove", "request": 1}, "field 'node' is missing"),
        ({"kind": "edit", "op": "remove", "request": 1, "node": 3}, "field 'node' must be a node id"),
        ({"kind": "edit", "op": "set_repeat", "request": 1, "node": "step", "repeat": True}, "must be an int"),
        ({"kind": "edit", "op": "set_repeat", "request": 1, "node": "step", "repeat": "4"}, "must be an int"),
        ({"kind": "edit", "op": "remove", "request": 1, "node": "init", "force": True}, "unexpected field(s) 'force'"),
        ({"kind": "edit", "op": "group", "request": 1, "nodes": "init", "name": "g"}, "a list of node ids"),
        ({"kind": "edit", "op": "rebind", "request": 1, "node": "init", "param": "x"}, "field 'arg' is missing"),
        ({"kind": "edit", "op": "new_arg", "request": 1, "arg": {"name": "q"}}, "arg: field 'kind' is missing"),
        ({"kind": "edit", "op": "remove", "request": "1", "node": "init"}, "'request' must be an int"),
        ({"kind": "select"}, "field 'node' is missing"),
    ],
)
def test_a_malformed_message_gets_an_error_reply_and_changes_nothing(ed, message, reason):
    version, state = ed.model.version, ed.model.snapshot()
    reply = deliver(ed, message)
    assert reply["ok"] is False and reason in reply["error"], reply["error"]
    assert reply["error"].startswith("message ignored")
    assert ed.error == reply["error"]
    assert ed.model.version == version and ed.model.snapshot() == state


def test_a_malformed_message_is_answered_with_its_request_number(ed):
    reply = deliver(ed, {"kind": "edit", "op": "remove", "request": 42})
    assert reply["request"] == 42


@pytest.mark.parametrize(
    ("op", "fields"),
    [
        ("remove", {"node": "gone"}),
        ("rename", {"node": "step/gone", "name": "b"}),
        ("group", {"nodes": ["init", "gone"], "name": "g", "repeat": 1}),
        ("dispatch", {"kernel": ref(count), "bindings": {}, "into": "gone"}),
        ("new_arg", {"arg": {"name": "q", "kind": "scalar", "dtype": "f32"}, "bind": {"node": "gone", "param": "n"}}),
    ],
)
def test_a_stale_node_id_gets_an_error_reply_and_changes_nothing(ed, op, fields):
    state = ed.model.snapshot()
    reply = edit(ed, op, **fields)
    assert reply["ok"] is False and "no longer exists" in reply["error"] and "gone" in reply["error"]
    assert ed.model.snapshot() == state and "q" not in ed.model.args


def test_an_edit_made_stale_by_python_is_refused(ed):
    ed.model.rename("init", "start")
    reply = edit(ed, "set_repeat", node="init", repeat=2)
    assert reply["ok"] is False and "'init' no longer exists" in reply["error"]


# --- selection ------------------------------------------------------------------------------------------


def test_select_message_sets_and_clears_the_selection(ed):
    assert deliver(ed, {"kind": "select", "node": "step/axpy", "request": 3})["ok"]
    assert ed.selected == "step/axpy"
    assert deliver(ed, {"kind": "select", "node": None})["ok"]
    assert ed.selected == ""


def test_selecting_a_node_that_is_gone_is_refused_without_a_banner(ed):
    reply = deliver(ed, {"kind": "select", "node": "gone"})
    assert reply["ok"] is False and "no longer exists" in reply["error"]
    assert ed.selected == "" and ed.error == ""


def test_the_selected_trait_accepts_only_existing_nodes(ed):
    with pytest.raises(traitlets.TraitError, match="no such node"):
        ed.selected = "gone"


def test_the_selection_is_cleared_when_python_removes_the_node(ed):
    ed.selected = "init"
    ed.model.remove("init")
    assert ed.selected == ""


# --- sync both ways ------------------------------------------------------------------------------------


def test_an_edit_made_in_python_shows_in_the_traits(ed):
    ed.model.dispatch(count, ed.model.ndarray("n", ti.i32, ndim=1))
    assert ed.graph["body"] == ["init", "step", "count"]
    assert ed.graph["version"] == ed.model.version
    assert ("count", "node") in svg_ids(ed.dot)


def test_an_edit_made_in_python_is_sent_to_the_front_end(ed):
    ed.comm.sent.clear()
    ed.model.set_repeat("step", 7)
    updates = ed.comm.updates()
    assert updates, "the new state is sent"
    graph_update = next(u["graph"] for u in updates if "graph" in u)
    assert next(n for n in graph_update["nodes"] if n["id"] == "step")["repeat"] == 7


def test_a_widget_edit_is_sent_as_one_state_update_then_the_reply(ed):
    ed.comm.sent.clear()
    edit(ed, "rename", node="init", name="start")
    methods = [m["method"] for m in ed.comm.sent]
    assert methods[-1] == "custom"
    assert "update" in methods[:-1]
    merged = {k: v for u in ed.comm.updates() for k, v in u.items()}
    assert {"graph", "dot", "selected"} <= set(merged)


def test_edits_made_in_one_notebook_cell_are_drawn_once_and_undone_together(ed):
    async def cell():
        ed.comm.sent.clear()
        ed.model.set_repeat("step", 5)
        ed.model.rename("init", "start")
        ed.model.set_role("x", "input")
        drawn_during_the_cell = [u for u in ed.comm.updates() if "graph" in u]
        await asyncio.sleep(0)  # the cell is over: the kernel's loop runs again
        return drawn_during_the_cell

    assert asyncio.run(cell()) == []
    assert len([u for u in ed.comm.updates() if "graph" in u]) == 1
    assert ed.graph["body"] == ["start", "step"]
    assert ed.history["undo"] == ["3 edits in Python"]
    deliver(ed, {"kind": "undo", "request": 1})
    assert [n.name for n in ed.model.body] == ["init", "step"] and ed.model.node("step").repeat == 3


def test_the_front_end_may_clear_the_error(ed):
    edit(ed, "set_repeat", node="step", repeat=0)
    assert ed.error
    ed._handle_msg({"content": {"data": {"method": "update", "state": {"error": ""}}}, "buffers": []})
    assert ed.error == ""


def test_the_model_property_is_the_graph_itself(ed, graph):
    assert ed.model is graph


def test_close_stops_following_the_graph(ed):
    version = ed.graph["version"]
    ed.close()
    ed.model.set_repeat("step", 9)
    assert ed.graph["version"] == version


# --- undo and redo -----------------------------------------------------------------------------------------


def test_undo_and_redo_an_edit_made_in_the_widget(ed):
    edit(ed, "set_repeat", node="step", repeat=10)
    assert ed.history == {"undo": ["repeat step \u00d710"], "redo": []}
    assert deliver(ed, {"kind": "undo", "request": 2})["ok"]
    assert ed.model.node("step").repeat == 3 and node_view(ed, "step")["repeat"] == 3
    assert ed.history == {"undo": [], "redo": ["repeat step \u00d710"]}
    assert deliver(ed, {"kind": "redo", "request": 3})["ok"]
    assert ed.model.node("step").repeat == 10
    assert ed.history == {"undo": ["repeat step \u00d710"], "redo": []}


def test_undo_reverts_an_edit_made_in_python(ed):
    ed.model.remove("init")
    assert ed.history["undo"] == ["node removed init (in Python)"]
    deliver(ed, {"kind": "undo"})
    assert [n.name for n in ed.model.body] == ["init", "step"]
    assert ed.graph["body"] == ["init", "step"]


def test_undo_steps_back_through_several_edits_in_order(ed):
    edit(ed, "rename", node="init", name="start")
    edit(ed, "set_repeat", request=2, node="step", repeat=8)
    edit(ed, "remove", request=3, node="start")
    for _ in range(3):
        assert deliver(ed, {"kind": "undo"})["ok"]
    assert [n.name for n in ed.model.body] == ["init", "step"] and ed.model.node("step").repeat == 3


def test_a_new_edit_clears_what_redo_could_redo(ed):
    edit(ed, "set_repeat", node="step", repeat=10)
    deliver(ed, {"kind": "undo"})
    edit(ed, "rename", request=2, node="init", name="start")
    assert ed.history["redo"] == []
    reply = deliver(ed, {"kind": "redo", "request": 9})
    assert reply == {"kind": "reply", "request": 9, "ok": False, "error": "nothing to redo"}


def test_nothing_to_undo_is_answered_without_an_error_banner(ed):
    version = ed.model.version
    reply = deliver(ed, {"kind": "undo", "request": 1})
    assert reply["ok"] is False and reply["error"] == "nothing to undo"
    assert ed.error == "" and ed.model.version == version


def test_a_refused_edit_is_not_in_the_history(ed):
    edit(ed, "set_repeat", node="step", repeat=4)
    edit(ed, "set_repeat", request=2, node="step", repeat=-1)
    assert ed.history["undo"] == ["repeat step \u00d74"]


def test_undo_clears_a_selection_the_undo_removed(ed):
    edit(ed, "dispatch", kernel=ref(count), bindings={}, into=None, index=None, name=None)
    assert ed.selected == "count"
    deliver(ed, {"kind": "undo"})
    assert ed.selected == ""
