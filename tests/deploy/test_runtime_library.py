"""The runtime library (graphlab/deploy/runtime) on its own: built with CMake under AddressSanitizer and
UndefinedBehaviorSanitizer, driven by ``tests/runtime_check.c``.

A module with a Jacobi solve (a while loop) and a conditional is exported for x64 (one thread) and
Vulkan; the library must take the same decisions and compute what Taichi's Python frontend computes,
refuse a manifest that no longer matches its module (as ``gl.load_module`` does), refuse bad values
with a message naming the arg and graph before anything runs, and write captures in the
``graphlab.capture/1`` format, read back here with numpy. Leak checking stays on: the runs leak
nothing, Taichi's runtime included (no suppression file is needed), and any sanitizer report fails.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from test_export_control_flow import (
    assert_same,
    branch_graph,
    branch_inputs,
    nested_graph,
    poisson_graph,
    poisson_inputs,
)
from test_export_control_flow import run_python as run_in_process
from test_guarded import countdown_graph
from test_textures import texture_graph

import graphlab as gl
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.embedgen import build_runtime
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.hostgen import find_compiler

ARCHS = ["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)]
HERE = Path(__file__).parent
REPO = HERE.parent.parent
SOURCES = REPO / "graphlab" / "deploy"
N = 32
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:abort_on_error=0",
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
}


@pytest.fixture(scope="module")
def check_exe(tmp_path_factory) -> Path:
    """runtime_check linked with the library built by its CMakeLists.txt with -fsanitize=address,undefined."""
    work = tmp_path_factory.mktemp("runtime_asan")
    lib = build_runtime(build=work / "build", sanitize=True, static=True)
    c_api = taichi_c_api_dir()
    exe = work / "runtime_check"
    command = [find_compiler(), "-std=c99", "-g", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
               "-isystem", str(c_api / "include"), f"-I{SOURCES / 'runtime'}", f"-I{SOURCES / 'host'}",
               str(HERE / "runtime_check.c"), str(SOURCES / "host" / "npy.c"), str(lib), "-o", str(exe),
               f"-L{c_api / 'lib'}", "-ltaichi_c_api", "-ldl", f"-Wl,-rpath,{c_api / 'lib'}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return exe


@pytest.fixture(scope="module")
def errors_exe(check_exe) -> Path:
    """tests/runtime_errors.c against the same sanitized library."""
    lib = check_exe.parent / "build" / "libgraphlab_runtime.a"
    c_api = taichi_c_api_dir()
    exe = check_exe.parent / "runtime_errors"
    command = [find_compiler(), "-std=c99", "-g", "-Wall", "-Wextra", "-Werror", "-fsanitize=address,undefined",
               "-isystem", str(c_api / "include"), f"-I{SOURCES / 'runtime'}", str(HERE / "runtime_errors.c"),
               str(lib), "-o", str(exe), f"-L{c_api / 'lib'}", "-ltaichi_c_api", "-ldl", f"-Wl,-rpath,{c_api / 'lib'}"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return exe


@pytest.fixture(scope="module", params=ARCHS)
def control(request, tmp_path_factory) -> Path:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    folder = tmp_path_factory.mktemp(f"rtlib_{request.param}") / "control"
    values = {**poisson_inputs(), **branch_inputs([4.0, 8.0] * (N // 2))}
    gl.export([poisson_graph(), branch_graph()], folder, request.param, values=values, cpu_threads=1, progress=False)
    return folder


def arch_of(folder: Path) -> str:
    return json.loads((folder / "manifest.json").read_text())["arch"]


def run_check(
    exe: Path,
    folder: Path,
    graph: str,
    inputs: dict,
    tmp: Path,
    *extra: str,
    env: dict | None = None,
    outputs: str = "",
) -> subprocess.CompletedProcess:
    """runtime_check on ``inputs`` (saved as .npy); fails the test on any sanitizer report."""
    ins = tmp / f"in_{graph}"
    ins.mkdir(exist_ok=True)
    for name, value in inputs.items():
        np.save(ins / f"{name}.npy", value)
    command = [str(exe), str(folder), graph, str(ins), str(tmp / f"out_{graph}"), "--outputs", outputs, *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **SANITIZER_ENV, **(env or {})})  # fmt: skip
    report = done.stdout + done.stderr
    assert "Sanitizer" not in report and "runtime error:" not in report, report
    return done


def decisions(done: subprocess.CompletedProcess) -> list[list[str]]:
    return [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("decision ")]


def out_array(tmp: Path, graph: str, name: str, dtype=np.float32) -> np.ndarray:
    return np.fromfile(tmp / f"out_{graph}" / f"{name}.bin", dtype)


# --- running ------------------------------------------------------------------------------------------


def test_library_takes_the_loop_and_branch_python_takes(check_exe, control, tmp_path):
    arch = arch_of(control)
    want_p, events_p = run_in_process(arch, [poisson_graph()], poisson_inputs())
    want_b, events_b = run_in_process(arch, [branch_graph()], branch_inputs([4.0, 8.0] * (N // 2)))
    done = run_check(check_exe, control, "poisson", poisson_inputs(), tmp_path, outputs="u,flag")
    assert done.returncode == 0, done.stdout + done.stderr
    reads = decisions(done)
    [event] = events_p
    assert len(reads) == event.event.value and reads[-1] == ["solve", "solve", "loop", "0", "done"]
    assert all(r == ["solve", "solve", "loop", "1", "again"] for r in reads[:-1])
    assert_same({"u": out_array(tmp_path, "poisson", "u")}, {"u": want_p["u"]}, arch)
    done = run_check(check_exe, control, "branchy", branch_inputs([4.0, 8.0] * (N // 2)), tmp_path, outputs="x")
    assert done.returncode == 0, done.stdout + done.stderr
    assert decisions(done) == [["branch", "branch", "cond", "1", "then"]] and events_b[0].event.value == "then"
    assert_same({"x": out_array(tmp_path, "branchy", "x")}, {"x": want_b["x"]}, arch)


def test_the_else_branch_and_the_default_flag(check_exe, control, tmp_path):
    inputs = branch_inputs([1.0, 2.0] * (N // 2))
    del inputs["flag"]  # not an input: allocated, zero-filled, by the library
    done = run_check(check_exe, control, "branchy", inputs, tmp_path, outputs="x,flag")
    assert done.returncode == 0, done.stdout + done.stderr
    assert decisions(done) == [["branch", "branch", "cond", "0", "else"]]
    np.testing.assert_allclose(out_array(tmp_path, "branchy", "x"), np.array([2.0, 3.0] * (N // 2)), rtol=1e-6)


# --- bad values: refused before anything runs ------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"x": np.zeros(N, np.float64)}, "gl_graph_set_array: arg 'x' of graph 'branchy' is f32, got f64"),
        ({"x": np.zeros((N, 2), np.float32)}, "arg 'x' of graph 'branchy' has 1 dims (1 field dims, then 0 element"),
        ({"flag": np.zeros(3, np.int32)}, "arg 'flag' of graph 'branchy': shape[0] is 3, but the graph fixes it to 1"),
        ({"limit": None}, "graph 'branchy': no value for scalar 'limit'; call gl_graph_set_scalar"),
        ({"limit": np.int32(5)}, "gl_graph_set_scalar: arg 'limit' of graph 'branchy' is f32, got i32"),
    ],
)
def test_bad_values_are_refused_with_the_arg_named(check_exe, control, tmp_path, change, says):
    inputs = {**branch_inputs([4.0, 8.0] * (N // 2)), **change}
    inputs = {k: v for k, v in inputs.items() if v is not None}
    done = run_check(check_exe, control, "branchy", inputs, tmp_path)
    assert done.returncode == 1 and says in done.stdout, done.stdout
    assert decisions(done) == []


def test_dims_must_agree_and_inputs_must_be_given(check_exe, control, tmp_path):
    inputs = {**poisson_inputs(), "f": np.zeros(N // 2, np.float32)}
    done = run_check(check_exe, control, "poisson", inputs, tmp_path)
    assert done.returncode == 1
    assert "graph 'poisson': dim 'n' is 32 from arg 'u' shape[0] but 16 from arg 'f' shape[0]" in done.stdout
    inputs = {k: v for k, v in poisson_inputs().items() if k != "f"}
    (tmp_path / "again").mkdir()
    done = run_check(check_exe, control, "poisson", inputs, tmp_path / "again")
    assert "graph 'poisson': arg 'f' is an input; give it with gl_graph_set_array" in done.stdout
    done = run_check(check_exe, control, "nope", {}, tmp_path)
    assert "manifest.json has no graph 'nope' (it has 'poisson', 'branchy')" in done.stdout


# --- a manifest that does not match its module ---------------------------------------------------------


def tampered(folder: Path, tmp: Path, edit, *, reseal: bool = False) -> Path:
    """A copy of the export with ``edit(graphs)`` applied to manifest.json's graphs (and, with ``reseal``,
    to the sealed contract.json, its sha256 updated: only Taichi's own graph table still disagrees)."""
    copy = tmp / "copy" / folder.name
    shutil.copytree(folder, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    edit(manifest["graphs"])
    if reseal:
        contract_file = copy / "source" / "contract.json"
        contract = json.loads(contract_file.read_text())
        edit(contract["graphs"])
        contract_file.write_text(json.dumps(contract, indent=2, sort_keys=True) + "\n")
        manifest["files"]["source/contract.json"] = hashlib.sha256(contract_file.read_bytes()).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return copy


def set_tol_dtype(graphs):
    graphs[0]["args"][3]["dtype"] = "i32"


def set_u_shape(graphs):
    graphs[0]["args"][0]["shape"] = [16]


def drop_relation(graphs):
    graphs[0]["shape_relations"] = []


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (set_tol_dtype, "$.graphs[0].args[3].dtype"),
        (set_u_shape, "$.graphs[0].args[0].shape[0]"),
        (drop_relation, "$.graphs[0].shape_relations"),
    ],
)
def test_a_tampered_manifest_is_refused_as_load_module_refuses_it(check_exe, control, tmp_path, edit, path):
    copy = tampered(control, tmp_path, edit)
    done = run_check(check_exe, copy, "poisson", poisson_inputs(), tmp_path)
    assert done.returncode == 1 and "error GL_ERROR_TAMPERED" in done.stdout, done.stdout
    assert f"manifest.json {path}: differs from the sealed copy in source/contract.json" in done.stdout
    with pytest.raises(ManifestError):
        gl.load_module(copy)


def test_a_resealed_dtype_change_is_caught_by_taichis_graph_table(check_exe, control, tmp_path):
    copy = tampered(control, tmp_path, set_tol_dtype, reseal=True)
    done = run_check(check_exe, copy, "poisson", poisson_inputs(), tmp_path)
    assert done.returncode == 1 and "error GL_ERROR_TAMPERED" in done.stdout, done.stdout
    assert "$.graphs[0].args[3].dtype: arg 'tol' has dtype i32, but module graph 'poisson_seg0' was compiled " \
           "with dtype f32" in done.stdout  # fmt: skip
    with pytest.raises(ManifestError):  # there the signature (HMAC) refuses it first
        gl.load_module(copy)


def test_a_changed_or_unlisted_module_file_is_refused(check_exe, control, tmp_path):
    copy = tampered(control, tmp_path, lambda graphs: None)
    victim = sorted((copy / "module").iterdir())[-1]
    victim.write_bytes(victim.read_bytes() + b" ")
    done = run_check(check_exe, copy, "poisson", poisson_inputs(), tmp_path)
    assert f"{victim} is changed since export (its sha256 differs from manifest.json $.files" in done.stdout
    victim.write_bytes(victim.read_bytes()[:-1])
    (copy / "module" / "extra.bin").write_bytes(b"x")
    done = run_check(check_exe, copy, "poisson", poisson_inputs(), tmp_path)
    assert "module/extra.bin is not listed in manifest.json $.files" in done.stdout


# --- captures ------------------------------------------------------------------------------------------


def load_capture(folder: Path) -> dict:
    data = json.loads((folder / "capture.json").read_text())
    assert list(data) == ["format", "graph", "manifest_sha256", "module", "platform", "dims", "inputs", "decisions",
                          "segments", "outputs", "limit_bytes", "truncated"]  # fmt: skip
    return data


def assert_npy(path: Path, want: np.ndarray) -> None:
    got = np.load(path)
    assert got.dtype == want.dtype and got.shape == want.shape, path
    np.testing.assert_array_equal(got, want)


def test_capture_with_segments_records_inputs_decisions_segments_outputs(check_exe, control, tmp_path):
    inputs = branch_inputs([4.0, 8.0] * (N // 2))
    done = run_check(check_exe, control, "branchy", inputs, tmp_path, "--capture", str(tmp_path / "caps"),
                     "--segments", outputs="x")  # fmt: skip
    assert done.returncode == 0, done.stdout
    folder = tmp_path / "caps" / "branchy-0"
    assert f"capture {folder}" in done.stdout
    data = load_capture(folder)
    assert data["format"] == "graphlab.capture/1" and data["graph"] == "branchy" and data["module"] == "control"
    assert data["manifest_sha256"] == hashlib.sha256((control / "manifest.json").read_bytes()).hexdigest()
    assert data["platform"]["arch"] == arch_of(control) and data["platform"]["taichi_c_api_version"] >= 1007000
    platform = data["platform"]
    if arch_of(control) == "vulkan":  # the physical device Vulkan reports through Taichi's runtime interop
        assert platform["device"] not in ("", "cpu") and len(platform["device"]) < 256, platform
        assert re.fullmatch(r"vulkan 1\.\d+\.\d+, driver version 0x[0-9a-f]{8} \(vendor 0x[0-9a-f]{4,}\)",
                            platform["driver"]), platform  # fmt: skip
    else:  # Taichi's C API names no CPU
        assert (platform["device"], platform["driver"]) == ("cpu", ""), platform
    assert data["dims"] == {"n": N} and data["limit_bytes"] == 0 and data["truncated"] is False
    assert data["decisions"] == [{"node": "branch", "scope": "branch", "kind": "cond", "value": 1, "outcome": "then"}]
    for name, value in inputs.items():
        assert_npy(folder / data["inputs"][name], np.asarray(value))
    assert np.load(folder / "inputs" / "limit.npy").shape == ()
    x_after = out_array(tmp_path, "branchy", "x")
    assert_npy(folder / data["outputs"]["x"], x_after)
    assert sorted(data["outputs"]) == ["flag", "x"]
    assert [(s["order"], s["segment"], s["graph"]) for s in data["segments"]] == [(0, 0, "branchy_seg0"),
                                                                                  (1, 1, "branchy_seg1")]  # fmt: skip
    assert data["segments"][0]["outputs"] == {"x": "segments/0000/x.npy", "flag": "segments/0000/flag.npy"}
    assert_npy(folder / "segments/0000/flag.npy", np.ones(1, np.int32))  # the threshold segment set the flag
    assert_npy(folder / "segments/0001/x.npy", x_after)  # the "then" segment wrote the result


def test_capture_without_segments_and_with_a_size_bound(check_exe, control, tmp_path):
    inputs = poisson_inputs()
    done = run_check(check_exe, control, "poisson", inputs, tmp_path, "--capture", str(tmp_path / "caps"),
                     outputs="u")  # fmt: skip
    plain = load_capture(tmp_path / "caps" / "poisson-0")
    assert plain["segments"] == [] and not (tmp_path / "caps" / "poisson-0" / "segments").exists()
    assert len(plain["decisions"]) == len(decisions(done)) > 100
    assert plain["decisions"][-1] == {"node": "solve", "scope": "solve", "kind": "loop", "value": 0, "outcome": "done"}
    # each segment writes u and u_new (f32[n]) and flag (i32[1]): a bound of three segments
    run_check(check_exe, control, "poisson", inputs, tmp_path, "--capture", str(tmp_path / "caps"), "--segments",
              "--limit", str(3 * (2 * N * 4 + 4)))  # fmt: skip
    bounded = load_capture(tmp_path / "caps" / "poisson-1")  # a second run: the next free number
    assert bounded["truncated"] is True and bounded["limit_bytes"] == 3 * (2 * N * 4 + 4)
    assert len(bounded["segments"]) == 3 and [s["order"] for s in bounded["segments"]] == [0, 1, 2]
    assert sorted(p.name for p in (tmp_path / "caps" / "poisson-1" / "segments").iterdir()) == ["0000", "0001", "0002"]
    assert_npy(tmp_path / "caps" / "poisson-1" / "outputs" / "u.npy", out_array(tmp_path, "poisson", "u"))


def test_graphlab_capture_in_the_environment_captures_without_rebuilding(check_exe, control, tmp_path):
    folder = tmp_path / "field"
    env = {"GRAPHLAB_CAPTURE": str(folder), "GRAPHLAB_CAPTURE_SEGMENTS": "1"}
    done = run_check(check_exe, control, "branchy", branch_inputs([4.0, 8.0] * (N // 2)), tmp_path, "--frames", "2",
                     env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert sorted(p.name for p in folder.iterdir()) == ["branchy-0", "branchy-1"]
    second = load_capture(folder / "branchy-1")
    assert len(second["segments"]) == 2
    assert_npy(folder / "branchy-1" / "inputs" / "x.npy", np.load(folder / "branchy-0" / "outputs" / "x.npy"))


# --- loops inside repetitions, count loops, guarded check_every, shape relations (x64) -------------------


@ti.kernel
def copy_into(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        dst[i] = src[i] * 2.0


def copy_graph() -> gl.Graph:
    """``dst`` has no declared shape: only the shape relation (dst[i] for i in src) keeps it long enough."""
    g = gl.Graph("copy")
    src = g.ndarray("src", ti.f32, ndim=1, shape="n")
    dst = g.ndarray("dst", ti.f32, ndim=1)
    g.dispatch(copy_into, src, dst)
    return g


@pytest.fixture(scope="module")
def loops(tmp_path_factory) -> Path:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    folder = tmp_path_factory.mktemp("rtlib_loops") / "loops"
    values = {
        "counter": np.array([8], np.int32),
        "flag": np.ones(1, np.int32),
        "x": np.array([1.0, 2.0], np.float32),
        "n": np.int32(3),
        "limit": np.float32(5.0),
        "src": np.ones(2, np.float32),
        "dst": np.zeros(2, np.float32),
    }
    graphs = [countdown_graph(3, guarded=True), nested_graph(), copy_graph()]
    gl.export(graphs, folder, "x64", values=values, cpu_threads=1, progress=False)
    return folder


def test_guarded_loop_stops_where_reading_every_iteration_would(check_exe, loops, tmp_path):
    inputs = {"counter": np.array([8], np.int32), "flag": np.ones(1, np.int32)}
    done = run_check(check_exe, loops, "countdown", inputs, tmp_path, outputs="counter")
    assert done.returncode == 0, done.stdout
    assert out_array(tmp_path, "countdown", "counter", np.int32).tolist() == [0]  # not -1: the group was replayed
    # reads after iterations 3 and 6, then the group 7-9 replayed one read at a time: 7 again, 8 done
    assert [d[4] for d in decisions(done)] == ["again", "again", "again", "done"]


def test_count_loop_and_conditional_inside_a_repetition(check_exe, loops, tmp_path):
    values = {
        "x": np.array([1.0, 2.0], np.float32),
        "n": np.int32(3),
        "limit": np.float32(5.0),
        "flag": np.zeros(1, np.int32),
    }
    want, events = run_in_process("x64", [nested_graph()], values)
    done = run_check(check_exe, loops, "nested", values, tmp_path, outputs="x")
    assert done.returncode == 0, done.stdout
    assert_same({"x": out_array(tmp_path, "nested", "x")}, {"x": want["x"]}, "x64")
    conds = [e.event.value for e in events if e.event.kind == "cond"]
    assert [d[:2] + d[4:] for d in decisions(done)] == [["outer/big", f"outer[{k}]/big", c] for k, c in
                                                        enumerate(conds)]  # fmt: skip


def events_of(done: subprocess.CompletedProcess) -> list[list[str]]:
    return [line.split()[1:] for line in done.stdout.splitlines() if line.startswith("event ")]


def test_control_events_are_python_s_count_loops_and_replays_included(check_exe, loops, tmp_path):
    """gl_graph_on_event reports what compiled.last_events does: a count loop (which reads no flag, so
    makes no decision) and a guarded loop's iterations after its replay."""
    nested = {"x": np.array([1.0, 2.0], np.float32), "n": np.int32(3), "limit": np.float32(5.0),
              "flag": np.zeros(1, np.int32)}  # fmt: skip
    countdown = {"counter": np.array([8], np.int32), "flag": np.ones(1, np.int32)}
    for name, graph, values in (("nested", nested_graph(), nested), ("countdown", countdown_graph(3, guarded=True),
                                                                      countdown)):  # fmt: skip
        _, events = run_in_process("x64", [graph], values)
        done = run_check(check_exe, loops, name, values, tmp_path, "--events")
        assert done.returncode == 0, done.stdout
        want = [[e.event.node, e.event.kind, str(e.event.value), *(["limit_reached"] * e.event.limit_reached)]
                for e in events]  # fmt: skip
        assert events_of(done) == want and any(kind == "loop" for _, kind, *_ in want), done.stdout
    assert events_of(done) == [["solve", "loop", "8"]]  # reads after 3 and 6, then 7 and 8 replayed


def test_a_buffer_shorter_than_a_loop_indexes_is_refused(check_exe, loops, tmp_path):
    inputs = {"src": np.ones(8, np.float32), "dst": np.zeros(4, np.float32)}
    done = run_check(check_exe, loops, "copy", inputs, tmp_path)
    assert done.returncode == 1
    assert "graph 'copy': dispatch 'copy_into' indexes dst[i] in for i in src, so 'dst' needs shape[0] >= shape[0] " \
           "of 'src'; got 4 < 8" in done.stdout  # fmt: skip
    (tmp_path / "ok").mkdir()
    done = run_check(check_exe, loops, "copy", {**inputs, "dst": np.zeros(8, np.float32)}, tmp_path / "ok",
                     outputs="dst")  # fmt: skip
    assert done.returncode == 0 and out_array(tmp_path / "ok", "copy", "dst").tolist() == [2.0] * 8


def test_the_callers_runtime_and_memory_are_used_as_given(check_exe, control, tmp_path):
    arch = arch_of(control)
    env = {"TI_LIB_DIR": str(taichi_c_api_dir() / "runtime")}  # the caller makes its x64 runtime: its job
    inputs = branch_inputs([4.0, 8.0] * (N // 2))
    done = run_check(check_exe, control, "branchy", inputs, tmp_path, "--zero-copy", "x", "--runtime", arch,
                     env=env, outputs="x")  # fmt: skip
    assert done.returncode == 0, done.stdout
    assert "zero-copy x same" in done.stdout and "runtime mine" in done.stdout
    np.testing.assert_array_equal(out_array(tmp_path, "branchy", "x"), np.array([2.0, 4.0] * (N // 2), np.float32))


def test_calls_out_of_order_or_with_bad_arguments_are_refused(errors_exe, control):
    done = subprocess.run([str(errors_exe), str(control)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **SANITIZER_ENV})  # fmt: skip
    report = done.stdout + done.stderr
    assert done.returncode == 0 and "Sanitizer" not in report and "runtime error:" not in report, report
    said = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in done.stdout.splitlines()}
    expected = {
        "open": "GL_OK",
        "get-unknown-graph": "GL_ERROR_ARGUMENT " + f"{control}/manifest.json has no graph 'nope'",
        "get-graph": "GL_OK",
        "same-handle": "1",
        "get-before-run": "GL_ERROR_STATE gl_graph_get_array: arg 'x' of graph 'branchy' has no values yet",
        "set-null-data": "GL_ERROR_ARGUMENT gl_graph_set_array: data for 'x' is NULL",
        "set-null-memory": "GL_ERROR_ARGUMENT gl_graph_set_memory: memory for 'x' is TI_NULL_HANDLE",
        "set-array-on-scalar": "GL_ERROR_ARGUMENT gl_graph_set_array: arg 'limit' of graph 'branchy' is a scalar",
        "set-scalar-on-array": "GL_ERROR_ARGUMENT gl_graph_set_scalar: arg 'x' of graph 'branchy' is a ndarray",
        "set-unknown-arg": "GL_ERROR_ARGUMENT gl_graph_set_scalar: graph 'branchy' has no arg 'nope' (its args: 'x'",
        "set-unknown-dim": "GL_ERROR_ARGUMENT gl_graph_set_dim: no arg of graph 'branchy' has dim 'm'",
        "set-huge-dim": "GL_ERROR_ARGUMENT gl_graph_set_dim: dim 'n' = 1099511627776 is outside 0..4294967295",
        "set-negative-shape": "GL_ERROR_ARGUMENT gl_graph_set_array: arg 'x': shape[0] is -1, outside 0..",
        "set-x": "GL_OK",
        "set-limit": "GL_OK",
        "capture-unwritable": "GL_OK",
        "run-capture-fails": "GL_ERROR_IO capture: cannot create /proc/graphlab-capture",
        "capture-off": "GL_OK",
        "run": "GL_OK",
        "get-wrong-size": "GL_ERROR_ARGUMENT gl_graph_get_array: arg 'x' of graph 'branchy' holds 16 bytes, but the "
        "buffer given has 3",
        "get-scalar": "GL_ERROR_ARGUMENT gl_graph_get_array: arg 'limit' of graph 'branchy' is a scalar, not an",
        "bytes-scalar": "GL_ERROR_ARGUMENT gl_graph_arg_bytes: arg 'limit' is not an ndarray",
        "get-x": "GL_OK",
        "x": "2 4 2 4",  # the run after the failed capture ran the graph once: halved once
        "null-graph": "GL_ERROR_ARGUMENT",
    }
    for label, start in expected.items():
        assert said[label].startswith(start), (label, said[label])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"format": "graphlab.module/1",\n "graphs": [', "manifest.json is not JSON: line 2 column 13: the text ends"),
        ('{"format": "other/2"}', 'manifest.json $.format: is not "graphlab.module/1": not a manifest gl.export'),
        ('{"format": "graphlab.module/1", "arch": "metal"}', "manifest.json $.arch: is not x64, vulkan or cuda"),
    ],
)
def test_a_manifest_that_is_no_export_is_refused(check_exe, control, tmp_path, text, says):
    copy = tampered(control, tmp_path, lambda graphs: None)
    (copy / "manifest.json").write_text(text)
    done = run_check(check_exe, copy, "branchy", {}, tmp_path)
    assert done.returncode == 1 and "error GL_ERROR_MANIFEST" in done.stdout and says in done.stdout, done.stdout


@pytest.mark.vulkan
def test_texture_args_cross_as_float32_texels_and_bad_texels_are_refused(check_exe, ti_vulkan, tmp_path):
    g = texture_graph()
    values = {"tex": ti.Texture(ti.Format.r32f, (6, 5)), "img": ti.Texture(ti.Format.rgba8, (6, 5)),
              "y": np.zeros((6, 5), np.float32), "out": np.zeros((6, 5), np.float32), "s": 3.0}  # fmt: skip
    folder = gl.export(g, tmp_path / "paint", "vulkan", values=values, progress=False).path
    assert "tex: a rw_texture; give its float32 texels" in (folder / "include/paint.h").read_text()
    rng = np.random.default_rng(5)
    img, y = rng.uniform(0, 1, (6, 5, 4)).astype(np.float32), rng.uniform(0, 1, (6, 5)).astype(np.float32)
    zeros = np.zeros((6, 5), np.float32)
    inputs = {"img": img, "y": y, "s": np.float32(3.0), "tex": np.zeros((6, 5, 1), np.float32), "out": zeros}
    done = run_check(check_exe, folder, "paint", inputs, tmp_path, outputs="tex,out")
    assert done.returncode == 0, done.stdout + done.stderr
    tex = out_array(tmp_path, "paint", "tex").reshape(6, 5, 1)
    np.testing.assert_array_equal(tex, 3 * y[..., None])
    quantised = np.round(img * 255) / 255  # rgba8 keeps 8 bits per channel
    want = quantised[..., 0] + 2 * quantised[..., 3] + 3 * y
    np.testing.assert_allclose(out_array(tmp_path, "paint", "out").reshape(6, 5), want, atol=1e-6)

    # texels of the wrong channel count or dtype are refused with the texture named, before anything runs
    done = run_check(check_exe, folder, "paint", {"img": np.zeros((6, 5, 1), np.float32), "y": y, "s": np.float32(1)},
                     tmp_path)  # fmt: skip
    assert done.returncode == 1 and "error GL_ERROR_ARGUMENT" in done.stdout, done.stdout
    assert "arg 'img' of graph 'paint': shape[2] is 1, but its element shape needs 4" in done.stdout
    done = run_check(check_exe, folder, "paint", {"img": np.zeros((6, 5, 4), np.float64), "y": y, "s": np.float32(1)},
                     tmp_path)  # fmt: skip
    want = (
        "arg 'img' of graph 'paint' is a texture of rgba8; pass float32 texels (its 2 dims, then 4 channel(s)), got f64"
    )
    assert want in done.stdout, done.stdout

    # a texture format whose texels do not cross as float32 is refused naming the manifest entry
    def integer_format(graphs):
        next(a for a in graphs[0]["args"] if a["name"] == "tex")["fmt"] = "r32i"

    copy = tampered(folder, tmp_path, integer_format, reseal=True)
    done = run_check(check_exe, copy, "paint", inputs, tmp_path)
    assert done.returncode == 1 and "error GL_ERROR_MANIFEST" in done.stdout, done.stdout
    assert "the texture's format is not one whose texels cross as float32" in done.stdout, done.stdout
