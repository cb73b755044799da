"""The other arch's process outlives one ``dbg.compare``: ``prepare_compare`` starts it early, later
comparisons reuse it, and it is closed with the session, or killed when its comparison failed."""

from __future__ import annotations

import gc
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import taichi as ti
from compare_kernels import late_graph, planted_graph

import graphlab as gl
from graphlab.child.process import ChildRunError
from graphlab.debug.compare import compare_runs
from graphlab.debug.compare_children import ChildPool
from graphlab.debug.session import DebugSession
from graphlab.debug.session_errors import DebugError

N = 4096


def planted_values() -> dict[str, ti.Ndarray]:
    values = {name: ti.ndarray(ti.f32, N) for name in "xyzw"}
    values["x"].from_numpy(np.linspace(-20, 3e4, N).astype(np.float32))
    return values


def running(pid: int | None) -> bool:
    """Whether process ``pid`` exists (a stopped child of ours is waited for, so its pid is gone)."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_prepare_starts_the_process_and_compare_uses_it_then_reuses_it(ti_cpu):
    dbg = planted_graph().debug(planted_values())
    assert dbg.compare_pid("vulkan") is None
    dbg.prepare_compare("vulkan")
    pid = dbg.compare_pid("vulkan")
    assert running(pid), "prepare_compare starts the process at once"
    first = dbg.compare("vulkan")
    assert dbg.compare_pid("vulkan") == pid, "the prepared process ran the other side"
    second = dbg.compare("vulkan")
    assert dbg.compare_pid("vulkan") == pid, "the second comparison reused it"
    assert first is not None and first == second
    assert (first.index, first.step_id, first.buffer) == (1, "rounds[0]/wobble", "w")
    # new start values (the session moved, the buffers changed) reach the warm process too
    dbg.buffers["x"].from_numpy(np.full(N, 0.25, np.float32))
    dbg.step()
    assert dbg.compare("vulkan", atol=1.0) is None
    assert dbg.compare_pid("vulkan") == pid
    dbg.close()
    assert dbg.compare_pid("vulkan") is None and not running(pid)


def test_keep_false_closes_the_process_after_the_answer(ti_cpu):
    dbg = planted_graph(1).debug(planted_values())
    dbg.prepare_compare("x64", wait=True)
    pid = dbg.compare_pid("x64")
    assert running(pid)
    assert dbg.compare("x64", keep=False) is None
    assert dbg.compare_pid("x64") is None and not running(pid)
    assert dbg.compare("x64") is None  # a fresh one starts
    fresh = dbg.compare_pid("x64")
    assert running(fresh) and fresh != pid
    dbg.close()


def test_the_process_stops_when_the_session_goes_away(ti_cpu):
    dbg = planted_graph(1).debug(planted_values())
    dbg.prepare_compare("x64", wait=True)
    pid = dbg.compare_pid("x64")
    assert running(pid)
    del dbg
    gc.collect()
    assert not running(pid)


def test_the_process_stops_at_interpreter_exit(tmp_path):
    """A script that leaves its session open: nothing of the warm process survives it."""
    script = tmp_path / "leave_open.py"
    script.write_text(
        "import sys\nimport taichi as ti\nimport graphlab as gl\n"
        f"sys.path.insert(0, {str(Path(__file__).parent.parent)!r})\n"
        "from compare_kernels import planted_graph\n"
        "ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)\n"
        "dbg = planted_graph(1).debug({n: ti.ndarray(ti.f32, 8) for n in 'xyzw'})\n"
        "assert dbg.compare('x64') is None\n"
        "print('PID', dbg.compare_pid('x64'), flush=True)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split("PID")[-1].split()[0])
    deadline = time.monotonic() + 30
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not running(pid)


def test_a_fallback_found_at_the_start_surfaces_at_the_compare_with_the_usual_message(ti_cpu):
    dbg = planted_graph(1).debug(planted_values())
    dbg.prepare_compare("cuda")  # returns at once: the error waits for the comparison
    message = r"compare\(against='cuda'\): Taichi cannot start cuda on this machine"
    with pytest.raises(DebugError, match=message):
        dbg.compare("cuda")
    assert dbg.compare_pid("cuda") is None  # not kept
    with pytest.raises(DebugError, match=message):
        dbg.prepare_compare("cuda", wait=True)
    assert dbg.compare_pid("cuda") is None


def test_prepare_refuses_a_bad_arch_before_anything_starts(ti_cpu):
    dbg = planted_graph(1).debug(planted_values())
    with pytest.raises(DebugError, match=r"compare\(against='vulkan2'\): give an arch name"):
        dbg.prepare_compare("vulkan2")
    assert dbg.compare_pid("vulkan2") is None


ONCE = """\
import os
import sys
import time
from pathlib import Path

import taichi as ti

from graphlab.debug.session import DebugSession

MARK = Path({mark!r})

if os.getpid() != {parent}:  # the other process only, and only while the mark is there
    _goto = DebugSession.goto

    def _once(self, target):
        if MARK.exists():
            MARK.unlink()
            {misbehave}
        return _goto(self, target)

    DebugSession.goto = _once


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = 1.0
"""


@pytest.mark.parametrize(
    ("misbehave", "message"),
    [
        ("os._exit(3)", r"the x64 process ended \(status 3\) during 'goto'"),
        ("time.sleep(3600)", r"the x64 process did not answer 'goto' within 5 s"),
    ],
)
def test_a_process_that_crashed_or_hung_is_not_reused(ti_cpu, tmp_path, monkeypatch, misbehave, message):
    mark = tmp_path / "misbehave"
    name = f"once_{len(misbehave)}"
    source = tmp_path / f"{name}.py"
    source.write_text(ONCE.format(mark=str(mark), parent=os.getpid(), misbehave=misbehave))
    spec = importlib.util.spec_from_file_location(name, source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # a module file: the other process imports it
    spec.loader.exec_module(module)
    g = gl.Graph("once")
    g.dispatch(module.fill, g.ndarray("x", ti.f32, ndim=1, shape=(8,)))
    dbg = g.debug(x=ti.ndarray(ti.f32, 8))
    dbg.prepare_compare("x64", timeout=5, wait=True)
    pid = dbg.compare_pid("x64")
    mark.touch()
    with pytest.raises(ChildRunError, match=message):
        dbg.compare("x64", timeout=5)
    assert dbg.compare_pid("x64") is None and not running(pid)
    assert dbg.compare("x64", timeout=60) is None  # a fresh process, which behaves
    assert dbg.compare_pid("x64") not in (None, pid)
    dbg.close()


def test_a_failed_rehearsal_leaves_the_prepared_process_usable(ti_cpu, tmp_path, monkeypatch):
    """prepare_compare runs the graph once there; if that fails, the comparison meets it in its own words."""
    mark = tmp_path / "misbehave"
    source = tmp_path / "rehearsal_trips.py"
    source.write_text(ONCE.format(mark=str(mark), parent=os.getpid(), misbehave="raise RuntimeError('trips')"))
    spec = importlib.util.spec_from_file_location("rehearsal_trips", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "rehearsal_trips", module)  # a module file: the other process imports it
    spec.loader.exec_module(module)
    g = gl.Graph("trips")
    g.dispatch(module.fill, g.ndarray("x", ti.f32, ndim=1, shape=(8,)))
    dbg = g.debug(x=ti.ndarray(ti.f32, 8))
    mark.touch()
    dbg.prepare_compare("x64", wait=True)  # the rehearsal's goto trips (once) and is not raised here
    assert not mark.exists(), "the rehearsal ran in the other process"
    pid = dbg.compare_pid("x64")
    assert running(pid)
    assert dbg.compare("x64") is None and dbg.compare_pid("x64") == pid
    dbg.close()


def test_a_warm_process_given_another_graph_rebuilds_it_in_place(ti_cpu):
    """The pool keeps one process per arch; a changed graph is compiled again there, not restarted."""
    x = ti.ndarray(ti.f32, N)
    x.from_numpy(np.linspace(100, 3e4, N).astype(np.float32))
    pool = ChildPool()
    try:
        found = []
        for reps in (5, 9):
            mine = DebugSession(late_graph(reps), {"x": x, "y": ti.ndarray(ti.f32, N), "w": ti.ndarray(ti.f32, N)})
            divergence = compare_runs(mine, mine._steps_view(), dict(mine.buffers), "vulkan", children=pool)
            assert divergence is not None
            found.append((divergence.index, divergence.step_id, pool.pid("vulkan")))
        (first, step_a, pid_a), (second, step_b, pid_b) = found
        assert (first, step_a) == (10, "wobble") and (second, step_b) == (18, "wobble")
        assert pid_a == pid_b is not None
    finally:
        pool.close()
    assert pool.pid("vulkan") is None and not running(pid_a)
