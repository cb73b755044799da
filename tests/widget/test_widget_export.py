"""The widget's export panel: one message runs ``gl.export`` (its progress published as the ``export``
trait) and ``gl.verify``, for x64 on this machine; failures say why and leave nothing half-written."""

import numpy as np
import pytest
import taichi as ti
from widget_comm import deliver, recording_comm  # noqa: F401  (autouse fixture)

import graphlab as gl


@ti.kernel
def ramp(x: ti.types.ndarray(dtype=ti.f32, ndim=1), scale: ti.f32):
    for i in x:
        x[i] = scale * i


@ti.kernel
def square(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        y[i] = x[i] * x[i]


@pytest.fixture
def ed(ti_cpu):
    g = gl.Graph("squares")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="state")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(ramp, x, g.scalar("scale", ti.f32, role="input"))
    g.dispatch(square, x, y)
    values = {"x": np.zeros(32, np.float32), "y": np.zeros(32, np.float32), "scale": 0.5}
    widget = gl.editor(g, kernels=[], access="ast", values=values)
    yield widget
    widget.close()


def declared_fields(record):
    """The fields of a record of graphlab.widget.protocol (protocol.gen.ts is generated from it)."""
    from graphlab.widget import protocol

    return set(getattr(protocol, record).__annotations__)


def export(widget, path, request=1, **options):
    message = {"kind": "export", "request": request, "arch": "x64", "path": str(path), **options}
    return deliver(widget, message)


def test_the_panel_starts_idle_with_a_target_for_this_machine(ed):
    view = ed.export
    assert view["state"] == "idle" and view["run"] == 0
    assert view["default_arch"] == "x64" and view["default_path"] == "out/squares"
    assert set(view["targets"]) == {"x64", "vulkan", "cuda"}


def test_export_shows_progress_then_the_files_and_a_passed_verification(ed, tmp_path):
    reply = export(ed, tmp_path / "module", cpu_threads=1)
    assert reply == {"kind": "reply", "request": 1, "ok": True, "error": None}
    view = ed.export
    assert view["state"] == "done" and view["run"] == 1 and view["fraction"] == 1.0
    assert view["path"] == str(tmp_path / "module") and view["arch"] == "x64"
    assert "manifest.json" in view["files"] and any(f.startswith("module/") for f in view["files"])
    assert all((tmp_path / "module" / f).is_file() for f in view["files"])
    assert view["verify"]["passed"] is True and [o["name"] for o in view["verify"]["outputs"]] == ["x", "y"]
    assert "PASSED" in view["verify"]["text"] and view["error"] is None
    assert view["verify"]["verdict"] == "identical"  # one thread: bit for bit, no second Python run
    assert [(o["verdict"], o["noise"]) for o in view["verify"]["outputs"]] == [("identical", None)] * 2
    states = ed.comm.export_states()
    running = [s for s in states if s["state"] == "running"]
    assert len(running) >= 4, "the bar moves while the export runs"
    fractions = [s["fraction"] for s in running]
    assert fractions == sorted(fractions) and fractions[-1] < 1.0
    stages = [s["stage"] for s in running]
    assert "check" in stages
    verifying = [s for s in running if s["stage"].startswith("verify")]
    assert list(dict.fromkeys(s["stage"] for s in verifying)) == [
        "verify: starting",
        "verify: compiling the C host",
        "verify: running the module in the C runtime",
        "verify: running the graph in Python",
    ], "verification says what it does as it goes, not one 'verify' for its whole time"
    assert verifying[0]["fraction"] >= 0.8 and len({s["fraction"] for s in verifying}) == 4
    assert gl.verify(tmp_path / "module").passed, "what the panel verified is what is on disk"
    assert set(view) == declared_fields("ExportView")
    assert set(view["verify"]) == declared_fields("VerifyView")
    assert set(view["verify"]["outputs"][0]) == declared_fields("OutputDiffView")


def test_export_without_verification_stops_after_writing(ed, tmp_path):
    assert export(ed, tmp_path / "m", verify=False)["ok"]
    assert ed.export["state"] == "done" and ed.export["verify"] is None and ed.export["files"]


def test_an_existing_folder_is_refused_and_left_alone(ed, tmp_path):
    target = tmp_path / "taken"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    reply = export(ed, target, request=5)
    assert reply["ok"] is False and reply["request"] == 5 and "export failed" in reply["error"]
    view = ed.export
    assert view["state"] == "failed" and "overwrite" in view["error"]
    assert "OutputPathError" not in view["error"] and "OutputPathError" not in reply["error"], "no Python class name"
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]
    assert [p for p in tmp_path.iterdir() if p.name != "taken"] == [], "no temporary folder left behind"


def test_dims_from_the_panel_reach_the_manifest(ti_cpu, tmp_path):
    from graphlab.deploy import read_manifest

    g = gl.Graph("dims")
    g.dispatch(ramp, g.ndarray("x", ti.f32, ndim=1, shape="n"), g.scalar("scale", ti.f32))
    widget = gl.editor(g, kernels=[], access="ast")
    assert export(widget, tmp_path / "with_dims", verify=False, dims={"n": 16})["ok"]
    assert widget.export["state"] == "done"
    assert read_manifest(tmp_path / "with_dims").dims == {"n": 16}


def test_export_uses_the_live_debug_sessions_values_when_the_editor_has_none(ti_cpu, tmp_path):
    g = gl.Graph("squares")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="state")
    g.dispatch(ramp, x, g.scalar("scale", ti.f32, role="input"))
    g.dispatch(square, x, g.ndarray("y", ti.f32, ndim=1, shape="n", role="output"))
    widget = gl.editor(g, kernels=[], access="ast")  # no values=
    widget.debug(x=np.zeros(24, np.float32), y=np.zeros(24, np.float32), scale=0.5)  # started from a cell
    reply = export(widget, tmp_path / "module", cpu_threads=1)
    assert reply["ok"], reply
    view = widget.export
    assert view["state"] == "done" and view["verify"]["passed"] is True, view
    assert view["verify"]["verdict"] == "identical"
    widget.close()


def test_the_summary_and_the_list_count_the_same_files(ed, tmp_path):
    assert export(ed, tmp_path / "module", verify=False)["ok"]
    view = ed.export
    folder = tmp_path / "module"
    on_disk = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert view["files"] == on_disk and view["file_count"] == len(on_disk)
    assert "manifest.json" in on_disk and any(f.startswith("host/") for f in on_disk)
    assert f": {len(on_disk)} files, " in view["result"], view["result"]


def test_a_verification_that_cannot_run_is_not_a_failed_export(ed, tmp_path, monkeypatch):
    monkeypatch.setenv("CC", "graphlab-no-such-cc")  # a real missing compiler: the C host cannot be built
    reply = export(ed, tmp_path / "module", cpu_threads=1)
    assert reply["ok"] is True, "the module was written"
    view = ed.export
    assert view["state"] == "done" and view["error"] is None and view["verify"] is None
    assert (tmp_path / "module" / "manifest.json").is_file() and view["file_count"] > 0
    why = view["verify_error"]
    assert "ToolMissingError" not in why, "the message, without the Python class name"
    assert "graphlab-no-such-cc" in why and "apt-get install gcc" in why
    assert f"gl.verify({str(tmp_path / 'module')!r})" in why
    assert set(view) == declared_fields("ExportView")


def test_a_second_export_to_the_same_folder_says_to_tick_overwrite(ed, tmp_path):
    assert export(ed, tmp_path / "m", verify=False)["ok"]
    reply = export(ed, tmp_path / "m", request=2, verify=False)
    said = f"{tmp_path / 'm'} already exists; tick \u201coverwrite the folder\u201d to replace it, or choose another path (in Python: overwrite=True)"
    for error in (reply["error"], ed.export["error"]):  # the UI's words first, the Python call as a trailing hint
        assert error.endswith(said), error
    assert export(ed, tmp_path / "m", request=3, verify=False, overwrite=True)["ok"]


def test_a_temps_dim_no_value_sizes_is_asked_for_in_the_panels_terms_before_anything_runs(ti_cpu, tmp_path):
    from temps_kernels import M, temps_graph, temps_values

    from graphlab.deploy import read_manifest

    widget = gl.editor(temps_graph(), kernels=[], access="ast", values=temps_values())  # nothing sizes 'm'
    reply = export(widget, tmp_path / "module")
    assert reply["ok"] is False
    view = widget.export
    for said in (reply["error"], view["error"]):
        assert "Export needs a size for dim 'm'" in said and "temp 'grid'" in said, said
        assert "give it in the Values panel, under Dims (m=64)" in said and "dims field here" in said
        assert "(in Python: gl.export(g, folder, dims={'m': 64}))" in said, "the Python call stays, as a hint"
        assert "pass dims=" not in said and "CLI" not in said, "not the exporter's own wording"
    assert view["state"] == "failed" and view["run"] == 1 and view["files"] == [] and view["verify"] is None
    assert set(view) == declared_fields("ExportView")
    assert not (tmp_path / "module").exists() and list(tmp_path.iterdir()) == [], "refused before anything ran"
    # the size given where the message says: the export runs and its verification passes
    assert deliver(widget, {"kind": "values", "op": "dim", "request": 2, "dim": "m", "size": M})["ok"]
    reply = export(widget, tmp_path / "module", request=3, cpu_threads=1)
    assert reply["ok"], reply
    assert widget.export["state"] == "done" and widget.export["verify"]["passed"] is True
    assert read_manifest(tmp_path / "module").dims["m"] == M
    widget.close()


def test_a_dim_typed_in_the_export_form_sizes_the_temp(ti_cpu, tmp_path):
    from temps_kernels import M, temps_graph, temps_values

    widget = gl.editor(temps_graph(), kernels=[], access="ast", values=temps_values())
    assert export(widget, tmp_path / "module", verify=False, dims={"m": M})["ok"]
    assert widget.export["state"] == "done" and widget.export["error"] is None
    widget.close()


def test_verification_that_would_draw_unsized_inputs_says_which_dim_and_where_to_give_it(ti_cpu, tmp_path):
    g = gl.Graph("plain")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    g.dispatch(square, x, g.ndarray("y", ti.f32, ndim=1, shape="n", role="output"))
    widget = gl.editor(g, kernels=[], access="ast")  # no values: the module sizes n from its inputs
    reply = export(widget, tmp_path / "verified")
    said = widget.export["error"]
    assert reply["ok"] is False and said in reply["error"]
    assert "Verification needs a size for dim 'n'" in said and "'x', 'y'" in said
    assert "Values panel, under Dims (n=64)" in said and "untick \u201cverify\u201d" in said
    assert "(in Python: gl.export(g, folder, dims={'n': 64}))" in said
    assert "inputs={" not in said and "manifest.json" not in said, "not verify's own wording"
    assert list(tmp_path.iterdir()) == []
    # without verification the module needs no size: the host sizes n from its inputs
    assert export(widget, tmp_path / "unverified", request=2, verify=False)["ok"]
    # or a value gives it: the verification draws the other inputs at its size
    assert deliver(widget, {"kind": "values", "op": "allocate", "request": 3, "arg": "x", "shape": [16]})["ok"]
    reply = export(widget, tmp_path / "verified", request=4, cpu_threads=1)
    assert reply["ok"], reply
    assert widget.export["verify"]["passed"] is True and widget.export["verify"]["outputs"][0]["shape"] == [16]
    widget.close()
