"""Fast flag reads (graphlab.bridge.device_read) decide exactly as Taichi's accessor does.

On x64 the fast path reads the flag at its host address; on Vulkan there is none (Taichi's accessor
either way). CUDA's driver path is measured by ``bench/control_flow.py`` on a GPU machine.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.
import numpy as np
import pytest
import taichi as ti
from test_compiled import _branch_graph, jacobi_graph

from graphlab.bridge import device_read
from graphlab.bridge.device_read import fast_reads, read_array, read_flag, read_path


@pytest.fixture(params=["cpu", pytest.param("vulkan", marks=pytest.mark.vulkan)])
def arch(request):
    ti.init(arch=getattr(ti, request.param), cpu_max_num_threads=1, log_level=ti.WARN)
    return request.param


def test_read_path_per_arch_and_when_switched_off(arch):
    assert read_path() == ("host-pointer" if arch == "cpu" else "accessor")
    with fast_reads(False):
        assert read_path() == "accessor"
    assert read_path() == ("host-pointer" if arch == "cpu" else "accessor")


@pytest.mark.parametrize(("dtype", "values"), [("i32", [0, 1, -7, 2**31 - 1]), ("u32", [0, 5, 2**32 - 1])])
def test_both_paths_read_what_a_kernel_wrote(arch, dtype, values):
    flag = ti.ndarray(getattr(ti, dtype), shape=(1,))
    for v in values:
        flag.from_numpy(np.array([v], dtype=np.dtype(dtype.replace("i", "int").replace("u", "uint"))))
        with fast_reads(True):
            fast = read_flag(flag)
        with fast_reads(False):
            slow = read_flag(flag)
        assert fast == slow == v


def test_reader_follows_a_new_runtime(arch):
    flag = ti.ndarray(ti.i32, shape=(1,))
    flag.fill(3)
    assert read_flag(flag) == 3
    ti.init(arch=getattr(ti, arch), cpu_max_num_threads=1, log_level=ti.WARN)
    again = ti.ndarray(ti.i32, shape=(1,))
    again.fill(4)
    assert read_flag(again) == 4


def test_read_array_equals_to_numpy(arch):
    a = ti.Vector.ndarray(3, ti.f64, shape=(5, 2))
    a.from_numpy(np.arange(30, dtype=np.float64).reshape(5, 2, 3) - 7.5)
    got = read_array(a)
    assert got.shape == (5, 2, 3) and got.tobytes() == a.to_numpy().tobytes()


def run_jacobi():
    compiled = jacobi_graph().compile()
    u = np.zeros(32, np.float32)
    compiled.run(u=u, f=np.full(32, 0.01, np.float32), tol=1e-4, flag=np.ones(1, np.int32))
    return compiled.last_events, u


def test_jacobi_loop_decides_identically_on_both_paths(arch):
    with fast_reads(True):
        fast_events, fast_u = run_jacobi()
    with fast_reads(False):
        slow_events, slow_u = run_jacobi()
    assert fast_events == slow_events and fast_events[0].value > 100
    assert fast_u.tobytes() == slow_u.tobytes()


@pytest.mark.parametrize(("x", "branch"), [([4.0, 8.0], "then"), ([1.0, 2.0], "else")])
def test_conditional_decides_identically_on_both_paths(arch, x, branch):
    results = []
    for fast in (True, False):
        compiled = _branch_graph().compile()
        values = np.array(x, np.float32)
        with fast_reads(fast):
            compiled.run(x=values, flag=np.zeros(1, np.int32), limit=5.0)
        results.append((compiled.last_events, values.tolist()))
    assert results[0] == results[1] and results[0][0][0].value == branch


def test_cuda_without_its_driver_package_falls_back_and_says_why(monkeypatch, arch):
    """``cuda-bindings`` is an optional extra: without it (or without a context) the accessor is used."""
    monkeypatch.setattr(device_read, "_CUDA_FAILED", [])
    monkeypatch.setattr(device_read, "_CUDA", [None])
    monkeypatch.setattr(device_read, "_arch", lambda: "cuda")
    assert read_path() == "accessor"
    assert device_read.cuda_unavailable() is not None


def test_an_ndarray_of_a_replaced_runtime_is_not_deleted_by_the_new_one(arch):
    """Taichi's ScalarNdarray.__del__ asks the live program to delete the ndarray; graphlab skips that
    for one made in an earlier runtime (its memory went with that program)."""
    old = ti.ndarray(ti.f32, shape=4)
    ti.init(arch=getattr(ti, arch), log_level=ti.WARN)
    live = ti.ndarray(ti.f32, shape=4)
    deleted = []
    runtime = ti.lang.impl.get_runtime()
    program = runtime.prog

    class Recording:
        def __getattr__(self, name):
            return getattr(program, name)

        def delete_ndarray(self, arr):
            deleted.append(arr)
            program.delete_ndarray(arr)

    runtime.prog = Recording()
    try:
        old.__del__()
        assert deleted == [], "the new program was asked to delete an ndarray of the old one"
        live.__del__()
        assert len(deleted) == 1  # its own ndarrays are still deleted by it
    finally:
        runtime.prog = program
