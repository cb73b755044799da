"""The arg editor's edits (a click on a buffer): rename, role, shape, delete, through the widget's messages.

Each edit arrives as the browser sends it (ipywidgets' comm handler), is one call on the graph's args
API, is undoable, and a refused one leaves the graph as it was (version included) with the model's
reason in the reply and the banner.
"""

import pytest
import taichi as ti
from test_widget_protocol import fill
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.widget import editor


@pytest.fixture
def ed(ti_cpu):
    g = gl.Graph("demo")
    x = g.ndarray("x", ti.f32, ndim=1)
    a = g.scalar("a", ti.f32)
    g.ndarray("spare", ti.f32, ndim=2, role="temp")
    g.dispatch(fill, x, a, name="init")
    widget = editor(g, kernels=[fill], access="ast")
    yield widget
    widget.close()


def edit(widget, op, request=1, **fields):
    """Deliver an edit as the browser would; return the widget's one reply."""
    return deliver(widget, {"kind": "edit", "op": op, "request": request, **fields})


def undo(widget):
    widget._handle_msg({"content": {"data": {"method": "custom", "content": {"kind": "undo"}}}, "buffers": []})


def arg_view(widget, name):
    return next(a for a in widget.graph["args"] if a["name"] == name)


def spec(widget, arg, **changes):
    """The ``ArgSpec`` the front-end sends to redeclare an arg: its view's fields, some changed."""
    view = arg_view(widget, arg)
    fields = ("name", "kind", "dtype", "ndim", "element_shape", "fmt", "role", "shape")
    return {**{k: view[k] for k in fields}, **changes}


def refused_unchanged(widget, op, match, **fields):
    """The edit is refused with the model's reason (reply and banner), and nothing changed."""
    before, version = widget.model.snapshot(), widget.model.version
    view = widget.graph
    reply = edit(widget, op, **fields)
    assert reply["ok"] is False
    assert match in reply["error"], reply["error"]
    assert widget.error == reply["error"]
    assert widget.model.snapshot() == before and widget.model.version == version
    assert widget.graph == view
    return reply["error"]


def test_rename_arg_renames_it_and_every_binding_and_undo_puts_it_back(ed):
    ed.selected = "init"
    reply = edit(ed, "rename_arg", request=5, arg="x", name="pos")
    assert reply == {"kind": "reply", "request": 5, "ok": True, "error": None}
    assert list(ed.model.args) == ["pos", "a", "spare"]
    assert ed.model.node("init").binding("x") == "pos"
    assert "arg:pos" in ed.dot and "arg:x" not in ed.dot
    assert ed.history["undo"][-1] == "rename arg x to pos"
    assert ed.selected == "init"  # the node selection is kept
    undo(ed)
    assert list(ed.model.args) == ["x", "a", "spare"] and ed.model.node("init").binding("x") == "x"


def test_a_renamed_arg_keeps_its_run_value_through_undo_and_redo(ed):
    # a value given in the Values tab was left under the old name: the renamed arg showed as missing
    def entry(name):
        return next(e for e in ed.values["entries"] if e["arg"] == name)

    assert ed.handle_message({"kind": "values", "op": "allocate", "request": 2, "arg": "x", "shape": [8]})["ok"]
    assert ed.handle_message({"kind": "values", "op": "scalar", "request": 3, "arg": "a", "value": 2.5})["ok"]
    summary = entry("x")["summary"]
    assert edit(ed, "rename_arg", request=4, arg="x", name="pos")["ok"]
    assert (entry("pos")["given"], entry("pos")["summary"]) == (True, summary)
    assert ed.values["missing"] == []
    undo(ed)
    assert (entry("x")["given"], entry("x")["summary"], ed.values["missing"]) == (True, summary, [])
    ed._handle_msg({"content": {"data": {"method": "custom", "content": {"kind": "redo"}}}, "buffers": []})
    assert (entry("pos")["given"], ed.values["missing"]) == (True, [])
    assert ed.handle_message({"kind": "debug", "action": "start", "request": 5})["ok"], "Debug runs with it"


def test_debug_starts_after_an_arg_with_a_run_value_is_deleted(ed):
    # the deleted arg's value stayed in the editor's values, its row gone from the Values tab: Debug was
    # refused with "run() of graph 'demo' got unknown arg(s) 'spare'" and nothing in the widget could clear it
    for request, message in enumerate(
        [
            {"op": "allocate", "arg": "x", "shape": [8]},
            {"op": "allocate", "arg": "spare", "shape": [2, 2]},
            {"op": "scalar", "arg": "a", "value": 2.5},
        ]
    ):
        assert ed.handle_message({"kind": "values", "request": request, **message})["ok"]
    assert edit(ed, "remove_arg", request=4, arg="spare")["ok"]
    reply = ed.handle_message({"kind": "debug", "action": "start", "request": 5})
    assert reply["ok"], reply
    undo(ed)  # the arg is back, and so is its value
    assert next(e for e in ed.values["entries"] if e["arg"] == "spare")["given"]


def test_rename_arg_to_a_taken_name_is_refused_with_the_reason(ed):
    error = refused_unchanged(ed, "rename_arg", "'a' is already declared", arg="x", name="a")
    assert error.startswith("renaming the arg refused: cannot rename arg 'x' to 'a'")


def test_rename_arg_to_an_invalid_name_is_refused_with_the_reason(ed):
    error = refused_unchanged(ed, "rename_arg", "'bad name'", arg="x", name="bad name")
    assert error.startswith("renaming the arg refused:")


def test_rename_of_an_arg_that_is_gone_is_refused(ed):
    reason = "graph 'demo' has no arg 'gone'; declared args: x, a, spare"
    refused_unchanged(ed, "rename_arg", reason, arg="gone", name="b")


def test_set_role_changes_the_role_and_undo_puts_it_back(ed):
    assert edit(ed, "set_role", arg="x", role="output")["ok"]
    assert ed.model.args["x"].role == "output" and arg_view(ed, "x")["role"] == "output"
    assert ed.history["undo"][-1] == "arg x role output"
    undo(ed)
    assert ed.model.args["x"].role == "state"


def test_a_role_the_model_does_not_have_is_refused_before_anything_runs(ed):
    reason = "field 'role' must be 'input', 'output', 'state' or 'temp'"
    refused_unchanged(ed, "set_role", reason, arg="x", role="inout")


def test_redeclare_sets_a_symbolic_or_fixed_shape_and_undo_puts_it_back(ed):
    assert edit(ed, "redeclare", arg=spec(ed, "x", shape=["n"]))["ok"]
    assert ed.model.args["x"].shape == ("n",) and arg_view(ed, "x")["shape"] == ["n"]
    assert ed.history["undo"][-1] == "arg x shape (n)"
    assert edit(ed, "redeclare", request=2, arg=spec(ed, "spare", shape=[64, "G"]))["ok"]
    assert ed.model.args["spare"].shape == (64, "G")
    assert ed.model.args["spare"].role == "temp" and ed.model.args["spare"].dtype == "f32"
    undo(ed)
    undo(ed)
    assert ed.model.args["x"].shape is None and ed.model.args["spare"].shape is None


def test_redeclare_back_to_any_shape(ed):
    ed.model.redeclare(ed.model.args["x"].replace(shape=("n",)))
    assert edit(ed, "redeclare", arg=spec(ed, "x", shape=None))["ok"]
    assert ed.model.args["x"].shape is None
    assert ed.history["undo"][-1] == "arg x any shape"


def test_a_shape_of_the_wrong_length_is_refused_with_the_reason(ed):
    error = refused_unchanged(ed, "redeclare", "has 2 dims but ndim is 1", arg=spec(ed, "x", shape=[4, 4]))
    assert error.startswith("changing the arg's spec refused: arg 'x': shape")


def test_a_bad_dim_name_is_refused_with_the_reason(ed):
    refused_unchanged(ed, "redeclare", "is not a dim name", arg=spec(ed, "x", shape=["n m"]))


def test_a_negative_size_is_refused_with_the_reason(ed):
    refused_unchanged(ed, "redeclare", "shape[0]", arg=spec(ed, "x", shape=[-3]))


def test_redeclare_of_an_arg_that_is_not_declared_is_refused(ed):
    refused_unchanged(ed, "redeclare", "arg 'nope' is not declared", arg=spec(ed, "x", name="nope"))


def test_remove_arg_deletes_an_unbound_arg_and_undo_puts_it_back(ed):
    assert edit(ed, "remove_arg", arg="spare")["ok"]
    assert list(ed.model.args) == ["x", "a"] and "arg:spare" not in ed.dot
    assert ed.history["undo"][-1] == "delete arg spare"
    undo(ed)
    assert list(ed.model.args) == ["x", "a", "spare"]


def test_deleting_a_bound_arg_is_refused_naming_the_binding_and_the_fix(ed):
    error = refused_unchanged(ed, "remove_arg", "arg 'x' is still bound at init.x; unbind it first", arg="x")
    assert error.startswith("deleting the arg refused:")


def test_a_refused_arg_edit_keeps_the_undo_history(ed):
    assert edit(ed, "set_role", arg="x", role="input")["ok"]
    labels = ed.history["undo"]
    refused_unchanged(ed, "remove_arg", "still bound", arg="x")
    assert ed.history["undo"] == labels


def test_redeclare_that_keeps_the_shape_is_labelled_by_the_arg(ed):
    assert edit(ed, "redeclare", arg=spec(ed, "spare", role="state"))["ok"]
    assert ed.model.args["spare"].role == "state"
    assert ed.history["undo"][-1] == "redeclare arg spare"
