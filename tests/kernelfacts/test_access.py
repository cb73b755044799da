"""Read/write access per buffer parameter: Taichi's Vulkan metadata and the source-code reading agree."""

import importlib.util
import linecache
import os
import sys
import warnings
from types import SimpleNamespace

import pytest
import taichi as ti

from graphlab.child.carry import kernel_ref
from graphlab.child.process import ChildRunError
from graphlab.core.errors import KernelError
from graphlab.kernelfacts import access
from graphlab.kernelfacts.access import AccessError, AccessFlag, ArraySpec, kernel_access, kernels_access

R, W, RW, NONE = AccessFlag.READ, AccessFlag.WRITE, AccessFlag.READ_WRITE, AccessFlag.NONE
f32_1d = ti.types.ndarray(dtype=ti.f32, ndim=1)


# ---------------------------------------------------------------- kernels of our own
@ti.func
def set_at(arr: ti.template(), i: ti.i32, value: ti.f32):
    arr[i] = value


@ti.func
def zero_first(arr: ti.types.ndarray()):
    set_at(arr, 0, 0.0)


@ti.func
def bump(a: ti.template()):
    a += 1.0


@ti.func
def doubled(v: ti.f32) -> ti.f32:
    return v * 2.0


@ti.kernel
def mixed(
    a: ti.i32,
    x: f32_1d,
    m: ti.math.mat2,
    y: f32_1d,
    b: ti.f32,
    z: ti.types.ndarray(dtype=ti.math.vec2, ndim=2),
    unused: f32_1d,
    shape_only: f32_1d,
):
    for i in x:
        y[i] = x[i] * a + b + m[0, 0]
    for ij in ti.grouped(z):
        z[ij].y = b
    for i in shape_only:
        y[i] = b


@ti.kernel
def atomics(x: f32_1d, hist: ti.types.ndarray(dtype=ti.i32, ndim=1), total: f32_1d, top: f32_1d):
    for i in x:
        ti.atomic_add(hist[int(x[i])], 1)
        total[0] += x[i]
        ti.atomic_max(top[0], x[i])


@ti.kernel
def funcs(x: f32_1d, y: f32_1d, w: f32_1d, acc: f32_1d):
    for i in x:
        y[i] = doubled(x[i])
        bump(w[i])
    zero_first(acc)


@ti.kernel
def textures(
    t: ti.types.texture(num_dimensions=2),
    rw: ti.types.rw_texture(num_dimensions=2, fmt=ti.Format.r32f, lod=0),
    out: ti.types.ndarray(dtype=ti.f32, ndim=2),
):
    for ij in ti.grouped(out):
        out[ij] = t.fetch(ij, 0).x
        rw.store(ij, ti.Vector([out[ij], 0.0, 0.0, 0.0]))


OWN_EXPECTED = {
    "mixed": {"x": R, "y": W, "z": W, "unused": NONE, "shape_only": NONE},
    "atomics": {"x": R, "hist": RW, "total": RW, "top": RW},
    "funcs": {"x": R, "y": W, "w": RW, "acc": W},
}

NOTEBOOK_CELL = """
import taichi as ti

DECAY = 0.5

@ti.func
def decay(arr: ti.template(), i):
    arr[i] *= DECAY

@ti.kernel
def cell_kernel(src: ti.types.ndarray(dtype=ti.f32, ndim=1), dst: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in src:
        decay(dst, i)
"""


@pytest.fixture(scope="module")
def cell_kernel():
    filename = "<ipython-input-access-graphlab-test>"
    linecache.cache[filename] = (len(NOTEBOOK_CELL), None, NOTEBOOK_CELL.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    exec(compile(NOTEBOOK_CELL, filename, "exec"), namespace)
    return namespace["cell_kernel"]


# ---------------------------------------------------------------- Taichi's mpm88 example, loaded as is
MPM88_EXPECTED = {
    "substep_reset_grid": {"grid_v": W, "grid_m": W},
    "substep_p2g": {"x": R, "v": R, "C": R, "J": R, "grid_v": RW, "grid_m": RW},
    "substep_update_grid_v": {"grid_v": RW, "grid_m": R},
    "substep_g2p": {"x": RW, "v": W, "C": W, "J": RW, "grid_v": R},
    "init_particles": {"x": W, "v": W, "J": W},
}
MPM88_SPECS = {  # ArraySpec, or any object with dtype and ndim (a graph Arg, a vector dtype)
    "x": ArraySpec("f32", 1, (2,)),
    "v": SimpleNamespace(dtype=ti.math.vec2, ndim=1),
    "C": ArraySpec("f32", 1, (2, 2)),
    "J": ArraySpec("f32", 1),
    "grid_v": ArraySpec("f32", 2, (2,)),
    "grid_m": ArraySpec("f32", 2),
}


@pytest.fixture(scope="module")
def mpm88_module():
    """The wheel's own ``examples/graph/mpm88_graph.py``, its ``ti.init(arch=ti.vulkan)`` run on the CPU."""
    root = importlib.util.find_spec("taichi").submodule_search_locations[0]
    path = os.path.join(root, "examples", "graph", "mpm88_graph.py")
    spec = importlib.util.spec_from_file_location("mpm88_graph", path)
    module = importlib.util.module_from_spec(spec)
    real_init = ti.init
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ti, "init", lambda *args, **kwargs: real_init(arch=ti.cpu))
        mp.setitem(sys.modules, "mpm88_graph", module)
        spec.loader.exec_module(module)
        yield module


@pytest.fixture(scope="module")
def isolated_cache(tmp_path_factory):
    """A cache folder and in-process caches of this module's own."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg")))
        mp.setattr(access, "_MEMO", {})
        mp.setattr(access, "_NO_VULKAN", {})
        mp.setattr(access, "_STATE", {"broken": None, "last_child_s": None})
        yield


@pytest.fixture(scope="module")
def all_kernels(mpm88_module, cell_kernel):
    own = [mixed, atomics, funcs, textures, cell_kernel]
    return own + [getattr(mpm88_module, name) for name in MPM88_EXPECTED]


@pytest.fixture(scope="module")
def vulkan(isolated_cache, mpm88_module, all_kernels):
    """Vulkan's answers for every kernel here, from one child process."""
    specs = {kernel_ref(getattr(mpm88_module, name)): MPM88_SPECS for name in MPM88_EXPECTED}
    return kernels_access(all_kernels, source="vulkan", arg_specs=specs)


@pytest.fixture(scope="module")
def from_source(all_kernels):
    return kernels_access(all_kernels, source="ast")


def by_name(reports):
    return {ref.split(":")[1]: dict(report) for ref, report in reports.items()}


# ---------------------------------------------------------------- tests
@pytest.mark.vulkan
def test_vulkan_reads_mpm88_as_expected(vulkan):
    got = by_name(vulkan)
    assert {name: got[name] for name in MPM88_EXPECTED} == MPM88_EXPECTED
    assert all(report.source == "vulkan" for report in vulkan.values())


def test_source_reading_of_mpm88_is_vulkan_or_more(from_source):
    got = by_name(from_source)
    expected = dict(MPM88_EXPECTED, substep_g2p=dict(MPM88_EXPECTED["substep_g2p"], v=RW))
    assert {name: got[name] for name in MPM88_EXPECTED} == expected
    assert all(report.source == "ast" for report in from_source.values())


@pytest.mark.vulkan
def test_vulkan_maps_arg_indices_by_key_with_scalars_counted(vulkan):
    got = by_name(vulkan)
    for name, expected in OWN_EXPECTED.items():
        assert got[name] == expected, name


@pytest.mark.vulkan
def test_source_reading_never_misses_what_vulkan_sees(vulkan, from_source):
    for ref, report in vulkan.items():
        guess = from_source[ref]
        assert set(guess) == set(report), ref
        for param, flags in report.items():
            assert guess[param] & flags == flags, f"{ref} {param}: ast {guess[param]!r} vulkan {flags!r}"


def test_source_reading_of_own_kernels(from_source):
    got = by_name(from_source)
    for name, expected in OWN_EXPECTED.items():
        assert got[name] == expected, name


@pytest.mark.vulkan
def test_textures_are_reported_by_kind(vulkan, from_source):
    for reports in (vulkan, from_source):
        got = by_name(reports)["textures"]
        assert got["t"] == R and got["rw"] == RW
        assert got["out"] & W


@pytest.mark.vulkan
def test_a_notebook_kernel_goes_through_the_child(vulkan, cell_kernel):
    report = vulkan[kernel_ref(cell_kernel)]
    assert report.source == "vulkan" and report.provenance == "from Taichi's compiler (Vulkan metadata)"
    assert dict(report) == {"src": NONE, "dst": RW}


@pytest.mark.vulkan
def test_answers_are_cached_on_disk(vulkan, all_kernels, monkeypatch):
    folder = access._cache_dir()
    assert len(list(folder.glob("*.json"))) == len(all_kernels)
    assert not list(folder.glob(".*.tmp"))
    monkeypatch.setattr(access, "_MEMO", {})

    def no_child(*args, **kwargs):
        raise AssertionError("the disk cache should have answered")

    monkeypatch.setattr(access, "run_child", no_child)
    again = kernels_access(all_kernels, source="vulkan")
    assert {ref: dict(r) for ref, r in again.items()} == {ref: dict(r) for ref, r in vulkan.items()}


@pytest.mark.vulkan
def test_open_dtypes_without_specs_fail_clearly(isolated_cache, mpm88_module, monkeypatch, tmp_path):
    monkeypatch.setattr(access, "_MEMO", {})
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(AccessError, match=r"(?s)substep_g2p.*parameters x, v, C, J, grid_v leave the dtype"):
        kernel_access(mpm88_module.substep_g2p, source="vulkan")


def test_auto_falls_back_to_the_source_with_one_warning(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(access, "_MEMO", {})
    monkeypatch.setattr(access, "_STATE", {"broken": None, "last_child_s": None})

    def broken_child(*args, **kwargs):
        raise ChildRunError("child process for graphlab.kernelfacts.access:_vulkan_child was killed by signal 11")

    monkeypatch.setattr(access, "run_child", broken_child)
    with pytest.warns(RuntimeWarning, match="inferred from the source code"):
        first = kernel_access(atomics)
    assert first.source == "ast" and "signal 11" in first.note
    assert first.provenance == "inferred from the source code"
    assert dict(first) == OWN_EXPECTED["atomics"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert kernel_access(funcs).source == "ast"


def test_what_the_reading_does_not_model_counts_as_read_and_written():
    def helper(arr):
        return arr

    @ti.kernel
    def unknown_call(x: f32_1d, y: f32_1d):
        helper(x)
        y[0] = 1.0

    @ti.kernel
    def aliased(x: f32_1d, y: f32_1d):
        z = x
        y[0] = z[0]

    @ti.kernel
    def filled(x: f32_1d):
        x.fill(0.0)

    assert dict(kernel_access(unknown_call, source="ast")) == {"x": RW, "y": W}
    assert dict(kernel_access(aliased, source="ast")) == {"x": RW, "y": W}
    assert dict(kernel_access(filled, source="ast")) == {"x": W}


def test_an_element_passed_by_value_is_only_read():
    @ti.kernel
    def by_value(x: f32_1d, y: f32_1d):
        for i in x:
            y[i] = doubled(x[i]) + ti.sqrt(x[i])

    assert dict(kernel_access(by_value, source="ast")) == {"x": R, "y": W}


def test_bad_arguments_are_refused():
    with pytest.raises(KernelError, match="not a @ti.kernel"):
        kernel_access(print)
    with pytest.raises(ValueError, match="source='gpu'"):
        kernel_access(mixed, source="gpu")


def test_stores_through_indexing_attributes_and_unpacking_are_writes():
    vec_1d = ti.types.ndarray(dtype=ti.math.vec2, ndim=1)

    @ti.kernel
    def stores(a: vec_1d, b: vec_1d, c: vec_1d, d: vec_1d, e: vec_1d, n: vec_1d):
        for i in range(n.shape[0]):
            a[i][0] = 1.0
            b[i].y = 2.0
            c[i], _unused = ti.Vector([1.0, 2.0]), 0.0
            d[i].x -= 1.0
            b[i].x = e[i].norm() + e[i].normalized().x

    assert dict(kernel_access(stores, source="ast")) == {"a": W, "b": W, "c": W, "d": RW, "e": R, "n": NONE}


# ---------------------------------------------------------------- what is kept between edits
_KEPT_MODULE = """
import taichi as ti


@ti.func
def store(arr: ti.types.ndarray(), i: ti.i32):
    arr[i] = 1.0


@ti.func
def accumulate(arr: ti.types.ndarray(), i: ti.i32):
    arr[i] += 1.0


helper = store


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        helper(y, i)
"""


@pytest.fixture
def kept_module(tmp_path, monkeypatch):
    """A module file of kernels, imported as the notebook would, that a test may edit and reload."""
    path = tmp_path / "kept_kernels.py"
    path.write_text(_KEPT_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "kept_kernels", raising=False)
    import kept_kernels

    yield kept_kernels, path
    sys.modules.pop("kept_kernels", None)


def test_an_unchanged_kernel_is_not_read_again(kept_module):
    module, _ = kept_module
    start = access.source_cache_info()
    first = kernel_access(module.fill, source="ast")
    read = access.source_cache_info()
    assert read.misses == start.misses + 1
    again = kernel_access(module.fill, source="ast")
    kept = access.source_cache_info()
    assert (kept.hits, kept.misses) == (read.hits + 1, read.misses)
    assert dict(again) == dict(first) == {"x": NONE, "y": W}
    assert again.first == first.first


def test_a_redefined_kernel_is_read_again(kept_module):
    module, path = kept_module
    assert dict(kernel_access(module.fill, source="ast")) == {"x": NONE, "y": W}
    path.write_text(_KEPT_MODULE.replace("helper(y, i)", "y[i] = x[i]"))
    redefined = importlib.reload(module)
    read = access.source_cache_info()
    assert dict(kernel_access(redefined.fill, source="ast")) == {"x": R, "y": W}
    assert access.source_cache_info().misses == read.misses + 1


def test_a_rebound_func_the_kernel_calls_makes_it_read_again(kept_module):
    module, _ = kept_module
    assert dict(kernel_access(module.fill, source="ast")) == {"x": NONE, "y": W}
    read = access.source_cache_info()
    module.helper = module.accumulate  # the same kernel object now calls another @ti.func
    assert dict(kernel_access(module.fill, source="ast")) == {"x": NONE, "y": RW}
    assert access.source_cache_info().misses == read.misses + 1


def test_a_kernel_whose_file_changed_is_read_again(kept_module):
    module, path = kept_module
    assert dict(kernel_access(module.fill, source="ast")) == {"x": NONE, "y": W}
    path.write_text(_KEPT_MODULE.replace("helper(y, i)", "y[i] = x[i]   "))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 10**9))  # a clock too coarse to see
    assert dict(kernel_access(module.fill, source="ast")) == {"x": R, "y": W}
