"""The inspect panel's slices of a 3-D buffer: the front-end's slider asks for the 2-D slice at a leading
index, and Python sends that slice's picture (and the diff at the same slice); a slice that does not fit the
buffer is refused, naming the shape."""

import numpy as np
import pytest
import taichi as ti
from test_widget_panels import debug, fill3, floats, started
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl


@ti.kernel
def bump(v: ti.types.ndarray(dtype=ti.f64, ndim=3)):
    for I in ti.grouped(v):
        v[I] += I[0] + 1.0


@pytest.fixture
def cube(ti_cpu):
    g = gl.Graph("cube")
    v = g.ndarray("v", ti.f64, ndim=3)
    g.dispatch(fill3, v)
    g.dispatch(bump, v)
    widget = gl.editor(g, kernels=[], access="ast", values={"v": ti.ndarray(ti.f64, shape=(3, 20, 30))})
    started(widget)
    debug(widget, "step")
    yield widget
    widget.close()


def inspect(widget, request=7, **fields):
    message = {"kind": "inspect", "request": request, "session": widget.debugger["session"], "buffer": "v", **fields}
    return deliver(widget, message)


def test_the_slider_picks_the_slice_python_pictures(cube):
    assert inspect(cube, slice=[2])["ok"]
    pic = cube.inspect["picture"]
    assert (pic["shape"], pic["origin"], pic["note"]) == ([20, 30], [2], "slice [2, :, :] of (3, 20, 30)")
    assert floats(cube.inspect_picture, "f64", (20, 30))[7, 9] == 2079.0


def test_the_slice_stays_as_the_session_moves_and_the_diff_shows_it(cube):
    inspect(cube, slice=[1])
    debug(cube, "step", request=8)
    assert cube.inspect["picture"]["origin"] == [1]
    assert floats(cube.inspect_picture, "f64", (20, 30))[0, 0] == 1000.0 + 2.0
    diff = cube.inspect["diff"]["picture"]
    assert diff["origin"] == [1] and diff["note"] == "slice [1, :, :] of (3, 20, 30)"
    np.testing.assert_array_equal(floats(cube.inspect_diff, "f32", (20, 30)), np.full((20, 30), 2.0, np.float32))


@pytest.mark.parametrize(
    ("slice_", "expected"),
    [
        ([3], "slice [3] does not fit its shape (3, 20, 30); slice: 1 index(es) within (3,)"),
        ([0, 0], "slice [0, 0] does not fit its shape (3, 20, 30)"),
    ],
)
def test_a_slice_that_does_not_fit_is_refused(cube, slice_, expected):
    reply = inspect(cube, slice=slice_)
    assert reply["ok"] is False and expected in reply["error"], reply["error"]
    assert cube.inspect["picture"]["origin"] == [0]


def test_the_message_checker_refuses_a_negative_index(cube):
    assert "field 'slice' must be a list of at most 16 indexes >= 0" in inspect(cube, slice=[-1])["error"]
