"""Order of accesses inside a kernel: a buffer written before it is read is not read uninitialised."""

import numpy as np
import pytest
import taichi as ti

import graphlab as gl
from graphlab.kernelfacts.access import AccessFlag, FirstAccess, kernel_access, kernels_access

pytestmark = pytest.mark.usefixtures("ti_cpu")

f32_1d = ti.types.ndarray(dtype=ti.f32, ndim=1)
i32_1d = ti.types.ndarray(dtype=ti.i32, ndim=1)
f32_2d = ti.types.ndarray(dtype=ti.f32, ndim=2)
WRITE, MAY, READ = FirstAccess.WRITE, FirstAccess.MAY_READ, FirstAccess.READ


# ---------------------------------------------------------------- kernels: each shape the analysis knows
@ti.kernel
def fill_then_use(x: f32_1d, tmp: f32_1d, y: f32_1d):
    for i in x:
        tmp[i] = x[i] * 2.0
        y[i] = tmp[i] + 1.0


@ti.kernel
def clear_then_bin(x: f32_1d, hist: i32_1d):
    for I in ti.grouped(hist):
        hist[I] = 0
    for i in x:
        hist[int(x[i])] += 1


@ti.kernel
def clear_by_range_then_add(x: f32_1d, acc: f32_1d):
    for i in range(acc.shape[0]):
        acc[i] = 0.0
    for i in x:
        acc[i % 2] += x[i]


@ti.kernel
def clear_2d_then_add(x: f32_1d, grid: ti.types.ndarray(dtype=ti.f32, ndim=2)):
    for i, j in grid:
        grid[i, j] = 0.0
    for i in x:
        grid[i, 0] += x[i]


@ti.kernel
def both_branches_write(a: f32_1d, c: ti.i32):
    for i in a:
        if c > 0:
            a[i] = 0.0
        else:
            a[i] = 1.0
        a[i] += 1.0


@ti.kernel
def accumulate(a: f32_1d, x: f32_1d):
    for i in x:
        a[i] += x[i]


@ti.kernel
def atomic_accumulate(a: f32_1d, x: f32_1d):
    for i in x:
        ti.atomic_add(a[i], x[i])


@ti.kernel
def load_then_store(a: f32_1d):
    for i in a:
        v = a[i]
        a[i] = v * 2.0


@ti.kernel
def write_if_then_add(a: f32_1d, c: ti.i32):
    for i in a:
        if c > 0:
            a[i] = 0.0
        a[i] += 1.0


@ti.kernel
def write_then_read_neighbour(a: f32_1d):
    for i in a:
        a[i] = 0.0
        a[i] += a[i - 1]


@ti.kernel
def index_reassigned(a: f32_1d):
    for i in a:
        j = i
        a[j] = 0.0
        j = j + 1
        a[i] += a[j]


@ti.kernel
def clear_skips_one(a: f32_1d, x: f32_1d):
    for i in a:
        if i == 0:
            continue
        a[i] = 0.0
    for i in x:
        a[i] += x[i]


@ti.kernel
def clear_not_top_level(a: f32_1d, x: f32_1d):
    for i in x:
        for j in a:
            a[j] = 0.0
        a[i] += 1.0


@ti.kernel
def read_if_then_write(a: f32_1d, out: f32_1d, c: ti.i32):
    for i in a:
        if c > 0:
            out[i] = a[i]
        a[i] = 3.0


@ti.kernel
def break_before_read(a: f32_1d, c: ti.i32):
    for i in a:
        for k in range(2):
            if c > k:
                break
            a[i] += 1.0


@ti.func
def zero_all(arr: ti.template()):
    for i in range(4):
        arr[i] = 0.0


@ti.kernel
def clear_through_a_func(a: f32_1d):
    zero_all(a)
    a[0] += 1.0


@ti.kernel
def force_then_step(f: f32_1d, v: f32_1d, n: ti.i32):
    for i in range(n):
        f[i] = -v[i]
    for k in range(n):  # the same indices, under another name
        v[k] += f[k]


@ti.kernel
def force_then_step_more(f: f32_1d, v: f32_1d, n: ti.i32):
    for i in range(n):
        f[i] = -v[i]
    for i in range(n + 1):  # one index more than was stored
        v[i] += f[i]


@ti.kernel
def bound_changes_between(f: f32_1d, v: f32_1d, n: ti.i32):
    m = n
    for i in range(m):
        f[i] = -v[i]
    m = m + 1
    for i in range(m):
        v[i] += f[i]


@ti.kernel
def range_from_a_buffer(f: f32_1d, v: f32_1d, n: i32_1d):
    for i in range(n[0]):
        f[i] = -v[i]
    n[0] += 1  # the second loop visits one index more
    for i in range(n[0]):
        v[i] += f[i]


@ti.kernel
def clear_over_mass_then_scatter(x: f32_1d, mass: f32_2d, vel: f32_2d):
    for i, j in mass:  # stores every vel[i, j] too, if vel has mass's shape
        mass[i, j] = 0.0
        vel[i, j] = 0.0
    for p in x:
        mass[int(x[p]), 0] += 1.0
        vel[int(x[p]), 0] += x[p]


@ti.kernel
def combine(mass: f32_2d, vel: f32_2d, out: f32_2d):
    for i, j in out:
        out[i, j] = mass[i, j] + vel[i, j]


ORDER = [
    (fill_then_use, "tmp", WRITE),
    (clear_then_bin, "hist", WRITE),
    (clear_by_range_then_add, "acc", WRITE),
    (clear_2d_then_add, "grid", WRITE),
    (both_branches_write, "a", WRITE),
    (accumulate, "a", READ),
    (atomic_accumulate, "a", READ),
    (load_then_store, "a", READ),
    (fill_then_use, "x", READ),  # only read: the first access is a read
    (fill_then_use, "y", WRITE),  # never read
    (write_if_then_add, "a", MAY),  # the write may be skipped
    (write_then_read_neighbour, "a", MAY),  # a[i - 1]: another iteration's element
    (index_reassigned, "a", MAY),  # a[j] after j changed: another element
    (clear_skips_one, "a", MAY),  # `continue` skips a[0]
    (clear_not_top_level, "a", MAY),  # an inner loop runs per outer iteration, in parallel
    (read_if_then_write, "a", MAY),  # the read runs only when c > 0
    (break_before_read, "a", MAY),  # `break` may skip the read
    (clear_through_a_func, "a", MAY),  # what the func writes is not followed
    (force_then_step, "f", WRITE),  # a later top-level loop over the same range reads what the first stored
    (force_then_step_more, "f", MAY),
    (bound_changes_between, "f", MAY),
    (range_from_a_buffer, "f", MAY),
    (clear_over_mass_then_scatter, "mass", WRITE),
    (clear_over_mass_then_scatter, "vel", MAY),  # write-first only if the graph gives it mass's shape
]


@pytest.mark.parametrize(("kernel", "param", "expected"), ORDER, ids=[f"{k.__name__}-{p}" for k, p, _ in ORDER])
def test_source_reading_tells_write_first_from_read_first(kernel, param, expected):
    report = kernel_access(kernel, source="ast")
    assert report.first_access(param) is expected
    assert report.may_read_first(param) is (expected is not WRITE)


def test_a_loop_over_another_buffer_proves_write_first_only_for_equal_shapes():
    report = kernel_access(clear_over_mass_then_scatter, source="ast")
    assert report.shaped_like == {"vel": frozenset({"mass"})}

    def graph(vel_shape):
        g = gl.Graph("p2g")
        x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
        mass = g.ndarray("mass", ti.f32, ndim=2, shape=("G", "G"), role="temp")
        vel = g.ndarray("vel", ti.f32, ndim=2, shape=vel_shape, role="temp")
        out = g.ndarray("out", ti.f32, ndim=2, shape=("G", "G"), role="output")
        g.dispatch(clear_over_mass_then_scatter, x, mass, vel, name="p2g")
        g.dispatch(combine, mass, vel, out)
        return g

    same = graph(("G", "G"))
    assert [d.code for d in same.validate(access="ast") if d.code != "GL029"] == []  # GL029: an info
    result = np.full((3, 3), 7.0, np.float32)
    same.compile().run(x=np.array([0, 2, 2], np.float32), out=result)
    expected = np.zeros((3, 3), np.float32)
    expected[:, 0] = [1.0, 0.0, 2.0 + 4.0]  # mass + vel per cell, from cleared grids
    np.testing.assert_array_equal(result, expected)
    for other in (None, ("G", "H")):  # any shape, or one that may differ: not proven
        [diag] = diagnostics(graph(other), "GL009")
        assert (diag.severity, diag.node, diag.arg) == ("warning", "p2g", "vel")


def test_vulkan_flags_take_the_order_from_the_source(tmp_path, monkeypatch):
    """Vulkan's arr_access has no order: where it reports read and write, the source code decides."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    kernels = sorted({k for k, _, _ in ORDER}, key=lambda k: k.__name__)
    vulkan = kernels_access(kernels, source="vulkan")
    source = kernels_access(kernels, source="ast")
    for ref, report in vulkan.items():
        assert report.source == "vulkan"
        for param, flags in report.items():
            if flags == AccessFlag.READ_WRITE:
                assert report.first_access(param) is source[ref].first_access(param), (ref, param)
            elif flags & AccessFlag.READ:
                assert report.first_access(param) is READ
            else:  # Taichi dropped a read it could forward from the kernel's own store
                assert report.first_access(param) is WRITE
    assert vulkan[next(r for r in vulkan if r.endswith(":clear_then_bin"))]["hist"] == AccessFlag.READ_WRITE
    assert vulkan[next(r for r in vulkan if r.endswith(":clear_then_bin"))].first_access("hist") is WRITE


# ---------------------------------------------------------------- graphs: GL009 / GL010 follow the order
@ti.kernel
def normalise(hist: i32_1d, out: f32_1d, total: ti.f32):
    for i in hist:
        out[i] = hist[i] / total


@ti.kernel
def write_ones(a: f32_1d):
    for i in a:
        a[i] = 1.0


def diagnostics(g, code):
    return [d for d in g.validate(access="ast") if d.code == code]


def test_a_scratch_buffer_filled_then_used_runs():
    g = gl.Graph("scratch")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    tmp = g.ndarray("tmp", ti.f32, ndim=1, shape="n", role="temp")
    y = g.ndarray("y", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(fill_then_use, x, tmp, y)
    assert [d.code for d in g.validate(access="ast")] == []
    out = np.zeros(4, np.float32)
    g.compile().run(x=np.arange(4, dtype=np.float32), y=out)
    np.testing.assert_array_equal(out, [1.0, 3.0, 5.0, 7.0])


def test_an_accumulator_cleared_then_added_to_runs():
    g = gl.Graph("histogram")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    hist = g.ndarray("hist", ti.i32, ndim=1, shape=4, role="temp")
    out = g.ndarray("out", ti.f32, ndim=1, shape=4, role="output")
    g.dispatch(clear_then_bin, x, hist)
    g.dispatch(normalise, hist, out, g.scalar("total", ti.f32))
    assert [d.code for d in g.validate(access="ast") if d.code != "GL029"] == []  # GL029: hist[bin] is an info
    result = np.zeros(4, np.float32)
    g.compile().run(x=np.array([0, 1, 1, 3, 3, 3], np.float32), out=result, total=6.0)
    np.testing.assert_allclose(result, [1 / 6, 2 / 6, 0.0, 3 / 6])


def test_an_unproven_order_is_a_may_warning_and_does_not_block():
    g = gl.Graph("maybe")
    a = g.ndarray("a", ti.f32, ndim=1, shape=4, role="temp")
    node = g.dispatch(write_if_then_add, a, g.scalar("c", ti.i32))
    g.dispatch(load_then_store, a)
    [diag] = diagnostics(g, "GL009")
    assert (diag.severity, diag.node, diag.arg) == ("warning", node, "a")
    assert "may be read" in diag.message and "could not prove" in diag.message
    assert "ti.grouped" in diag.hint
    g.compile().run(c=1)  # a warning: the graph still compiles and runs


def test_a_certain_read_first_stays_an_error():
    g = gl.Graph("rmw")
    a = g.ndarray("a", ti.f32, ndim=1, shape=4, role="temp")
    node = g.dispatch(accumulate, a, g.ndarray("x", ti.f32, ndim=1, shape=4, role="input"))
    g.dispatch(load_then_store, a)
    [diag] = diagnostics(g, "GL009")
    assert (diag.severity, diag.node, diag.arg) == ("error", node, "a")
    assert "may" not in diag.message
    with pytest.raises(gl.GraphError, match="GL009"):
        g.compile()


def test_dead_write_follows_the_order():
    # the kernel reads its own scratch write: that write is used
    g = gl.Graph("own")
    x = g.ndarray("x", ti.f32, ndim=1, role="input")
    g.dispatch(fill_then_use, x, g.ndarray("tmp", ti.f32, ndim=1, role="temp"), g.ndarray("y", ti.f32, ndim=1))
    assert diagnostics(g, "GL010") == []
    # a write that the next kernel overwrites before reading is dead, and the next kernel reads nothing stale
    g2 = gl.Graph("overwritten")
    x = g2.ndarray("x", ti.f32, ndim=1, role="input")
    tmp = g2.ndarray("tmp", ti.f32, ndim=1, role="temp")
    first = g2.dispatch(write_ones, tmp, name="prefill")
    g2.dispatch(fill_then_use, x, tmp, g2.ndarray("y", ti.f32, ndim=1))
    assert {(d.node, d.arg) for d in diagnostics(g2, "GL010")} == {(first, "tmp")}
    assert all(d.arg != "tmp" for d in diagnostics(g2, "GL009"))


@ti.kernel
def sum_then_shift(t: f32_1d, total: ti.types.ndarray(dtype=ti.f32, ndim=0), x: f32_1d):
    for i in t:
        total[None] += t[i]
    for i in x:
        x[i] = x[i] + total[None]


@ti.kernel
def sum_and_shift_in_one_loop(t: f32_1d, total: ti.types.ndarray(dtype=ti.f32, ndim=0), x: f32_1d):
    for i in t:
        total[None] += t[i]
        x[i] = total[None]


@ti.kernel
def clear_total(total: ti.types.ndarray(dtype=ti.f32, ndim=0)):
    total[None] = 0.0


@pytest.mark.parametrize("access", ["ast", "auto"])
def test_an_accumulator_summed_then_read_in_a_later_loop_is_no_dead_write(access):
    """``total[None] += ...`` then a later top-level loop reading it: GL010 said the sum was never read."""

    def gl010(kernel):
        g = gl.Graph("acc")
        t, total = g.ndarray("t", ti.f32, ndim=1, role="input"), g.ndarray("total", ti.f32, ndim=0, role="temp")
        g.dispatch(clear_total, total)
        node = g.dispatch(kernel, t, total, g.ndarray("x", ti.f32, ndim=1))
        return node, [(d.node, d.arg) for d in g.validate(access=access) if d.code == "GL010"]

    assert gl010(sum_then_shift)[1] == []
    node, found = gl010(sum_and_shift_in_one_loop)  # read in the same parallel loop: not proven, still said
    assert found == [(node, "total")]
