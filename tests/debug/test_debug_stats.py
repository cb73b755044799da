"""Device statistics (graphlab.debug.stats) against numpy, and the pictures made from them."""

import math
import struct
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest
import taichi as ti

from graphlab.debug import pictures, stats, stats_kernels
from graphlab.debug.pictures import PictureError, heatmap_png, lineplot_svg, png_size, scatter_svg
from graphlab.debug.stats import BufferTypeError, StatsError, buffer_stats, diff_map, diff_stats, first_nonfinite

VULKAN = pytest.mark.vulkan


def pytest_generate_tests(metafunc):
    """Every test runs on x64 and Vulkan; those taking ``layout`` also run x64 with the GPU layout, and
    x64 and Vulkan with the one-pass kernel CUDA uses."""
    if "layout" in metafunc.fixturenames:
        combos = [
            pytest.param("cpu", "device", id="x64"),
            pytest.param("cpu", "blockwise", id="x64-blockwise"),
            pytest.param("cpu", "gpu-layout", id="x64-gpu-layout"),
            pytest.param("cpu", "onepass", id="x64-onepass"),
            pytest.param("vulkan", "device", id="vulkan", marks=VULKAN),
            pytest.param("vulkan", "onepass", id="vulkan-onepass", marks=VULKAN),
        ]
        metafunc.parametrize(("arch", "layout"), combos, indirect=True, scope="module")
    elif "arch" in metafunc.fixturenames:
        combos = [pytest.param("cpu", id="x64"), pytest.param("vulkan", id="vulkan", marks=VULKAN)]
        metafunc.parametrize("arch", combos, indirect=True, scope="module")


NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32, "u8": np.uint8, "i64": np.int64}


@pytest.fixture(scope="module")
def arch(request):
    ti.init(arch=getattr(ti, request.param), log_level=ti.ERROR)
    return request.param


@pytest.fixture(scope="module")
def layout(request, arch):
    """``gpu-layout`` runs the blockwise GPU code path (interleaved blocks, several combine levels) on the
    CPU, ``blockwise`` the blockwise CPU path, ``onepass`` the one-pass kernel as CUDA runs it."""
    with pytest.MonkeyPatch.context() as mp:
        if request.param in ("gpu-layout", "blockwise"):  # the blockwise kernels (Vulkan, f32-only devices)
            mp.setattr(stats_kernels, "_ONEPASS_ARCHS", ())
        if request.param in ("gpu-layout", "onepass"):
            mp.setattr(stats_kernels, "_CPU_ARCHS", ())
        if request.param == "onepass":
            mp.setattr(stats_kernels, "_ONEPASS_ARCHS", (stats_kernels.current_arch(),))
            mp.setattr(stats_kernels, "_ONEPASS_THREADS", 64)  # several elements per thread, a tail too
            mp.setattr(stats_kernels, "_ONEPASS_ROWS", 8)
        yield request.param


def make(values: np.ndarray, dtype: str, element_shape: tuple[int, ...] = ()):
    shape = values.shape[: values.ndim - len(element_shape)]
    dt = getattr(ti, dtype)
    if not element_shape:
        arr = ti.ndarray(dt, shape=shape)
    elif len(element_shape) == 1:
        arr = ti.Vector.ndarray(element_shape[0], dt, shape=shape)
    else:
        arr = ti.Matrix.ndarray(element_shape[0], element_shape[1], dt, shape=shape)
    arr.from_numpy(values.astype(NP[dtype]))
    return arr


def reference(x: np.ndarray) -> dict:
    """What buffer_stats promises, computed with numpy: NaN skipped, mean/std/sum over finite values."""
    flat = x.reshape(-1)
    fl = flat.dtype.kind == "f"
    fin = np.isfinite(flat) if fl else np.ones(flat.shape, bool)
    f = flat[fin].astype(np.float64)
    nonnan = flat[~np.isnan(flat)] if fl else flat
    bad = np.flatnonzero(~fin)
    return {
        "min": nonnan.min().item() if nonnan.size else None,
        "max": nonnan.max().item() if nonnan.size else None,
        "mean": f.mean() if f.size else math.nan,
        "std": f.std() if f.size else math.nan,
        "sum": f.sum(),
        "nan": int(np.isnan(flat).sum()) if fl else 0,
        "inf": int(np.isinf(flat).sum()) if fl else 0,
        "zeros": int((flat == 0).sum()),
        "first": tuple(int(i) for i in np.unravel_index(bad[0], x.shape)) if bad.size else None,
    }


def assert_matches(s, x: np.ndarray, rel: float = 1e-9) -> None:
    ref = reference(x)
    assert s.count == x.size
    assert (s.nan, s.inf, s.zeros) == (ref["nan"], ref["inf"], ref["zeros"])
    assert s.first_nonfinite == ref["first"]
    assert s.min == ref["min"] and s.max == ref["max"]
    for key in ("mean", "std", "sum"):
        got, want = getattr(s, key), ref[key]
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=rel, abs=1e-9), key


def planted(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype in ("i32", "i64"):
        return rng.integers(-1000, 1000, size=shape)
    if dtype == "u8":
        return rng.integers(0, 255, size=shape)
    x = rng.standard_normal(shape) * 10
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, size=min(3, flat.size), replace=False)] = 0.0
    if flat.size > 8:
        flat[[flat.size // 3, flat.size // 2, -1]] = [np.nan, np.inf, -np.inf]
    return x


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "u8", "i64"])
@pytest.mark.parametrize("shape", [(37,), (5, 9), (3, 4, 5), (2, 3, 4, 5), (1000,)])
def test_scalar_buffer_stats_match_numpy(layout, dtype, shape):
    x = planted(shape, dtype, np.random.default_rng(zlib.crc32(repr((dtype, shape)).encode()))).astype(NP[dtype])
    assert_matches(buffer_stats(make(x, dtype)), x, rel=1e-6 if dtype == "f32" else 1e-9)


def filled(kind: str, dtype: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Test data: ``random``, ``nonfinite`` (NaN and both Infs sprinkled, ints at their extremes),
    ``only-nonfinite`` (no finite value at all; ints: one value repeated)."""
    np_dtype = np.dtype(NP[dtype])
    if np_dtype.kind != "f":
        info = np.iinfo(np_dtype)
        lo, hi = max(int(info.min), -(10**6)), min(int(info.max), 10**6)
        x = rng.integers(lo, hi, size=shape, endpoint=True).astype(np_dtype)
        if kind == "nonfinite":
            x.reshape(-1)[:: max(1, x.size // 3)] = info.max
            x.reshape(-1)[1::5] = info.min
        elif kind == "only-nonfinite":
            x[...] = info.max
        return x
    x = (rng.standard_normal(shape) * 100).astype(np_dtype)
    flat = x.reshape(-1)
    if kind == "nonfinite":
        picks = rng.choice(flat.size, size=min(flat.size, 1 + flat.size // 7), replace=False)
        flat[picks] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0], np_dtype), size=picks.size)
    elif kind == "only-nonfinite":
        flat[:] = rng.choice(np.array([np.nan, np.inf, -np.inf], np_dtype), size=flat.size)
    return x


@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("kind", ["random", "nonfinite", "only-nonfinite"])
@pytest.mark.parametrize("shape", [(1,), (2,), (517,), (7, 9, 3)])
def test_statistics_equal_numpys_for_every_dtype(layout, dtype, kind, shape):
    """One pass (or the blockwise path) gives numpy's answer on random, NaN/Inf-laden and 1-element buffers.

    Taichi 1.7.4 refuses 0-element ndarrays, so an empty buffer cannot reach the debugger; a buffer
    without a finite value (``only-nonfinite``) is the empty case of the finite statistics."""
    x = filled(kind, dtype, shape, np.random.default_rng(zlib.crc32(repr((dtype, kind, shape)).encode())))
    assert_matches(buffer_stats(make(x, dtype)), x, rel=1e-6 if dtype in ("f16", "f32") else 1e-9)


@pytest.mark.parametrize("element_shape", [(3,), (2, 2)])
def test_vector_and_matrix_stats_cover_all_components(layout, element_shape):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 7, *element_shape))
    x[2, 3, ..., -1] = np.nan
    x[4, 1, ..., 0] = np.inf
    s = buffer_stats(make(x, "f64", element_shape), per_component=True)
    assert_matches(s, x)
    assert len(s.components) == math.prod(element_shape)
    for c, comp in zip(np.ndindex(*element_shape), s.components):
        xc = x[(..., *c)]
        ref = reference(xc)
        assert comp.count == xc.size and comp.nan == ref["nan"] and comp.inf == ref["inf"]
        assert comp.min == ref["min"] and comp.mean == pytest.approx(ref["mean"], rel=1e-9)
        if ref["first"] is not None:  # the index into the whole buffer: field index, then component
            assert comp.first_nonfinite == (*ref["first"], *c)


def test_first_nonfinite_of_vector_buffer_names_the_component(layout):
    x = np.zeros((10, 3))
    x[7, 2] = np.nan
    x[8, 0] = -np.inf
    arr = make(x, "f64", (3,))
    assert buffer_stats(arr).first_nonfinite == (7, 2)
    assert first_nonfinite(arr) == (7, 2)


def test_f16_buffer_is_classified_from_its_bits(arch):
    x = np.array([1.0, np.nan, -np.inf, 0.0, 65504.0], np.float16)
    s = buffer_stats(make(x, "f16"))
    assert (s.nan, s.inf, s.zeros, s.min, s.max) == (1, 1, 1, -math.inf, 65504.0)


def test_magnitude_stats_are_stats_of_abs(layout):
    x = np.random.default_rng(2).standard_normal(500) * 3
    x[10] = np.nan
    s = buffer_stats(make(x, "f64"), with_abs=True)
    a = np.abs(x[np.isfinite(x)])
    m = s.magnitude
    assert (m.min, m.max) == (a.min(), a.max())
    assert m.mean == pytest.approx(a.mean(), rel=1e-12) and m.std == pytest.approx(a.std(), rel=1e-9)
    assert m.sum == pytest.approx(a.sum(), rel=1e-12)


def test_integer_sum_is_exact_and_an_int(arch):
    x = np.arange(-50000, 50001, dtype=np.int32) * 3
    s = buffer_stats(make(x, "i32"))
    assert s.sum == int(x.astype(np.int64).sum()) and isinstance(s.sum, int)
    assert (s.min, s.max) == (-150000, 150000)


def test_all_nan_buffer_has_no_min_and_nan_mean(arch):
    s = buffer_stats(make(np.full(50, np.nan), "f32"))
    assert s.min is None and s.max is None and math.isnan(s.mean) and s.nan == 50 and s.finite == 0


def test_only_infinities_give_infinite_min_and_max(arch):
    s = buffer_stats(make(np.array([np.inf, np.nan, np.inf]), "f32"))
    assert (s.min, s.max, s.inf, s.nan) == (math.inf, math.inf, 2, 1)


def test_zero_dimensional_ndarray(arch):
    arr = ti.ndarray(ti.f32, shape=())
    arr.fill(2.5)
    s = buffer_stats(arr)
    assert (s.shape, s.count, s.min, s.max, s.mean, s.std) == ((), 1, 2.5, 2.5, 2.5, 0.0)


def test_large_count_mean_and_std_stay_accurate(layout):
    rng = np.random.default_rng(3)
    x = (1e4 + rng.standard_normal(1 << 21)).astype(np.float32)
    s = buffer_stats(make(x, "f32"))
    f = x.astype(np.float64)
    assert s.mean == pytest.approx(f.mean(), rel=1e-12)
    assert s.std == pytest.approx(f.std(), rel=1e-9)


def test_f32_accumulation_fallback_is_close(arch, monkeypatch):
    """Devices without f64 (some Vulkan/Metal ones) accumulate in f32: still about 1e-6 relative."""
    monkeypatch.setattr(stats_kernels, "accumulator_dtype", lambda: ti.f32)
    monkeypatch.setattr(stats_kernels, "_CPU_ARCHS", ())  # the layout such devices get
    rng = np.random.default_rng(4)
    x = (100 + 5 * rng.standard_normal(1 << 20)).astype(np.float32)
    s = buffer_stats(make(x, "f32"))
    f = x.astype(np.float64)
    assert s.mean == pytest.approx(f.mean(), rel=1e-6)
    assert s.std == pytest.approx(f.std(), rel=1e-4)
    assert (s.min, s.max) == (float(x.min()), float(x.max()))


def test_accumulator_is_f64_on_cpu_and_on_lavapipe(arch):
    assert stats.accumulator_dtype() == ti.f64


def test_kernels_compile_once_per_dtype_ndim_and_element_shape(arch):
    buffer_stats(make(np.ones(10), "f32"))
    before = len(stats_kernels._k_stats._primal.compiled_kernels)
    for n in (11, 500, 4097):
        buffer_stats(make(np.ones(n), "f32"))
    assert len(stats_kernels._k_stats._primal.compiled_kernels) == before


def test_first_nonfinite_finds_the_earliest(layout):
    x = np.ones((50, 40), np.float32)
    x[30, 1] = np.inf
    x[12, 39] = np.nan
    assert first_nonfinite(make(x, "f32")) == (12, 39)
    assert first_nonfinite(make(np.ones((50, 40)), "f32")) is None
    assert first_nonfinite(make(np.ones(5), "i32")) is None


def test_diff_stats_counts_changes_and_treats_nan_pairs_as_equal(layout):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((20, 30))
    b = a.copy()
    a[0, 0] = b[0, 0] = np.nan  # same NaN: unchanged
    b[3, 4] += 0.5
    b[5, 6] = np.nan  # a number became NaN
    a[7, 8], b[7, 8] = np.inf, -np.inf  # Inf flipped sign
    d = diff_stats(make(a, "f64"), make(b, "f64"))
    assert (d.changed, d.nonfinite_mismatch, d.first_changed) == (3, 2, (3, 4))
    assert d.max_abs == pytest.approx(0.5)
    assert d.max_rel == pytest.approx(0.5 / max(abs(a[3, 4]), abs(b[3, 4])))


def test_diff_of_identical_buffers_is_empty(layout):
    x = np.random.default_rng(6).standard_normal((8, 3))
    d = diff_stats(make(x, "f32", (3,)), make(x, "f32", (3,)))
    assert (d.changed, d.max_abs, d.max_rel, d.first_changed) == (0, 0.0, 0.0, None)


def test_diff_rejects_other_shapes_and_non_ndarrays(arch):
    a, b = make(np.ones(4), "f32"), make(np.ones(5), "f32")
    with pytest.raises(StatsError, match=r"shapes differ: a is \(4,\).*b is \(5,\)"):
        diff_stats(a, b)
    with pytest.raises(BufferTypeError, match="expected a Taichi ndarray"):
        buffer_stats(np.ones(4))


def test_diff_map_is_the_elementwise_difference(layout):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((6, 5)), rng.standard_normal((6, 5))
    a[1, 1] = b[1, 1] = np.nan
    m = diff_map(make(a, "f64"), make(b, "f64"))
    want = np.where(np.isnan(a) & np.isnan(b), 0.0, a - b)
    np.testing.assert_allclose(m, want)
    v = diff_map(make(np.ones((4, 2)), "f32", (2,)), make(np.zeros((4, 2)), "f32", (2,)))
    np.testing.assert_allclose(v, np.full(4, math.sqrt(2)), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# pictures (graphlab.debug.pictures): what a notebook or the widget shows for these stats


def decode_png(png: bytes) -> np.ndarray:
    """Minimal decoder for the encoder's own output (8-bit RGB, filter 0)."""
    w, h = png_size(png)
    pos, idat = 8, b""
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        assert struct.unpack(">I", png[pos + 8 + length : pos + 12 + length])[0] == zlib.crc32(kind + data)
        idat += data if kind == b"IDAT" else b""
        pos += 12 + length
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(h, w, 3)


def test_heatmap_png_has_signature_size_and_marked_nonfinite_cells():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    a[1, 2], a[2, 0], a[0, 3] = np.nan, np.inf, -np.inf
    png = heatmap_png(a, scale=2, legend=False, nan_color=(255, 0, 255))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    assert png_size(png) == (8, 6)
    img = decode_png(png)
    assert tuple(img[2, 4]) == (255, 0, 255) and tuple(img[4, 0]) == (255, 255, 255)
    assert tuple(img[0, 6]) == (0, 0, 0)
    assert tuple(img[0, 0]) == tuple(pictures._lut("viridis")[0])  # the minimum
    assert tuple(img[5, 6]) != tuple(img[0, 0])


def test_heatmap_legend_adds_a_colour_bar_and_the_range_travels_in_text_chunks():
    png = heatmap_png(np.random.default_rng(0).random((10, 10)), scale=3)
    assert png_size(png) == (30 + 4 + 12, 30)
    assert b"tEXtvmin\x00" in png and b"tEXtvmax\x00" in png


def test_centred_heatmap_puts_the_centre_in_the_middle_of_the_colormap():
    img = decode_png(heatmap_png(np.array([[-1.0, 0.0, 3.0]]), colormap="coolwarm", center=0.0, scale=1, legend=False))
    lut = pictures._lut("coolwarm")
    assert tuple(img[0, 1]) == tuple(lut[128]) and tuple(img[0, 2]) == tuple(lut[255])


def test_large_heatmap_is_downsampled_and_keeps_a_single_nan():
    a = np.zeros((3000, 2000))
    a[1234, 567] = np.nan
    img = decode_png(heatmap_png(a, legend=False, max_side=500))
    assert img.shape[:2] == (500, 334)
    assert (img == (255, 0, 255)).all(axis=2).sum() == 1


def test_heatmap_rejects_wrong_input():
    with pytest.raises(PictureError, match="2-D"):
        heatmap_png(np.zeros(5))
    with pytest.raises(PictureError, match="unknown colormap 'jet'"):
        heatmap_png(np.zeros((2, 2)), colormap="jet")


def test_lineplot_svg_parses_and_breaks_at_nan():
    y = np.sin(np.linspace(0, 6, 100))
    y[50] = np.nan
    y[70] = np.inf
    root = ET.fromstring(lineplot_svg(y, title="a <b> & c"))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == ns + "svg"
    assert len(root.findall(ns + "polyline")) == 3  # split by the NaN and by the Inf
    assert root.find(ns + "title").text == "a <b> & c"


def test_long_lineplot_keeps_spikes():
    y = np.zeros(100000)
    y[54321] = 5.0
    root = ET.fromstring(lineplot_svg(y, width=200))
    pts = root.find("{http://www.w3.org/2000/svg}polyline").get("points").split()
    assert len(pts) <= 2 * 200 and min(float(p.split(",")[1]) for p in pts) == pytest.approx(8.0)


def test_scatter_svg_parses_and_counts_left_out_points():
    p = np.random.default_rng(0).random((5000, 2))
    p[3] = np.nan
    root = ET.fromstring(scatter_svg(p, max_points=1000))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(ns + "path").get("d").count("M") <= 1000
    assert "1 non-finite" in root.find(ns + "text").text
    with pytest.raises(PictureError, match=r"\(n, 2\)"):
        scatter_svg(np.zeros((4, 3)))


def test_scratch_buffers_reused_across_sizes_give_right_answers(layout):
    rng = np.random.default_rng(8)
    for n in (5000, 37, 70001, 1, 4097, 33, 5000):
        x = rng.standard_normal(n)
        s = buffer_stats(make(x, "f64"))
        assert (s.count, s.min, s.max) == (n, x.min(), x.max())
        assert s.sum == pytest.approx(x.sum(), abs=1e-12 * np.abs(x).sum())


def test_stats_work_after_a_runtime_reset(arch):
    buffer_stats(make(np.arange(10.0), "f32"))
    ti.init(arch=getattr(ti, arch), log_level=ti.ERROR)  # frees the scratch buffers of the old runtime
    s = buffer_stats(make(np.arange(10.0), "f32"))
    assert (s.min, s.max, s.sum) == (0.0, 9.0, 45.0)
