"""``bounds="check"``: one run in a child under Taichi's bounds checks names the first index out of bounds.

What the source cannot prove (``y[i + 1]``, an index under an ``if``) Taichi indexes unchecked, and
graphlab's shape relations cannot see it. The checked run reports it as ``OutOfBoundsError`` before
anything runs in this process, from ``g.run``, a compiled graph's ``run``, ``g.debug`` and the
``graphlab run`` command; GL029 says where such accesses are and points to it.

Kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import taichi as ti
from widget_comm import recording_comm  # noqa: F401  (autouse fixture: the editor's comm)

import graphlab as gl
from graphlab.run.boundscheck import parse_taichi_bounds_message

V1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
V2 = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.kernel
def double(y: V1):
    for i in y:
        y[i] *= 2.0


@ti.kernel
def shift(x: V1, y: V1):
    for i in x:
        y[i + 1] = x[i]


@ti.kernel
def checked_limit(x: V1):
    for i in x:
        assert x[i] < 10.0, "x too large"
        x[i] += 1.0


@ti.kernel
def poke_row(scale: ti.f32, m: V2, row: ti.i32):
    for j in range(4):
        if j >= 0:
            m[row, j] = scale


def shift_graph() -> gl.Graph:
    g = gl.Graph("g")
    x, y = g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1)
    with g.sequence("twice", repeat=2) as s:
        s.dispatch(double, y)
    with g.sequence("move", repeat=1) as s:
        s.dispatch(shift, x, y)
    return g


def test_an_index_past_the_end_is_named_before_anything_runs(ti_cpu):
    x, y = np.arange(8, dtype=np.float32), np.ones(8, np.float32)
    with pytest.raises(gl.OutOfBoundsError) as err:
        shift_graph().run(x=x, y=y, bounds="check")
    e = err.value
    assert (e.node, e.step, e.arg, e.param, e.index, e.shape) == ("move/shift", "move[0]/shift", "y", "y", (8,), (8,))
    assert str(e) == (
        "bounds='check' of graph 'g': dispatch 'move[0]/shift' (kernel shift) indexes arg 'y' (param 'y') at [8] in "
        "`y[i + 1] = x[i]`, outside its shape (8,): Taichi would read or write past its end. Nothing ran in this "
        "process; give 'y' a shape that holds that index, or fix the kernel's index"
    )
    assert isinstance(e, gl.GraphRunError)
    assert y.tolist() == [1.0] * 8, "the checked run works on copies; nothing ran here"


def test_values_that_fit_run_as_without_the_check(ti_cpu):
    x = np.arange(8, dtype=np.float32)
    checked, trusted = np.ones(9, np.float32), np.ones(9, np.float32)
    shift_graph().run(x=x, y=checked, bounds="check")
    shift_graph().run(x=x, y=trusted)
    assert checked.tolist() == trusted.tolist() == [4.0, *range(8)]


def test_compiled_run_and_debug_take_the_option_too(ti_cpu):
    values = {"x": ti.ndarray(ti.f32, 8), "y": ti.ndarray(ti.f32, 8)}
    with pytest.raises(gl.OutOfBoundsError, match=r"dispatch 'move\[0\]/shift'"):
        shift_graph().compile().run(values, bounds="check")
    with pytest.raises(gl.OutOfBoundsError, match=r"indexes arg 'y' \(param 'y'\) at \[8\]"):
        shift_graph().debug(values, bounds="check")


def test_the_editor_debug_takes_the_option_too(ti_cpu):
    ed = gl.editor(shift_graph(), kernels=[double, shift], access="ast")
    try:
        with pytest.raises(gl.OutOfBoundsError, match=r"dispatch 'move\[0\]/shift'"):
            ed.debug(x=np.zeros(8, np.float32), y=np.zeros(8, np.float32), bounds="check")
    finally:
        ed.close()


def test_a_scalar_index_is_mapped_to_its_param_position(ti_cpu):
    # Taichi counts every parameter (scalars too) in "at arg N": the ndarray here is parameter 1
    g = gl.Graph("rows")
    g.dispatch(poke_row, g.scalar("scale", ti.f32), g.ndarray("grid", ti.f32, ndim=2), g.scalar("row", ti.i32))
    grid = np.zeros((3, 4), np.float32)
    with pytest.raises(gl.OutOfBoundsError) as err:
        g.run(scale=1.5, grid=grid, row=3, bounds="check")
    assert (err.value.arg, err.value.param, err.value.index, err.value.shape) == ("grid", "m", (3, 0), (3, 4))
    g.run(scale=1.5, grid=grid, row=2, bounds="check")
    assert grid[2].tolist() == [1.5] * 4


def test_another_fault_in_the_checked_run_is_reported_as_such(ti_cpu):
    g = gl.Graph("limits")
    g.dispatch(checked_limit, g.ndarray("x", ti.f32, ndim=1))
    x = np.full(4, 20.0, np.float32)
    with pytest.raises(gl.GraphRunError) as err:
        g.run(x=x, bounds="check")
    assert not isinstance(err.value, gl.OutOfBoundsError)
    assert "dispatch 'checked_limit' failed in the checked run" in str(err.value) and "x too large" in str(err.value)
    assert x.tolist() == [20.0] * 4


def test_an_unknown_bounds_option_is_refused_before_anything_runs(ti_cpu):
    y = np.ones(8, np.float32)
    with pytest.raises(gl.GraphRunError, match=r"run\(\) of graph 'g': bounds='always' is not an option; give"):
        shift_graph().run(x=np.zeros(8, np.float32), y=y, bounds="always")
    with pytest.raises(gl.GraphRunError, match=r"debug\(\) of graph 'g': bounds=True is not an option"):
        shift_graph().debug(x=np.zeros(8, np.float32), y=y, bounds=True)
    assert y.tolist() == [1.0] * 8


@ti.kernel
def sample(tex: ti.types.texture(num_dimensions=2), out: V2):
    for i, j in out:
        out[i, j] = tex.fetch(ti.Vector([i, j]), 0).r


def test_a_texture_graph_is_refused_by_the_checked_run(ti_vulkan):
    g = gl.Graph("tex")
    g.dispatch(sample, g.texture("tex", ndim=2), g.ndarray("out", ti.f32, ndim=2))
    texture = ti.Texture(ti.Format.r32f, (4, 4))
    with pytest.raises(gl.GraphRunError, match="arg 'tex' is a texture, and the checked run uses Taichi's x64"):
        g.run(tex=texture, out=np.zeros((4, 4), np.float32), bounds="check")


def test_taichi_message_parsing_takes_position_index_and_source_line():
    message = (
        "\n[kernel=k_c80_0] Out of bound access to ndarray at arg 3 with indices [2, 4]\n"
        'File "/tmp/k.py", line 6, in k:\n        v[s, i] = m * x[i]\n        ^^^^^^^\n'
    )
    assert parse_taichi_bounds_message(message) == (3, (2, 4), "v[s, i] = m * x[i]")
    assert parse_taichi_bounds_message("some other assertion") is None


# --- validate's note -----------------------------------------------------------------------------


def test_gl029_names_the_unchecked_access_and_points_to_the_checked_run():
    [note] = [d for d in shift_graph().validate(access="ast") if d.code == "GL029"]
    assert note.severity == "info" and note.node is None
    assert "1 ndarray access(es) in dispatch(es) 'move/shift' (y[i + 1]) cannot be proven in bounds" in note.message
    assert note.hint is not None and "bounds='check'" in note.hint and "graphlab run FILE" in note.hint
    proven = gl.Graph("proven")
    proven.dispatch(double, proven.ndarray("y", ti.f32, ndim=1))
    assert [d for d in proven.validate(access="ast") if d.code == "GL029"] == []


# --- the command line ----------------------------------------------------------------------------

KERNELS = textwrap.dedent("""
    import taichi as ti

    @ti.kernel
    def shift(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in x:
            y[i + 1] = x[i]
""")


def test_cli_run_with_bounds_check_exits_1_naming_the_index(tmp_path):
    (tmp_path / "kern.py").write_text(KERNELS)
    graph = {
        "format": "graphlab.graph/1", "name": "g", "sequences": [],
        "args": [{"name": n, "kind": "ndarray", "dtype": "f32", "ndim": 1, "element_shape": []} for n in ("x", "y")],
        "body": [{"type": "dispatch", "name": "shift", "kernel": "kern:shift", "bindings": {"x": "x", "y": "y"}}],
    }  # fmt: skip
    (tmp_path / "g.json").write_text(json.dumps(graph))
    np.savez(tmp_path / "short.npz", x=np.ones(8, np.float32), y=np.zeros(8, np.float32))
    np.savez(tmp_path / "fits.npz", x=np.ones(8, np.float32), y=np.zeros(9, np.float32))

    def cli(values: str, *more: str) -> subprocess.CompletedProcess[str]:
        args = ["run", str(tmp_path / "g.json"), "--kernels", str(tmp_path / "kern.py"), "--values", values, *more]
        return subprocess.run(
            [sys.executable, "-m", "graphlab.cli", *args], capture_output=True, text=True, timeout=300
        )

    bad = cli(str(tmp_path / "short.npz"), "--bounds", "check")
    assert bad.returncode == 1, bad.stderr
    assert "graphlab run: bounds='check' of graph 'g': dispatch 'shift' (kernel shift) indexes arg 'y'" in bad.stderr
    assert "at [8]" in bad.stderr
    good = cli(str(tmp_path / "fits.npz"), "--bounds", "check", "-o", str(tmp_path / "out.npz"))
    assert good.returncode == 0, good.stderr
    assert "ran once on x64 (indices checked by Taichi first)" in good.stdout
    with np.load(tmp_path / "out.npz") as out:
        assert out["y"].tolist() == [0.0, *[1.0] * 8]
    missing = cli(str(tmp_path / "nope.npz"), "--bounds", "check")
    assert missing.returncode == 2 and "--values" in missing.stderr
