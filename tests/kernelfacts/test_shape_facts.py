"""Shape relations read from kernels' source: inferred only where certain, checked before every run.

Taichi checks no shapes: a too-short array is read and written out of bounds (on the CPU, a
segfault that kills the notebook kernel). The crash-prone cases run in a child process, so on code
without the check the test fails on the child's signal instead of killing pytest.

Kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from hypothesis import given, settings
from hypothesis import strategies as st

import graphlab as gl
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.verify import VerifyError
from graphlab.kernelfacts.shape_facts import first_violation, graph_shape_relations, inferred_shapes, kernel_shape_facts
from graphlab.widget.view import graph_view

ROOT = Path(gl.__file__).resolve().parents[1]  # the child imports this same graphlab
V1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
V2 = ti.types.ndarray(dtype=ti.f32, ndim=2)


def facts(kernel) -> list[str]:
    return [str(f) for f in kernel_shape_facts(kernel)]


# --- kernels whose loops make a relation certain -----------------------------------------------


@ti.kernel
def struct_for(x: V1, J: V1):
    for p in x:
        J[p] = 2.0 * x[p]


@ti.kernel
def ndrange_shapes(a: V2, b: V2):
    for i, j in ti.ndrange(a.shape[0], a.shape[1]):
        b[i, j] = a[i, j]


@ti.kernel
def grouped(x: V2, y: V2):
    for I in ti.grouped(x):
        y[I] = x[I] + 1.0


@ti.kernel
def range_shape(x: V1, out: V1):
    for i in range(x.shape[0]):
        out[i] += x[i]


@ti.kernel
def nested(x: V1, y: V1, z: V2):
    for i in x:
        for j in range(y.shape[0]):
            z[i, j] = x[i] * y[j]


def test_struct_for_index_needs_the_loop_array_extent():
    assert facts(struct_for) == ["J.shape[0] >= x.shape[0] (J[p] in for p in x)"]


def test_ndrange_over_shapes_gives_one_relation_per_axis():
    assert facts(ndrange_shapes) == [
        "b.shape[0] >= a.shape[0] (b[i, j] in for (i, j) in ti.ndrange(a.shape[0], a.shape[1]))",
        "b.shape[1] >= a.shape[1] (b[i, j] in for (i, j) in ti.ndrange(a.shape[0], a.shape[1]))",
    ]


def test_grouped_index_covers_every_axis_of_the_graph_arg():
    assert facts(grouped) == ["y.shape >= x.shape (y[I] in for I in ti.grouped(x))"]
    g = gl.Graph("g")
    g.dispatch(grouped, g.ndarray("src", ti.f32, ndim=2), g.ndarray("dst", ti.f32, ndim=2))
    got = [(r.arg, r.axis, r.source, r.source_axis) for r in graph_shape_relations(g)]
    assert got == [("dst", 0, "src", 0), ("dst", 1, "src", 1)]


def test_range_over_a_shape_and_nested_loops():
    assert facts(range_shape) == ["out.shape[0] >= x.shape[0] (out[i] in for i in range(x.shape[0]))"]
    assert sorted(facts(nested)) == [
        "z.shape[0] >= x.shape[0] (z[i, j] in for i in x / for j in range(y.shape[0]))",
        "z.shape[1] >= y.shape[0] (z[i, j] in for i in x / for j in range(y.shape[0]))",
    ]


def test_a_relation_is_required_only_when_its_loops_run():
    g = gl.Graph("g")
    g.dispatch(nested, g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1), g.ndarray("z", ti.f32, ndim=2))
    relations = graph_shape_relations(g)
    assert first_violation(relations, {"x": (8,), "y": (0,), "z": (1, 0)}) is None  # inner loop never runs
    rel, why = first_violation(relations, {"x": (8,), "y": (3,), "z": (1, 3)})
    assert (rel.arg, rel.axis, rel.source) == ("z", 0, "x")
    assert "got 1 < 8" in why and "Give 'z' at least 8 along axis 0" in why


@settings(max_examples=300, deadline=None)
@given(x=st.integers(0, 6), y=st.integers(0, 6), z0=st.integers(0, 6), z1=st.integers(0, 6))
def test_refused_exactly_when_the_loops_would_index_out_of_bounds(x, y, z0, z1):
    # brute force: walk the loops of `nested` and see whether any z[i, j] falls outside z
    out_of_bounds = any(i >= z0 or j >= z1 for i in range(x) for j in range(y))
    g = gl.Graph("g")
    g.dispatch(nested, g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1), g.ndarray("z", ti.f32, ndim=2))
    broken = first_violation(graph_shape_relations(g), {"x": (x,), "y": (y,), "z": (z0, z1)})
    assert (broken is not None) == out_of_bounds


# --- kernels where nothing is certain: no relation -----------------------------------------------


@ti.func
def put(a: ti.template(), i: ti.i32):
    a[i] = 1.0


@ti.kernel
def offset(x: V1, J: V1):
    for p in x:
        J[p + 1] = x[p]


@ti.kernel
def guarded(x: V1, J: V1):
    for p in x:
        if p < J.shape[0]:
            J[p] = x[p]


@ti.kernel
def scalar_range(n: ti.i32, x: V1, J: V1):
    for p in range(n):
        J[p] = x[p]


@ti.kernel
def leaves_early(x: V1, J: V1):
    for p in x:
        if x[p] < 0:
            continue
        J[p] = x[p]


@ti.kernel
def reassigned(x: V1, J: V1):
    for p in x:
        p = p // 2
        J[p] = x[p]


@ti.kernel
def through_func(x: V1, J: V1):
    for p in x:
        put(J, p)


@ti.kernel
def ternary(x: V1, J: V1):
    for p in x:
        x[p] = J[p] if x[p] > 0 else 0.0


@pytest.mark.parametrize(
    "kernel", [offset, guarded, scalar_range, leaves_early, reassigned, through_func, ternary], ids=lambda k: k.__name__
)
def test_what_is_not_certain_gives_no_relation(kernel):
    assert facts(kernel) == []


# --- graph level ---------------------------------------------------------------------------------


def test_relations_follow_bindings_to_graph_args_once_each():
    g = gl.Graph("g")
    pos, jac = g.ndarray("pos", ti.f32, ndim=1), g.ndarray("jac", ti.f32, ndim=1)
    g.dispatch(struct_for, x=pos, J=jac)
    with g.sequence("loop", repeat=3) as s:
        s.dispatch(struct_for, x=pos, J=jac)
    [rel] = graph_shape_relations(g)
    assert (rel.node, rel.arg, rel.param, rel.source, rel.source_param) == ("struct_for", "jac", "J", "pos", "x")
    assert inferred_shapes(g) == {"jac": "[≥pos.shape[0]]"}


@pytest.mark.usefixtures("ti_cpu")
def test_long_enough_arrays_run_and_larger_ones_too():
    g = gl.Graph("g")
    g.dispatch(struct_for, g.ndarray("x", ti.f32, ndim=1), g.ndarray("J", ti.f32, ndim=1))
    x, J = np.arange(4, dtype=np.float32), np.zeros(6, dtype=np.float32)
    g.run(x=x, J=J)
    assert J.tolist() == [0.0, 2.0, 4.0, 6.0, 0.0, 0.0]


@pytest.mark.usefixtures("ti_cpu")
def test_too_short_numpy_array_is_refused_before_anything_runs():
    # small enough not to crash this process on code without the check (4 floats past the end)
    g = gl.Graph("g")
    g.dispatch(range_shape, g.ndarray("x", ti.f32, ndim=1), g.ndarray("out", ti.f32, ndim=1))
    out = np.zeros(4, np.float32)
    with pytest.raises(gl.GraphRunError) as err:
        g.run(x=np.ones(8, np.float32), out=out)
    assert err.value.arg == "out"
    assert str(err.value) == (
        "run() of graph 'g': dispatch 'range_shape' indexes out[i] in for i in range(x.shape[0]), so arg 'out' "
        "(param 'out') needs shape[0] >= shape[0] of arg 'x' (param 'x'); got 4 < 8, and Taichi would read and "
        "write past the end of 'out'. Give 'out' at least 8 along axis 0"
    )
    assert out.tolist() == [0.0] * 4


# --- the crash-prone cases, in a child -----------------------------------------------------------

CHILD = """
import sys
import numpy as np
import taichi as ti
import graphlab as gl
from graphlab.api.examples import load_taichi_example

ti.init(arch=ti.cpu, log_level=ti.WARN)
N = 4_000_000  # far enough past the end of a 1-element array to segfault without the check

@ti.kernel
def copy(x: ti.types.ndarray(dtype=ti.f32, ndim=1), J: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for p in x:
        J[p] = x[p] * 2.0

def graph():
    g = gl.Graph("g")
    g.dispatch(copy, g.ndarray("x", ti.f32, ndim=1), g.ndarray("J", ti.f32, ndim=1))
    return g

{setup}
try:
    {call}
except gl.GraphRunError as exc:
    print("REFUSED:", exc)
else:
    print("RAN")
    sys.exit(3)
"""

CALLS = {
    "graph_run": ("g = graph()", "g.run(x=ti.ndarray(ti.f32, N), J=ti.ndarray(ti.f32, 1))"),
    "compiled_run": ("c = graph().compile()", "c.run(x=ti.ndarray(ti.f32, N), J=ti.ndarray(ti.f32, 1))"),
    "numpy": ("g = graph()", "g.run(x=np.ones(N, np.float32), J=np.zeros(1, np.float32))"),
    "debug_start": ("g = graph()", "g.debug(x=ti.ndarray(ti.f32, N), J=ti.ndarray(ti.f32, 1)).continue_()"),
}


def run_child(tmp_path: Path, setup: str, call: str) -> subprocess.CompletedProcess[str]:
    """Run the script in a fresh interpreter (a file: Taichi reads kernel source)."""
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(setup=textwrap.dedent(setup).strip(), call=call))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)


def assert_refused(proc: subprocess.CompletedProcess[str], *expected: str, prefix: str = "run() of graph") -> None:
    tail = (proc.stdout + proc.stderr)[-2000:]
    assert proc.returncode == 0, f"child exited with {proc.returncode} (a negative code is a signal):\n{tail}"
    assert f"REFUSED: {prefix}" in proc.stdout, tail
    for text in expected:
        assert text in proc.stdout, tail


@pytest.mark.parametrize("entry", sorted(CALLS))
def test_too_short_undeclared_array_is_a_clean_error_not_a_segfault(tmp_path, entry):
    setup, call = CALLS[entry]
    proc = run_child(tmp_path, setup, call)
    assert_refused(proc, "indexes J[p] in for p in x", "got 1 < 4000000", "Give 'J' at least 4000000 along axis 0")


def test_a_temp_sized_from_another_dim_is_checked_too(tmp_path):
    setup = """
    g = gl.Graph("g")
    g.dispatch(copy, g.ndarray("x", ti.f32, ndim=1, shape="n"), g.ndarray("t", ti.f32, ndim=1, shape="m", role="temp"))
    g.dispatch(copy, x=g.args["t"], J=g.ndarray("m_holder", ti.f32, ndim=1, shape="m"))
    """
    proc = run_child(tmp_path, setup, "g.run(x=ti.ndarray(ti.f32, N), m_holder=ti.ndarray(ti.f32, 1))")
    assert_refused(proc, "arg 't' (param 'J')", "got 1 < 4000000")


def test_taichi_mpm88_without_declared_shapes_refuses_a_short_J(tmp_path):
    # Taichi's own example declares no shapes; graphlab's copy of its graph, with the shapes left out
    setup = """
    m = load_taichi_example("mpm88_graph")
    g = gl.Graph("update")
    x, v = g.ndarray("x", ti.math.vec2, ndim=1), g.ndarray("v", ti.math.vec2, ndim=1)
    C, J = g.ndarray("C", ti.math.mat2, ndim=1), g.ndarray("J", ti.f32, ndim=1)
    grid_v, grid_m = g.ndarray("grid_v", ti.math.vec2, ndim=2), g.ndarray("grid_m", ti.f32, ndim=2)
    with g.sequence("substep", repeat=2) as s:
        s.dispatch(m.substep_reset_grid, grid_v, grid_m)
        s.dispatch(m.substep_p2g, x, v, C, J, grid_v, grid_m)
        s.dispatch(m.substep_update_grid_v, grid_v, grid_m)
        s.dispatch(m.substep_g2p, x, v, C, J, grid_v)
    values = dict(x=ti.Vector.ndarray(2, ti.f32, N), v=ti.Vector.ndarray(2, ti.f32, N),
                  C=ti.Matrix.ndarray(2, 2, ti.f32, N), J=ti.ndarray(ti.f32, 1),
                  grid_v=ti.Vector.ndarray(2, ti.f32, (128, 128)), grid_m=ti.ndarray(ti.f32, (128, 128)))
    """
    proc = run_child(tmp_path, setup, "g.run(values)")
    assert_refused(proc, "dispatch 'substep/substep_p2g' indexes J[p] in for p in x", "got 1 < 4000000")


def test_taichi_examples_relations_are_inferred(mpm88):
    g = gl.Graph("update")
    x, v = g.ndarray("x", ti.math.vec2, ndim=1), g.ndarray("v", ti.math.vec2, ndim=1)
    C, J = g.ndarray("C", ti.math.mat2, ndim=1), g.ndarray("J", ti.f32, ndim=1)
    grid_v, grid_m = g.ndarray("grid_v", ti.math.vec2, ndim=2), g.ndarray("grid_m", ti.f32, ndim=2, shape=("G", "G"))
    g.dispatch(mpm88.substep_reset_grid, grid_v, grid_m)
    g.dispatch(mpm88.substep_p2g, x, v, C, J, grid_v, grid_m)
    # grid_v[base + offset] in p2g is computed from data: not certain, so it gives nothing
    assert inferred_shapes(g) == {
        "grid_v": "[≥G, ≥G]",
        "C": "[≥x.shape[0]]",
        "J": "[≥x.shape[0]]",
        "v": "[≥x.shape[0]]",
    }


# --- where the relations show: GL025, the drawing, the widget ----------------------------------


def copy_graph(x_shape, j_shape) -> gl.Graph:
    g = gl.Graph("g")
    g.dispatch(struct_for, g.ndarray("x", ti.f32, ndim=1, shape=x_shape), g.ndarray("J", ti.f32, ndim=1, shape=j_shape))
    return g


def test_gl025_error_when_declared_sizes_are_too_small_for_the_loop():
    g = copy_graph((100,), (10,))
    [diag] = [d for d in g.validate(access="ast") if d.code == "GL025"]
    assert (diag.severity, diag.node, diag.arg) == ("error", "struct_for", "J")
    assert "J.shape[0] must be >= x.shape[0], but 'J' is declared with shape (10,) and 'x' with (100,)" in diag.message
    assert diag.hint == "declare 'J' with shape[0] >= 100"
    with pytest.raises(gl.GraphError, match="GL025"):
        g.check(access="ast")


def test_gl025_info_when_declared_apart_and_nothing_when_tied():
    [diag] = [d for d in copy_graph(("n",), ("m",)).validate(access="ast") if d.code == "GL025"]
    assert diag.severity == "info"
    assert "declared apart ('m' and 'n'), so run() checks it before dispatching" in diag.message
    assert diag.hint == "if they are always equal, declare both with the dim 'n'"
    for x_shape, j_shape in [(("n",), ("n",)), ((10,), (12,)), (("n",), None), (None, (4,))]:
        assert [d for d in copy_graph(x_shape, j_shape).validate(access="ast") if d.code == "GL025"] == []


def test_render_shows_inferred_dims_where_declared_ones_would_be():
    source = copy_graph(("n",), None).render(access="ast").source
    assert 'label="J  f32[≥n]"' in source and "dims: not declared; the kernels' loops need [≥n]" in source
    assert "inferred: J.shape[0] >= x.shape[0] (dispatch 'struct_for' indexes J[p] in for p in x)" in source
    assert 'label="x  f32[n]"' in source


def test_widget_arg_view_carries_the_inferred_shape():
    args = {a["name"]: a for a in graph_view(copy_graph(("n",), None))["args"]}
    assert args["J"]["inferred_shape"] == "[≥n]" and args["J"]["shape"] is None
    assert args["x"]["inferred_shape"] is None and args["x"]["shape"] == ["n"]


# --- the exported module: load_module and gl.verify check the manifest's relations ----------------


@ti.kernel
def doubled(x: ti.types.ndarray(dtype=ti.f32, ndim=1), J: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for p in x:
        J[p] = x[p] * 2.0


@pytest.fixture
def exported(ti_cpu, tmp_path) -> Path:
    g = gl.Graph("g")
    g.dispatch(doubled, g.ndarray("x", ti.f32, ndim=1), g.ndarray("J", ti.f32, ndim=1))
    folder = tmp_path / "doubled"
    gl.export(g, folder, "x64", values={"x": np.ones(8, np.float32), "J": np.zeros(8, np.float32)}, progress=False)
    return folder


def test_export_records_relations_and_load_module_refuses_a_short_array(exported, tmp_path):
    [entry] = json.loads((exported / "manifest.json").read_text())["graphs"][0]["shape_relations"]
    assert (entry["arg"], entry["axis"], entry["source"], entry["source_axis"]) == ("J", 0, "x", 0)
    setup = f"""
    from graphlab.deploy.cruntime import load_module
    module = load_module({str(exported)!r})
    module.graphs["g"].run(x=np.ones(8, np.float32), J=np.zeros(8, np.float32))  # long enough: runs
    """
    proc = run_child(tmp_path, setup, 'module.graphs["g"].run(x=np.ones(N, np.float32), J=np.zeros(1, np.float32))')
    assert_refused(proc, "indexes J[p] in for p in x", "got 1 < 4000000", prefix="graph 'g': dispatch 'doubled'")


def test_verify_refuses_too_short_inputs_before_either_side_runs(exported):
    with pytest.raises(VerifyError) as err:
        gl.verify(exported, inputs={"x": np.ones(64, np.float32), "J": np.zeros(4, np.float32)})
    assert str(err.value).startswith("inputs['J']: graph 'g': dispatch 'doubled' indexes J[p] in for p in x")
    assert "got 4 < 64" in str(err.value)


def test_manifest_relation_on_an_unknown_arg_is_refused(exported):
    data = json.loads((exported / "manifest.json").read_text())
    data["graphs"][0]["shape_relations"][0]["source"] = "nope"
    (exported / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(ManifestError, match=r"\$\.graphs\[0\]\.shape_relations\[0\]\.source: 'nope' axis 0 is not"):
        gl.load_module(exported)
