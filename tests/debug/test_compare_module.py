"""``dbg.compare(folder)``: a session against an exported module run in Taichi's C runtime.

x64 exports (one thread) must agree bit for bit with their own session; Vulkan exports carry the
planted ``ti.sin`` difference of ``tests/compare_kernels.py``, found at its dispatch through the
debug variant (one module graph per dispatch) exported on the fly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from compare_kernels import SIN_SPLIT, late_graph, loop_graph, planted_graph

import graphlab as gl
from graphlab.debug.session import DebugSession
from graphlab.deploy.errors import ExportError

N = 4096


def planted_arrays() -> dict[str, np.ndarray]:
    arrays = {name: np.zeros(N, np.float32) for name in "xyzw"}
    arrays["x"] = np.linspace(-20, 3e4, N).astype(np.float32)
    return arrays


def planted_session() -> DebugSession:
    values = {}
    for name, array in planted_arrays().items():
        values[name] = ti.ndarray(ti.f32, N)
        values[name].from_numpy(array)
    return planted_graph().debug(values)


def test_an_exact_export_agrees_with_its_own_session(ti_cpu, tmp_path):
    folder = tmp_path / "planted_x64"
    gl.export(planted_graph(), folder, "x64", values=planted_arrays(), cpu_threads=1)
    dbg = planted_session()
    assert dbg.compare(folder) is None
    assert dbg.compare(str(folder)) is None
    assert dbg.position.index == 0


def test_a_vulkan_module_is_narrowed_to_the_dispatch(ti_cpu, tmp_path):
    folder = tmp_path / "planted_vulkan"
    gl.export(planted_graph(), folder, "vulkan", values=planted_arrays())
    dbg = planted_session()
    found = dbg.compare(folder)
    assert found is not None and found.archs == ("x64", "vulkan module")
    assert (found.index, found.step_id, found.buffer) == (1, "rounds[0]/wobble", "w")
    assert "x64 and vulkan module diverge at step 1 rounds[0]/wobble" in str(found)
    loose = dbg.compare(folder, rtol=1e-4)
    assert loose is not None and (loose.step_id, loose.buffer) == ("rounds[0]/scramble", "z")
    assert dbg.compare(folder, atol=1.0) is None


def test_a_loop_that_runs_another_count_in_the_module(ti_cpu, tmp_path):
    folder = tmp_path / "counted_vulkan"
    start = {"c": SIN_SPLIT, "it": np.zeros(1, np.int32), "flag": np.zeros(1, np.int32)}
    gl.export(loop_graph(), folder, "vulkan", values=start)
    dbg = loop_graph().debug(c=SIN_SPLIT, it=ti.ndarray(ti.i32, 1), flag=ti.ndarray(ti.i32, 1))
    found = dbg.compare(folder)
    assert found is not None and found.kind == "control" and found.control_node == "solve"
    assert "take different paths at solve over the whole run: x64 ran solve" in str(found)


def test_a_module_without_the_graph_or_with_other_args_is_refused(ti_cpu, tmp_path):
    folder = tmp_path / "planted_x64"
    gl.export(planted_graph(), folder, "x64", values=planted_arrays(), cpu_threads=1)
    x = ti.ndarray(ti.f32, N)
    other = late_graph(2).debug(x=x, y=ti.ndarray(ti.f32, N), w=ti.ndarray(ti.f32, N))
    with pytest.raises(ExportError, match=r"the module has no graph 'late' \(it has planted\)"):
        other.compare(folder)
    renamed = planted_graph()
    renamed.rename_arg("z", "zz")
    values = {name: ti.ndarray(ti.f32, N) for name in ("x", "y", "w", "zz")}
    with pytest.raises(ExportError, match=r"differ in args z, zz; export this graph again"):
        renamed.debug(values).compare(folder)


def test_a_folder_that_is_no_module_is_refused(ti_cpu, tmp_path):
    empty = Path(tmp_path, "empty")
    empty.mkdir()
    with pytest.raises(gl.GraphlabError, match="manifest.json"):
        planted_session().compare(empty)
