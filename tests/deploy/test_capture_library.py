"""The field capture round trip through the C runtime library: the library records a run of an exported
graph, ``gl.open_capture`` opens it as a debug session, and ``dbg.compare(capture)`` agrees with a
build of the same graph and names the first diverging segment, dispatch and buffer of a build with a
different kernel. A while loop with ``check_every`` > 1 (guarded) and a conditional round-trips too,
and the library and ``ModuleGraph.capture`` (the Python writer) record the same capture of one run.

The library and its ``tests/runtime_check.c`` driver are built once for the module (no sanitizers:
``test_runtime_library.py`` runs them under ASan/UBSan); the exports are made once per arch.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from capture_kernels import count_to, count_to_off, halve, parity, shift, shift_off, stages_graph
from test_embedding import build_app
from test_export_control_flow import N as CF_N
from test_export_control_flow import branch_graph, branch_inputs, nested_graph, poisson_graph, poisson_inputs

import graphlab as gl
from graphlab.cli import main
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.embedgen import build_runtime
from graphlab.deploy.hostgen import build_host, find_compiler
from graphlab.model.graphfile import save

HERE = Path(__file__).parent
TESTS = HERE.parent
SOURCES = TESTS.parent / "graphlab" / "deploy"
KERNELS = str(TESTS / "capture_kernels.py")
N = 64


def stage_values() -> dict[str, np.ndarray]:
    zeros = np.zeros(N, np.float32)
    x = np.linspace(-3, 5, N).astype(np.float32)
    return {"x": x, "y": zeros.copy(), "w": zeros.copy(), "rounds": np.asarray(3, np.int32)}


def guard_graph(*, field: bool = False, after: bool = False) -> gl.Graph:
    """A guarded while loop read every 2nd iteration counting to ``limit``, then a conditional on parity;
    the ``field`` build counts one more, the ``after`` build's even path adds 2 where the notebook adds 1."""
    g = gl.Graph("guard")
    limit = g.scalar("limit", ti.i32)
    it = g.ndarray("it", ti.i32, ndim=1, shape=(1,))
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    odd = g.ndarray("odd", ti.i32, ndim=1, shape=(1,))
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n")
    body = g.define("body")
    body.dispatch(count_to_off if field else count_to, limit, it, flag, name="count")
    g.loop(body, while_=flag, max_iter=20, check_every=2, guarded=True, name="solve")
    g.dispatch(parity, it, odd)
    then, other = g.define("odd_path"), g.define("even_path")
    then.dispatch(halve, x, y)
    other.dispatch(shift_off if after else shift, x, y, name="shift")
    g.cond(odd, then, else_=other, name="choose")
    return g


def nested_values() -> dict[str, np.ndarray]:
    x = np.array([1.0, 3.0] * (N // 2), np.float32)
    return {"x": x, "n": np.asarray(2, np.int32), "limit": np.asarray(4.5, np.float32), "flag": np.zeros(1, np.int32)}


def guard_values(limit: int) -> dict[str, np.ndarray]:
    one = np.zeros(1, np.int32)
    x = np.linspace(0, 1, N).astype(np.float32)
    return {"limit": np.asarray(limit, np.int32), "it": one.copy(), "flag": one.copy(), "odd": one.copy(),
            "x": x, "y": np.zeros_like(x)}  # fmt: skip


@pytest.fixture(scope="module")
def check_exe(tmp_path_factory) -> Path:
    """tests/runtime_check.c linked with the library as its CMakeLists.txt builds it."""
    work = tmp_path_factory.mktemp("capture_library")
    lib = build_runtime(build=work / "build", static=True)
    c_api = taichi_c_api_dir()
    exe = work / "runtime_check"
    command = [find_compiler(), "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror", "-isystem", str(c_api / "include"),
               f"-I{SOURCES / 'runtime'}", f"-I{SOURCES / 'host'}", str(HERE / "runtime_check.c"),
               str(SOURCES / "host" / "npy.c"), str(lib), "-o", str(exe), f"-L{c_api / 'lib'}", "-ltaichi_c_api",
               "-ldl", f"-Wl,-rpath,{c_api / 'lib'}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return exe


def export(graphs: list, folder: Path, arch: str) -> Path:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    names = {name for graph in graphs for name in graph.args}
    if "poisson" in {graph.name for graph in graphs}:  # test_export_control_flow's graphs, at its size
        every = {**poisson_inputs(), **branch_inputs([4.0] * CF_N)}
    else:
        every = {**stage_values(), **guard_values(5), **nested_values()}
    values = {k: v for k, v in every.items() if np.ndim(v) and k in names}
    gl.export(graphs, folder, arch, values=values, cpu_threads=1, progress=False)
    return folder


@pytest.fixture(scope="module")
def x64_modules(tmp_path_factory) -> tuple[Path, Path]:
    """The notebook's build (stages and guard) and a field build whose ``shift`` adds 2, for x64."""
    root = tmp_path_factory.mktemp("capture_modules")
    same = export([stages_graph(), guard_graph()], root / "same", "x64")
    export([nested_graph()], root / "nested", "x64")
    export([guard_graph(after=True)], root / "after", "x64")
    field = export([stages_graph(field=True), guard_graph(field=True)], root / "field", "x64")
    return same, field


def run_library(exe: Path, module: Path, graph: str, values: dict, tmp: Path, *extra: str,
                env: dict | None = None) -> Path:  # fmt: skip
    """Run ``graph`` of ``module`` through the library on ``values``; the capture folder it wrote."""
    ins = tmp / f"in_{graph}"
    ins.mkdir(exist_ok=True)
    for name, value in values.items():
        np.save(ins / f"{name}.npy", value)
    command = [str(exe), str(module), graph, str(ins), str(tmp / f"out_{graph}"), *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stdout + done.stderr
    if env is not None and "GRAPHLAB_CAPTURE" in env:
        return Path(env["GRAPHLAB_CAPTURE"]) / f"{graph}-0"
    [line] = [line for line in done.stdout.splitlines() if line.startswith("capture ")]
    return Path(line.split(" ", 1)[1])


def test_a_library_capture_of_the_same_build_agrees(ti_cpu, check_exe, x64_modules, tmp_path):
    same, _ = x64_modules
    folder = run_library(check_exe, same, "stages", stage_values(), tmp_path, "--capture", str(tmp_path / "caps"),
                         "--segments")  # fmt: skip
    dbg = gl.open_capture(folder, graph=stages_graph(), module=same)
    assert dbg.capture is not None and len(dbg.capture.segments) == 4  # prepare, then 3 iterations
    assert dbg.capture.arch == "x64 capture"
    assert dbg.compare(dbg.capture) is None


def test_a_library_capture_of_a_different_kernel_names_segment_dispatch_and_buffer(
    ti_cpu, check_exe, x64_modules, tmp_path
):
    _, field = x64_modules
    folder = run_library(check_exe, field, "stages", stage_values(), tmp_path, "--capture", str(tmp_path / "caps"),
                         "--segments")  # fmt: skip
    found = gl.open_capture(folder, graph=stages_graph()).compare(folder)
    assert found is not None and found.kind == "buffer"
    assert (found.step_id, found.node_id, found.buffer, found.segment) == ("iterate/iter[0]/shift", "iterate/shift",
                                                                           "w", 1)  # fmt: skip
    assert found.suspects is None  # the capture's segment 0 decides it: shift's input agreed


def test_a_library_capture_without_segments_still_finds_the_buffer(ti_cpu, check_exe, x64_modules, tmp_path):
    _, field = x64_modules
    folder = run_library(check_exe, field, "stages", stage_values(), tmp_path, "--capture", str(tmp_path / "caps"))
    found = gl.open_capture(folder, graph=stages_graph()).compare(folder)
    assert found is not None and found.kind == "buffer" and found.buffer in ("x", "y", "w")


@pytest.mark.parametrize("limit", [5, 6])
def test_a_guarded_check_every_loop_and_conditional_round_trip(ti_cpu, check_exe, x64_modules, tmp_path, limit):
    same, _ = x64_modules
    values = guard_values(limit)
    folder = run_library(check_exe, same, "guard", values, tmp_path, "--capture", str(tmp_path / "caps"),
                         "--segments")  # fmt: skip
    dbg = gl.open_capture(folder, graph=guard_graph(), module=same)
    assert dbg.compare(dbg.capture) is None
    data = json.loads((folder / "capture.json").read_text())
    assert data["decisions"][-1]["outcome"] == ("then" if limit % 2 else "else")
    assert np.load(folder / "outputs" / "it.npy")[0] == limit  # the guard put back the iterations run past


def test_a_guarded_loop_that_runs_longer_in_the_field_is_named_at_its_iteration(ti_cpu, check_exe, x64_modules,
                                                                                 tmp_path):  # fmt: skip
    _, field = x64_modules
    folder = run_library(check_exe, field, "guard", guard_values(5), tmp_path, "--capture", str(tmp_path / "caps"),
                         "--segments")  # fmt: skip
    found = gl.open_capture(folder, graph=guard_graph()).compare(folder)
    # the field's count kept its flag at 1 after the 5th iteration (segment record 4), the notebook's cleared it
    assert found is not None and found.kind == "buffer"
    assert (found.step_id, found.buffer, found.segment, found.suspects) == ("solve/iter[4]/count", "flag", 4, None)
    without = run_library(check_exe, field, "guard", guard_values(5), tmp_path, "--capture", str(tmp_path / "bare"))
    found = gl.open_capture(without, graph=guard_graph()).compare(without)
    # no segment records: the field read after iterations 2 and 4, then replayed 5 and 6; the notebook stops at 5
    assert found is not None and found.kind == "control" and found.control_node == "solve"
    assert found.decisions == ("read 0 and chose 'done' at solve", "read 1 and chose 'again' at solve")


@pytest.mark.parametrize("limit", [5, 6])
def test_a_divergence_after_a_replayed_guarded_loop_is_named_at_its_segment(ti_cpu, check_exe, x64_modules,
                                                                            tmp_path, limit):  # fmt: skip
    after = x64_modules[0].parent / "after"
    folder = run_library(check_exe, after, "guard", guard_values(limit), tmp_path, "--capture",
                         str(tmp_path / "caps"), "--segments")  # fmt: skip
    found = gl.open_capture(folder, graph=guard_graph()).compare(folder)
    if limit % 2:  # the odd path is the same build's
        assert found is None
        return
    # records 0-5: iterations 1-6 (6 ran past the flag), 6-7: the replay of 5 and 6, 8: parity, 9: shift
    assert found is not None and found.kind == "buffer" and found.suspects is None
    assert (found.step_id, found.buffer, found.segment) == ("choose/else/shift", "y", 9)


@pytest.mark.parametrize("graph", ["guard", "stages", "nested"])
def test_the_library_and_the_python_writer_record_the_same_capture(ti_cpu, check_exe, x64_modules, tmp_path, graph):
    same, _ = x64_modules
    if graph == "nested":  # a conditional inside a sequence used twice: the reads' scopes
        same = same.parent / "nested"
    values = {"guard": guard_values(5), "stages": stage_values(), "nested": nested_values()}[graph]
    c_folder = run_library(check_exe, same, graph, values, tmp_path, "--capture", str(tmp_path / "caps"),
                           "--segments")  # fmt: skip
    py_folder = tmp_path / "py"
    with gl.load_module(same) as loaded:
        given = {k: (v.item() if v.ndim == 0 else v.copy()) for k, v in values.items()}
        loaded.graphs[graph].capture(py_folder, given, segments=True, limit_bytes=0)
    c_data = json.loads((c_folder / "capture.json").read_text())
    assert c_data["segments"]
    py_data = json.loads((py_folder / "capture.json").read_text())
    for key in ("format", "graph", "manifest_sha256", "module", "dims", "inputs", "decisions", "segments", "outputs",
                "limit_bytes", "truncated"):  # fmt: skip
        assert c_data[key] == py_data[key], key
    assert c_data["platform"]["arch"] == py_data["platform"]["arch"]
    files = sorted(p.relative_to(c_folder) for p in c_folder.rglob("*.npy"))
    assert files == sorted(p.relative_to(py_folder) for p in py_folder.rglob("*.npy"))
    for relative in files:
        a, b = np.load(c_folder / relative), np.load(py_folder / relative)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b), relative


def test_replay_on_a_library_capture(ti_cpu, check_exe, x64_modules, tmp_path, capsys):
    same, field = x64_modules
    graph = tmp_path / "stages.graph.json"
    save(stages_graph(), graph)
    agree = run_library(check_exe, same, "stages", stage_values(), tmp_path, "--capture", str(tmp_path / "same"),
                        "--segments")  # fmt: skip
    argv = ["replay", str(agree), "--graph", str(graph), "--kernels", KERNELS, "--module", str(same)]
    assert main(argv) == 0
    assert "agree on every decision and buffer" in capsys.readouterr().out
    differ = run_library(check_exe, field, "stages", stage_values(), tmp_path, "--capture", str(tmp_path / "field"),
                         "--segments")  # fmt: skip
    assert main(["replay", str(differ), "--graph", str(graph), "--kernels", KERNELS]) == 1
    out = capsys.readouterr().out
    assert "iterate/iter[0]/shift" in out and "in segment 1" in out and "buffer 'w'" in out


def test_graphlab_capture_in_the_environment_round_trips(ti_cpu, check_exe, x64_modules, tmp_path):
    same, field = x64_modules
    env = {"GRAPHLAB_CAPTURE": str(tmp_path / "env_same"), "GRAPHLAB_CAPTURE_SEGMENTS": "1"}
    folder = run_library(check_exe, same, "guard", guard_values(5), tmp_path, env=env)
    assert gl.open_capture(folder, graph=guard_graph(), module=same).compare(folder) is None
    env = {"GRAPHLAB_CAPTURE": str(tmp_path / "env_field"), "GRAPHLAB_CAPTURE_SEGMENTS": "1"}
    folder = run_library(check_exe, field, "stages", stage_values(), tmp_path, env=env)
    found = gl.open_capture(folder, graph=stages_graph()).compare(folder)
    assert found is not None and (found.step_id, found.buffer) == ("iterate/iter[0]/shift", "w")


def test_graphlab_capture_in_the_environment_of_an_embedding_app(ti_cpu, tmp_path):
    """tests/embed_control.cpp, built as test_embedding.py builds it, records captures when only its
    environment names a folder; both open and agree with the notebook."""
    folder = export([poisson_graph(), branch_graph()], tmp_path / "control", "x64")
    app = build_app(folder, HERE / "embed_control.cpp", tmp_path)
    inputs = {**poisson_inputs(), **branch_inputs([4.0, 8.0] * (CF_N // 2))}
    for sub in ("in", "out"):
        (tmp_path / sub).mkdir()
    for name in ("u", "f", "x"):
        inputs[name].tofile(tmp_path / "in" / f"{name}.bin")
    env = {**os.environ, "GRAPHLAB_CAPTURE": str(tmp_path / "caps"), "GRAPHLAB_CAPTURE_SEGMENTS": "1"}
    command = [str(app), str(folder), str(tmp_path / "in"), str(tmp_path / "out"), str(CF_N)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "caps").iterdir()) == ["branchy-0", "poisson-0"]
    for graph in (poisson_graph(), branch_graph()):
        capture = tmp_path / "caps" / f"{graph.name}-0"
        dbg = gl.open_capture(capture, graph=graph, module=folder)
        assert dbg.capture is not None and dbg.capture.segments and dbg.compare(dbg.capture) is None


def run_host_program(module: Path, graph: str, values: dict, tmp: Path, captures: Path) -> Path:
    """Run ``graph`` with the export's host program (built by build_host) with only its environment asking
    for a capture; the capture folder of its run."""
    ins = tmp / f"host_in_{graph}_{module.name}"
    ins.mkdir()
    for name, value in values.items():
        np.save(ins / f"{name}.npy", value)
    command = [str(build_host(module)), "--module", str(module / "module"), "--in", str(ins), "--out",
               str(tmp / f"host_out_{graph}_{module.name}"), "--graph", graph]  # fmt: skip
    env = {**os.environ, "GRAPHLAB_CAPTURE": str(captures), "GRAPHLAB_CAPTURE_SEGMENTS": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in captures.iterdir()) == [f"{graph}-0"]
    return captures / f"{graph}-0"


def test_graphlab_capture_in_the_environment_of_the_host_program(ti_cpu, x64_modules, tmp_path):
    """The host program runs over the library, so GRAPHLAB_CAPTURE records its runs too: a guarded
    check_every loop and a conditional agree with the notebook; a build with a different kernel is named."""
    same, field = x64_modules
    folder = run_host_program(same, "guard", guard_values(5), tmp_path, tmp_path / "host_same")
    dbg = gl.open_capture(folder, graph=guard_graph(), module=same)
    assert dbg.capture is not None and dbg.capture.segments and dbg.compare(dbg.capture) is None
    folder = run_host_program(field, "stages", stage_values(), tmp_path, tmp_path / "host_field")
    found = gl.open_capture(folder, graph=stages_graph()).compare(folder)
    assert found is not None and (found.step_id, found.buffer) == ("iterate/iter[0]/shift", "w")


@pytest.mark.vulkan
def test_a_vulkan_library_capture_round_trips(ti_vulkan, check_exe, tmp_path):
    module = export([stages_graph()], tmp_path / "vk", "vulkan")
    ti.init(arch=ti.vulkan, log_level=ti.WARN)  # the notebook side on Vulkan too (export() left it on x64)
    folder = run_library(check_exe, module, "stages", stage_values(), tmp_path, "--capture", str(tmp_path / "caps"),
                         "--segments")  # fmt: skip
    dbg = gl.open_capture(folder, graph=stages_graph(), module=module)
    assert dbg.arch == "vulkan" and dbg.capture is not None and dbg.capture.arch == "vulkan capture"
    assert dbg.compare(dbg.capture) is None
