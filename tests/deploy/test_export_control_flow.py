"""Exporting graphs with conditionals and loops: segments in the module, the control tree in the manifest.

A Jacobi solve that loops until its residual flag clears, and a conditional, are exported for x64
(one thread) and Vulkan (Mesa lavapipe here), then run three ways: ``run()`` in this process
(``compiled.last_events``), the generated C host program (``--events``) and ``gl.load_module``
(``graph.last_events``). All three must take the same path; x64 results are bit-identical, Vulkan
results within 1e-5. Exports are made once per module.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from test_compiled import add_one, halve, jacobi_graph, threshold

import graphlab as gl
from graphlab.deploy import hostgen
from graphlab.deploy.control import FrameEvent, parse_event_lines
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.exporter import ExportError
from graphlab.deploy.manifest import read_manifest
from graphlab.deploy.report import VerifyReport
from graphlab.model.plan import Branch, ControlEvent, Iterate, Repeat, Segment

ARCHS = ["x64", pytest.param("vulkan", marks=pytest.mark.vulkan)]
N = 32
TOL = 1e-4
MAX_ITER = 5000


# --- kernels and graphs --------------------------------------------------------------------------------


def poisson_graph() -> gl.Graph:
    """Jacobi iterations until no value moves by more than ``tol`` (at most MAX_ITER)."""
    return jacobi_graph(MAX_ITER)


def branch_graph() -> gl.Graph:
    """Halve x when some value is above ``limit``, else add one."""
    g = gl.Graph("branchy")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    limit = g.scalar("limit", ti.f32)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    g.dispatch(threshold, x, limit, flag)
    too_big = g.define("too_big")
    too_big.dispatch(halve, x)
    small = g.define("small")
    small.dispatch(add_one, x)
    g.cond(flag, then=too_big, else_=small, name="branch")
    return g


def nested_graph() -> gl.Graph:
    """A count loop and a conditional without else, inside a sequence used twice."""
    g = gl.Graph("nested")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    n = g.scalar("n", ti.i32)
    limit = g.scalar("limit", ti.f32)
    flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    inc = g.define("inc")
    inc.dispatch(add_one, x)
    shrink = g.define("shrink")
    shrink.dispatch(halve, x)
    with g.sequence("outer", repeat=2) as outer:
        g.loop(inc, count=n, name="times", into=outer)
        outer.dispatch(threshold, x, limit, flag)
        g.cond(flag, then=shrink, name="big", into=outer)
    return g


def plain_graph() -> gl.Graph:
    g = gl.Graph("plain")
    g.dispatch(add_one, g.ndarray("x", ti.f32, ndim=1, shape="n"))
    return g


def poisson_inputs() -> dict:
    return {"u": np.zeros(N, np.float32), "f": np.full(N, 0.01, np.float32), "tol": np.float32(TOL),
            "flag": np.ones(1, np.int32)}  # fmt: skip


def branch_inputs(x: list[float]) -> dict:
    return {"x": np.array(x, np.float32), "limit": np.float32(5.0), "flag": np.zeros(1, np.int32)}


# --- running the three ways ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Exported:
    folder: Path
    arch: str
    exe: Path


def export(tmp_path_factory, graphs: list[gl.Graph], arch: str, values: dict) -> Exported:
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    folder = tmp_path_factory.mktemp(f"cf_{graphs[0].name}_{arch}") / graphs[0].name
    gl.export(graphs, folder, arch, values=values, cpu_threads=1, progress=False)
    return Exported(folder, arch, hostgen.build_host(folder))


@pytest.fixture(scope="module", params=ARCHS)
def poisson(request, tmp_path_factory) -> Exported:
    return export(tmp_path_factory, [poisson_graph()], request.param, poisson_inputs())


@pytest.fixture(scope="module", params=ARCHS)
def branchy(request, tmp_path_factory) -> Exported:
    return export(tmp_path_factory, [branch_graph()], request.param, branch_inputs([4.0, 8.0]))


@pytest.fixture(scope="module")
def nested(tmp_path_factory) -> Exported:
    values = {"x": np.array([1.0, 2.0], np.float32), "n": np.int32(3), "limit": np.float32(5.0)}
    return export(tmp_path_factory, [nested_graph(), plain_graph()], "x64", values)


def run_python(arch: str, graphs: list[gl.Graph], inputs: dict) -> tuple[dict, list[FrameEvent]]:
    """``run()`` in this process; returns the arrays and the events of each graph."""
    ti.init(arch=getattr(ti, arch), cpu_max_num_threads=1, log_level=ti.WARN)
    values = {k: (v.item() if v.ndim == 0 else v.copy()) for k, v in inputs.items()}
    events = []
    for graph in graphs:
        compiled = graph.compile()
        compiled.run({k: v for k, v in values.items() if k in compiled.args})
        events += [FrameEvent(0, graph.name, e) for e in compiled.last_events]
    return {k: v for k, v in values.items() if isinstance(v, np.ndarray)}, events


def run_host(exported: Exported, inputs: dict, tmp: Path) -> tuple[dict, list[FrameEvent]]:
    """The generated C host with ``--events``; returns what it wrote and what it decided."""
    (tmp / "in").mkdir()
    for name, value in inputs.items():
        np.save(tmp / "in" / f"{name}.npy", value)
    command = [str(exported.exe), "--module", str(exported.folder / "module"), "--in", str(tmp / "in"),
               "--out", str(tmp / "out"), "--events"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    arrays = {name: np.load(tmp / "out" / f"{name}.npy") for name, v in inputs.items() if np.ndim(v)}
    return arrays, parse_event_lines(done.stdout)


def run_module(exported: Exported, inputs: dict) -> tuple[dict, list[FrameEvent]]:
    """``gl.load_module`` (Taichi's C runtime through ctypes)."""
    values = {k: (v.item() if v.ndim == 0 else v.copy()) for k, v in inputs.items()}
    events = []
    with gl.load_module(exported.folder) as module:
        for name, graph in module.graphs.items():
            graph.run(**{k: v for k, v in values.items() if k in {a.name for a in graph.spec.args}})
            events += [FrameEvent(0, name, e) for e in graph.last_events]
    return {k: v for k, v in values.items() if isinstance(v, np.ndarray)}, events


def assert_same(got: dict, want: dict, arch: str) -> None:
    for name, expected in want.items():
        if arch == "x64":  # one thread, same LLVM code: bit for bit
            assert got[name].tobytes() == expected.tobytes(), name
        else:
            scale = max(float(np.abs(expected).max()), 1e-30)
            assert float(np.abs(got[name] - expected).max()) / scale <= 1e-5, name


# --- the Jacobi solve ------------------------------------------------------------------------------------


def test_jacobi_takes_the_same_iterations_and_result_everywhere(poisson, tmp_path):
    inputs = poisson_inputs()
    want, python_events = run_python(poisson.arch, [poisson_graph()], inputs)
    host, host_events = run_host(poisson, inputs, tmp_path)
    module, module_events = run_module(poisson, inputs)
    [event] = python_events
    assert event.event.node == "solve" and event.event.kind == "loop" and not event.event.limit_reached
    assert 100 < event.event.value < MAX_ITER
    assert host_events == python_events and module_events == python_events
    assert_same(host, want, poisson.arch)
    assert_same(module, want, poisson.arch)


@pytest.mark.parametrize("poisson", ["x64"], indirect=True)  # 5000 flag reads: slow on lavapipe, same code
def test_max_iter_bounds_the_exported_loop_and_says_so(poisson, tmp_path):
    inputs = {**poisson_inputs(), "tol": np.float32(-1.0)}  # |change| > -1 always: the flag never clears
    _, host_events = run_host(poisson, inputs, tmp_path)
    _, module_events = run_module(poisson, inputs)
    expected = [FrameEvent(0, "poisson", ControlEvent("solve", "loop", MAX_ITER, limit_reached=True))]
    assert host_events == expected and module_events == expected


def test_verify_passes_for_the_jacobi_solve(poisson):
    report = gl.verify(poisson.folder)  # inputs drawn from the values given at export: the same solve
    assert report.passed, str(report)
    assert report.events_match and len(report.host_events) == 1
    assert report.host_events[0].event.value > 100
    assert "control: same path in the C host and Python (1 decision)" in str(report)
    if poisson.arch == "x64":
        assert report.identical, str(report)


# --- the conditional -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "branch", "result"), [([4.0, 8.0], "then", [2.0, 4.0]), ([1.0, 2.0], "else", [2.0, 3.0])]
)
def test_conditional_takes_each_branch_on_different_inputs(branchy, tmp_path, x, branch, result):
    inputs = branch_inputs(x)
    want, python_events = run_python(branchy.arch, [branch_graph()], inputs)
    host, host_events = run_host(branchy, inputs, tmp_path)
    module, module_events = run_module(branchy, inputs)
    expected = [FrameEvent(0, "branchy", ControlEvent("branch", "cond", branch))]
    assert python_events == expected and host_events == expected and module_events == expected
    assert want["x"].tolist() == result
    assert_same(host, want, branchy.arch)
    assert_same(module, want, branchy.arch)


def test_verify_passes_for_each_branch(branchy):
    for x, branch in (([6.0, 1.0], "then"), ([1.0, 2.0], "else")):
        report = gl.verify(branchy.folder, {"x": np.array(x, np.float32)})
        assert report.passed, str(report)
        assert [e.event.value for e in report.host_events] == [branch]
        assert report.host_events == report.python_events


# --- nesting, several graphs, the manifest ------------------------------------------------------------------


def test_nested_control_and_a_plain_graph_share_one_module(nested, tmp_path):
    inputs = {"x": np.array([1.0, 2.0], np.float32), "n": np.int32(3), "limit": np.float32(5.0),
              "flag": np.zeros(1, np.int32)}  # fmt: skip
    want, python_events = run_python("x64", [nested_graph(), plain_graph()], inputs)
    host, host_events = run_host(nested, inputs, tmp_path)
    module, module_events = run_module(nested, inputs)
    decided = [(e.event.node, e.event.value) for e in python_events]
    assert decided == [("outer/times", 3), ("outer/big", "skip"), ("outer/times", 3), ("outer/big", "then")]
    assert want["x"].tolist() == [4.5, 5.0]  # 1,2 -> 4,5 -> 7,8 -> 3.5,4 -> plain adds one
    assert host_events == python_events and module_events == python_events
    assert_same(host, want, "x64")
    assert_same(module, want, "x64")
    report = gl.verify(nested.folder, frames=2)
    assert report.passed and report.identical, str(report)


def test_manifest_records_the_control_tree(poisson, nested):
    raw = json.loads((poisson.folder / "manifest.json").read_text())["graphs"][0]
    assert raw["steps"] is None
    assert raw["control"] == [{
        "op": "loop", "node": "solve", "while": "flag", "count": None, "max_iter": MAX_ITER,
        "body": [{"op": "segment", "graph": "poisson_seg0", "args": ["u", "f", "u_new", "tol", "flag"]}],
    }]  # fmt: skip
    graphs = read_manifest(nested.folder).graphs
    [repeat] = graphs[0].control
    assert isinstance(repeat, Repeat) and repeat.times == 2
    loop, segment, cond = repeat.body
    assert isinstance(loop, Iterate) and loop.count == "n" and loop.while_ is None
    assert segment == Segment(1, "nested_seg1", (), ("x", "limit", "flag"))
    assert isinstance(cond, Branch) and cond.else_ is None
    assert graphs[1].control is None and graphs[1].plan.segments == (Segment(0, "plain", (), ("x",)),)


def test_manifest_without_control_is_one_module_graph(tmp_path):
    """Old manifests (and graphs without control flow) have no tree: the graph is its own segment."""
    graph = {"name": "g", "args": [{"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1}]}
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"format": "graphlab.module/1", "arch": "x64", "taichi_version": "1.7.4", "graphs": [graph]}
    ))  # fmt: skip
    [spec] = read_manifest(tmp_path).graphs
    assert spec.control is None and spec.plan.segments == (Segment(0, "g", (), ("x",)),)


BAD_TREES = [
    ([{"op": "cond", "node": "c", "flag": "x", "then": []}], "$.graphs[0].control[0].flag", "not an i32 ndarray"),
    (
        [{"op": "loop", "node": "l", "while": "flag", "count": "n", "max_iter": 3, "body": []}],
        "$.graphs[0].control[0]",
        "exactly one of",
    ),
    (
        [{"op": "loop", "node": "l", "while": "flag", "body": []}],
        "$.graphs[0].control[0].max_iter",
        "positive max_iter",
    ),
    ([{"op": "segment", "graph": "s", "args": ["nope"]}], "$.graphs[0].control[0].args[0]", "not an arg"),
    ([{"op": "jump"}], "$.graphs[0].control[0].op", "not one of"),
    ([], "$.graphs[0].control", "runs nothing"),
]


@pytest.mark.parametrize(("control", "path", "message"), BAD_TREES)
def test_a_bad_control_tree_names_its_json_path(tmp_path, control, path, message):
    args = [{"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1},
            {"name": "flag", "kind": "ndarray", "dtype": "i32", "ndim": 1},
            {"name": "n", "kind": "scalar", "dtype": "i32"}]  # fmt: skip
    graph = {"name": "g", "args": args, "control": control}
    (tmp_path / "manifest.json").write_text(json.dumps(
        {"format": "graphlab.module/1", "arch": "x64", "taichi_version": "1.7.4", "graphs": [graph]}
    ))  # fmt: skip
    with pytest.raises(ManifestError, match=message) as caught:
        read_manifest(tmp_path)
    assert caught.value.json_path == path


def test_segment_names_that_clash_with_another_graph_are_refused(tmp_path):
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    clash = gl.Graph("poisson_seg0")
    clash.dispatch(add_one, clash.ndarray("x", ti.f32, ndim=1, shape="n"))
    with pytest.raises(ExportError, match="'poisson_seg0'.*rename one"):
        gl.export([poisson_graph(), clash], tmp_path / "m", "x64", dims={"n": 4}, progress=False)
    assert not (tmp_path / "m").exists()


def test_a_report_whose_paths_differ_fails_and_shows_the_first_difference(tmp_path):
    host = (FrameEvent(0, "poisson", ControlEvent("solve", "loop", 808)),)
    python = (FrameEvent(0, "poisson", ControlEvent("solve", "loop", 809)),)
    report = VerifyReport(tmp_path, "vulkan", 1, 1e-5, "given", (), host_events=host, python_events=python)
    assert not report.passed and not report.events_match
    assert "control: FAIL" in str(report) and "host frame 0, poisson/solve: loop 808 iteration(s)" in str(report)
