"""gl.verify: the generated C host against Taichi's Python frontend, on Taichi's mpm88 and stable fluid.

x64 modules compiled for one thread must match bit for bit (float atomics then add in one order);
Vulkan (Mesa lavapipe here) within rtol. Exports are made once per module.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import shutil
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from graphs import fluid_graphs

import graphlab as gl
from graphlab.cli import main
from graphlab.examples import load_taichi_example, mpm88_buffers, mpm88_graph
from graphlab.export.report import VerifyReport
from graphlab.export.verify import ATOMICS_NOTE, VerifyError

SUBSTEPS = 20
AOT_KERNELS = Path(__file__).with_name("aot_kernels.py")


def export_mpm88(folder: Path, arch: str, **options) -> Path:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    m = load_taichi_example("mpm88_graph")
    values = {name: arr.to_numpy() for name, arr in mpm88_buffers(m).items()}
    gl.export(mpm88_graph(m, SUBSTEPS), folder / "mpm88", arch, values=values, progress=False, **options)
    return folder / "mpm88"


@pytest.fixture(scope="module")
def mpm88_x64(tmp_path_factory) -> Path:
    return export_mpm88(tmp_path_factory.mktemp("ver_x64"), "x64", cpu_threads=1)


@pytest.fixture(scope="module", params=["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)])
def fluid(request, tmp_path_factory) -> Path:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    m = load_taichi_example("stable_fluid_graph")
    rng = np.random.default_rng(5)
    g1, g2 = fluid_graphs(m, 4)
    values = {
        name: rng.uniform(-1, 1, (m.res, m.res, *arg.element_shape)).astype(np.float32)
        for name, arg in g1.args.items()
        if arg.ndim == 2
    }
    values["mouse_data"] = np.array([1.0, 0.5, 200.0, 256.0, 1.0, 0.2, 0.3, 0.0], np.float32)
    out = tmp_path_factory.mktemp(f"ver_fluid_{request.param}") / "fluid"
    gl.export([g1, g2], out, request.param, values=values, cpu_threads=1, progress=False)
    return out


# --- mpm88 and stable fluid ----------------------------------------------------------------------------


def test_mpm88_x64_one_thread_is_bit_identical(mpm88_x64):
    report = gl.verify(mpm88_x64, frames=2)
    assert isinstance(report, VerifyReport)
    assert report.passed and report.identical, str(report)
    assert [o.name for o in report.outputs] == ["x", "v", "C", "J", "grid_v", "grid_m"]
    assert report.notes == ()


@pytest.mark.vulkan
def test_mpm88_vulkan_matches_within_rtol(tmp_path):
    report = gl.verify(export_mpm88(tmp_path, "vulkan"))
    assert report.passed, str(report)
    assert all(o.peak_rel <= 1e-5 for o in report.outputs)


def test_mpm88_x64_many_threads_explains_float_atomics(tmp_path):
    report = gl.verify(export_mpm88(tmp_path, "x64", cpu_threads=2), rtol=1e-2)
    assert report.passed, str(report)  # rounding differences only
    if not report.identical:  # thread timing decides; on most runs some sums differ
        assert report.notes[0] == ATOMICS_NOTE.format(threads=2)
        assert report.notes[1].startswith("Taichi's Python frontend run twice on the same inputs differs")
        assert all(o.spread is not None for o in report.outputs)  # measured against Python itself


def test_fluid_pair_verifies_over_several_frames(fluid):
    report = gl.verify(fluid, frames=2, seed=3)
    assert report.passed, str(report)
    if report.arch == "x64":
        assert report.identical, str(report)
    names = {o.name for o in report.outputs}
    assert {"velocities_pair_cur", "velocities_pair_nxt", "dyes_pair_nxt", "velocity_divs"} <= names
    assert "mouse_data" not in names  # read, never written


# --- the report ------------------------------------------------------------------------------------------


def test_report_prints_a_table_and_html(mpm88_x64):
    report = gl.verify(mpm88_x64, seed=1, baseline=True)
    text = str(report)
    assert text.splitlines()[0].endswith("inputs: random (seed 1)): PASSED")
    assert "output  dtype    shape      max abs  max rel  py vs py  differ  result" in text
    assert "grid_v  float32  128x128x2  0        0        0         0       identical" in text
    assert [o.spread for o in report.outputs] == [0.0] * 6  # one thread: Python repeats its own bits
    html = report._repr_html_()
    assert "<table>" in html and "verify passed" in html and html.count("<tr>") == 7


def test_given_inputs_are_used_and_checked(mpm88_x64):
    x = np.full((8192, 2), 0.5, np.float32)
    report = gl.verify(mpm88_x64, {"x": x})
    assert report.passed and report.inputs == "random (seed 0), given: x"
    with pytest.raises(VerifyError, match=r"inputs\['x'\] is a float64 numpy array, but arg 'x' expects dtype float32.*astype"):
        gl.verify(mpm88_x64, {"x": x.astype(np.float64)})
    with pytest.raises(VerifyError, match=r"inputs\['xx'\]: the module has no such arg; did you mean 'x'"):
        gl.verify(mpm88_x64, {"xx": x})
    with pytest.raises(VerifyError, match="dim 'n' = 100, but arg 'x' set 'n' = 8192"):
        gl.verify(mpm88_x64, {"x": x, "v": np.zeros((100, 2), np.float32)})


def test_kernels_can_come_from_where_they_live_now(mpm88_x64):
    report = gl.verify(mpm88_x64, kernels=load_taichi_example("mpm88_graph"))
    assert report.identical, str(report)


def test_a_folder_without_sources_says_what_to_do(mpm88_x64, tmp_path):
    copy = Path(shutil.copytree(mpm88_x64, tmp_path / "copy"))
    (copy / "source" / "kernels.json").unlink()
    with pytest.raises(VerifyError, match="kernels.json is missing; pass kernels="):
        gl.verify(copy)


# --- the command line ---------------------------------------------------------------------------------------


def test_cli_export_then_verify(tmp_path, capsys):
    import aot_kernels

    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    g = gl.Graph("axpy")
    g.dispatch(
        aot_kernels.saxpy,
        g.scalar("a", ti.f32, role="input"),
        g.ndarray("x", ti.f32, ndim=1, shape="n", role="input"),
        g.ndarray("y", ti.f32, ndim=1, shape="n"),
    )
    g.save(tmp_path / "axpy.graph.json")
    out = tmp_path / "axpy"
    code = main(
        [
            "export",
            str(tmp_path / "axpy.graph.json"),
            "--kernels",
            str(AOT_KERNELS),
            "--arch",
            "cpu",
            "-o",
            str(out),
            "--dim",
            "n=64",
            "--cpu-threads",
            "1",
            "--no-tcm",
        ]
    )
    assert code == 0
    assert "exported axpy to" in capsys.readouterr().out
    np.save(tmp_path / "x.npy", np.arange(64, dtype=np.float32))
    assert main(["verify", str(out), "--frames", "3", "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    assert "PASSED" in capsys.readouterr().out
    with pytest.raises(VerifyError, match=r"inputs\['a'\] = \[1.0, 2.0\], but arg 'a' is a scalar of float32"):
        gl.verify(out, {"a": [1.0, 2.0]})
    assert main(["export", str(tmp_path / "axpy.graph.json"), "--kernels", str(AOT_KERNELS), "-o", str(out)]) == 2
    assert "already exists; pass overwrite=True" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "nowhere")]) == 2
    assert "manifest.json: $: missing" in capsys.readouterr().err


def test_a_given_int_input_out_of_range_is_refused_not_wrapped():
    from graphlab.export.verify import _given
    from graphlab.spec import Arg

    with pytest.raises(VerifyError, match=r"inputs\['s'\] = 40000, .*40000, which does not fit i16: it must lie in"):
        _given(Arg("s", "scalar", "i16"), 40000, {}, {})
    assert _given(Arg("s", "scalar", "i16"), 7, {}, {}).dtype == np.int16
