"""Run values that would crash Taichi or half-write the caller's arrays are refused first.

- an ndarray or texture made before ``ti.reset()``/``ti.init()`` segfaults Taichi (1.7.4): those
  cases run in a child process, so the old crash fails the test instead of killing pytest;
- a read-only numpy array for an arg the graph writes is refused before anything runs;
- copying results back into numpy arrays is all or nothing.

Kernels live here (no ``from __future__ import annotations``: Taichi reads the annotations).
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import taichi as ti

import graphlab as gl

ROOT = Path(gl.__file__).resolve().parents[1]  # the child imports this same graphlab

CHILD_HEAD = """
import sys
import numpy as np
import taichi as ti
import graphlab as gl

@ti.kernel
def ones(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in a:
        a[i] = 1.0

def graph():
    g = gl.Graph("g")
    g.dispatch(ones, g.ndarray("a", ti.f32, ndim=1))
    return g
"""

CHILD_TAIL = """
try:
    {call}
except gl.StaleGraphError as exc:
    print("REFUSED:", exc)
else:
    print("RAN")
    sys.exit(3)
fresh = ti.ndarray(ti.f32, shape=4)
graph().run(a=fresh)
print("FRESH:", fresh.to_numpy().tolist())
"""


def run_child(tmp_path: Path, body: str, call: str) -> subprocess.CompletedProcess[str]:
    """Run the script in a fresh interpreter (a file: Taichi reads kernel source)."""
    script = tmp_path / "child.py"
    script.write_text(CHILD_HEAD + textwrap.dedent(body) + CHILD_TAIL.format(call=call))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT
    )


def assert_refused(proc: subprocess.CompletedProcess[str], what: str) -> None:
    tail = (proc.stdout + proc.stderr)[-2000:]
    assert proc.returncode == 0, f"child exited with {proc.returncode} (a negative code is a signal):\n{tail}"
    assert f"REFUSED: run(): arg 'a' is a {what} made before ti.reset()/ti.init()" in proc.stdout, tail
    assert "Allocate it again after ti.init()" in proc.stdout


NEW_RUNTIME = {
    "init": "ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)",
    "reset_then_init": "ti.reset(); ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)",
}
CALLS = {
    "compiled_run": "g.compile().run(a=old)",
    "graph_run": "g.run(a=old)",
    "debug": "g.debug(a=old).continue_()",
}


@pytest.mark.parametrize("replace", sorted(NEW_RUNTIME))
@pytest.mark.parametrize("entry", sorted(CALLS))
def test_ndarray_from_a_replaced_runtime_is_refused_not_a_segfault(tmp_path, entry, replace):
    body = f"""
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    g = graph()
    g.run(a=ti.ndarray(ti.f32, shape=4))  # compiled and run once in the old runtime
    old = ti.ndarray(ti.f32, shape=4)
    {NEW_RUNTIME[replace]}
    """
    proc = run_child(tmp_path, body, CALLS[entry])
    assert_refused(proc, "ti.ndarray")
    assert "FRESH: [1.0, 1.0, 1.0, 1.0]" in proc.stdout  # a new ndarray still runs in that process


def test_ndarray_made_before_graphlab_was_imported_is_refused_after_a_new_runtime(tmp_path):
    # `old` exists before graphlab (and its bridge) is imported, so it carries no record of its
    # runtime; it counts as current only while the runtime live at that import is
    script = tmp_path / "child.py"
    head = "import taichi as ti\nti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)\n"
    head += "old = ti.ndarray(ti.f32, shape=4)\n"
    body = """
    g = graph()
    g.run(a=old)  # same runtime: fine
    assert old.to_numpy().tolist() == [1.0] * 4
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, log_level=ti.WARN)
    """
    script.write_text(head + CHILD_HEAD + textwrap.dedent(body) + CHILD_TAIL.format(call="g.run(a=old)"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert_refused(proc, "ti.ndarray")


def test_texture_from_a_replaced_runtime_is_refused(tmp_path):
    body = """
    @ti.kernel
    def paint(t: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0)):
        for i, j in ti.ndrange(4, 4):
            t.store(ti.Vector([i, j]), ti.Vector([1.0, 0.0, 0.0, 0.0]))

    ti.init(arch=ti.vulkan, log_level=ti.WARN)
    tg = gl.Graph("tex")
    tg.dispatch(paint, tg.rw_texture("a", 2, ti.Format.r32f))
    tg.run(a=ti.Texture(ti.Format.r32f, (4, 4)))
    old = ti.Texture(ti.Format.r32f, (4, 4))
    ti.init(arch=ti.vulkan, log_level=ti.WARN)
    """
    proc = run_child(tmp_path, body, "tg.compile().run(a=old)")
    assert_refused(proc, "ti.Texture")


# --- numpy values, in this process -------------------------------------------------------------


@ti.kernel
def scale(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        dst[i] = src[i] * 2.0


@ti.kernel
def count(dst: ti.types.ndarray(dtype=ti.f32, ndim=1), hits: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in dst:
        hits[i] = dst[i] + 1.0


def two_outputs() -> gl.Graph:
    """src is only read; dst and then hits are written (hits second, so its copy-back comes last)."""
    g = gl.Graph("two_outputs")
    src = g.ndarray("src", ti.f32, ndim=1, shape="n", role="input")
    dst = g.ndarray("dst", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(scale, src, dst)
    g.dispatch(count, dst, g.ndarray("hits", ti.f32, ndim=1, shape="n", role="output"))
    return g


def read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


READ_ONLY = {
    "setflags": lambda: read_only(np.zeros(8, np.float32)),
    "broadcast_view": lambda: np.broadcast_to(np.float32(0), (8,)),
}
ENTRIES = {
    "graph_run": lambda g, values: g.run(values),
    "compiled_run": lambda g, values: g.compile().run(values),
    "debug": lambda g, values: g.debug(values).continue_(),
}


@pytest.mark.parametrize("entry", sorted(ENTRIES))
@pytest.mark.parametrize("kind", sorted(READ_ONLY))
def test_read_only_array_for_a_written_arg_is_refused_before_running(ti_cpu, kind, entry):
    src = read_only(np.arange(8, dtype=np.float32))  # read-only is fine for an arg only read
    dst = np.full(8, 7.0, np.float32)
    values = {"src": src, "dst": dst, "hits": READ_ONLY[kind]()}
    with pytest.raises(gl.GraphRunError, match="arg 'hits' is a read-only numpy array, but the graph writes") as info:
        ENTRIES[entry](two_outputs(), values)
    assert info.value.arg == "hits"
    assert "Pass a writable copy: np.array(value)" in str(info.value)
    assert dst.tolist() == [7.0] * 8  # nothing ran, nothing was copied back
    values["hits"] = np.zeros(8, np.float32)
    ENTRIES[entry](two_outputs(), values)
    assert dst.tolist() == [2.0 * i for i in range(8)]
    assert values["hits"].tolist() == [2.0 * i + 1 for i in range(8)]


def break_flags(array: np.ndarray) -> None:
    array.setflags(write=False)


def reshape(array: np.ndarray) -> None:
    array.shape = (2, 4)


@pytest.mark.parametrize("change", [break_flags, reshape], ids=["read_only", "reshaped"])
def test_debug_copy_back_is_all_or_nothing(ti_cpu, change):
    dst, hits = np.full(8, 7.0, np.float32), np.full(8, 5.0, np.float32)
    dbg = two_outputs().debug(src=np.arange(8, dtype=np.float32), dst=dst, hits=hits)
    change(hits)  # after the values were checked: the copy back at the end finds it
    with pytest.raises(gl.GraphRunError, match="arg 'hits' .*no numpy array was changed") as info:
        dbg.continue_()
    assert info.value.arg == "hits"
    assert dst.tolist() == [7.0] * 8  # dst's results were fetched but not copied: all or nothing
    assert hits.ravel().tolist() == [5.0] * 8
    hits.shape = (8,)
    hits.setflags(write=True)
    assert dbg.step().reason == "end"  # stopping at the end again copies everything back
    assert dst.tolist() == [2.0 * i for i in range(8)]
    assert hits.tolist() == [2.0 * i + 1 for i in range(8)]


@pytest.mark.parametrize("first", ["graphlab", "taichi"])
def test_ndarray_made_before_graphlab_touched_taichi_in_a_fresh_script(tmp_path, first):
    # the plain script order: imports, ti.init, arrays, ti.init again, and only then a graph
    imports = ["import taichi as ti", "import graphlab as gl"]
    script = tmp_path / "fresh.py"
    script.write_text(
        "\n".join(imports if first == "taichi" else imports[::-1])
        + CHILD_HEAD.split("import graphlab as gl", 1)[1]
        + textwrap.dedent(NEW_RUNTIME["init"] + "\nold = ti.ndarray(ti.f32, shape=4)\n" + NEW_RUNTIME["init"])
        + "\nimport sys\ng = graph()\n"
        + CHILD_TAIL.format(call="g.compile().run(a=old)")
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert_refused(proc, "ti.ndarray")
