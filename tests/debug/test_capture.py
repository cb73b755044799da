"""Field captures: recorded from ``gl.load_module`` graphs, opened as debug sessions, compared.

A module exported from a variant graph (one kernel of the same signature computing something else)
plays the field build that departs from the notebook; the comparison must name the first segment
that differs and, where the capture's data decides it, the dispatch and the buffer. Every refusal
of a missing, incomplete, corrupt or mismatched capture names the file and the JSON path.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from capture_kernels import stages_graph, steer_graph, temps_graph

import graphlab as gl
from graphlab.core.errors import CaptureError
from graphlab.debug.capture import read_capture
from graphlab.debug.session_errors import DebugError

N = 256


def stage_values() -> dict[str, object]:
    zeros = np.zeros(N, np.float32)
    return {"x": np.linspace(-3, 5, N).astype(np.float32), "y": zeros.copy(), "w": zeros.copy(), "rounds": 3}


def steer_values(limit: int = 3) -> dict[str, object]:
    one = np.zeros(1, np.int32)
    x = np.linspace(0, 1, N).astype(np.float32)
    return {"limit": limit, "it": one.copy(), "flag": one.copy(), "odd": one.copy(), "x": x, "y": np.zeros_like(x)}


def record(graph: gl.Graph, module: Path, capture: Path, values: dict[str, object], **options: object) -> Path:
    """Export ``graph`` to ``module`` for x64 and record one run of it into ``capture``."""
    arrays = {k: v for k, v in values.items() if isinstance(v, np.ndarray)}
    gl.export(graph, module, "x64", values=arrays, cpu_threads=1)
    with gl.load_module(module) as loaded:
        loaded.graphs[graph.name].capture(capture, dict(values), **options)
    return capture


def test_a_capture_of_the_same_build_agrees(ti_cpu, tmp_path):
    module, folder = tmp_path / "stages", tmp_path / "cap"
    record(stages_graph(), module, folder, stage_values(), segments=True)
    dbg = gl.open_capture(folder, graph=stages_graph(), module=module)
    assert dbg.capture is not None and len(dbg.capture.segments) == 4  # prepare, then 3 iterations
    assert np.array_equal(dbg.inspect("x").numpy(), stage_values()["x"])
    assert dbg.compare(dbg.capture) is None
    assert dbg.compare(folder) is None  # the folder names the capture too
    assert dbg.position.index == 0


def test_without_segments_the_outputs_and_decisions_decide(ti_cpu, tmp_path):
    module, folder = tmp_path / "steer", tmp_path / "cap"
    record(steer_graph(), module, folder, steer_values(), segments=False)
    data = json.loads((folder / "capture.json").read_text())
    assert data["segments"] == [] and not data["truncated"]
    assert [(d["scope"], d["outcome"]) for d in data["decisions"]] == [
        ("solve", "again"), ("solve", "again"), ("solve", "done"), ("choose", "then"),
    ]  # fmt: skip
    dbg = gl.open_capture(folder, graph=steer_graph())
    assert dbg.compare(dbg.capture) is None


def test_a_different_kernel_is_named_at_its_segment_dispatch_and_buffer(ti_cpu, tmp_path):
    module, folder = tmp_path / "field", tmp_path / "cap"
    limit = 2 * N * 4 + 3 * N * 4  # room for two segments: prepare and the first iteration
    record(stages_graph(field=True), module, folder, stage_values(), segments=True, limit_bytes=limit)
    dbg = gl.open_capture(folder, graph=stages_graph())
    assert dbg.capture is not None and dbg.capture.record.truncated and len(dbg.capture.segments) == 2
    found = dbg.compare(dbg.capture)
    assert found is not None and found.kind == "buffer" and found.archs == ("x64", "x64 capture")
    assert (found.segment, found.step_id, found.node_id, found.buffer) == (
        1,
        "iterate/iter[0]/shift",
        "iterate/shift",
        "w",
    )
    assert found.suspects is None
    assert found.values is not None and found.values[1] - found.values[0] == pytest.approx(1.0)
    assert dbg.compare(dbg.capture, atol=2.0) is None  # shift_off adds 1 more; accumulate passes a quarter on
    assert str(found).startswith(
        "x64 and x64 capture diverge at step 2 iterate/iter[0]/shift (node iterate/shift), in segment 1"
    )


def test_without_segments_the_run_is_narrowed_honestly(ti_cpu, tmp_path):
    module, folder = tmp_path / "field", tmp_path / "cap"
    record(stages_graph(field=True), module, folder, stage_values(), segments=False)
    found = gl.open_capture(folder, graph=stages_graph()).compare(folder)
    assert found is not None and found.segment is None and found.suspects is not None
    assert found.suspects[0] == "prepare" and found.step_id in found.suspects
    assert "the capture has no state inside it to say which" in str(found)


def test_a_loop_that_runs_longer_in_the_field_is_a_control_divergence(ti_cpu, tmp_path):
    module, bare, full = tmp_path / "field", tmp_path / "bare", tmp_path / "full"
    record(steer_graph(field=True), module, bare, steer_values(), segments=False)
    with gl.load_module(module) as loaded:
        loaded.graphs["steer"].capture(full, steer_values(), segments=True)
    found = gl.open_capture(bare, graph=steer_graph()).compare(bare)
    assert found is not None and found.kind == "control" and found.control_node == "solve"
    assert found.values == (0, 1) and found.buffer == "flag"
    assert "x64 chose 'done'" not in str(found)  # the sentence says what each side read and chose
    assert "read 0 and chose 'done' at solve" in str(found) and "read 1 and chose 'again' at solve" in str(found)
    with_segments = gl.open_capture(full, graph=steer_graph()).compare(full)
    assert with_segments is not None and with_segments.kind == "buffer"  # the flag differs at the segment end
    assert (with_segments.segment, with_segments.buffer, with_segments.step_id) == (2, "flag", "solve/iter[2]/count")


def test_temps_are_sized_from_the_capture_and_left_out_of_the_comparison(ti_cpu, tmp_path):
    x = np.linspace(0, 1, N).astype(np.float32)
    values = {"x": x, "y": np.zeros_like(x)}
    record(temps_graph(), tmp_path / "same", tmp_path / "same_cap", values, segments=True)
    record(temps_graph(field=True), tmp_path / "field", tmp_path / "field_cap", values, segments=True)
    data = json.loads((tmp_path / "same_cap" / "capture.json").read_text())
    assert data["dims"] == {"m": N} and "t" not in data["inputs"] and "t" not in data["outputs"]
    dbg = gl.open_capture(tmp_path / "same_cap", graph=temps_graph())
    assert dbg.inspect("t").numpy().shape == (N,)  # sized by the captured dim m
    assert dbg.compare(dbg.capture) is None
    found = gl.open_capture(tmp_path / "field_cap", graph=temps_graph()).compare(tmp_path / "field_cap")
    assert found is not None and (found.buffer, found.step_id) == ("y", "shift")
    assert found.suspects == ("halve", "shift")  # shift reads the temp t, which the capture cannot hold


def test_capturing_runs_the_graph_as_run_does(ti_cpu, tmp_path):
    gl.export(steer_graph(), tmp_path / "steer", "x64", values={"x": np.zeros(N, np.float32)}, cpu_threads=1)
    with gl.load_module(tmp_path / "steer") as loaded:
        graph = loaded.graphs["steer"]
        ran = graph.run(steer_values(limit=4))
        events = list(graph.last_events)
        captured = graph.capture(tmp_path / "cap", steer_values(limit=4), segments=True)
        assert graph.last_events == events and [e.value for e in events] == [4, "else"]
    assert all(np.array_equal(ran[name], captured[name]) for name in ran)
    outputs = {name: np.load(tmp_path / "cap" / "outputs" / f"{name}.npy") for name in ran}
    assert all(np.array_equal(ran[name], outputs[name]) for name in ran)
    assert np.load(tmp_path / "cap" / "inputs" / "limit.npy").shape == ()  # a scalar: a 0-d array of its dtype


def test_a_vulkan_round_trip(ti_vulkan, tmp_path):
    module, folder = tmp_path / "stages_vk", tmp_path / "cap"
    values = stage_values()
    gl.export(stages_graph(), module, "vulkan", values={k: v for k, v in values.items() if k != "rounds"})
    with gl.load_module(module) as loaded:
        loaded.graphs["stages"].capture(folder, values, segments=True)
    dbg = gl.open_capture(folder, graph=stages_graph(), module=module)
    assert dbg.arch == "vulkan" and dbg.capture is not None and dbg.capture.arch == "vulkan capture"
    assert dbg.compare(dbg.capture) is None


# --- refusals ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, Path]:
    """One module and one capture of it (with segments), copied by each test that tampers with it."""
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    root = tmp_path_factory.mktemp("made")
    record(steer_graph(), root / "steer", root / "cap", steer_values(), segments=True)
    return root / "steer", root / "cap"


@pytest.fixture
def copy(made, tmp_path) -> Path:
    return Path(shutil.copytree(made[1], tmp_path / "cap"))


def edit(folder: Path, change) -> None:
    data = json.loads((folder / "capture.json").read_text())
    change(data)
    (folder / "capture.json").write_text(json.dumps(data))


def refused(folder: Path, match: str, **options) -> CaptureError:
    with pytest.raises(CaptureError, match=match) as info:
        read_capture(folder, graph=options.pop("graph", None) or steer_graph(), **options)
    return info.value


def test_a_missing_folder(tmp_path):
    refused(tmp_path / "nowhere", r"nowhere: \$: no such folder")


def test_an_incomplete_capture(copy):
    (copy / "capture.json").unlink()
    refused(copy, r"capture.json: \$: missing, so the capture is incomplete")


def test_capture_json_that_is_not_json(copy):
    (copy / "capture.json").write_text("{nope")
    refused(copy, r"capture.json: \$: not JSON")


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.update(format="graphlab.capture/9"), r"\$\.format: expected 'graphlab.capture/1'"),
        (lambda d: d.pop("graph"), r"\$: the field 'graph' is missing"),
        (lambda d: d.update(graph="other"), r"\$\.graph: the capture is of graph 'other', the graph given is 'steer'"),
        (lambda d: d["inputs"].pop("x"), r"\$\.inputs: no value for arg 'x' of graph 'steer'"),
        (lambda d: d["inputs"].update(q="inputs/q.npy"), r"\$\.inputs\.q: graph 'steer' has no arg 'q'"),
        (lambda d: d["inputs"].update(x="../x.npy"), r"\$\.inputs\.x: expected the path 'inputs/x.npy'"),
        (lambda d: d["decisions"][0].update(node="nope"), r"\$\.decisions\[0\]\.node: no loop node 'nope'"),
        (lambda d: d["decisions"][0].update(outcome="then"), r"\$\.decisions\[0\]\.outcome: a loop decides one of"),
        (lambda d: d["segments"][0].update(segment=9), r"\$\.segments\[0\]\.segment: segment 9 \('steer_seg0'\)"),
        (lambda d: d["segments"][1].update(order=5), r"\$\.segments\[1\]\.order: expected 1"),
        (lambda d: d["dims"].update(n=7), r"\$\.inputs\.x: arg 'x' axis 0 is 256, but dim 'n' is 7"),
        (lambda d: d.update(truncated="no"), r"\$\.truncated: expected bool"),
        (lambda d: d["platform"].pop("arch"), r"\$\.platform: the field 'arch' is missing"),
        (lambda d: d["dims"].update(n=-1), r"\$\.dims\.n: expected a size >= 0, got -1"),
        (lambda d: d["decisions"].append(7), r"\$\.decisions\[4\]: expected an object"),
        (lambda d: d["outputs"].update(limit="outputs/limit.npy"), r"\$\.outputs\.limit: arg 'limit' is a scalar"),
    ],
)
def test_a_capture_json_that_does_not_fit(copy, change, match):
    edit(copy, change)
    refused(copy, match)


def test_a_listed_array_that_is_missing(copy):
    (copy / "outputs" / "y.npy").unlink()
    refused(copy, r"y.npy: \$\.outputs\.y: capture.json lists outputs/y.npy but it is missing")


def test_an_array_cut_short(copy):
    path = copy / "inputs" / "x.npy"
    path.write_bytes(path.read_bytes()[:-8])
    refused(
        copy, r"x.npy: \$\.inputs\.x: the header says \(256,\) <f4 \(1,024 bytes of data\) but the file holds 1,016"
    )


def test_an_array_of_another_dtype(copy):
    np.save(copy / "inputs" / "x.npy", np.zeros(N, np.float64))
    refused(copy, r"x.npy: \$\.inputs\.x: arg 'x' is f32 \(float32\), the file holds float64")
    np.save(copy / "inputs" / "x.npy", np.zeros(N, np.complex64))
    refused(copy, r"dtype '<c8' is none of the capture format's")
    np.save(copy / "inputs" / "x.npy", np.asfortranarray(np.zeros((2, 2), np.float32)))
    refused(copy, r"Fortran order")


def test_an_array_of_another_shape(copy):
    np.save(copy / "inputs" / "it", np.zeros(2, np.int32))
    refused(copy, r"it.npy: \$\.inputs\.it: arg 'it' axis 0 is declared 1, the file holds 2")
    np.save(copy / "inputs" / "it", np.zeros((1, 1), np.int32))
    refused(copy, r"arg 'it' has shape \(\?\), the file holds \(1, 1\)")


def test_a_file_that_is_no_npy(copy):
    (copy / "inputs" / "x.npy").write_bytes(b"garbage")
    refused(copy, r"x.npy: \$\.inputs\.x: not a .npy file of version 1.0")


def test_a_damaged_npy_header(copy):
    path = copy / "inputs" / "x.npy"
    data = path.read_bytes()
    path.write_bytes(data[:10] + data[10:].replace(b"'shape'", b"'shapf'", 1))
    refused(copy, r"x.npy: \$\.inputs\.x: its .npy header is damaged")
    path.write_bytes(data[:20])
    refused(copy, r"x.npy: \$\.inputs\.x: its .npy header is cut short")


def test_an_array_that_is_a_link_out_or_no_file(copy, tmp_path):
    outside = tmp_path / "outside.npy"
    np.save(outside, np.zeros(N, np.float32))
    (copy / "inputs" / "x.npy").unlink()
    (copy / "inputs" / "x.npy").symlink_to(outside)
    refused(copy, r"\$\.inputs\.x: inputs/x.npy leads out of the capture folder")
    (copy / "inputs" / "x.npy").unlink()
    (copy / "inputs" / "x.npy").mkdir()
    refused(copy, r"x.npy: \$\.inputs\.x: not a regular file")


def test_the_bound_on_bytes_read(copy):
    refused(copy, r"x.npy: \$\.inputs\.x: 1,024 bytes would pass the 84 bytes left of the bound", max_bytes=100)


def test_another_manifest(made, copy, tmp_path):
    module = Path(shutil.copytree(made[0], tmp_path / "module"))
    read_capture(copy, graph=steer_graph(), module=module)  # the very manifest: accepted
    (module / "manifest.json").write_text((module / "manifest.json").read_text() + " ")
    refused(copy, r"\$\.manifest_sha256: the capture was recorded with another manifest.json", module=module)


def test_a_graph_that_is_not_a_graph(copy):
    with pytest.raises(CaptureError, match="pass the notebook's graphlab.Graph"):
        read_capture(copy, graph="steer")  # type: ignore[arg-type]


def test_comparing_a_session_of_another_graph(made, ti_cpu):
    capture = read_capture(made[1], graph=steer_graph())
    dbg = stages_graph().debug(stage_values())
    with pytest.raises(DebugError, match="the capture is of graph 'steer', this session's is 'stages'"):
        dbg.compare(capture)


# --- recording refusals -----------------------------------------------------------------------------


def test_recording_refuses_a_used_folder_and_bad_options(made, tmp_path):
    used = tmp_path / "used"
    used.mkdir()
    (used / "note.txt").write_text("mine")
    with gl.load_module(made[0]) as loaded:
        graph = loaded.graphs["steer"]
        with pytest.raises(CaptureError, match=r"used: \$: exists and is not an empty folder"):
            graph.capture(used, steer_values())
        with pytest.raises(CaptureError, match=r"limit_bytes=-1: give a number of bytes >= 0"):
            graph.capture(tmp_path / "a", steer_values(), limit_bytes=-1)
        with pytest.raises(CaptureError, match=r"segments='yes': give True"):
            graph.capture(tmp_path / "b", steer_values(), segments="yes")  # type: ignore[arg-type]
        with pytest.raises(CaptureError, match=r"folder=3: give a folder path"):
            graph.capture(3, steer_values())  # type: ignore[arg-type]
        with pytest.raises(gl.GraphRunError, match=r"capture\(folder, values\) takes a dict"):
            graph.capture(tmp_path / "c", [1, 2])  # type: ignore[arg-type]
        with pytest.raises(gl.GraphRunError, match=r"no value for limit"):
            graph.capture(tmp_path / "d", {k: v for k, v in steer_values().items() if k != "limit"})
    assert not (tmp_path / "d").exists()  # refused before anything was written
    assert (used / "note.txt").read_text() == "mine"
