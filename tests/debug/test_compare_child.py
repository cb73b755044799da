"""The other side of ``dbg.compare`` dying or hanging: the comparison fails, naming the arch and the command.

The kernels live in a module file that both processes import; imported in the other process only
(its pid is not this one's), the module makes that process really exit, or really hang, at its first
``goto``: the two ways a child goes wrong (a crash in a backend, a kernel that never ends there).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time

import pytest
import taichi as ti

import graphlab as gl
from graphlab.child.process import ChildRunError
from graphlab.debug.session_errors import DebugError

MODULE = """\
import os
import sys
import time

import taichi as ti

from graphlab.debug.session import DebugSession

if os.getpid() != {parent}:  # the other process only
    def _goto(self, target):
        {misbehave}
    DebugSession.goto = _goto


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = 1.0
"""
DIE = "print('the other side exits on purpose', flush=True); sys.stdout.flush(); os._exit(3)"
HANG = "time.sleep(3600)"


def misbehaving_graph(tmp_path, monkeypatch, how: str) -> gl.Graph:
    name = f"misbehaving_{len(how)}"
    source = tmp_path / f"{name}.py"
    source.write_text(MODULE.format(parent=os.getpid(), misbehave=how))
    spec = importlib.util.spec_from_file_location(name, source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # a module file: the other process imports it
    spec.loader.exec_module(module)
    g = gl.Graph("misbehaving")
    g.dispatch(module.fill, g.ndarray("x", ti.f32, ndim=1, shape=(8,)))
    return g


def test_a_child_that_dies_is_reported_with_its_status_the_command_and_its_output(ti_cpu, tmp_path, monkeypatch):
    dbg = misbehaving_graph(tmp_path, monkeypatch, DIE).debug(x=ti.ndarray(ti.f32, 8))
    with pytest.raises(ChildRunError) as info:
        dbg.compare("x64")
    text = str(info.value)
    assert "compare: the x64 process ended (status 3) during 'goto'" in text
    assert "the other side exits on purpose" in text  # its output comes with the error
    assert dbg.position.index == 0


def test_a_hung_child_is_stopped_after_the_timeout_naming_the_arch_and_the_command(ti_cpu, tmp_path, monkeypatch):
    dbg = misbehaving_graph(tmp_path, monkeypatch, HANG).debug(x=ti.ndarray(ti.f32, 8))
    started = time.monotonic()
    with pytest.raises(ChildRunError, match=r"the x64 process did not answer 'goto' within 8 s and was stopped"):
        dbg.compare("x64", timeout=8)
    assert time.monotonic() - started < 60, "the hung child must not hold the comparison"
    assert dbg.position.index == 0


@pytest.mark.parametrize("timeout", [0, -1.0, float("inf"), float("nan"), True, "10"])
def test_a_bad_timeout_is_refused_before_anything_runs(ti_cpu, tmp_path, monkeypatch, timeout):
    dbg = misbehaving_graph(tmp_path, monkeypatch, DIE).debug(x=ti.ndarray(ti.f32, 8))
    with pytest.raises(DebugError, match=r"compare\(timeout=.*\): give the seconds one command may take"):
        dbg.compare("x64", timeout=timeout)
