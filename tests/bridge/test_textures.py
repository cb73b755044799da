"""Texture graphs: what an arch cannot run is refused first, and texture values are checked like ndarrays.

- Taichi's LLVM backends (x64) have no textures: a texture kernel aborts the process at launch,
  and even a compiled texture graph crashes the process at exit. Those cases run in a child
  process, so the old crash fails the test instead of killing pytest.
- A ``rw_texture`` value of another format: Taichi's kernel call refuses it, its ``ti.graph``
  run stores through it silently (values quantised). graphlab refuses it before anything runs.

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
from graphlab.api.examples import load_taichi_example
from graphlab.deploy.verify import run_host

ROOT = Path(gl.__file__).resolve().parents[1]  # the child imports this same graphlab


@ti.kernel
def mark(y: ti.types.ndarray(dtype=ti.f32, ndim=2)):
    for i, j in y:
        y[i, j] = 1.0


@ti.kernel
def blit(tex: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0), y: ti.types.ndarray(ndim=2)):
    for i, j in y:
        tex.store(ti.Vector([i, j]), ti.Vector([y[i, j], 0.0, 0.0, 0.0]))


def run_child(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    """Run ``script`` in a fresh interpreter (a file: Taichi reads kernel source)."""
    path = tmp_path / "child.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)


def test_a_texture_graph_on_x64_is_refused_before_taichi_sees_it(tmp_path):
    proc = run_child(
        tmp_path,
        """
        import taichi as ti
        import graphlab as gl

        @ti.kernel
        def blit(tex: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0), y: ti.types.ndarray(ndim=2)):
            for i, j in y:
                tex.store(ti.Vector([i, j]), ti.Vector([y[i, j], 0.0, 0.0, 0.0]))

        ti.init(arch=ti.cpu, log_level=ti.WARN)
        g = gl.Graph("paint")
        g.dispatch(blit, g.rw_texture("tex", 2, ti.Format.r32f), g.ndarray("y", ti.f32, ndim=2))
        for start in (g.compile, g.debug):
            try:
                start()
            except gl.GraphError as exc:
                print("REFUSED:", exc)
            else:
                print("STARTED", start.__name__)
        """,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"the child crashed (status {proc.returncode}):\n{out}"
    assert "STARTED" not in out
    refusals = [line for line in proc.stdout.splitlines() if line.startswith("REFUSED:")]
    assert len(refusals) == 2, out
    for line in refusals:
        assert "graph 'paint' cannot run on x64: arg(s) 'tex' (rw_texture) are textures" in line
        assert "ti.init(arch=ti.vulkan)" in line


def test_a_rw_texture_of_another_format_is_refused_before_anything_runs(ti_vulkan):
    g = gl.Graph("paint")
    y = g.ndarray("y", ti.f32, ndim=2)
    g.dispatch(mark, y)
    g.dispatch(blit, g.rw_texture("tex", 2, ti.Format.r32f), y)
    values = np.zeros((4, 4), np.float32)
    with pytest.raises(gl.GraphRunError, match=r"arg 'tex' expects rw_texture, ndim=2, fmt=r32f; got a rgba8 "):
        g.run(tex=ti.Texture(ti.Format.rgba8, (4, 4)), y=values)
    assert not values.any()  # mark did not run
    with pytest.raises(gl.GraphRunError, match=r"ti.Texture\(ti.Format.r32f, shape\)"):
        g.debug(tex=ti.Texture(ti.Format.rgba8, (4, 4)), y=values)


# --- export: validate(target=...) and export(arch=...) agree; the C host passes textures ------------------


@ti.kernel
def fill(tex: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0), y: ti.types.ndarray(ndim=2), s: ti.f32):
    for i, j in y:
        tex.store(ti.Vector([i, j]), ti.Vector([y[i, j] * s, 0.0, 0.0, 0.0]))


@ti.kernel
def gather(
    img: ti.types.texture(num_dimensions=2),
    tex: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0),
    out: ti.types.ndarray(ndim=2),
):
    for i, j in out:
        texel = img.fetch(ti.Vector([i, j]), 0)
        out[i, j] = texel.r + 2.0 * texel.a + tex.load(ti.Vector([i, j])).r


@ti.kernel
def count(tex: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32i, lod=0)):
    for i, j in tex:
        tex.store(ti.Vector([i, j]), ti.Vector([i + j, 0, 0, 0]))


def texture_graph() -> gl.Graph:
    g = gl.Graph("paint")
    tex = g.rw_texture("tex", 2, ti.Format.r32f)
    g.dispatch(fill, tex, g.ndarray("y", ti.f32, ndim=2, role="input"), g.scalar("s", ti.f32))
    g.dispatch(gather, g.texture("img", 2, role="input"), tex, g.ndarray("out", ti.f32, ndim=2, role="output"))
    return g


@pytest.mark.vulkan
def test_a_texture_graph_exports_for_vulkan_and_the_c_host_matches_python(ti_vulkan, tmp_path):
    g = texture_graph()
    assert [d for d in g.validate(target="vulkan") if d.severity == "error"] == []
    rng = np.random.default_rng(3)
    values = {
        "tex": ti.Texture(ti.Format.r32f, (6, 5)),
        "img": ti.Texture(ti.Format.rgba8, (6, 5)),
        "y": rng.uniform(0, 1, (6, 5)).astype(np.float32),
        "out": np.zeros((6, 5), np.float32),
        "s": 3.0,
    }
    result = gl.export(g, tmp_path / "paint", "vulkan", values=values, progress=False)
    manifest = json.loads((result.path / "manifest.json").read_text())
    args = {a["name"]: a for a in manifest["graphs"][0]["args"]}
    assert args["tex"]["fmt"] == "r32f" and args["img"]["sample"] == {"shape": [6, 5], "fmt": "rgba8"}
    # the host's runtime library finds each texture's copy graphs by its format (graphlab_upload_<fmt>_<n>d)
    metadata = json.loads((result.path / "module" / "graphs.json").read_text())
    assert {"graphlab_upload_r32f_2d", "graphlab_upload_rgba8_2d", "graphlab_download_r32f_2d"} <= {
        entry["key"] for entry in metadata
    }

    img = rng.uniform(0, 1, (6, 5, 4)).astype(np.float32)
    report = gl.verify(result.path, inputs={"img": img, "y": values["y"]}, rtol=1e-6)
    assert report.passed and report.identical, report
    assert {o.name for o in report.outputs} == {"tex", "out"}

    # The C host alone, against numpy: texels go in from .npy files and come back out
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    for name, value in {
        "img": img,
        "y": values["y"],
        "s": np.float32(3.0),
        "tex": np.zeros((6, 5, 1), np.float32),
        "out": values["out"],
    }.items():
        np.save(inputs / f"{name}.npy", value)
    run = run_host(result.path, inputs, tmp_path / "outputs")
    np.testing.assert_array_equal(np.load(run.out_dir / "tex.npy"), 3 * values["y"][..., None])
    quantised = np.round(img * 255) / 255  # rgba8 keeps 8 bits per channel
    want = quantised[..., 0] + 2 * quantised[..., 3] + 3 * values["y"]
    np.testing.assert_allclose(np.load(run.out_dir / "out.npy"), want, atol=1e-6)

    # load_module: the same module from Python through the C runtime, texels as numpy arrays in and out
    with gl.load_module(result.path) as module:
        tex, out = np.zeros((6, 5, 1), np.float32), np.zeros((6, 5), np.float32)
        module.graphs["paint"].run(img=img.copy(), tex=tex, y=values["y"], s=3.0, out=out)
        np.testing.assert_array_equal(tex, 3 * values["y"][..., None])
        np.testing.assert_allclose(out, want, atol=1e-6)
        with pytest.raises(gl.GraphRunError, match=r"arg 'img': a texture of rgba8, got shape \(6, 5, 1\)"):
            module.graphs["paint"].run(img=tex, tex=tex, y=values["y"], s=3.0, out=out)


@pytest.mark.vulkan
def test_an_integer_format_texture_is_refused_alike_by_validate_and_export(ti_vulkan, tmp_path):
    g = gl.Graph("count")
    g.dispatch(count, g.rw_texture("tex", 2, ti.Format.r32i))
    errors = [d for d in g.validate(target="vulkan") if d.severity == "error"]
    assert [(d.code, d.arg) for d in errors] == [("GL018", "tex")]
    assert "format r32i is not one the exported module can fill and read back" in errors[0].message
    with pytest.raises(
        gl.GraphError, match="GL018.*'tex' is a rw_texture of r32i, which vulkan modules cannot take: format r32i"
    ):
        gl.export(g, tmp_path / "count", "vulkan", progress=False)
    assert list(tmp_path.iterdir()) == []
    assert [d for d in g.validate() if d.severity == "error"] == []  # it still runs from Python


@pytest.mark.vulkan
def test_taichis_texture_graph_example_exports_and_verifies(ti_vulkan, tmp_path):
    m = load_taichi_example("texture_graph")
    init = gl.Graph("g_init")
    init.dispatch(m.make_texture, init.rw_texture("rw_tex", 2, ti.Format.r32f))
    g = gl.Graph("g")
    g.dispatch(m.paint, g.scalar("t", ti.f32), g.ndarray("pixels_arr", ti.math.vec4, ndim=2), g.texture("tex", 2))
    tex = ti.Texture(ti.Format.r32f, (128, 128))
    pixels = ti.Vector.ndarray(4, dtype=ti.f32, shape=m.res)
    values = {"rw_tex": tex, "tex": tex, "pixels_arr": pixels, "t": 0.3}
    result = gl.export([init, g], tmp_path / "texture_graph", "vulkan", values=values, progress=False)
    graphs = {entry["key"] for entry in json.loads((result.path / "module" / "graphs.json").read_text())}
    assert graphs == {"g_init", "g", "graphlab_upload_r32f_2d", "graphlab_download_r32f_2d"}
    report = gl.verify(result.path)
    assert report.passed and report.identical, report
    assert {o.name: o.shape for o in report.outputs} == {"rw_tex": (128, 128, 1), "pixels_arr": (*m.res, 4)}
