"""graphlab.deploy.cruntime: exported modules run through Taichi's C runtime, from Python.

A module is exported by hand with Taichi's own AOT API in a child process (tests/aot_kernels.py;
Taichi allows one ti.aot.Module per ti.init), which also records what Taichi's Python runtime
computes from the same inputs. The C runtime must match it bit for bit.
"""

import ctypes
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from graphlab.core.errors import GraphlabError, GraphRunError, ToolMissingError
from graphlab.deploy import capi_ctypes, cruntime
from graphlab.deploy.cruntime import load_module
from graphlab.deploy.errors import CRuntimeError, ManifestError, UnknownGraphError

AOT_KERNELS = Path(__file__).parent.parent / "aot_kernels.py"
FRAMES = 3
ARCHS = ["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)]


@pytest.fixture(scope="module", params=ARCHS)
def exported(request, tmp_path_factory) -> Path:
    """A module folder: module/, manifest.json, inputs/ and Taichi's own results in expected/."""
    folder = tmp_path_factory.mktemp(f"aot_{request.param}")
    done = subprocess.run(
        [sys.executable, str(AOT_KERNELS), request.param, str(folder), str(FRAMES)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


def load_npy(folder: Path) -> dict[str, np.ndarray]:
    return {p.stem: np.load(p) for p in sorted(folder.glob("*.npy"))}


def values_of(graph: cruntime.GraphSpec, inputs: dict[str, np.ndarray]) -> dict[str, object]:
    """The inputs that ``graph`` takes, 0-d arrays as Python numbers (as a notebook passes them)."""
    names = {arg.name for arg in graph.args}
    return {k: (v.item() if v.ndim == 0 else v) for k, v in inputs.items() if k in names}


@pytest.fixture
def copy_of(exported, tmp_path):
    """A private copy of the exported folder, for tests that damage it."""
    return Path(shutil.copytree(exported, tmp_path / "module_copy"))


def test_run_matches_taichi_python_bit_for_bit(exported):
    inputs = load_npy(exported / "inputs")
    with load_module(exported) as module:
        update, scale = module.graphs["update"], module.graphs["scale"]
        for _ in range(FRAMES):
            update.run(**values_of(update.spec, inputs))
            scale.run(**values_of(scale.spec, inputs))
    for name, want in load_npy(exported / "expected").items():
        np.testing.assert_array_equal(inputs[name], want, err_msg=name)


def test_run_updates_the_callers_arrays_in_place(exported):
    inputs = load_npy(exported / "inputs")
    y = inputs["y"].copy()
    with load_module(exported) as module:
        out = module.graphs["scale"].run(y=y, s=3)
    assert out["y"] is y
    np.testing.assert_array_equal(y, inputs["y"] * np.float32(3))


def test_a_module_graph_is_not_called_graph(exported):
    with load_module(exported) as module:
        scale = module.graphs["scale"]
        assert isinstance(scale, cruntime.ModuleGraph) and not hasattr(cruntime, "Graph")
        assert repr(scale).startswith("<ModuleGraph 'scale'(")


def test_unknown_graph_name_lists_the_graphs(exported):
    with load_module(exported) as module, pytest.raises(UnknownGraphError, match="'updat'.*'update'") as info:
        module.graphs["updat"]
    assert isinstance(info.value, KeyError)
    assert "update, scale" in str(info.value)


def test_missing_input_raises_before_anything_runs(exported):
    inputs = load_npy(exported / "inputs")
    values = values_of(cruntime.read_manifest(exported).graphs[0], inputs)
    del values["dt"]
    before = {k: v.copy() for k, v in values.items() if isinstance(v, np.ndarray)}
    with load_module(exported) as module, pytest.raises(GraphRunError, match="no value for dt") as info:
        module.graphs["update"].run(**values)
    assert info.value.arg == "dt"
    for name, array in before.items():
        np.testing.assert_array_equal(values[name], array)


def test_unknown_arg_name_suggests_the_close_one(exported):
    with load_module(exported) as module, pytest.raises(GraphRunError, match="no arg 'ss'; did you mean 's'"):
        module.graphs["scale"].run(y=np.zeros(8, np.float32), s=1, ss=2)


def test_wrong_dtype_names_the_arg_and_the_fix(exported):
    with load_module(exported) as module, pytest.raises(GraphRunError, match=r"'y'.*float32.*got float64.*astype"):
        module.graphs["scale"].run(y=np.zeros(8), s=1)


def test_symbolic_dims_must_agree(exported):
    inputs = load_npy(exported / "inputs")
    values = values_of(cruntime.read_manifest(exported).graphs[0], inputs)
    values["y"] = np.zeros(7, np.float32)
    with load_module(exported) as module, pytest.raises(GraphRunError, match="dim 'n' = 7, but arg 'x' set 'n' = 64"):
        module.graphs["update"].run(**values)


def test_a_dim_the_c_api_would_truncate_is_refused(exported):
    # a stride-0 view: the shape without the memory
    y = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(2**32 + 1,), strides=(0,), writeable=True)
    with load_module(exported) as module, pytest.raises(GraphRunError, match=r"shape\[0\] = 4294967297 out of range"):
        module.graphs["scale"].run(y=y, s=3)


def test_element_shape_is_checked(exported):
    inputs = load_npy(exported / "inputs")
    values = values_of(cruntime.read_manifest(exported).graphs[0], inputs)
    values["pos"] = np.zeros((64, 3), np.float32)
    said = r"expected shape \(n, 2\), got numpy array of shape \(64, 3\)"
    with load_module(exported) as module, pytest.raises(GraphRunError, match=said):
        module.graphs["update"].run(**values)


def test_int_scalar_refuses_a_float_and_out_of_range(exported):
    y = np.zeros(8, np.float32)
    with load_module(exported) as module:
        with pytest.raises(GraphRunError, match="expected an int"):
            module.graphs["scale"].run(y=y, s=1.5)
        with pytest.raises(GraphRunError, match="does not fit i16"):
            module.graphs["scale"].run(y=y, s=40000)


def test_closed_module_refuses_to_run(exported):
    module = load_module(exported)
    module.close()
    with pytest.raises(GraphlabError, match="is closed"):
        module.graphs["scale"].run(y=np.zeros(8, np.float32), s=1)


def test_c_error_names_the_call_and_the_code(copy_of):
    manifest = json.loads((copy_of / "manifest.json").read_text())
    manifest["graphs"][1]["name"] = "missing_graph"
    (copy_of / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CRuntimeError, match="ti_get_aot_module_compute_graph failed: TI_ERROR_NAME_NOT_FOUND") as info:
        load_module(copy_of)
    assert info.value.code == -3
    assert "missing_graph" in str(info.value)


def test_manifest_error_gives_the_json_path(copy_of):
    manifest = json.loads((copy_of / "manifest.json").read_text())
    manifest["graphs"][0]["args"][1]["dtype"] = "float"
    (copy_of / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ManifestError, match=r"\$\.graphs\[0\]\.args\[1\]\.dtype: 'float' is not one of"):
        load_module(copy_of)


def test_changed_module_file_is_refused_before_loading(copy_of):
    victim = next(p for p in (copy_of / "module").iterdir() if p.name.startswith("metadata"))
    victim.write_bytes(victim.read_bytes() + b" ")
    with pytest.raises(ManifestError, match="changed since export"):
        load_module(copy_of)


def test_folder_of_another_arch_is_refused_not_crashed(copy_of):
    # Loading a non-x64 folder into the x64 runtime segfaults, so the files are looked at first.
    manifest = json.loads((copy_of / "manifest.json").read_text())
    manifest["arch"] = "vulkan" if manifest["arch"] == "x64" else "x64"
    manifest["files"] = {}
    (copy_of / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ManifestError, match="is no (x64|vulkan) module"):
        load_module(copy_of)


def test_missing_manifest_says_what_to_pass(tmp_path):
    with pytest.raises(ManifestError, match="pass the folder gl.export wrote"):
        load_module(tmp_path)


def test_ctypes_layout_matches_the_c_header(tmp_path):
    """The ctypes mirror of taichi_core.h has the sizes and offsets the C compiler gives."""
    source = tmp_path / "layout.c"
    checks = {
        "sizeof(TiNamedArgument)": ctypes.sizeof(capi_ctypes.TiNamedArgument),
        "offsetof(TiNamedArgument, argument)": capi_ctypes.TiNamedArgument.argument.offset,
        "offsetof(TiArgument, value)": capi_ctypes.TiArgument.value.offset,
        "sizeof(TiArgumentValue)": ctypes.sizeof(capi_ctypes.TiArgumentValue),
        "sizeof(TiNdArray)": ctypes.sizeof(capi_ctypes.TiNdArray),
        "offsetof(TiNdArray, elem_type)": capi_ctypes.TiNdArray.elem_type.offset,
        "offsetof(TiScalar, value)": capi_ctypes.TiScalar.value.offset,
        "offsetof(TiTensor, contents)": capi_ctypes.TiTensor.contents.offset,
        "offsetof(TiTensorValueWithLength, data)": capi_ctypes.TiTensorValueWithLength.data.offset,
        "sizeof(TiMemoryAllocateInfo)": ctypes.sizeof(capi_ctypes.TiMemoryAllocateInfo),
        "sizeof(TiMemorySlice)": ctypes.sizeof(capi_ctypes.TiMemorySlice),
    }
    lines = "\n".join(f'  printf("%zu\\n", (size_t)({expr}));' for expr in checks)
    source.write_text(
        f"#include <stddef.h>\n#include <stdio.h>\n#include <taichi/taichi_core.h>\nint main(void) {{\n{lines}\n}}\n"
    )
    include = capi_ctypes.taichi_c_api_dir() / "include"
    subprocess.run(["cc", f"-I{include}", str(source), "-o", str(tmp_path / "layout")], check=True)
    got = subprocess.run([str(tmp_path / "layout")], capture_output=True, text=True, check=True).stdout.split()
    assert dict(zip(checks, map(int, got))) == checks


def test_cuda_module_without_a_driver_is_refused(copy_of, monkeypatch):
    # Without libcuda, Taichi's ti_create_runtime(CUDA) silently falls back to x64.
    monkeypatch.setattr(cruntime, "_cuda_driver_present", lambda: False)
    manifest = json.loads((copy_of / "manifest.json").read_text())
    manifest["arch"] = "cuda"
    (copy_of / "manifest.json").write_text(json.dumps(manifest))
    if (copy_of / "module" / "metadata.tcb").is_file():
        with pytest.raises(ToolMissingError, match="no CUDA driver"):
            load_module(copy_of)
    else:
        with pytest.raises(ManifestError, match="is no cuda module"):
            load_module(copy_of)


def test_temps_of_one_slot_share_one_buffer(exported):
    inputs = load_npy(exported / "inputs")
    with load_module(exported) as module:
        module.graphs["update"].run(**values_of(module.graphs["update"].spec, inputs))
        assert set(module._buffers) == {"x", "y", "pos", "vel", "src", "dst", "slot 0"}
