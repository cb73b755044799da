"""graphlab.deploy.hostgen: the generated C host program, built with the system compiler and run.

The module comes from tests/aot_kernels.py (exported by hand with Taichi's AOT API in a child
process, with Taichi's own results on the same inputs); the host's outputs must match them bit for
bit, on x64 and on Vulkan (Mesa lavapipe on a CPU machine).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphlab.core.errors import ToolMissingError
from graphlab.deploy import hostgen
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.errors import HostBuildError, HostGenError

AOT_KERNELS = Path(__file__).parent.parent / "aot_kernels.py"
FRAMES = 3
ARCHS = ["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)]


@pytest.fixture(scope="module", params=ARCHS)
def built(request, tmp_path_factory) -> tuple[Path, Path]:
    """An exported module folder with its host program built: (folder, executable)."""
    folder = tmp_path_factory.mktemp(f"host_{request.param}")
    done = subprocess.run(
        [sys.executable, str(AOT_KERNELS), request.param, str(folder), str(FRAMES)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return folder, hostgen.build_host(folder)


def run_host(exe: Path, folder: Path, *args: str) -> subprocess.CompletedProcess:
    command = [str(exe), "--module", str(folder / "module"), "--in", str(folder / "inputs"), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_host_matches_taichi_python_bit_for_bit(built, tmp_path):
    folder, exe = built
    done = run_host(exe, folder, "--out", str(tmp_path), "--frames", str(FRAMES))
    assert done.returncode == 0, done.stderr
    for expected in sorted((folder / "expected").glob("*.npy")):
        got, want = np.load(tmp_path / expected.name), np.load(expected)
        assert got.dtype == want.dtype and got.shape == want.shape, expected.name
        np.testing.assert_array_equal(got, want, err_msg=expected.name)


def test_host_writes_every_ndarray_arg(built, tmp_path):
    folder, exe = built
    assert run_host(exe, folder, "--out", str(tmp_path)).returncode == 0
    assert sorted(p.stem for p in tmp_path.glob("*.npy")) == ["dst", "pos", "src", "tmp", "vel", "x", "y"]


def test_time_flag_prints_ms_per_frame(built, tmp_path):
    folder, exe = built
    done = run_host(exe, folder, "--out", str(tmp_path), "--frames", "4", "--time")
    assert done.returncode == 0, done.stderr
    assert "first frame:" in done.stdout
    assert "ms per frame (mean of the 3 frames after the first)" in done.stdout


def test_graph_flag_runs_one_graph_with_only_its_args(built, tmp_path):
    folder, exe = built
    inputs = tmp_path / "in"
    inputs.mkdir()
    np.save(inputs / "y", np.arange(4, dtype=np.float32))
    done = subprocess.run(
        [str(exe), "--module", str(folder / "module"), "--in", str(inputs), "--out", str(tmp_path / "out"),
         "--graph", "scale", "--set", "s=3"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), np.arange(4, dtype=np.float32) * 3)


def test_wrong_input_dtype_names_the_file_and_the_fix(built, tmp_path):
    folder, exe = built
    inputs = tmp_path / "in"
    inputs.mkdir()
    np.save(inputs / "y", np.zeros(4))
    done = subprocess.run(
        [str(exe), "--module", str(folder / "module"), "--in", str(inputs), "--graph", "scale", "--set", "s=1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1
    assert "y.npy: dtype f64, but arg 'y' is f32; save it with a.astype(np.float32)" in done.stderr


def test_missing_input_file_is_an_error(built, tmp_path):
    folder, exe = built
    done = subprocess.run(
        [str(exe), "--module", str(folder / "module"), "--in", str(tmp_path)], capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "no value for 'a'" in done.stderr


def test_c_api_error_is_reported_with_its_code(built, tmp_path):
    """The library reads the manifest next to --module's folder: a copy of the module whose manifest names
    a graph the module lacks makes ti_get_aot_module_compute_graph fail, and the host says so."""
    folder, _ = built
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["graphs"][1]["name"] = "scale2"  # a graph the module does not have
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    shutil.copytree(folder / "module", tmp_path / "module")
    exe = hostgen.build_host(tmp_path)
    done = run_host(exe, tmp_path, "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "ti_get_aot_module_compute_graph failed: TI_ERROR_NAME_NOT_FOUND (-3): scale2" in done.stderr


def test_no_c_compiler_says_how_to_install_one(built, tmp_path):
    folder, _ = built
    with pytest.raises(ToolMissingError, match="apt-get install gcc"):
        hostgen.build_host(folder, cc=tmp_path / "no-such-cc")


def test_compiler_errors_are_shown(built, tmp_path):
    folder, _ = built
    copy = tmp_path / "copy"
    (copy / "host").mkdir(parents=True)
    for name in ("main.c", "npy.c", "npy.h"):
        (copy / "host" / name).write_text((folder / "host" / name).read_text())
    with (copy / "host" / "main.c").open("a") as f:
        f.write("this is not C\n")
    with pytest.raises(HostBuildError, match="this is not C"):
        hostgen.build_host(copy)


def test_generated_files_are_complete(built):
    folder, _ = built
    host = folder / "host"
    assert sorted(p.name for p in host.iterdir() if p.is_file()) == [
        "CMakeLists.txt", "README.md", "main.c", "npy.c", "npy.h"
    ]  # fmt: skip
    main = (host / "main.c").read_text()
    # main.c is a front-end over the runtime library, which reads manifest.json: it holds no tables
    assert '#include "../runtime/graphlab_runtime.h"' in main and "static const ArgSpec" not in main
    assert (folder / "runtime" / "graphlab_runtime.c").is_file()
    readme = (host / "README.md").read_text()
    assert "## Run" in readme and "- `update`(a: f32 input, x: f32[n] input" in readme


def test_integer_format_texture_args_are_refused_with_a_reason(built, tmp_path):
    folder, _ = built
    manifest = json.loads((folder / "manifest.json").read_text())
    img = {"name": "img", "kind": "rw_texture", "ndim": 2, "role": "state", "fmt": "r32i"}
    manifest["graphs"][0]["args"].append(img)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(HostGenError, match="'img'.*format r32i is not one the exported module can fill"):
        hostgen.generate_host(tmp_path)


@pytest.mark.parametrize("dtype", ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8"])
def test_npy_reader_and_writer_round_trip_numpy_files(built, tmp_path, dtype):
    """npy.c reads what numpy.save writes and writes byte-identical files, for every dtype."""
    folder, _ = built
    driver = tmp_path / "copy.c"
    driver.write_text(
        '#include <stdio.h>\n#include "npy.h"\n'
        "int main(int argc, char **argv) {\n  char err[256]; NpyArray a; (void)argc;\n"
        '  if (npy_read(argv[1], &a, err, sizeof err) || npy_write(argv[2], &a, err, sizeof err)) {\n'
        '    fprintf(stderr, "%s\\n", err); return 1;\n  }\n  npy_free(&a); return 0;\n}\n'
    )  # fmt: skip
    exe = tmp_path / "copy"
    host = folder / "host"
    subprocess.run(["cc", "-std=c99", f"-I{host}", str(driver), str(host / "npy.c"), "-o", str(exe)], check=True)
    for shape in [(), (1,), (5,), (3, 4), (2, 3, 2), (0, 5)]:
        source = tmp_path / "a.npy"
        np.save(source, (np.arange(int(np.prod(shape))) * 7 - 5).astype(dtype).reshape(shape))
        done = subprocess.run([str(exe), str(source), str(tmp_path / "b.npy")], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "b.npy").read_bytes() == source.read_bytes(), shape


def test_set_refuses_a_value_that_does_not_fit(built, tmp_path):
    folder, exe = built
    done = run_host(exe, folder, "--out", str(tmp_path), "--graph", "scale", "--set", "s=70000")
    assert done.returncode == 1
    assert "--set s=70000: expected 1 comma-separated i16 value(s)" in done.stderr


def test_cmake_build_runs_from_the_export_folder(built, tmp_path):
    """The CMakeLists.txt a user keeps builds the same program; run from the export folder it finds
    module/ and inputs/ by default."""
    folder, _ = built
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(folder / "host"), "-B", str(build)], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    done = subprocess.run([str(build / "graphlab_host"), "--out", str(tmp_path / "out"), "--frames", str(FRAMES)],
                          cwd=folder, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), np.load(folder / "expected" / "y.npy"))


def test_a_module_folder_away_from_its_manifest_is_refused(built, tmp_path):
    """The library reads manifest.json beside ``module/``: another folder is refused before anything runs."""
    folder, exe = built
    elsewhere = tmp_path / "copied"
    shutil.copytree(folder / "module", elsewhere)
    done = subprocess.run([str(exe), "--module", str(elsewhere), "--in", str(folder / "inputs"), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 1
    assert f"--module {elsewhere}: give the export's module folder (module/ next to manifest.json)" in done.stderr
    assert not (tmp_path / "out").exists()


def test_unknown_graph_flag_names_the_table(built, tmp_path):
    folder, exe = built
    done = run_host(exe, folder, "--out", str(tmp_path), "--graph", "nope")
    assert done.returncode == 1
    assert "the module has no graph 'nope'" in done.stderr


def test_cuda_host_with_the_driver_flag_read_compiles_without_warnings(built, tmp_path):
    """A CUDA module's flags are read through Taichi's CUDA interop and the driver (dlopen) by the runtime
    library the host is built with: the arch comes from manifest.json at run time, so that path is in every
    host, and the host's sources with the library's compile with -Werror against the wheel's headers (no GPU
    here to run it; bench/host_control_flow.py measures it on one) and start."""
    folder, _ = built
    library = (folder / "runtime" / "graphlab_runtime.c").read_text()
    assert "ti_export_cuda_memory" in library and "cuMemcpyDtoH_v2" in library
    c_api = taichi_c_api_dir()
    sources = [folder / "host" / "main.c", folder / "host" / "npy.c",
               *(folder / "runtime" / name for name in hostgen.LIBRARY_SOURCES)]  # fmt: skip
    done = subprocess.run(
        ["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-isystem", str(c_api / "include"),
         *map(str, sources), "-o", str(tmp_path / "host"),
         f"-L{c_api / 'lib'}", "-ltaichi_c_api", "-ldl", f"-Wl,-rpath,{c_api / 'lib'}"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    helped = subprocess.run([str(tmp_path / "host"), "--help"], capture_output=True, text=True)
    assert helped.returncode == 0 and "--frames" in helped.stdout + helped.stderr
