"""``dbg.compare`` runs its two sides at the same time: the other side starts, and gets each command,
before this process does its own work for that boundary.

Proved by order, not by timing: the kernels' module file, imported in both processes, makes each
side wait (up to a minute) for a mark the other side leaves only when it runs concurrently. The other
process's start waits for this process's first local ``goto``; this process's first local ``goto``
waits for the other process to have received its ``goto``. Sides run one after the other would each
wait for the other, and the comparison fails naming the side that waited.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
import taichi as ti

import graphlab as gl
from graphlab.child.process import ChildRunError
from graphlab.debug.session import DebugSession

MODULE = """\
import os
import time
from pathlib import Path

import taichi as ti

from graphlab.debug.session import DebugSession

MARKS = Path({marks!r})


def wait_for(name, who):
    deadline = time.monotonic() + 60
    while not (MARKS / name).exists():
        if time.monotonic() > deadline:
            raise RuntimeError(who + " waited a minute for the other side: the sides ran one after the other")
        time.sleep(0.05)


if os.getpid() != {parent}:  # the other process only
    _init, _goto = DebugSession.__init__, DebugSession.goto

    def _late_init(self, *args, **kwargs):
        wait_for("local_goto", "the other side's start")
        _init(self, *args, **kwargs)

    def _marked_goto(self, target):
        (MARKS / "child_goto").touch()
        return _goto(self, target)

    DebugSession.__init__ = _late_init
    DebugSession.goto = _marked_goto


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = 1.0
"""


def test_the_other_side_starts_and_gets_its_command_before_the_local_work(ti_cpu, tmp_path, monkeypatch):
    marks = tmp_path / "marks"
    marks.mkdir()
    source = tmp_path / "overlapping.py"
    source.write_text(MODULE.format(marks=str(marks), parent=os.getpid()))
    spec = importlib.util.spec_from_file_location("overlapping", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "overlapping", module)  # a module file: the other process imports it
    spec.loader.exec_module(module)
    g = gl.Graph("overlapping")
    g.dispatch(module.fill, g.ndarray("x", ti.f32, ndim=1, shape=(8,)))
    dbg = g.debug(x=ti.ndarray(ti.f32, 8))

    local_goto = DebugSession.goto

    def goto_after_the_other_side_got_its_command(self: DebugSession, target: int) -> None:
        (marks / "local_goto").touch()
        module.wait_for("child_goto", "this side's goto")
        local_goto(self, target)

    monkeypatch.setattr(DebugSession, "goto", goto_after_the_other_side_got_its_command)
    try:
        found = dbg.compare("x64", timeout=120)
    except ChildRunError as exc:  # the other side's wait fails inside it and comes back as its error
        pytest.fail(str(exc))
    assert found is None
    assert sorted(p.name for p in marks.iterdir()) == ["child_goto", "local_goto"]
