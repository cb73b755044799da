"""A loop bounded by a literal or a module constant makes ``arg.shape[k] >= N`` certain, checked everywhere.

``for i, j in ti.ndrange(GRID_SIZE, GRID_SIZE): grid[k, i, j] = ...`` with ``GRID_SIZE = 128``
indexes ``grid`` up to 127 on axes 1 and 2 whatever ``grid``'s shape: a smaller grid is written out
of bounds (a segfault on the CPU). The relation is against a number, not another arg; ``run()``,
GL025, the drawing, ``load_module`` and ``gl.verify`` (through the manifest) check it like the others.

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

import graphlab as gl
from graphlab.deploy import hostgen
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.verify import VerifyError
from graphlab.kernelfacts.shape_facts import first_violation, graph_shape_relations, inferred_shapes, kernel_shape_facts

ROOT = Path(gl.__file__).resolve().parents[1]
GRID_SIZE = 128
NOT_AN_INT = 128.0
FLAG = True
V1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
V3 = ti.types.ndarray(dtype=ti.f32, ndim=3)


def facts(kernel) -> list[str]:
    return [str(f) for f in kernel_shape_facts(kernel)]


@ti.kernel
def fill_layer(k: ti.i32, grid: V3):
    for i, j in ti.ndrange(GRID_SIZE, GRID_SIZE):
        grid[k, i, j] = 1.0


@ti.kernel
def literal_span(x: V1):
    for i in range(4, 16):
        x[i] = 2.0


@ti.kernel
def literal_index(x: V1):
    x[3] = 1.0


@ti.kernel
def float_constant(x: V1):
    for i in range(NOT_AN_INT):
        x[i] = 1.0


@ti.kernel
def bool_constant(x: V1):
    for i in range(FLAG):
        x[i] = 1.0


def test_a_module_constant_bound_gives_a_minimum_per_axis():
    loop = "for (i, j) in ti.ndrange(GRID_SIZE, GRID_SIZE)"
    assert facts(fill_layer) == [
        f"grid.shape[1] >= 128 (grid[k, i, j] in {loop})",
        f"grid.shape[2] >= 128 (grid[k, i, j] in {loop})",
    ]


def test_literal_bounds_and_indices_give_minimums():
    assert facts(literal_span) == ["x.shape[0] >= 16 (x[i] in for i in range(4, 16))"]
    assert facts(literal_index) == ["x.shape[0] >= 4 (x[3])"]


@pytest.mark.parametrize("kernel", [float_constant, bool_constant], ids=lambda k: k.__name__)
def test_only_an_int_module_constant_is_read(kernel):
    assert facts(kernel) == []


V2 = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.kernel
def static_bounds(grid: V2):
    for i, j in ti.ndrange(ti.static(GRID_SIZE), ti.static(GRID_SIZE // 4)):
        grid[i, j] = 1.0


@ti.kernel
def static_range(x: V1):
    for i in range(ti.static(GRID_SIZE)):
        x[i] = 1.0


@ti.kernel
def folded_bound(x: V1):
    for i in range(GRID_SIZE * 2 - 1):
        x[i] = 1.0


@ti.kernel
def unfoldable_bounds(x: V1):
    for i in range(GRID_SIZE // 0 + NOT_AN_INT * 2):
        x[i] = 1.0


def test_a_constant_under_ti_static_or_folded_arithmetic_is_a_bound(ti_cpu):
    """Taichi folds ``ti.static(GRID_SIZE)`` and ``GRID_SIZE * 2 - 1`` to Python ints before compiling;
    unread, a too-small grid segfaulted the process."""
    loop = "for (i, j) in ti.ndrange(ti.static(GRID_SIZE), ti.static(GRID_SIZE // 4))"
    assert facts(static_bounds) == [
        f"grid.shape[0] >= 128 (grid[i, j] in {loop})",
        f"grid.shape[1] >= 32 (grid[i, j] in {loop})",
    ]
    assert facts(static_range) == ["x.shape[0] >= 128 (x[i] in for i in range(ti.static(GRID_SIZE)))"]
    assert facts(folded_bound) == ["x.shape[0] >= 255 (x[i] in for i in range(GRID_SIZE * 2 - 1))"]
    assert facts(unfoldable_bounds) == []  # a division by zero or a float is not a bound
    g = gl.Graph("static_grid")
    g.dispatch(static_bounds, g.ndarray("grid", ti.f32, ndim=2))
    with pytest.raises(gl.GraphRunError, match=r"needs shape\[1\] >= 32, the constant bound of its loop; got 16 < 32"):
        g.run(grid=np.zeros((128, 16), np.float32))


def grid_graph(shape=None) -> gl.Graph:
    g = gl.Graph("grid")
    g.dispatch(fill_layer, g.scalar("layer", ti.i32), g.ndarray("grid", ti.f32, ndim=3, shape=shape))
    return g


def test_the_relation_is_against_a_number_and_refuses_exactly_below_it():
    relations = graph_shape_relations(grid_graph())
    assert [(r.arg, r.axis, r.source, r.minimum) for r in relations] == [("grid", 1, None, 128), ("grid", 2, None, 128)]
    assert first_violation(relations, {"grid": (1, 128, 200)}) is None
    rel, why = first_violation(relations, {"grid": (2, 128, 127)})
    assert rel.axis == 2
    assert why == (
        "dispatch 'fill_layer' indexes grid[k, i, j] in for (i, j) in ti.ndrange(GRID_SIZE, GRID_SIZE), so arg "
        "'grid' (param 'grid') needs shape[2] >= 128, the constant bound of its loop; got 127 < 128, and Taichi "
        "would read and write past the end of 'grid'. Give 'grid' at least 128 along axis 2"
    )
    assert inferred_shapes(grid_graph()) == {"grid": "[?, ≥128, ≥128]"}


def test_gl025_error_for_a_declared_size_below_the_constant():
    [diag] = [d for d in grid_graph((2, 64, 128)).validate(access="ast") if d.code == "GL025"]
    assert (diag.severity, diag.node, diag.arg) == ("error", "fill_layer", "grid")
    assert "grid.shape[1] must be >= 128 (the loop's constant bound)" in diag.message
    assert diag.hint == "declare 'grid' with shape[1] >= 128"
    for fits in [(2, 128, 128), ("l", "n", "n"), None]:
        assert [d for d in grid_graph(fits).validate(access="ast") if d.code == "GL025"] == []


# --- the crash-prone run, in a child -------------------------------------------------------------

CHILD = """
import sys
import numpy as np
import taichi as ti
import graphlab as gl

ti.init(arch=ti.cpu, log_level=ti.WARN)
GRID_SIZE = 2048  # far past the end of a 1x1 layer: a segfault without the check

@ti.kernel
def fill_layer(k: ti.i32, grid: ti.types.ndarray(dtype=ti.f32, ndim=3)):
    for i, j in ti.ndrange(GRID_SIZE, GRID_SIZE):
        grid[k, i, j] = 1.0

{setup}
try:
    {call}
except gl.GraphRunError as exc:
    print("REFUSED:", exc)
else:
    print("RAN")
    sys.exit(3)
"""


def run_child(tmp_path: Path, setup: str, call: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(setup=textwrap.dedent(setup).strip(), call=call))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)


def assert_refused(proc: subprocess.CompletedProcess[str], *expected: str) -> None:
    tail = (proc.stdout + proc.stderr)[-2000:]
    assert proc.returncode == 0, f"child exited with {proc.returncode} (a negative code is a signal):\n{tail}"
    assert "REFUSED:" in proc.stdout, tail
    for text in expected:
        assert text in proc.stdout, tail


def test_a_grid_smaller_than_the_constant_is_refused_not_a_segfault(tmp_path):
    setup = """
    g = gl.Graph("grid")
    g.dispatch(fill_layer, g.scalar("layer", ti.i32), g.ndarray("grid", ti.f32, ndim=3))
    """
    proc = run_child(tmp_path, setup, "g.run(layer=0, grid=np.zeros((1, 1, 1), np.float32))")
    assert_refused(proc, "needs shape[1] >= 2048, the constant bound of its loop; got 1 < 2048")


# --- the exported module: the manifest carries the minimum -----------------------------------------


@pytest.fixture
def exported(ti_cpu, tmp_path) -> Path:
    folder = tmp_path / "grid"
    values = {"layer": 0, "grid": np.zeros((2, GRID_SIZE, GRID_SIZE), np.float32)}
    gl.export(grid_graph(), folder, "x64", values=values, progress=False)
    return folder


def test_the_manifest_records_the_minimum_and_verify_refuses_a_small_grid(exported):
    entries = json.loads((exported / "manifest.json").read_text())["graphs"][0]["shape_relations"]
    got = [(e["arg"], e["axis"], e["source"], e["source_axis"], e["source_param"], e["minimum"]) for e in entries]
    assert got == [("grid", 1, None, None, None, 128), ("grid", 2, None, None, None, 128)]
    [graph] = gl.load_module(exported).manifest.graphs
    assert [(r.arg, r.axis, r.minimum) for r in graph.relations] == [("grid", 1, 128), ("grid", 2, 128)]
    with pytest.raises(VerifyError) as err:
        gl.verify(exported, inputs={"layer": 0, "grid": np.zeros((2, 128, 64), np.float32)})
    assert "needs shape[2] >= 128, the constant bound of its loop; got 64 < 128" in str(err.value)


def test_load_module_refuses_a_small_grid_before_running(exported, tmp_path):
    setup = f"""
    from graphlab.deploy.cruntime import load_module
    module = load_module({str(exported)!r})
    """
    call = 'module.graphs["grid"].run(layer=0, grid=np.zeros((1, 1, 1), np.float32))'
    assert_refused(run_child(tmp_path, setup, call), "needs shape[1] >= 128, the constant bound of its loop")


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"minimum": 0}, "shape_relations[0].minimum: expected an int >= 1"),
        ({"minimum": True}, "shape_relations[0].minimum: expected"),
        ({"source": "grid", "source_axis": 0}, "shape_relations[0].source: a relation with a minimum has a null"),
        ({"minimum": None}, "shape_relations[0].source: expected str"),
    ],
)
def test_a_bad_minimum_in_the_manifest_is_refused(exported, change, path):
    data = json.loads((exported / "manifest.json").read_text())
    data["graphs"][0]["shape_relations"][0].update(change)
    (exported / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(ManifestError, match=r"\$\.graphs\[0\]\." + path.replace("[", r"\[").replace("]", r"\]")):
        gl.load_module(exported)


# --- the C host refuses too (its relations table is generated from the manifest) ------------------


@ti.kernel
def copy_into_grid(x: V1, grid: V3):
    for p in x:
        grid[0, 0, p] = x[p]


def test_the_c_host_refuses_a_small_grid_before_running(ti_cpu, tmp_path):
    g = grid_graph()
    g.dispatch(copy_into_grid, g.ndarray("x", ti.f32, ndim=1), g.args["grid"])
    folder = tmp_path / "grid"
    values = {"layer": 0, "grid": np.zeros((1, 128, 128), np.float32), "x": np.ones(128, np.float32)}
    gl.export(g, folder, "x64", values=values, progress=False)
    exe = hostgen.build_host(folder)

    def host(grid_shape, x_len) -> subprocess.CompletedProcess[str]:
        inputs = tmp_path / f"in_{x_len}_{grid_shape[2]}"
        inputs.mkdir()
        np.save(inputs / "grid.npy", np.zeros(grid_shape, np.float32))
        np.save(inputs / "x.npy", np.ones(x_len, np.float32))
        command = [str(exe), "--module", str(folder / "module"), "--in", str(inputs), "--set", "layer=0"]
        return subprocess.run([*command, "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)

    small = host((1, 128, 64), 16)
    assert small.returncode == 1, small.stderr
    assert "needs shape[2] >= 128 (a constant loop bound); got 64" in small.stderr
    short = host((1, 128, 200), 300)  # the grid holds the constant's loop, not x's
    assert short.returncode == 1, short.stderr
    assert "'grid' needs shape[2] >= shape[0] of 'x'; got 200 < 300" in short.stderr
    fits = host((1, 128, 300), 300)
    assert fits.returncode == 0, fits.stderr
