"""The values panel: the ``values`` trait lists what the graph's run needs, what is given and what is missing;
scalars, allocated ndarrays (zeros, seeded random) and notebook variables given from the panel become the
values Debug and Export use; a value run() would refuse is refused when given, naming the arg; the missing
value error speaks the widget's terms with the Python call as a hint."""

import numpy as np
import pytest
import taichi as ti
from IPython.core.interactiveshell import InteractiveShell
from test_compiled import add_one, threshold
from values_messages import entry, start, values
from widget_comm import recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl
from graphlab.widget.wording import missing_args, ui_text


@ti.kernel
def fill(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in a:
        a[i] = 2.0


def _graph():
    g = gl.Graph("g")
    g.ndarray("x", ti.f32, ndim=1, shape="n")
    g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.scalar("limit", ti.f32)
    g.ndarray("scratch", ti.f32, ndim=1, shape="n", role="temp")
    g.scalar("unused", ti.i32)
    g.dispatch(fill, "scratch")
    g.dispatch(add_one, "x")
    g.dispatch(threshold, "x", "limit", "flag")
    return g


@pytest.fixture
def ed(ti_cpu):
    widget = gl.editor(_graph(), kernels=[add_one], access="ast")
    yield widget
    widget.close()


def test_the_trait_lists_needed_given_and_missing(ed):
    assert ed.values["missing"] == ["x", "flag", "limit"]
    assert entry(ed, "scratch")["needed"] is False, "a temp with a declared shape is allocated by the run"
    assert entry(ed, "unused")["needed"] is False, "no node uses it: run() would refuse a value for it"
    assert entry(ed, "x") == {"arg": "x", "kind": "ndarray", "dtype": "f32", "role": "state", "shape": ["n"],
                              "ndim": 1, "needed": True, "given": False, "summary": ""}  # fmt: skip
    assert ed.values["in_notebook"] is False


def test_values_given_in_the_panel_are_the_ones_debug_runs_with(ed):
    assert values(ed, "scalar", arg="limit", value=40.5)["ok"]
    assert values(ed, "allocate", 2, arg="x", shape=[8], fill="random", seed=7)["ok"]
    assert values(ed, "allocate", 3, arg="flag", shape=[1])["ok"]
    assert ed.values["missing"] == []
    assert entry(ed, "x")["summary"] == "f32 ndarray 8, random, seed 7"  # the size as typed, not (8,)
    assert entry(ed, "limit")["summary"] == "40.5"
    assert start(ed)["ok"]
    session = ed.session
    session.continue_()
    expected = np.random.default_rng(7).random(8).astype(np.float32) + 1
    np.testing.assert_array_equal(session.inspect("x").numpy(), expected)
    assert session.inspect("flag").numpy()[0] == int((expected > 40.5).any())


def test_zeros_and_a_seed_are_repeatable(ed):
    values(ed, "allocate", arg="x", shape=[5], fill="random", seed=3)
    first = ed._panels.values["x"].copy()
    values(ed, "allocate", 2, arg="x", shape=[5], fill="random", seed=3)
    np.testing.assert_array_equal(ed._panels.values["x"], first)
    values(ed, "allocate", 3, arg="x", shape=[5])
    assert ed._panels.values["x"].dtype == np.float32 and not ed._panels.values["x"].any()


def test_a_missing_value_is_said_in_the_panels_terms_with_the_python_call(ed):
    values(ed, "scalar", arg="limit", value=1.0)
    reply = start(ed)
    assert reply["ok"] is False
    assert reply["error"] == (
        "Debug needs values for 'x', 'flag' (graph 'g'): give them in the Values panel "
        "(in Python: editor.debug(x=..., flag=...))"
    )
    assert ed.session is None


def test_clear_forgets_a_value(ed):
    values(ed, "scalar", arg="limit", value=1.0)
    assert values(ed, "clear", 2, arg="limit")["ok"]
    assert entry(ed, "limit")["given"] is False and "limit" in ed.values["missing"]


@pytest.mark.parametrize(
    ("op", "fields", "expected"),
    [
        ("scalar", {"arg": "nope", "value": 1}, "graph 'g' has no arg 'nope'"),
        ("scalar", {"arg": "x", "value": 1}, "arg 'x' is an ndarray, not a scalar"),
        ("scalar", {"arg": "unused", "value": 1.5}, "arg 'unused' is i32: give a whole number"),
        ("allocate", {"arg": "limit", "shape": [3]}, "arg 'limit' is a scalar, not an ndarray"),
        ("allocate", {"arg": "x", "shape": [3, 4]}, "arg 'x' has 1 dim(s) (ndim=1), but the shape given has 2"),
        ("allocate", {"arg": "flag", "shape": [4]}, "arg 'flag' declares size 1 for axis 0, got 4: give 1"),
        ("allocate", {"arg": "x", "shape": [1 << 20, 1 << 20][:1] * 1 + [0]}, "field 'shape' must be"),
        ("allocate", {"arg": "x", "shape": [1 << 31]}, "over 1,073,741,824"),
        ("variable", {"arg": "x", "variable": "x0"}, "notebook variables can be read only inside IPython"),
        ("clear", {"arg": "nope"}, "graph 'g' has no arg 'nope'"),
    ],
)
def test_a_value_that_cannot_be_the_args_is_refused_by_name(ed, op, fields, expected):
    before = ed.values
    reply = values(ed, op, **fields)
    assert reply["ok"] is False and expected in reply["error"], reply["error"]
    assert ed.values == before


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    yield ip
    InteractiveShell.clear_instance()


def test_a_notebook_variable_is_checked_and_used(ed, shell):
    shell.user_ns["x0"] = np.full(6, 2.0, np.float32)
    shell.user_ns["wrong"] = np.zeros(6, np.float64)
    assert values(ed, "variable", arg="x", variable="x0")["ok"]
    assert entry(ed, "x")["summary"] == "notebook variable x0"
    assert ed.values["in_notebook"] is True
    bad = values(ed, "variable", 2, arg="x", variable="wrong")
    assert "arg 'x'" in bad["error"] and "float64" in bad["error"]
    gone = values(ed, "variable", 3, arg="x", variable="nothing")
    assert "the notebook has no variable 'nothing'" in gone["error"]
    values(ed, "scalar", 4, arg="limit", value=100.0)
    values(ed, "allocate", 5, arg="flag", shape=[1])
    assert start(ed)["ok"]
    ed.session.continue_()
    np.testing.assert_array_equal(ed.session.inspect("x").numpy(), np.full(6, 3.0, np.float32))


def test_values_given_in_python_show_as_given(ti_cpu):
    widget = gl.editor(_graph(), kernels=[], access="ast", values={"limit": 2.0})
    assert entry(widget, "limit")["given"] is True and entry(widget, "limit")["summary"] == "2.0"
    widget.close()


def test_arrays_given_in_python_show_their_type_and_shape_in_the_canvass_words(ti_cpu):
    g = gl.Graph("v")
    g.ndarray("x", ti.f32, ndim=1, shape="n")
    g.ndarray("flag", ti.i32, ndim=2)
    g.ndarray("v", ti.math.vec2, ndim=1)
    given = {"x": np.zeros(64, np.float32), "flag": np.zeros((64, 3), np.int32), "v": ti.Vector.ndarray(2, ti.f32, 8)}
    widget = gl.editor(g, kernels=[], access="ast", values=given)
    said = {name: entry(widget, name)["summary"] for name in given}
    assert said == {"x": "f32 ndarray 64", "flag": "i32 ndarray 64 x 3", "v": "f32 ndarray 8 of vectors of 2"}
    widget.close()


def test_the_panel_follows_the_graph(ed):
    ed.model.scalar("late", ti.f32)
    assert [e["arg"] for e in ed.values["entries"]][-1] == "late"


def test_python_hints_in_diagnostics_and_export_errors_speak_the_widgets_terms(ti_cpu):
    g = gl.Graph("g")
    g.ndarray("x", ti.f32, ndim=1)
    g.insert(add_one)
    widget = gl.editor(g, kernels=[], access="ast")
    hint = next(d["hint"] for d in widget.diagnostics if d["code"] == "GL001")
    assert (
        hint == "bind it: pick an arg for 'x' in the Node tab of 'add_one' (in Python: g.rebind('add_one', 'x', arg))"
    )
    unused = next(d["hint"] for d in widget.diagnostics if d["code"] == "GL007")
    assert unused == "bind it to a parameter, or delete it in the arg's editor (in Python: g.remove_arg('x'))"
    widget.close()
    text = ui_text(
        "out already exists; pass overwrite=True (--overwrite on the command line) to replace it, or choose another path"
    )
    said = "out already exists; tick \u201coverwrite the folder\u201d to replace it, or choose another path"
    assert text == f"{said} (in Python: overwrite=True)", "the Python call trails the sentence, not inside it"
    assert missing_args("run() of graph 'g' is missing 'x_2'; pass x_2=...") == ["x_2"]


def test_debug_with_no_values_at_all_names_each_missing_one(ed):
    reply = start(ed)
    assert reply["error"] == (
        "Debug needs values for 'x', 'flag', 'limit' (graph 'g'): give them in the Values panel "
        "(in Python: gl.editor(g, values={...}), or editor.debug(x=..., ...) in a cell)"
    )


def test_a_graph_that_takes_no_values_debugs_without_any(ti_cpu):
    g = gl.Graph("g")
    g.ndarray("scratch", ti.f32, ndim=1, shape=(4,), role="temp")
    g.dispatch(fill, "scratch")
    widget = gl.editor(g, kernels=[], access="ast")
    assert widget.values["missing"] == []
    assert start(widget)["ok"]
    widget.close()
