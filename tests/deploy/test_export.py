"""gl.export: Taichi's mpm88 and stable fluid examples to module folders, run through the C runtime.

Exports happen in child processes (x64 and Vulkan through Mesa's lavapipe); each module is run
with gl.load_module (Taichi's C runtime through ctypes) and compared with Taichi's Python frontend
running the graph files and kernels the export stored. Exports are made once per module.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import hashlib
import itertools
import json
import linecache
import textwrap
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from graphs import fluid_graphs

import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_buffers, mpm88_graph
from graphlab.child.payload import CarryError
from graphlab.child.process import ChildRunError
from graphlab.core.errors import GraphError, ToolMissingError
from graphlab.deploy import exporter
from graphlab.deploy._child import KILL_AT_ENV
from graphlab.deploy.exporter import ExportError, OutputPathError
from graphlab.deploy.manifest import read_manifest
from graphlab.deploy.verify import make_inputs, run_python

ARCHS = ["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)]
SUBSTEPS = 20
JACOBI = 4
_cells = itertools.count()


# --- kernels and graphs --------------------------------------------------------------------------------


@ti.kernel
def add_one(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] = x[i] + 1.0


@ti.kernel
def scale_by(x: ti.types.ndarray(dtype=ti.f32, ndim=1), s: ti.f64):
    for i in x:
        x[i] = x[i] * s


@ti.kernel
def blit(tex: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0), y: ti.types.ndarray(ndim=2)):
    for i, j in y:
        tex.store(ti.Vector([i, j]), ti.Vector([y[i, j], 0.0, 0.0, 0.0]))


def define_cell(source: str) -> dict:
    """Run source as a notebook cell does: in ``__main__``, readable through linecache."""
    filename = f"<ipython-input-{next(_cells)}-graphlab-export-test>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


LIVE_CELL = textwrap.dedent(
    """
    import taichi as ti

    counts = ti.field(ti.f32, shape=4)

    @ti.kernel
    def tally(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in x:
            x[i] += counts[i % 4]
    """
)


def small_graph() -> gl.Graph:
    g = gl.Graph("small")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(add_one, x, y)
    return g


def fluid_values(m) -> dict:
    rng = np.random.default_rng(3)
    res = m.res
    shapes = {
        "velocities_pair_cur": (2,),
        "velocities_pair_nxt": (2,),
        "dyes_pair_cur": (3,),
        "dyes_pair_nxt": (3,),
        "pressures_pair_cur": (),
        "pressures_pair_nxt": (),
        "velocity_divs": (),
    }
    values = {k: rng.uniform(0, 1, (res, res, *e)).astype(np.float32) for k, e in shapes.items()}
    values["mouse_data"] = np.array([1.0, 0.5, 200.0, 256.0, 1.0, 0.2, 0.3, 0.0], np.float32)
    return values


@pytest.fixture(scope="module", params=ARCHS)
def mpm88_export(request, tmp_path_factory) -> Path:
    """mpm88 (SUBSTEPS substeps) exported with the example's own initial state (ti.ndarrays) as values."""
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    m = load_taichi_example("mpm88_graph")
    out = tmp_path_factory.mktemp(f"exp_mpm88_{request.param}") / "mpm88"
    gl.export(mpm88_graph(m, SUBSTEPS), out, request.param, values=mpm88_buffers(m), cpu_threads=1, progress=False)
    return out


@pytest.fixture(scope="module", params=ARCHS)
def fluid_export(request, tmp_path_factory) -> Path:
    """Taichi's stable fluid pair g1/g2, one module, sharing buffers by name."""
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    m = load_taichi_example("stable_fluid_graph")
    out = tmp_path_factory.mktemp(f"exp_fluid_{request.param}") / "fluid"
    gl.export(list(fluid_graphs(m, JACOBI)), out, request.param, values=fluid_values(m), cpu_threads=1, progress=False)
    return out


def python_reference(folder: Path, values: dict, tmp_path: Path) -> dict:
    """What Taichi's Python frontend computes from ``values`` (one frame, in a child process)."""
    (tmp_path / "in").mkdir()
    for name, value in values.items():
        np.save(tmp_path / "in" / f"{name}.npy", value)
    run = run_python(folder, tmp_path / "in", tmp_path / "out")
    return {p.stem: np.load(p) for p in run.out_dir.glob("*.npy")}


def assert_matches(got: dict, want: dict, arch: str) -> None:
    for name, expected in want.items():
        if arch == "x64":  # one thread: float atomics add in one order, so the bits agree
            np.testing.assert_array_equal(got[name], expected, err_msg=name)
        else:
            scale = max(float(np.abs(expected).max()), 1e-30)
            assert float(np.abs(got[name] - expected).max()) / scale <= 1e-5, name


# --- what an export writes ------------------------------------------------------------------------------


def test_export_writes_module_manifest_sources_and_host(mpm88_export):
    manifest = json.loads((mpm88_export / "manifest.json").read_text())
    arch = manifest["arch"]
    assert manifest["format"] == "graphlab.module/1"
    assert manifest["taichi_version"] == ".".join(map(str, ti.__version__))
    assert manifest["dims"] == {"n": 8192, "G": 128}
    assert [g["name"] for g in manifest["graphs"]] == ["update"]
    assert (mpm88_export / "module" / ("graphs.json" if arch == "vulkan" else "graphs.tcb")).is_file()
    assert (mpm88_export / "module.tcm").is_file() == (arch == "vulkan")
    assert manifest["tcm"] == ("module.tcm" if arch == "vulkan" else None)
    assert sorted(p.name for p in (mpm88_export / "host").glob("*")) >= ["CMakeLists.txt", "README.md", "main.c"]
    gl.load(mpm88_export / "source" / "update.graph.json", kernels=load_taichi_example("mpm88_graph"))


def test_manifest_lists_every_shipped_file_with_its_sha256(mpm88_export):
    files = json.loads((mpm88_export / "manifest.json").read_text())["files"]
    assert "source/kernels.json" in files and "source/update.graph.json" in files
    assert any(name.startswith("module/") for name in files)
    for name, digest in files.items():
        assert hashlib.sha256((mpm88_export / name).read_bytes()).hexdigest() == digest, name
    assert not any(name.startswith("host/") for name in files)  # main.c is the user's to edit


def test_manifest_args_carry_specs_roles_dims_and_samples(mpm88_export):
    graph = json.loads((mpm88_export / "manifest.json").read_text())["graphs"][0]
    args = {a["name"]: a for a in graph["args"]}
    assert list(args) == ["x", "v", "C", "J", "grid_v", "grid_m"]
    assert args["C"] == {
        **args["C"],
        "kind": "ndarray",
        "dtype": "f32",
        "ndim": 1,
        "element_shape": [2, 2],
        "role": "state",
        "shape": ["n"],
    }
    assert args["grid_v"]["shape"] == ["G", "G"]
    assert args["J"]["sample"] == {"shape": [8192], "low": 1.0, "high": 1.0}  # init_particles sets J = 1
    assert 0.2 <= args["x"]["sample"]["low"] < args["x"]["sample"]["high"] <= 0.6
    assert graph["steps"] == 4 * SUBSTEPS
    assert sorted(graph["writes"]) == sorted(args)


def test_x64_records_its_thread_count_and_vulkan_its_caps(mpm88_export):
    manifest = json.loads((mpm88_export / "manifest.json").read_text())
    if manifest["arch"] == "x64":
        assert manifest["cpu_max_num_threads"] == 1
    else:
        assert manifest["cpu_max_num_threads"] is None and manifest["caps"] == []


def test_export_leaves_no_temporary_folders(mpm88_export):
    assert [p.name for p in mpm88_export.parent.iterdir()] == ["mpm88"]


def test_mpm88_through_load_module_matches_python(mpm88_export, tmp_path):
    manifest = read_manifest(mpm88_export)
    values = make_inputs(manifest, seed=1)
    want = python_reference(mpm88_export, values, tmp_path)
    with gl.load_module(mpm88_export) as module:
        got = module.graphs["update"].run(**{k: v.copy() for k, v in values.items()})
    assert_matches(got, want, manifest.arch)


def test_fluid_pair_is_one_module_with_two_graphs(fluid_export):
    manifest = read_manifest(fluid_export)
    assert [g.name for g in manifest.graphs] == ["g1", "g2"]
    assert manifest.samples["mouse_data"].shape == (8,)
    assert manifest.samples["velocity_divs"].shape == (512, 512)


def test_fluid_through_load_module_matches_python(fluid_export, tmp_path):
    manifest = read_manifest(fluid_export)
    values = make_inputs(manifest, seed=2)
    want = python_reference(fluid_export, values, tmp_path)
    got = {k: v.copy() for k, v in values.items()}
    with gl.load_module(fluid_export) as module:
        for graph in module.graphs.values():  # g1 then g2, on the same arrays
            graph.run(**{a.name: got[a.name] for a in graph.spec.args})
    assert_matches(got, want, manifest.arch)


# --- notebook kernels, progress, overwrite ------------------------------------------------------------------


def test_kernel_from_a_notebook_cell_is_exported_and_runs(ti_cpu, tmp_path):
    cell = define_cell(
        "import taichi as ti\n\n@ti.kernel\ndef halve(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):\n"
        "    for i in x:\n        x[i] = x[i] * 0.5\n"
    )
    g = gl.Graph("cellgraph")
    g.dispatch(cell["halve"], g.ndarray("x", ti.f32, ndim=1))
    gl.export(g, tmp_path / "cell", "x64", progress=False)
    x = np.arange(6, dtype=np.float32)
    with gl.load_module(tmp_path / "cell") as module:
        module.graphs["cellgraph"].run(x=x)
    np.testing.assert_array_equal(x, np.arange(6, dtype=np.float32) * 0.5)


def test_progress_callback_sees_every_stage_in_order(ti_cpu, tmp_path):
    seen = []
    gl.export(small_graph(), tmp_path / "small", "x64", dims={"n": 16}, progress=lambda s, f: seen.append((s, f)))
    stages = [s.split(" ")[0] for s, _ in seen]
    for stage in ("check", "carry", "init", "compile", "build", "save", "manifest", "host", "done"):
        assert stage in stages
    fractions = [f for _, f in seen]
    assert fractions == sorted(fractions) and seen[-1] == ("done", 1.0)


def test_the_summary_counts_every_file_in_the_module_folder(ti_cpu, tmp_path):
    result = gl.export(small_graph(), tmp_path / "small", "x64", dims={"n": 4}, progress=False)
    on_disk = sorted(p.relative_to(result.path).as_posix() for p in result.path.rglob("*") if p.is_file())
    assert result.files_on_disk() == on_disk and len(on_disk) > len(result.files)  # manifest.json, host/
    size = sum((result.path / name).stat().st_size for name in on_disk)
    assert f": {len(on_disk)} files, {size / 1e6:.1f} MB, in " in str(result), str(result)


def test_existing_output_is_refused_and_left_alone(ti_cpu, tmp_path):
    target = tmp_path / "small"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    with pytest.raises(OutputPathError, match="already exists; pass overwrite=True"):
        gl.export(small_graph(), target, "x64", progress=False)
    with pytest.raises(OutputPathError, match="not a folder gl.export wrote"):
        gl.export(small_graph(), target, "x64", overwrite=True, progress=False)
    assert (target / "keep.txt").read_text() == "mine"


def test_overwrite_replaces_an_export_in_one_rename(ti_cpu, tmp_path):
    target = tmp_path / "small"
    gl.export(small_graph(), target, "x64", dims={"n": 4}, progress=False)
    gl.export(small_graph(), target, "x64", dims={"n": 8}, overwrite=True, progress=False)
    assert json.loads((target / "manifest.json").read_text())["dims"] == {"n": 8}
    assert [p.name for p in tmp_path.iterdir()] == ["small"]


def test_unwritable_output_path_is_refused(ti_cpu, tmp_path):
    (tmp_path / "a_file").write_text("")
    with pytest.raises(OutputPathError, match="cannot create the folder .*a_file.*writable location"):
        gl.export(small_graph(), tmp_path / "a_file" / "out", "x64", progress=False)


# --- interrupted exports ----------------------------------------------------------------------------------


class Stop(Exception):
    pass


def test_interrupted_export_leaves_nothing(ti_cpu, tmp_path):
    def stop(stage: str, fraction: float) -> None:
        if stage.startswith("build"):  # the child is compiling: it is killed, the folder removed
            raise Stop

    with pytest.raises(Stop):
        gl.export(small_graph(), tmp_path / "small", "x64", dims={"n": 4}, progress=stop)
    assert list(tmp_path.iterdir()) == []


def test_killed_child_leaves_nothing(ti_cpu, tmp_path, monkeypatch):
    monkeypatch.setenv(KILL_AT_ENV, "save")
    with pytest.raises(ChildRunError, match="killed by signal 9"):
        gl.export(small_graph(), tmp_path / "small", "x64", dims={"n": 4}, progress=False)
    assert list(tmp_path.iterdir()) == []


# --- errors a user can act on ------------------------------------------------------------------------------


def test_kernel_closing_over_a_live_field_cannot_be_carried(ti_cpu, tmp_path):
    cell = define_cell(LIVE_CELL)
    g = gl.Graph("live")
    g.dispatch(cell["tally"], g.ndarray("x", ti.f32, ndim=1))
    with pytest.raises(CarryError, match="uses global 'counts', a Taichi field"):
        gl.export(g, tmp_path / "live", "x64", progress=False)
    assert list(tmp_path.iterdir()) == []


def test_textures_are_refused_for_x64_by_the_target_rules(ti_cpu, tmp_path):
    g = gl.Graph("tex")
    g.dispatch(blit, g.rw_texture("tex", 2, ti.Format.r32f), g.ndarray("y", ti.f32, ndim=2))
    with pytest.raises(GraphError, match="GL018.*'tex' is a rw_texture, which x64 AOT modules cannot take"):
        gl.export(g, tmp_path / "tex", "x64", progress=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.vulkan
def test_a_texture_of_another_format_than_its_arg_is_refused_before_exporting(ti_vulkan, tmp_path):
    g = gl.Graph("tex")
    g.dispatch(blit, g.rw_texture("tex", 2, ti.Format.r32f), g.ndarray("y", ti.f32, ndim=2))
    with pytest.raises(ExportError, match=r"values\['tex'\] is a rgba8 texture, but arg 'tex' is rw_texture"):
        gl.export(g, tmp_path / "tex", "vulkan", values={"tex": ti.Texture(ti.Format.rgba8, (4, 4))}, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_f64_scalar_is_refused_before_exporting(ti_cpu, tmp_path):
    g = gl.Graph("f64")
    g.dispatch(scale_by, g.ndarray("x", ti.f32, ndim=1), g.scalar("s", ti.f64))
    with pytest.raises(ExportError, match="'s' is a f64 scalar.*declare it as one of f32, i32"):
        gl.export(g, tmp_path / "f64", "x64", progress=False)


def test_unknown_arch_lists_the_choices(ti_cpu, tmp_path):
    with pytest.raises(ExportError, match="arch 'metal' .* choose one of vulkan, cuda, x64"):
        gl.export(small_graph(), tmp_path / "m", "metal")


def test_values_that_do_not_fit_name_the_arg(ti_cpu, tmp_path):
    with pytest.raises(ExportError, match=r"values\['x'\] is float64.*astype"):
        gl.export(small_graph(), tmp_path / "v", "x64", values={"x": np.zeros(4)})
    with pytest.raises(ExportError, match=r"values\['xx'\]: no exported graph has that arg; did you mean 'x'"):
        gl.export(small_graph(), tmp_path / "v", "x64", values={"xx": np.zeros(4, np.float32)})
    with pytest.raises(ExportError, match="dim 'n' would be 5, but it is 4"):
        gl.export(small_graph(), tmp_path / "v", "x64", dims={"n": 4}, values={"x": np.zeros(5, np.float32)})


NO_CUDA = pytest.mark.skipif(exporter.loadable("libcuda.so.1"), reason="this machine has a CUDA driver")


@NO_CUDA
def test_cuda_without_a_gpu_is_a_clear_error(ti_cpu, tmp_path):
    with pytest.raises(ToolMissingError, match="no CUDA driver .* cannot export for cuda"):
        gl.export(small_graph(), tmp_path / "c", "cuda")


@NO_CUDA
def test_silent_fallback_to_x64_in_the_child_is_detected(ti_cpu, tmp_path, monkeypatch):
    monkeypatch.setattr(exporter, "check_arch_available", lambda arch: None)
    with pytest.raises(ToolMissingError, match=r"ti.init\(arch=cuda\) fell back to x64"):
        gl.export(small_graph(), tmp_path / "c", "cuda", dims={"n": 4}, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_missing_vulkan_driver_says_how_to_install_it(ti_cpu, tmp_path, monkeypatch):
    monkeypatch.setattr(exporter, "loadable", lambda library: False)
    with pytest.raises(ToolMissingError, match="apt-get install mesa-vulkan-drivers libvulkan1"):
        gl.export(small_graph(), tmp_path / "v", "vulkan")
