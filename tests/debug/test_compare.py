"""``dbg.compare(arch)``: x64 on one thread against Vulkan (Mesa lavapipe), with planted cross-arch differences.

The differences are real, not simulated: ``ti.sin`` differs in the last bit between the two backends
(see ``tests/compare_kernels.py``), and each test checks the comparison finds it at the dispatch and
buffer where it is planted.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest
import taichi as ti
from compare_kernels import SIN_SPLIT, blit, branch_graph, late_graph, loop_graph, planted_graph

import graphlab as gl
from graphlab.child.process import ChildRunError
from graphlab.debug import compare
from graphlab.debug.compare import Divergence
from graphlab.debug.session_errors import DebugError

N = 4096


def planted_values() -> dict[str, ti.Ndarray]:
    values = {name: ti.ndarray(ti.f32, N) for name in "xyzw"}
    values["x"].from_numpy(np.linspace(-20, 3e4, N).astype(np.float32))
    return values


def test_bit_for_bit_finds_the_first_dispatch_that_differs(ti_cpu):
    values = planted_values()
    start = values["x"].to_numpy()
    dbg = planted_graph().debug(values)
    found = dbg.compare("vulkan")
    assert isinstance(found, Divergence)
    assert (found.kind, found.index, found.step_id, found.node_id) == ("buffer", 1, "rounds[0]/wobble", "rounds/wobble")
    assert found.buffer == "w" and found.archs == ("x64", "vulkan")
    x64, vulkan = found.values
    assert x64 != vulkan
    i = found.first_index[0]
    assert x64 == pytest.approx(np.sin(np.float32(start[i] * 0.5)), abs=1e-6)
    assert 0 < found.count < N and found.size == N
    assert 0 < found.max_abs < 1e-6 and found.max_rel > 0
    text = str(found)
    for part in ("step 1", "rounds[0]/wobble", "'w'", f"[{i}]", f"{found.count} of {N}", "bit for bit", "vulkan"):
        assert part in text
    assert found.picture().startswith("<svg")
    # the session did not move and its buffers are as they were
    assert dbg.position.index == 0
    np.testing.assert_array_equal(dbg.buffers["x"].to_numpy(), start)
    assert not dbg.buffers["w"].to_numpy().any()


def test_a_tolerance_skips_last_bit_differences_and_finds_the_amplified_one(ti_cpu):
    dbg = planted_graph().debug(planted_values())
    for _ in range(5):  # a session that has moved compares from its start values all the same
        dbg.step()
    found = dbg.compare("vulkan", rtol=1e-4)
    assert dbg.position.index == 5
    assert found is not None
    assert (found.index, found.step_id, found.buffer) == (2, "rounds[0]/scramble", "z")
    assert found.max_abs > 1e-4 and "rtol 0.0001, atol 0" in str(found)
    a, b = found.values
    assert abs(a - b) > 1e-4 * abs(b)
    # scramble's values lie in [0, 1): an absolute tolerance of 1 accepts every difference
    assert dbg.compare("vulkan", atol=1.0) is None


def test_the_same_arch_agrees_bit_for_bit(ti_cpu):
    assert planted_graph().debug(planted_values()).compare("x64") is None


@pytest.mark.parametrize("stride", [1, 7, 128])
def test_the_dispatch_found_does_not_depend_on_where_the_boundaries_fall(ti_cpu, monkeypatch, stride):
    monkeypatch.setattr(compare, "STRIDE", stride)
    x = ti.ndarray(ti.f32, N)
    x.from_numpy(np.linspace(100, 3e4, N).astype(np.float32))
    dbg = late_graph(60).debug(x=x, y=ti.ndarray(ti.f32, N), w=ti.ndarray(ti.f32, N))
    found = dbg.compare("vulkan")
    assert found is not None
    assert (found.index, found.step_id, found.buffer) == (120, "wobble", "w")


def test_a_loop_whose_iteration_count_differs_is_reported_as_such(ti_cpu):
    it, flag = ti.ndarray(ti.i32, 1), ti.ndarray(ti.i32, 1)
    dbg = loop_graph().debug(c=SIN_SPLIT, it=it, flag=flag)
    found = dbg.compare("vulkan", rtol=0.5, atol=0.5)
    assert found is not None and found.kind == "control"
    assert found.control_node == "solve"
    assert found.step_id is not None and found.step_id.startswith("solve/iter[")
    assert found.buffer == "flag" and found.values is not None and found.values[0] != found.values[1]
    text = str(found)
    assert "take different paths at solve" in text and "'again'" in text and "'done'" in text
    assert found.picture() is None
    assert dbg.compare("x64") is None


def test_a_branch_taken_differently_is_reported_with_both_choices(ti_cpu):
    x = ti.ndarray(ti.f32, 16)
    x.from_numpy(np.arange(16, dtype=np.float32))
    dbg = branch_graph().debug(c=SIN_SPLIT, flag=ti.ndarray(ti.i32, 1), x=x, y=ti.ndarray(ti.f32, 16))
    found = dbg.compare("vulkan")
    assert found is not None and found.kind == "control"
    assert (found.control_node, found.index, found.step_id, found.buffer) == ("choose", 0, "pick", "flag")
    assert sorted(found.values) == [0, 1]
    text = str(found)
    assert "took 'then' at choose" in text and "took 'else' at choose" in text


@pytest.mark.parametrize(
    ("against", "options", "message"),
    [
        ("vulkan2", {}, r"compare\(against='vulkan2'\): give an arch name, one of x64"),
        ("vulkan", {"rtol": -1.0}, r"compare\(rtol=-1.0\): give a number >= 0"),
        ("vulkan", {"atol": float("nan")}, r"compare\(atol=nan\): give a number >= 0"),
        ("vulkan", {"atol": True}, r"compare\(atol=True\)"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(ti_cpu, against, options, message):
    dbg = planted_graph().debug(planted_values())
    with pytest.raises(DebugError, match=message):
        dbg.compare(against, **options)


def test_a_graph_with_textures_is_refused(ti_vulkan):
    g = gl.Graph("paint")
    g.dispatch(blit, g.rw_texture("tex", 2, ti.Format.r32f), g.ndarray("y", ti.f32, ndim=2))
    dbg = g.debug(tex=ti.Texture(ti.Format.r32f, (4, 4)), y=np.zeros((4, 4), np.float32))
    with pytest.raises(DebugError, match=r"graph 'paint' binds textures"):
        dbg.compare("x64")


def test_an_arch_this_machine_lacks_is_refused(ti_cpu):
    dbg = planted_graph().debug(planted_values())
    with pytest.raises(DebugError, match=r"compare\(against='cuda'\): Taichi cannot start cuda on this machine"):
        dbg.compare("cuda")


def test_a_failure_in_the_other_process_names_the_side_and_the_command(ti_cpu, tmp_path, monkeypatch):
    source = tmp_path / "gone_kernels.py"
    source.write_text(  # importable here only: the other process fails to load the kernels
        f"import os\nimport taichi as ti\n\nif os.getpid() != {os.getpid()}:\n"
        "    raise ImportError('not here')\n\n\n@ti.kernel\ndef fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):\n"
        "    for i in x:\n        x[i] = 1.0\n"
    )
    spec = importlib.util.spec_from_file_location("gone_kernels", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # a module file: the other process imports it
    spec.loader.exec_module(module)
    g = gl.Graph("gone")
    g.dispatch(module.fill, g.ndarray("x", ti.f32, ndim=1, shape=(8,)))
    dbg = g.debug(x=ti.ndarray(ti.f32, 8))
    with pytest.raises(ChildRunError, match=r"compare: the vulkan side failed during 'start'"):
        dbg.compare("vulkan")
