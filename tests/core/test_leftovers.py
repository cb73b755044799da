"""What a notebook killed with ``kill -9`` leaves behind: its children die with it, its temporaries go on the next run.

- a ``run_child`` child (export, verify) and the other side of ``dbg.compare`` die within seconds of
  their parent's SIGKILL, even in the middle of a command;
- the scratch folder of a killed parent's child (``/tmp/graphlab-child-<host>-<pid>-*``) is deleted
  by the next ``run_child``, and the hidden ``.tmp`` file of a save killed half way by the next save
  into that folder; a live process's temporaries are never touched.

Every parent here is a real Python process, killed with a real SIGKILL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphlab.child.process import run_child
from graphlab.core.fileio import atomic_write_text
from graphlab.core.leftovers import owner_tag, scratch_prefix

TESTS = str(Path(__file__).resolve().parent.parent)
ROOT = str(Path(__file__).resolve().parent.parent.parent)


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie no one reaped counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def children(pid: int) -> list[int]:
    """The process ids whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def compare_child(pid: int) -> int | None:
    """The child of ``pid`` that serves ``dbg.compare`` (others come and go: the access probe)."""
    for child in children(pid):
        try:
            if b"compare_child" in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
        except OSError:
            continue
    return None


def wait_for(test, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if test():
            return True
        time.sleep(0.1)
    return test()


@pytest.fixture
def started() -> Iterator[list[int]]:
    """Process ids a test started; whatever still runs at the end is killed (a failing test leaves none)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)


def start_parent(script: str, started: list[int]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, TESTS, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
    started.append(proc.pid)
    return proc


RUN_CHILD_PARENT = f"""
from graphlab.child.process import run_child
run_child("leftover_helpers:sleep", {{"seconds": 120}}, sys_path=[{TESTS!r}])
"""


def test_a_run_child_child_dies_with_its_killed_parent_and_its_scratch_folder_goes_next_time(started):
    parent = start_parent(RUN_CHILD_PARENT, started)
    assert wait_for(lambda: children(parent.pid), 30), "the parent did not start its child"
    (child,) = children(parent.pid)
    started.append(child)
    scratch = Path(tempfile.gettempdir())
    own = f"graphlab-child-{owner_tag().split('-')[0]}-{parent.pid}-"
    assert wait_for(lambda: any(p.name.startswith(own) for p in scratch.iterdir()), 10)
    time.sleep(1.0)  # the child is in its two minutes of sleep
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert wait_for(lambda: gone(child), 10), "the child outlived its SIGKILLed parent"
    left = [p for p in scratch.iterdir() if p.name.startswith(own)]
    assert left, "a killed parent cannot clean up: its scratch folder is still there"
    run_child("leftover_helpers:sleep", {"seconds": 0}, sys_path=[TESTS])
    assert not any(p.exists() for p in left), "the next run_child deletes a dead process's scratch folder"


COMPARE_PARENT = """
import os, sys, tempfile
from pathlib import Path
folder = Path(tempfile.mkdtemp())
(folder / "hang_kernels.py").write_text('''
import os, time
import taichi as ti
from graphlab.debug.session import DebugSession
if os.getpid() != %d:  # the other side hangs in its first goto, as a long kernel would
    def _goto(self, target):
        time.sleep(3600)
    DebugSession.goto = _goto
@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = 1.0
''' % os.getpid())
sys.path.insert(0, str(folder))
os.environ["PYTHONPATH"] = os.pathsep.join([str(folder), os.environ["PYTHONPATH"]])
import taichi as ti
import graphlab as gl
import hang_kernels
ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
g = gl.Graph("hang")
g.dispatch(hang_kernels.fill, g.ndarray("x", ti.f32, ndim=1, shape=(8,)))
g.debug(x=ti.ndarray(ti.f32, 8)).compare("x64")
"""


def test_a_compare_child_busy_in_a_command_dies_with_its_killed_parent(started):
    parent = start_parent(COMPARE_PARENT, started)
    assert wait_for(lambda: compare_child(parent.pid), 60), "the parent did not start the other side"
    child = compare_child(parent.pid)
    assert child is not None
    started.append(child)
    time.sleep(8.0)  # long enough to start Taichi, compile and enter the hanging goto
    assert not gone(child)
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert wait_for(lambda: gone(child), 10), "the compare child outlived its SIGKILLed parent"


SAVE_PARENT = """
import os, signal, sys
from graphlab.core.fileio import atomic_write_text
os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # die as a kill -9 mid-save would
atomic_write_text(sys.argv[1], "x" * 5_000_000)
"""


def test_a_save_killed_half_way_leaves_a_temporary_the_next_save_deletes(tmp_path, started):
    target = tmp_path / "big.graph.json"
    target.write_text("old")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", SAVE_PARENT, str(target)], env=env, check=False)
    assert proc.returncode == -signal.SIGKILL
    left = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(left) == 1 and left[0].stat().st_size == 5_000_000 and target.read_text() == "old"
    live = tmp_path / f".other.json.{owner_tag()}-0123456789ab.tmp"  # a save of this (live) process
    live.write_text("in progress")
    atomic_write_text(tmp_path / "other.json", "new")
    assert not left[0].exists(), "the next save into the folder deletes the killed save's temporary"
    assert live.exists(), "a live process's temporary is never deleted"
    assert target.read_text() == "old"


BOUNDS_PARENT = """
import numpy as np, taichi as ti, graphlab as gl
from temps_kernels import issue_graph
ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
issue_graph().run(x=np.ones(1 << 20, np.float32), y=np.zeros(1 << 20, np.float32), bounds="check")
"""


def test_a_bounds_check_killed_half_way_leaves_a_scratch_folder_the_next_one_deletes(started):
    """``bounds='check'`` copies every value into its scratch folder; it was named with no owner, so it stayed."""
    parent = start_parent(BOUNDS_PARENT, started)
    scratch = Path(tempfile.gettempdir())
    own = f"graphlab-bounds-{owner_tag().split('-')[0]}-{parent.pid}-"
    assert wait_for(lambda: any(p.name.startswith(own) for p in scratch.iterdir()), 60), "no owned scratch folder"
    assert wait_for(lambda: children(parent.pid), 30), "the parent did not start its checked run"
    started.extend(children(parent.pid))
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    assert all(wait_for(lambda pid=pid: gone(pid), 10) for pid in started[1:]), "the checked run outlived its parent"
    left = [p for p in scratch.iterdir() if p.name.startswith(own)]
    assert left, "a killed parent cannot clean up: its scratch folder is still there"
    scratch_prefix("bounds")  # what the next checked run calls before making its own
    assert not any(p.exists() for p in left), "the next checked run deletes a dead process's scratch folder"
