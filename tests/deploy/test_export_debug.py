"""``gl.export(..., debug=True)``: a debug variant (one module graph per dispatch node) recorded in the
manifest, run dispatch by dispatch by ``load_module``, and used by ``dbg.compare(folder)``.

Real exports (Vulkan through Mesa lavapipe, and x64) run in Taichi's C runtime; the planted graph is
``tests/compare_kernels.py``'s, whose ``wobble`` differs between x64 and Vulkan in the last bit.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import taichi as ti
from compare_kernels import loop_graph, planted_graph
from test_compare_module import planted_arrays, planted_session

import graphlab as gl
from graphlab.deploy import module_runner
from graphlab.deploy.errors import ExportError, ManifestError, UnknownGraphError
from graphlab.deploy.manifest import read_manifest
from graphlab.deploy.module_runner import ModuleRunner

ORDER = [f"rounds/{k}" for k in ("scale", "wobble", "scramble", "feed")] * 3


@pytest.fixture
def vulkan_debug_module(ti_cpu, tmp_path):
    folder = tmp_path / "planted"
    gl.export(planted_graph(), folder, "vulkan", values=planted_arrays(), debug=True)
    return folder


def test_the_manifest_records_a_graph_per_dispatch_and_the_order_they_run(vulkan_debug_module):
    steps = read_manifest(vulkan_debug_module).debug_steps
    assert list(steps) == ["planted"]
    assert steps["planted"].graphs == {node: f"planted_step{i}" for i, node in enumerate(ORDER[:4])}
    assert steps["planted"].order == tuple(ORDER)


def test_load_module_runs_the_variant_in_order_and_ends_where_the_deployed_graph_does(vulkan_debug_module):
    with gl.load_module(vulkan_debug_module) as module:
        deployed = planted_arrays()
        module.graphs["planted"].run(deployed)
        stepped = planted_arrays()
        seen, after_wobble = [], None
        for node in module.run_steps("planted", stepped):
            seen.append(node)
            if len(seen) == 2:
                after_wobble = stepped["w"].copy()
        assert seen == ORDER
        for name in deployed:
            np.testing.assert_array_equal(stepped[name], deployed[name], err_msg=name)
        assert after_wobble is not None and after_wobble.any()  # the state between dispatches is there
        assert set(module.debug_steps("planted")) == set(ORDER)


def test_compare_uses_the_recorded_variant_instead_of_exporting_one(vulkan_debug_module, monkeypatch):
    def no_export(*args, **kwargs):
        raise AssertionError("compare exported a debug variant although the module records one")

    monkeypatch.setattr(module_runner, "export", no_export)
    dbg = planted_session()
    found = dbg.compare(str(vulkan_debug_module))
    assert found is not None and found.step_id == "rounds[0]/wobble" and found.buffer == "w"
    assert found.archs == ("x64", "vulkan module")
    runner = ModuleRunner(vulkan_debug_module, dbg.graph, planted_arrays())
    try:
        runner.step("rounds/scale")
        assert runner.recorded
    finally:
        runner.close()


def test_a_module_without_a_variant_says_how_to_get_one(ti_cpu, tmp_path):
    folder = tmp_path / "plain"
    gl.export(planted_graph(), folder, "x64", values=planted_arrays(), cpu_threads=1)
    assert read_manifest(folder).debug_steps == {}
    with gl.load_module(folder) as module, pytest.raises(UnknownGraphError, match=r"debug=True"):
        module.debug_steps("planted")


def test_a_graph_with_control_flow_records_no_order(ti_cpu, tmp_path):
    folder = tmp_path / "loop"
    gl.export(loop_graph(), folder, "x64", debug=True, cpu_threads=1)
    steps = read_manifest(folder).debug_steps["counted"]
    assert steps.order is None and list(steps.graphs) == ["solve/count_up"]
    values = {"c": 1.0, "it": np.zeros(1, np.int32), "flag": np.zeros(1, np.int32)}
    with gl.load_module(folder) as module:
        with pytest.raises(UnknownGraphError, match=r"has control flow"):
            list(module.run_steps("counted", values))
        module.debug_steps("counted")["solve/count_up"].run(values)
    assert values["it"][0] == 1


def test_bad_debug_options_are_refused_before_anything_is_written(ti_cpu, tmp_path):
    with pytest.raises(ExportError, match=r"debug='yes': give True"):
        gl.export(planted_graph(), tmp_path / "a", "x64", debug="yes")
    clash = gl.Graph("planted_step0")
    clash.dispatch(planted_graph().node("rounds/scale").kernel.fn, clash.ndarray("x", ti.f32, ndim=1),
                   clash.ndarray("y", ti.f32, ndim=1))  # fmt: skip
    with pytest.raises(ExportError, match=r"have the names of graphs being exported"):
        gl.export([planted_graph(), clash], tmp_path / "b", "x64", debug=True)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d["debug_steps"].update(nowhere=d["debug_steps"]["planted"]), r"\$\.debug_steps\.nowhere"),
        (lambda d: d["debug_steps"]["planted"]["graphs"].append(["rounds/x", "missing"]), r"graphs\[4\]"),
        (lambda d: d["debug_steps"]["planted"]["order"].append("rounds/x"), r"\.order"),
    ],
)
def test_a_broken_debug_record_is_refused_naming_the_place(vulkan_debug_module, change, where):
    path = vulkan_debug_module / "manifest.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    with pytest.raises(ManifestError, match=where):
        read_manifest(vulkan_debug_module)
