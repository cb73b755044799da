"""Embedding an export in a C++ program: the runtime library built with CMake, typed headers, g++.

Taichi's mpm88 and a module with a while loop (a Jacobi solve) and a conditional are exported for x64
(one thread) and Vulkan (Mesa lavapipe here); ``tests/embed_*.cpp`` include the generated
``include/<graph>.h`` and ``graphlab_runtime.hpp``, are compiled with ``-Wall -Wextra -Werror`` against
the library (built by CMake with ``add_subdirectory``, as the export's README says), run, and their
outputs must equal what Taichi's Python frontend computes (x64 bit for bit, Vulkan within 1e-5).
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import shutil
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from test_export_control_flow import assert_same, branch_graph, branch_inputs, poisson_graph, poisson_inputs
from test_export_control_flow import run_python as run_in_process

import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_buffers, mpm88_graph
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.errors import OutputPathError
from graphlab.deploy.folders import RUNTIME_FILES
from graphlab.deploy.manifest import read_manifest
from graphlab.deploy.verify import make_inputs, run_python

ARCHS = ["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)]
HERE = Path(__file__).parent
REPO = HERE.parent.parent
SUBSTEPS = 10
N = 32


def build_app(folder: Path, source: Path, work: Path) -> Path:
    """A CMake project that adds the export's runtime/ with add_subdirectory and builds ``source`` against it."""
    project = work / "app"
    project.mkdir()
    shutil.copy(source, project / "app.cpp")
    (project / "CMakeLists.txt").write_text(
        textwrap.dedent(f"""\
        cmake_minimum_required(VERSION 3.18)
        project(app C CXX)
        set(TAICHI_C_API_INSTALL_DIR "{taichi_c_api_dir().as_posix()}")
        add_subdirectory("{(folder / "runtime").as_posix()}" graphlab_runtime)
        add_executable(app app.cpp)
        target_compile_features(app PRIVATE cxx_std_17)
        target_compile_options(app PRIVATE -Wall -Wextra -Werror)
        target_include_directories(app PRIVATE "{(folder / "include").as_posix()}")
        target_link_libraries(app PRIVATE graphlab::runtime)
    """)
    )
    build = work / "build"
    for command in (["cmake", "-S", str(project), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"],
                    ["cmake", "--build", str(build), "-j", "2"]):  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    return build / "app"


@pytest.fixture(scope="module", params=ARCHS)
def mpm88_app(request, tmp_path_factory) -> tuple[Path, Path, str]:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    m = load_taichi_example("mpm88_graph")
    folder = tmp_path_factory.mktemp(f"embed_mpm88_{request.param}") / "mpm88"
    gl.export(mpm88_graph(m, SUBSTEPS), folder, request.param, values=mpm88_buffers(m), cpu_threads=1, progress=False)
    return folder, build_app(folder, HERE / "embed_mpm88.cpp", folder.parent), request.param


@pytest.fixture(scope="module", params=ARCHS)
def control_app(request, tmp_path_factory) -> tuple[Path, Path, str]:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    folder = tmp_path_factory.mktemp(f"embed_control_{request.param}") / "control"
    values = {**poisson_inputs(), **branch_inputs([4.0, 8.0] * (N // 2))}
    gl.export([poisson_graph(), branch_graph()], folder, request.param, values=values, cpu_threads=1, progress=False)
    return folder, build_app(folder, HERE / "embed_control.cpp", folder.parent), request.param


def test_generated_header_declares_the_typed_struct_and_run(control_app):
    folder, _, _ = control_app
    header = (folder / "include" / "poisson.h").read_text()
    assert "typedef struct control_poisson_args" in header and "int64_t dim_n;" in header
    assert "float *u;" in header and "float tol;" in header and "int32_t *flag;" in header
    assert "static inline gl_status control_poisson_run(gl_graph *graph, control_poisson_args *args)" in header
    readme = (folder / "host" / "README.md").read_text()
    assert "add_subdirectory(path/to/this/export/runtime graphlab_runtime)" in readme
    assert "graphlab::Module module(" in readme


def test_every_runtime_source_is_copied_and_known_to_overwrite(control_app):
    folder, _, _ = control_app
    package = sorted(p.name for p in (REPO / "graphlab" / "deploy" / "runtime").iterdir() if p.is_file())
    assert package == sorted(RUNTIME_FILES)
    assert sorted(p.name for p in (folder / "runtime").iterdir() if p.is_file()) == package


def test_overwrite_replaces_an_export_with_its_runtime_and_headers(ti_cpu, tmp_path):
    g = poisson_graph()
    gl.export(g, tmp_path / "p", "x64", values=poisson_inputs(), progress=False)
    assert (tmp_path / "p" / "include" / "poisson.h").is_file() and (tmp_path / "p" / "runtime").is_dir()
    (tmp_path / "p" / "runtime" / "build").mkdir()  # a user's build of the library is the export's too
    (tmp_path / "p" / "runtime" / "build" / "x.o").write_bytes(b"")
    gl.export(g, tmp_path / "p", "x64", values=poisson_inputs(), overwrite=True, progress=False)
    (tmp_path / "p" / "include" / "mine.h").write_text("")  # a user's own header is never deleted
    with pytest.raises(OutputPathError, match="include/mine.h"):
        gl.export(g, tmp_path / "p", "x64", values=poisson_inputs(), overwrite=True, progress=False)


def test_cpp_mpm88_matches_python(mpm88_app, tmp_path):
    folder, app, arch = mpm88_app
    manifest = read_manifest(folder)
    values = make_inputs(manifest, seed=1)
    (tmp_path / "in").mkdir()
    for name, value in values.items():
        np.save(tmp_path / "in" / f"{name}.npy", value)
        value.astype(np.float32).tofile(tmp_path / "in" / f"{name}.bin")
    want = {p.stem: np.load(p) for p in run_python(folder, tmp_path / "in", tmp_path / "want").out_dir.glob("*.npy")}
    (tmp_path / "out").mkdir()
    n = values["x"].shape[0]
    done = subprocess.run([str(app), str(folder), str(tmp_path / "in"), str(tmp_path / "out"), str(n)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = {k: np.fromfile(tmp_path / "out" / f"{k}.bin", np.float32).reshape(want[k].shape) for k in "xvCJ"}
    assert_same(got, {k: want[k] for k in "xvCJ"}, arch)
    assert not np.array_equal(got["x"], values["x"])  # the particles moved


def test_cpp_while_loop_and_conditional_match_python(control_app, tmp_path):
    folder, app, arch = control_app
    inputs = {**poisson_inputs(), **branch_inputs([4.0, 8.0] * (N // 2))}
    want_p, _ = run_in_process(arch, [poisson_graph()], poisson_inputs())
    want_b, events = run_in_process(arch, [branch_graph()], branch_inputs([4.0, 8.0] * (N // 2)))
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    for name in ("u", "f", "x"):
        inputs[name].tofile(tmp_path / "in" / f"{name}.bin")
    done = subprocess.run([str(app), str(folder), str(tmp_path / "in"), str(tmp_path / "out"), str(N)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr
    got = {k: np.fromfile(tmp_path / "out" / f"{k}.bin", np.float32) for k in ("u", "x")}
    assert_same({"u": got["u"]}, {"u": want_p["u"]}, arch)
    assert_same({"x": got["x"]}, {"x": want_b["x"]}, arch)
    assert [e.event.value for e in events] == ["then"]
    assert "decision branch cond 1 then" in done.stdout.splitlines()
    assert "iterations-flag 0" in done.stdout  # the loop stopped because its flag cleared


def test_cpp_wrapper_throws_the_library_message(control_app, tmp_path):
    folder, app, _ = control_app
    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    for name in ("u", "f", "x"):
        np.zeros(N, np.float32).tofile(tmp_path / "in" / f"{name}.bin")
    done = subprocess.run([str(app), str(folder / "missing"), str(tmp_path / "in"), str(tmp_path / "out"), str(N)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1
    assert "missing/manifest.json: cannot read" in done.stderr and "error -2" in done.stderr
