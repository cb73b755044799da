"""One replay error: ``except gl.ReplayError`` catches every replay failure graphlab raises.

Both real paths run here: a guarded loop whose replay never clears its flag, and the debugger
rebuilding a past step by replaying dispatches that then fail. Each kernel counts its launches in a
Taichi field, state outside the graph's args that no saved copy puts back, so the replay differs.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.
import ast
import importlib
from pathlib import Path

import numpy as np
import pytest
import taichi as ti

import graphlab as gl
from graphlab.core.errors import GuardedLoopReplayError
from graphlab.debug import DebugOptions, RebuildError

PACKAGE = Path(gl.__file__).parent


@pytest.fixture
def debug_cpu():
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, debug=True, log_level=ti.WARN)


def test_a_guarded_loop_whose_replay_differs_is_caught_as_gl_replay_error(ti_cpu):
    ticks = ti.field(ti.i32, shape=())

    @ti.kernel
    def tick_outside(flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
        ticks[None] += 1
        flag[0] = 0 if ticks[None] == 6 else 1  # clears once, at the 6th launch ever

    g = gl.Graph("outside")
    g.define("tick").dispatch(tick_outside, g.ndarray("flag", ti.i32, ndim=1, shape=(1,)))
    g.loop("tick", while_="flag", max_iter=100, check_every=3, guarded=True, name="solve")
    compiled = g.compile()
    with pytest.raises(gl.ReplayError) as caught:  # what `except gl.ReplayError` catches
        compiled.run(flag=np.ones(1, np.int32))
    assert caught.type is GuardedLoopReplayError
    assert "guarded loop 'solve'" in str(caught.value) and "Drop guarded=True" in str(caught.value)


def _first_runs_only(launches):
    @ti.kernel
    def bump_once(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        launches[None] += 1
        assert launches[None] <= 4, "ran more often than the first run did"
        for i in x:
            x[i] += 1.0

    g = gl.Graph("outside")
    with g.sequence("loop", repeat=4) as s:
        s.dispatch(bump_once, g.ndarray("x", ti.f32, ndim=1))
    return g


def test_the_debugger_going_back_by_a_failing_replay_is_caught_as_gl_replay_error(debug_cpu):
    launches = ti.field(ti.i32, shape=())
    x = ti.ndarray(ti.f32, shape=8)
    dbg = _first_runs_only(launches).debug(x=x, options=DebugOptions(budget_bytes=1))  # no copies: replays
    assert dbg.continue_().index == 4 and launches[None] == 4
    with pytest.raises(gl.ReplayError) as caught:  # what `except gl.ReplayError` catches
        dbg.goto(2)
    assert caught.type is RebuildError
    assert "replaying steps 0..1 to rebuild step 2 failed" in str(caught.value)
    assert "ran more often than the first run did" in str(caught.value)


def test_the_debugger_reading_a_past_value_by_a_failing_replay_is_caught_as_gl_replay_error(debug_cpu):
    launches = ti.field(ti.i32, shape=())
    x = ti.ndarray(ti.f32, shape=8)
    dbg = _first_runs_only(launches).debug(x=x, options=DebugOptions(budget_bytes=1))
    dbg.continue_()
    with pytest.raises(gl.ReplayError) as caught:  # what `except gl.ReplayError` catches
        dbg.inspect("x", at=2)
    assert caught.type is RebuildError
    assert "rebuilding 'x' at step 2 from step 0 on copies failed" in str(caught.value)
    assert np.all(x.to_numpy() == 4.0)  # the live buffer is untouched: the replay ran on copies


def _replay_error_classes() -> list[tuple[str, str]]:
    """(module, class) of every class in graphlab/ whose name says it is a replay error."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.name.endswith("Error") and "Replay" in node.name:
                module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
                found.append((module.removesuffix(".__init__"), node.name))
    return found


def test_every_replay_error_class_is_a_gl_replay_error():
    classes = _replay_error_classes()
    assert ("graphlab.core.errors", "GuardedLoopReplayError") in classes
    outside = [f"{m}.{n}" for m, n in classes if not issubclass(getattr(importlib.import_module(m), n), gl.ReplayError)]
    assert outside == []


def test_the_debugger_has_no_replay_error_of_its_own():
    import graphlab.debug

    assert not hasattr(graphlab.debug, "ReplayError")
    assert issubclass(RebuildError, gl.ReplayError) and issubclass(RebuildError, RuntimeError)
