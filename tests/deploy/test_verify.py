"""gl.verify: the generated C host against Taichi's Python frontend, on Taichi's mpm88 and stable fluid.

x64 modules compiled for one thread must match bit for bit (float atomics then add in one order);
Vulkan (Mesa lavapipe here) within rtol. Exports are made once per module. With several threads the
float atomics add in thread-timing order for real: the report measures that run-to-run noise and
says "within run-to-run noise", and "differs" only for differences beyond it.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import shutil
from pathlib import Path

import noisy_kernels
import numpy as np
import pytest
import taichi as ti
from graphs import fluid_graphs

import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_buffers, mpm88_graph
from graphlab.cli import main
from graphlab.cli.commands import load_kernel_module
from graphlab.deploy.report import DIFFERS, IDENTICAL, NOISE, NOISE_FACTOR, VerifyReport, compare
from graphlab.deploy.verify import ATOMICS_NOTE, NO_CAUSE_NOTE, REPEATS_NOTE, RTOL_NOTE, VerifyError

SUBSTEPS = 20
AOT_KERNELS = Path(__file__).parent.parent / "aot_kernels.py"


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
    assert report.verdict == IDENTICAL and {o.verdict for o in report.outputs} == {IDENTICAL}
    assert list(report.timings) == ["build", "host", "python"]  # an exact match costs no second Python run
    assert [o.name for o in report.outputs] == ["x", "v", "C", "J", "grid_v", "grid_m"]
    assert report.notes == ()


@pytest.mark.vulkan
def test_mpm88_vulkan_matches_within_rtol(tmp_path):
    report = gl.verify(export_mpm88(tmp_path, "vulkan"))
    assert report.passed, str(report)
    assert all(o.peak_rel <= 1e-5 for o in report.outputs)


def test_mpm88_x64_many_threads_is_within_run_to_run_noise(tmp_path):
    folder = export_mpm88(tmp_path, "x64", cpu_threads=4)
    report = gl.verify(folder, frames=2)
    for seed in (1, 2):  # thread timing decides; with 4 threads some sums differ on nearly every run
        if not report.identical:
            break
        report = gl.verify(folder, frames=2, seed=seed)
    assert report.passed and report.verdict == NOISE, str(report)  # rounding differences only
    assert report.notes[0] == ATOMICS_NOTE.format(threads=4)
    assert any(n.startswith("Taichi's Python frontend run again on the same inputs differs") for n in report.notes)
    assert any("because dispatch 'substep/substep_p2g' adds floats atomically into grid_v" in n for n in report.notes)
    assert all(o.noise is not None and o.verdict in (IDENTICAL, NOISE) for o in report.outputs)
    assert max(o.noise for o in report.outputs) > 0  # p2g's atomics race on every substep
    assert "python again" in report.timings and "PASSED (within run-to-run noise)" in str(report).splitlines()[0]


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
    assert text.splitlines()[0].endswith("inputs: random (seed 1)): PASSED (identical)")
    assert "output  dtype    shape      max abs  max rel  py vs py  differ  result" in text
    assert "grid_v  float32  128x128x2  0        0        0         0       identical" in text
    assert [o.spread for o in report.outputs] == [0.0] * 6  # one thread: Python repeats its own bits
    html = report._repr_html_()
    assert "<table>" in html and "verify passed (identical)" in html and html.count("<tr>") == 7


# --- three verdicts: identical, within run-to-run noise, differs ----------------------------------------------


def test_compare_says_identical_within_noise_or_differs():
    want = np.array([1.0, 2.0, 4.0], np.float32)
    one_ulp = np.nextafter(want, np.float32(10))
    two_ulps = np.nextafter(one_ulp, np.float32(10))
    assert compare("a", want.copy(), want, rtol=0.0).verdict == IDENTICAL
    assert compare("a", one_ulp, want, rtol=0.0).verdict == DIFFERS  # noise unmeasured, no tolerance
    noisy = compare("a", one_ulp, want, rtol=0.0, again=[want.copy(), two_ulps])
    assert (noisy.verdict, noisy.passed) == (NOISE, True)
    assert noisy.max_abs == pytest.approx(4.77e-7, rel=1e-2) and noisy.noise == pytest.approx(9.54e-7, rel=1e-2)
    assert compare("a", want * np.float32(1.01), want, rtol=0.0, again=[two_ulps]).verdict == DIFFERS
    assert compare("a", one_ulp, want, rtol=1e-5, again=[want.copy()]).verdict == NOISE  # rtol: a floor
    nan_here = want.copy()
    nan_here[0] = np.nan
    assert compare("a", nan_here, want, rtol=1.0, again=[nan_here]).verdict == DIFFERS  # NaN on one side only


def export_noisy(folder: Path, threads: int) -> Path:
    """``deposit``: 2^18 floats added into 256 cells by ``threads`` threads, in thread-timing order."""
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    g = gl.Graph("noisy")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    g.dispatch(noisy_kernels.deposit, x, g.ndarray("totals", ti.f32, ndim=1, shape="c"))
    out = folder / "noisy"
    gl.export(g, out, "x64", dims={"n": 1 << 18, "c": 256}, cpu_threads=threads, progress=False)
    return out


def test_thread_timing_noise_passes_and_a_larger_difference_fails(tmp_path, capfd):
    folder = export_noisy(tmp_path, threads=4)
    for seed in range(4):  # some runs of 4 racing threads happen to add in the same order
        report = gl.verify(folder, seed=seed, frames=3)
        if not report.identical:
            break
    (totals,) = report.outputs
    assert report.verdict == NOISE and report.passed, str(report)
    assert totals.noise is not None and totals.spread is not None  # Python ran again
    if totals.max_abs > NOISE_FACTOR * totals.noise:  # the host raced where Python's runs happened not to
        assert totals.peak_rel <= report.rtol and RTOL_NOTE.format(names="totals", rtol=1e-5) in report.notes
    else:
        assert totals.noise > 0 and any(n.startswith("Taichi's Python frontend run again") for n in report.notes)
    lines = str(report).splitlines()
    assert lines[0].endswith("PASSED (within run-to-run noise)") and "py vs py" in lines[1]
    assert lines[2].endswith("within run-to-run noise") and f"{totals.noise:.3g}" in lines[2].split()
    html = report._repr_html_()
    assert "verify passed (within run-to-run noise)" in html and "<th>py vs py</th>" in html

    # The Python side computes 1.001x: what a wrong export looks like, beside the noise.
    capfd.readouterr()  # Taichi's banner from the export above
    assert main(["verify", str(folder), "--kernels", str(nudged(tmp_path)), "--frames", "3"]) == 1
    out = capfd.readouterr().out  # the report alone: Taichi's banner goes to stderr
    assert out.splitlines()[0].endswith("FAILED (differs)") and out.splitlines()[2].endswith("differs"), out
    assert main(["verify", str(folder), "--frames", "3"]) == 0  # identical or within noise: both exit 0
    assert "PASSED (" in capfd.readouterr().out
    assert main(["verify", str(folder), "--frames", "3", "--rtol", "nan"]) == 2
    assert "--rtol nan: give a tolerance >= 0" in capfd.readouterr().err


def test_differences_python_does_not_repeat_say_so(tmp_path):
    folder = export_noisy(tmp_path, threads=1)  # one thread: Python adds in one order, every run
    kernels = load_kernel_module(str(nudged(tmp_path)))
    report = gl.verify(folder, kernels=kernels, rtol=0.0)
    assert report.verdict == DIFFERS and not report.passed
    assert report.outputs[0].noise == 0.0 and list(report.timings).count("python again") == 1
    assert report.notes == (NO_CAUSE_NOTE.format(names="totals"), REPEATS_NOTE)  # one thread: atomics repeat
    assert gl.verify(folder, kernels=kernels, baseline=False).outputs[0].noise is None


def nudged(folder: Path) -> Path:
    """A kernels file whose ``deposit`` adds 1.001 x: Python then computes something else than the module."""
    path = folder / "nudged_kernels.py"
    path.write_text(noisy_kernels.NUDGED)
    return path


def test_given_inputs_are_used_and_checked(mpm88_x64):
    x = np.full((8192, 2), 0.5, np.float32)
    report = gl.verify(mpm88_x64, {"x": x})
    assert report.passed and report.inputs == "random (seed 0), given: x"
    with pytest.raises(
        VerifyError, match=r"inputs\['x'\] is a float64 numpy array, but the arg expects dtype float32.*astype"
    ):
        gl.verify(mpm88_x64, {"x": x.astype(np.float64)})
    with pytest.raises(VerifyError, match=r"inputs\['xx'\]: the module has no such arg; did you mean 'x'"):
        gl.verify(mpm88_x64, {"xx": x})
    with pytest.raises(VerifyError, match="dim 'n' = 100, but arg 'x' set 'n' = 8192"):
        gl.verify(mpm88_x64, {"x": x, "v": np.zeros((100, 2), np.float32)})


@ti.kernel
def total(x: ti.types.ndarray(ti.f32, ndim=1), s: ti.types.ndarray(ti.f32, ndim=0)):
    for i in x:
        s[None] += x[i]


def test_a_0d_ndarray_needs_no_dims_and_the_module_runs_from_a_dict(tmp_path):
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    g = gl.Graph("sum0")
    g.dispatch(total, g.ndarray("x", ti.f32, ndim=1, shape="n", role="input"), g.ndarray("s", ti.f32, ndim=0))
    folder = gl.export(g, tmp_path / "sum0", "x64", cpu_threads=1, progress=False).path  # no dims, no values
    report = gl.verify(folder, {"x": np.arange(8, dtype=np.float32)})  # s: a 0-d ndarray, shape () always
    assert report.verdict == IDENTICAL and report.outputs[0].shape == (), str(report)
    assert str(report).splitlines()[2].split()[:3] == ["s", "float32", "()"]
    with gl.load_module(folder) as module:
        values = {"x": np.arange(8, dtype=np.float32), "s": np.zeros((), np.float32)}
        module.graphs["sum0"].run(values)  # a dict, as CompiledGraph.run takes
        assert float(values["s"]) == 28.0
        module.graphs["sum0"].run({"x": values["x"]}, s=values["s"])  # or part dict, part keywords
        assert float(values["s"]) == 56.0
        with pytest.raises(gl.GraphRunError, match="graph 'sum0': s given both in the dict and as keywords"):
            module.graphs["sum0"].run(values, s=values["s"])
        with pytest.raises(
            gl.GraphRunError, match="run\\(\\) takes a dict of values by arg name \\(or keywords\\), not list"
        ):
            module.graphs["sum0"].run([values["x"]])


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
    with pytest.raises(
        VerifyError, match=r"inputs\['a'\] = \[1.0, 2.0\], but it must be a float32 scalar; pass one number"
    ):
        gl.verify(out, {"a": [1.0, 2.0]})
    assert main(["export", str(tmp_path / "axpy.graph.json"), "--kernels", str(AOT_KERNELS), "-o", str(out)]) == 2
    assert "already exists; pass overwrite=True" in capsys.readouterr().err
    assert main(["verify", str(tmp_path / "nowhere")]) == 2
    assert "manifest.json: $: missing" in capsys.readouterr().err


PYTHON_WORDS = ("inputs[", "inputs=", "seed=", "rtol=", "frames=", "cpu_threads=", "dims=", "values=", "None")


def test_cli_errors_name_the_options_not_python_keywords(tmp_path, capsys):
    import aot_kernels

    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    g = gl.Graph("axpy")
    g.dispatch(aot_kernels.saxpy, g.scalar("a", ti.f32, role="input"), g.ndarray("x", ti.f32, ndim=1, shape="n"),
               g.ndarray("y", ti.f32, ndim=1, shape="n"))  # fmt: skip
    g.save(tmp_path / "axpy.graph.json")
    out = tmp_path / "axpy"
    export = ["export", str(tmp_path / "axpy.graph.json"), "--kernels", str(AOT_KERNELS), "--arch", "x64", "-o"]
    assert main([*export, str(out), "--cpu-threads", "0"]) == 2
    err = capsys.readouterr().err
    assert "--cpu-threads 0: give a positive int, or leave it out for every core" in err
    assert not any(k in err for k in PYTHON_WORDS), err
    assert not out.exists()
    assert main([*export, str(out), "--dim", "n=16", "--cpu-threads", "1", "--no-tcm"]) == 0
    capsys.readouterr()
    np.save(x64 := tmp_path / "x64.npy", np.zeros(16))
    np.save(pair := tmp_path / "pair.npy", np.zeros(2, np.float32))
    np.save(short := tmp_path / "short.npy", np.zeros(5, np.float32))
    np.save(right := tmp_path / "right.npy", np.zeros(16, np.float32))
    for options, said in [
        (["--frames", "0"], "--frames 0: give a positive int"),
        (["--seed", "-1"], "--seed -1: give an int >= 0"),
        (["--rtol", "-1"], "--rtol -1.0: give a tolerance >= 0"),
        (["--input", f"x={x64}"], f"--input x={x64} is a float64 numpy array, but the arg expects dtype float32"),
        (["--input", f"xx={right}"], f"--input xx={right}: the module has no such arg; did you mean 'x'?"),
        (["--input", f"a={pair}"], f"--input a={pair} holds array([0., 0.], dtype=float32), but it must be a float32 scalar"),
        (["--input", f"x={right}", "--input", f"y={short}"], f"--input y={short} has shape (5,), so dim 'n' = 5, but arg 'x' set 'n' = 16"),
    ]:  # fmt: skip
        assert main(["verify", str(out), *options]) == 2, options
        err = capsys.readouterr().err
        assert said in err and not any(k in err for k in PYTHON_WORDS), err
    unsized = tmp_path / "unsized"  # no --dim: nothing says how long x is
    assert main([*export, str(unsized), "--cpu-threads", "1", "--no-tcm"]) == 0
    capsys.readouterr()
    assert main(["verify", str(unsized)]) == 2
    err = capsys.readouterr().err
    assert "cannot size input 'x': manifest.json gives no shape or dims for it; pass --input x=FILE.npy, or " \
           "export with --dim NAME=SIZE" in err and not any(k in err for k in PYTHON_WORDS), err  # fmt: skip
    with pytest.raises(VerifyError, match=r"pass inputs=\{'x': array\}, or export with values= \(or dims=\)"):
        gl.verify(unsized)
    with pytest.raises(VerifyError, match=r"seed=-1: give an int >= 0"):
        gl.verify(out, seed=-1)
    with pytest.raises(VerifyError, match=r"rtol=nan: give a tolerance >= 0"):
        gl.verify(out, rtol=float("nan"))


def test_a_given_int_input_out_of_range_is_refused_not_wrapped():
    from graphlab.core.spec import Arg
    from graphlab.deploy.verify import _given

    with pytest.raises(
        VerifyError,
        match=r"inputs\['s'\] = 40000, but it must be an int16 scalar; 40000, which does not fit i16: it must lie in",
    ):
        _given(Arg("s", "scalar", "i16"), 40000, {}, {})
    assert _given(Arg("s", "scalar", "i16"), 7, {}, {}).dtype == np.int16
