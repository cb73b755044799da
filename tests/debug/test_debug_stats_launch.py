"""The one-pass statistics launch (graphlab.debug.stats_launch): compiled once, reused, never across runtimes."""

import gc
import os
import subprocess
import sys
import textwrap
import weakref

import numpy as np
import pytest
import taichi as ti
from test_debug_stats import NP, make, planted

from graphlab.debug import stats_kernels, stats_launch
from graphlab.debug.stats import buffer_stats


@pytest.fixture(
    scope="module",
    params=[pytest.param("cpu", id="x64"), pytest.param("vulkan", id="vulkan-onepass", marks=pytest.mark.vulkan)],
)
def arch(request):
    """x64 takes the one-pass path as it is; Vulkan only where told to (it may lack f64 atomics)."""
    ti.init(arch=getattr(ti, request.param), log_level=ti.ERROR)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stats_kernels, "_ONEPASS_ARCHS", (stats_kernels.current_arch(),))
        yield request.param


def launch_of(arr, **kwargs):
    s = stats_kernels.spec(
        arr, per_component=kwargs.get("per_component", False), with_abs=kwargs.get("with_abs", False)
    )
    o = stats_kernels.onepass(s)
    assert o is not None
    return s, o, stats_launch.LAUNCHES.get(s, o, tuple(arr.element_shape))


def test_second_call_compiles_nothing(arch):
    rng = np.random.default_rng(3)
    arrays = [make(rng.standard_normal(n), "f32") for n in (10, 5000, 70001)]
    buffer_stats(arrays[0])
    s, o, launch = launch_of(arrays[0])
    assert launch.graph is not None  # the one-pass kernel goes through a compiled ti.graph
    builds = stats_launch.LAUNCHES.builds
    compiled = len(stats_kernels.onepass_kernel(s, o)._primal.compiled_kernels)
    for arr in arrays * 2:
        buffer_stats(arr)
    assert stats_launch.LAUNCHES.builds == builds
    assert len(stats_kernels.onepass_kernel(s, o)._primal.compiled_kernels) == compiled
    assert launch_of(arrays[2])[2] is launch


def test_cache_keeps_the_least_recently_used_specs(arch, monkeypatch):
    monkeypatch.setattr(stats_launch.LAUNCHES, "size", 2)
    arrays = [make(np.arange(7.0), dtype) for dtype in ("f32", "f64", "i32")]
    for arr in arrays:
        buffer_stats(arr)
    assert len(stats_launch.LAUNCHES) == 2
    builds = stats_launch.LAUNCHES.builds
    buffer_stats(arrays[2])
    assert stats_launch.LAUNCHES.builds == builds  # kept
    s = buffer_stats(arrays[0])  # its ndarray keeps the launch it was prepared with
    assert stats_launch.LAUNCHES.builds == builds and (s.min, s.max, s.sum) == (0.0, 6.0, 21.0)
    s = buffer_stats(make(np.arange(8.0), "f32"))  # dropped from the cache: compiled again, and right
    assert stats_launch.LAUNCHES.builds == builds + 1 and (s.min, s.max, s.sum) == (0.0, 7.0, 28.0)


@pytest.mark.parametrize(
    ("dtype", "shape", "element_shape"),
    [
        ("f32", (200,), ()),
        ("f16", (7, 9), ()),
        ("u8", (150,), ()),
        ("f64", (40, 3), (3,)),
        ("i32", (5, 6, 2, 2), (2, 2)),
    ],
)
def test_graph_and_direct_launch_give_the_same_statistics(arch, dtype, shape, element_shape, monkeypatch):
    """Fewer elements than rows: each row gets one thread's partials, so the sums are exact to the bit."""
    x = planted(shape, dtype, np.random.default_rng(len(shape) * 100 + len(dtype))).astype(NP[dtype])
    arr = make(x, dtype, element_shape)
    via_graph = buffer_stats(arr, per_component=True, with_abs=True)
    assert launch_of(arr, per_component=True, with_abs=True)[2].graph is not None
    monkeypatch.setattr(stats_launch.LAUNCHES, "use_graphs", False)
    direct = buffer_stats(arr, per_component=True, with_abs=True)
    assert repr((via_graph, via_graph.components, via_graph.magnitude)) == repr(
        (direct, direct.components, direct.magnitude)
    )
    flat = x.reshape(-1).astype(np.float64)
    finite = flat[np.isfinite(flat)]
    assert (via_graph.count, via_graph.nan, via_graph.inf) == (flat.size, np.isnan(flat).sum(), np.isinf(flat).sum())
    assert via_graph.sum == pytest.approx(finite.sum(), rel=1e-12)


def test_one_component_vectors_go_through_the_graph_too(arch):
    """Taichi's graph Arg gives a 1-vector the element type of a scalar; the kernel still reads it right."""
    x = np.linspace(-2.0, 3.0, 50).reshape(50, 1)
    x[20, 0] = np.nan
    arr = make(x, "f32", (1,))
    s = buffer_stats(arr)
    assert launch_of(arr)[2].graph is not None
    assert (s.min, s.max, s.nan, s.first_nonfinite) == (-2.0, 3.0, 1, (20, 0))
    finite = x[np.isfinite(x)].astype(np.float32).astype(np.float64)
    assert s.mean == pytest.approx(finite.mean(), rel=1e-12)


def test_the_launch_cache_keeps_no_buffer_alive(arch):
    arr = make(np.arange(300.0), "f32")
    buffer_stats(arr)
    alive = weakref.ref(arr)
    del arr
    gc.collect()
    assert alive() is None


_ACROSS_INIT = """
import numpy as np
import taichi as ti

import graphlab  # noqa: F401
from graphlab.debug import stats_kernels, stats_launch
from graphlab.debug.stats import buffer_stats


def run():
    ti.init(arch=ti.{arch}, log_level=ti.ERROR)
    stats_kernels._ONEPASS_ARCHS = (stats_kernels.current_arch(),)
    arr = ti.ndarray(ti.f32, shape=300)
    arr.from_numpy(np.arange(300, dtype=np.float32))
    s = buffer_stats(arr)
    assert (s.min, s.max, s.sum, s.count) == (0.0, 299.0, 44850.0, 300), s
    return stats_launch.LAUNCHES.builds


before = run()
after = run()  # a graph of the replaced runtime would crash here, or be counted as reused
assert after == before + 1 and len(stats_launch.LAUNCHES) == 1, (before, after, len(stats_launch.LAUNCHES))
print("compiled again after ti.init")
"""


@pytest.mark.parametrize("target", ["cpu", pytest.param("vulkan", marks=pytest.mark.vulkan)])
def test_launch_cache_is_emptied_across_ti_init(target):
    """In a child process: running a graph of a replaced runtime segfaults Taichi 1.7.4."""
    script = textwrap.dedent(_ACROSS_INIT).format(arch=target)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "compiled again after ti.init" in done.stdout


def test_fold_of_rows_without_finite_values_gives_zero_sums():
    """A slot whose rows saw no finite value: zero mean and M2, min/max left at zero (the caller says None)."""
    p = np.zeros((1, stats_kernels.PACKED, 4))
    p[0, 3] = [1.0, 0.0, 2.0, 0.0]  # three NaN
    p[0, 9], p[0, 10], p[0, 11], p[0, 12] = 5.0, 7.0, 9.0, 9.0  # first bad index, min, -max, min |x|
    cnt, val, acc = stats_kernels.fold_onepass(p, ti.f32)
    assert cnt.tolist() == [[0, 0, 0, 3, 0, 5]]
    assert val.tolist() == [[0.0, 0.0]] and not np.isnan(acc).any() and acc[0, :6].tolist() == [0.0] * 6


def test_prepared_facts_are_kept_on_the_ndarray_and_follow_the_settings(arch, monkeypatch):
    arr = make(np.arange(100.0), "f32")
    prepared = stats_launch.prepare(arr, per_component=False, with_abs=False)
    assert prepared.launch is not None
    assert stats_launch.prepare(arr, per_component=False, with_abs=False) is prepared
    assert stats_launch.prepare(arr, per_component=False, with_abs=True) is not prepared
    monkeypatch.setattr(stats_kernels, "_ONEPASS_ARCHS", ())  # as on a device without f64 atomics
    assert stats_launch.prepare(arr, per_component=False, with_abs=False).launch is None
    s = buffer_stats(arr)
    assert (s.min, s.max, s.sum) == (0.0, 99.0, 4950.0)


_STALE_BUFFER = """
import numpy as np
import taichi as ti

from graphlab.debug.stats import StatsError, buffer_stats

ti.init(arch=ti.cpu, log_level=ti.ERROR)
old = ti.ndarray(ti.f32, shape=300)
old.from_numpy(np.arange(300, dtype=np.float32))
buffer_stats(old)  # prepared and kept on the ndarray: its graph belongs to this runtime
ti.init(arch=ti.cpu, log_level=ti.ERROR)
try:
    buffer_stats(old)
except StatsError as exc:
    print("refused:", exc)
"""


def test_statistics_of_a_buffer_from_a_replaced_runtime_are_refused():
    """In a child process: on the old code the kept graph of the old runtime crashed Taichi."""
    done = subprocess.run(
        [sys.executable, "-c", _STALE_BUFFER], capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "refused: buffer_stats(arr): this ndarray was made in a Taichi runtime that ti.init()/ti.reset() " \
        "replaced" in done.stdout  # fmt: skip
