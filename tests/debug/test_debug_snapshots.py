"""Device-side snapshots for stepping back (graphlab.debug.snapshots)."""

import numpy as np
import pytest
import taichi as ti

from graphlab.debug.snapshots import SnapshotError, SnapshotMissingError, SnapshotStore, default_budget, nbytes


@pytest.fixture(
    scope="module",
    params=[pytest.param("cpu", id="x64"), pytest.param("vulkan", id="vulkan", marks=pytest.mark.vulkan)],
)
def arch(request):
    ti.init(arch=getattr(ti, request.param), log_level=ti.ERROR)
    return request.param


def f32(n: int, value: float = 0.0):
    arr = ti.ndarray(ti.f32, shape=(n,))
    arr.fill(value)
    return arr


def bits(arr) -> bytes:
    return arr.to_numpy().tobytes()


@pytest.mark.parametrize(
    ("make", "values"),
    [
        (lambda: ti.ndarray(ti.f32, shape=(7, 5)), lambda r: r.standard_normal((7, 5)).astype(np.float32)),
        (lambda: ti.ndarray(ti.f64, shape=(3, 4, 2)), lambda r: r.standard_normal((3, 4, 2))),
        (lambda: ti.ndarray(ti.i32, shape=(11,)), lambda r: r.integers(-(2**31), 2**31 - 1, 11, dtype=np.int32)),
        (lambda: ti.Vector.ndarray(3, ti.f32, shape=(9,)), lambda r: r.random((9, 3)).astype(np.float32)),
        (lambda: ti.Matrix.ndarray(2, 2, ti.f64, shape=(4, 3)), lambda r: r.random((4, 3, 2, 2))),
        (lambda: ti.ndarray(ti.f32, shape=()), lambda r: np.array(3.5, np.float32)),
    ],
    ids=["f32-2d", "f64-3d", "i32", "vec3", "mat2", "0d"],
)
def test_save_then_restore_is_bit_identical(arch, make, values):
    arr = make()
    v = values(np.random.default_rng(0))
    if v.dtype.kind == "f" and v.ndim:  # payloads that value comparisons would miss
        flat = v.reshape(-1)
        flat[0], flat[-1] = -0.0, np.nan
    arr.from_numpy(v)
    before = bits(arr)
    store = SnapshotStore(budget_bytes=1 << 20)
    assert store.save(3, "a", arr) == []
    arr.fill(1)
    store.restore(3, "a", arr)
    assert bits(arr) == before
    assert store.bytes_held == nbytes(arr)


def test_snapshot_is_a_copy_not_a_view(arch):
    x = f32(16, 2.0)
    store = SnapshotStore(budget_bytes=1 << 20)
    store.save(0, "x", x)
    x.fill(9.0)
    assert (store.get(0, "x").to_numpy() == 2.0).all()


def test_oldest_steps_are_evicted_first_and_reported(arch):
    x, y = f32(1000, 1.0), f32(500, 2.0)  # 4000 and 2000 bytes
    store = SnapshotStore(budget_bytes=11000)
    assert store.save(0, "x", x) == [] and store.save(0, "y", y) == []
    assert store.save(1, "x", x) == []
    assert store.bytes_held == 10000
    assert store.save(1, "y", y) == [(0, "x"), (0, "y")]  # 12000 bytes: step 0 goes
    assert store.steps == [1] and store.bytes_held == 6000
    store.save(2, "x", x)
    assert store.save(3, "x", x) == [(1, "x"), (1, "y")]
    assert store.steps == [2, 3] and not store.has(1, "x") and store.has(3, "x")


def test_a_step_larger_than_the_budget_is_refused_without_evicting(arch):
    store = SnapshotStore(budget_bytes=5000)
    store.save(0, "x", f32(1000))
    with pytest.raises(SnapshotError, match=r"8000 bytes for step 1 exceed the budget of 5000 bytes.*budget_bytes"):
        store.save(1, "big", f32(2000))
    assert store.has(0, "x") and store.bytes_held == 4000


def test_saving_again_overwrites_in_place(arch):
    x = f32(10, 1.0)
    store = SnapshotStore(budget_bytes=100)
    store.save(0, "x", x)
    x.fill(5.0)
    assert store.save(0, "x", x) == []
    assert store.bytes_held == 40 and (store.get(0, "x").to_numpy() == 5.0).all()
    store.save(0, "x", f32(20, 1.0))  # another shape replaces the old copy
    assert store.bytes_held == 80


def test_restore_checks_the_target_spec(arch):
    store = SnapshotStore(budget_bytes=1 << 20)
    store.save(0, "x", f32(10))
    with pytest.raises(SnapshotError, match=r"the snapshot is f32\[10\], into is f32\[11\]"):
        store.restore(0, "x", f32(11))
    with pytest.raises(SnapshotError, match="into is ndarray"):
        store.restore(0, "x", np.zeros(10, np.float32))


def test_missing_snapshot_lists_the_steps_held(arch):
    store = SnapshotStore(budget_bytes=1 << 20)
    store.save(4, "x", f32(3))
    with pytest.raises(SnapshotMissingError, match=r"no snapshot of 'x' at step 5; steps held for it: \[4\]") as info:
        store.restore(5, "x", f32(3))
    assert isinstance(info.value, LookupError)


def test_drop_clear_and_names(arch):
    store = SnapshotStore(budget_bytes=1 << 20)
    for step in range(3):
        store.save(step, "a", f32(4))
        store.save(step, "b", f32(4))
    assert store.names(1) == ["a", "b"] and len(store) == 6
    store.drop(1)
    assert store.steps == [0, 2] and store.bytes_held == 64
    store.clear()
    assert store.steps == [] and store.bytes_held == 0 and not store.has(0, "a")


def test_bad_budget_and_non_ndarray_are_refused(arch):
    with pytest.raises(SnapshotError, match="positive int"):
        SnapshotStore(budget_bytes=0)
    with pytest.raises(SnapshotError, match="expected a Taichi ndarray, got ndarray"):
        SnapshotStore(budget_bytes=10).save(0, "x", np.zeros(2))


def test_default_budget_is_a_quarter_of_free_memory_or_one_gib(arch):
    budget = default_budget()
    if arch == "cpu":
        assert 0 < budget < 1 << 50
    else:
        assert budget == 1 << 30


def test_snapshots_do_not_survive_a_runtime_reset(arch):
    store = SnapshotStore(budget_bytes=1 << 20)
    store.save(0, "x", f32(4))
    ti.init(arch=getattr(ti, arch), log_level=ti.ERROR)  # frees every ndarray of the old runtime
    assert not store.has(0, "x") and store.bytes_held == 0
    with pytest.raises(SnapshotMissingError, match=r"runtime was reset \(ti\.init / ti\.reset\)"):
        store.restore(0, "x", f32(4))
