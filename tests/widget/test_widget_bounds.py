"""The widget's checked start: Debug with "check bounds first" (``bounds: "check"`` on the start message).

Driven the way the browser drives it: a custom message in, the ``debugger`` trait and the reply out.
The check is the real one (a child process under ``ti.init(debug=True)``): an index out of bounds
shows in the panel as the ``OutOfBoundsError`` naming dispatch, arg and index, and no session opens;
values that fit open the session as an unchecked start does.

Kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import numpy as np
import pytest
import taichi as ti
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture: the editor's comm)

import graphlab as gl
from graphlab.widget import protocol

V1 = ti.types.ndarray(dtype=ti.f32, ndim=1)


@ti.kernel
def shift(x: V1, y: V1):
    for i in x:
        y[i + 1] = x[i]


def shift_graph() -> gl.Graph:
    g = gl.Graph("g")
    g.dispatch(shift, g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1))
    return g


def editor_with(y: np.ndarray):
    return gl.editor(shift_graph(), kernels=[], access="ast", values={"x": np.arange(8, dtype=np.float32), "y": y})


def bounds_states(widget):
    """The ``bounds.state`` of every ``debugger`` update sent to the front-end, in order."""
    return [state["debugger"]["bounds"]["state"] for state in widget.comm.updates() if "debugger" in state]


@pytest.fixture
def y8():
    return np.zeros(8, np.float32)  # y[i + 1] for i < 8 writes y[8]


@pytest.fixture
def out_of_bounds(ti_cpu, y8):
    widget = editor_with(y8)
    yield widget
    widget.close()


def test_a_checked_start_shows_the_out_of_bounds_index_and_opens_no_session(out_of_bounds, y8):
    ed = out_of_bounds
    reply = deliver(ed, {"kind": "debug", "action": "start", "request": 3, "bounds": "check"})
    view = ed.debugger
    assert reply["ok"] is False and reply["request"] == 3
    assert ed.session is None and view["active"] is False and view["session"] == 0
    check = view["bounds"]
    assert set(check) == set(protocol.BoundsCheckView.__annotations__), "the fields protocol.gen.ts declares"
    assert check["state"] == "failed"
    assert check["error"].startswith("OutOfBoundsError: bounds='check' of graph 'g': dispatch 'shift' (kernel shift)")
    assert "indexes arg 'y' (param 'y') at [8]" in check["error"] and "outside its shape (8,)" in check["error"]
    assert check["out_of_bounds"] == {
        "node": "shift", "step": "shift", "arg": "y", "param": "y", "index": [8], "shape": [8],
    }  # fmt: skip
    assert check["error"].endswith(reply["error"]), "the reply says the same"
    assert check["seconds"] > 0
    assert y8.tolist() == [0.0] * 8, "the check ran on copies; nothing ran here"


def test_the_panel_says_checking_while_the_child_runs(out_of_bounds):
    deliver(out_of_bounds, {"kind": "debug", "action": "start", "request": 1, "bounds": "check"})
    assert bounds_states(out_of_bounds)[-2:] == ["checking", "failed"], "published before the check, then its outcome"


def test_a_checked_start_with_values_that_fit_opens_the_session(ti_cpu):
    y = np.zeros(9, np.float32)
    ed = editor_with(y)
    try:
        reply = deliver(ed, {"kind": "debug", "action": "start", "request": 1, "bounds": "check"})
        assert reply == {"kind": "reply", "request": 1, "ok": True, "error": None}
        view = ed.debugger
        assert view["active"] is True and view["session"] == 1 and ed.session is not None
        assert view["bounds"]["state"] == "passed" and view["bounds"]["error"] is None
        assert bounds_states(ed)[-2:] == ["checking", "passed"]
        ed.session.continue_()
        assert y.tolist() == [0.0, *range(8)]
    finally:
        ed.close()


def test_an_unchecked_start_runs_no_check_and_clears_the_last_one(out_of_bounds):
    ed = out_of_bounds
    deliver(ed, {"kind": "debug", "action": "start", "request": 1, "bounds": "check"})
    assert ed.debugger["bounds"]["state"] == "failed"
    reply = deliver(ed, {"kind": "debug", "action": "start", "request": 2})  # bounds left out: "trust"
    assert reply["ok"] is True and ed.session is not None
    assert ed.debugger["bounds"] == {"state": "idle", "error": None, "out_of_bounds": None, "seconds": 0.0}
    assert "checking" not in bounds_states(ed)[2:], "no child run for a start without the option"


def test_editor_debug_from_python_with_bounds_check_shows_in_the_panel(out_of_bounds):
    with pytest.raises(gl.OutOfBoundsError, match=r"dispatch 'shift'"):
        out_of_bounds.debug(bounds="check")
    assert out_of_bounds.debugger["bounds"]["state"] == "failed" and out_of_bounds.session is None


def test_an_unknown_bounds_option_is_refused_naming_the_field(out_of_bounds):
    reply = deliver(out_of_bounds, {"kind": "debug", "action": "start", "request": 5, "bounds": "maybe"})
    assert reply["ok"] is False
    assert reply["error"] == "message ignored: debug 'start': field 'bounds' must be 'trust' or 'check', got 'maybe'"
    assert out_of_bounds.session is None and out_of_bounds.debugger["bounds"]["state"] == "idle"
