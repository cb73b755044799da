"""Statistics of a big buffer (`graphlab.debug.stats.buffer_stats`) against Taichi's plain sum over it.

One process, alternating: the debugger's statistics (min, max, sum, sum of squares, NaN/Inf/zero
counts, first non-finite index) and a plain ``for i in x: s += x[i]`` kernel over the same f32
buffer, each timed from the call to the result on the host. Reports the bandwidth each reaches
(bytes of the buffer over the time). ``--variants`` also times the one-pass kernel's thread counts,
unrolls and row counts, its direct (not ``ti.graph``) launch, the launch alone, and the blockwise
path it replaces. ``--old FILE`` also times the one-pass path of a saved copy of
``graphlab/debug/stats_kernels.py`` (e.g. ``git show HEAD:graphlab/debug/stats_kernels.py``), in
the same process. ``--check`` first compares the statistics with numpy's on small buffers of every
dtype (NaN/Inf planted, vectors, 2-d) on the same device.

    python bench/stats_speed.py --arch cuda --gib 1 --check --old /tmp/stats_kernels_head.py
    python bench/stats_speed.py --arch cpu --gib 0.125
"""

import argparse
import cProfile
import importlib.util
import math
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import taichi as ti

import graphlab  # noqa: F401  (arranges the bridge after taichi)
from graphlab.bridge.device_read import read_array
from graphlab.debug import stats, stats_kernels, stats_launch
from graphlab.debug.stats import buffer_stats


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = ti.random(ti.f32) * 2.0 - 1.0


@ti.kernel
def plain_sum(x: ti.types.ndarray(dtype=ti.f32, ndim=1)) -> ti.f32:
    s = 0.0
    for i in x:
        s += x[i]
    return s


def check_against_numpy() -> None:
    """buffer_stats of small buffers of every dtype against numpy; raises on the first difference."""
    rng = np.random.default_rng(12)
    numpy_types = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i32": np.int32, "u8": np.uint8}
    numpy_types["i64"] = np.int64
    cases = 0
    for name, np_type in numpy_types.items():
        for shape, element in (((1,), ()), ((420_000,), ()), ((300, 7), ()), ((1000,), (3,)), ((1,), (2,))):
            values = (rng.standard_normal(shape + element) * 100).astype(np.float64)
            flat = values.reshape(-1)
            if np.dtype(np_type).kind == "f" and flat.size > 8:
                flat[[5, flat.size // 2, -1]] = [np.nan, np.inf, -np.inf]
            kind = np.dtype(np_type).kind
            x = (values if kind == "f" else np.rint(values) if kind == "i" else np.abs(values) % 200).astype(np_type)
            dt = getattr(ti, name)
            arr = ti.Vector.ndarray(element[0], dt, shape=shape) if element else ti.ndarray(dt, shape=shape)
            arr.from_numpy(x)
            s = buffer_stats(arr)
            flat = x.reshape(-1)
            fin = np.isfinite(flat.astype(np.float64))
            f = flat[fin].astype(np.float64)
            nonnan = flat[~np.isnan(flat.astype(np.float64))]
            bad = np.flatnonzero(~fin)
            first = tuple(int(i) for i in np.unravel_index(bad[0], x.shape)) if bad.size else None
            got = (s.count, s.nan, s.inf, s.zeros, s.first_nonfinite, s.min, s.max)
            wide = flat.astype(np.float64)
            want = (flat.size, int(np.isnan(wide).sum()), int(np.isinf(wide).sum()), int((flat == 0).sum()), first)
            want += (nonnan.min().item(), nonnan.max().item())
            assert got == want, (name, shape, element, got, want)
            for key, ref in (("mean", f.mean()), ("std", f.std()), ("sum", f.sum())):
                assert math.isclose(getattr(s, key), ref, rel_tol=1e-9, abs_tol=1e-9), (name, shape, key)
            cases += 1
    print(f"check: {cases} buffers (f16/f32/f64/i32/u8/i64; 1 to 420,000 elements; vectors; 2-d) match numpy")


def load_old(path: str) -> Any:
    """A saved copy of graphlab/debug/stats_kernels.py as a module of its own."""
    spec = importlib.util.spec_from_file_location("stats_kernels_old", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def swapped(module: Any, **attrs: Any) -> Callable[[], Any]:
    """A call of ``buffer_stats`` with ``module``'s attributes set as given for its duration."""

    def call(x: Any) -> Any:
        saved = {k: getattr(module, k) for k in attrs}
        for k, v in attrs.items():
            setattr(module, k, v)
        try:
            return buffer_stats(x)
        finally:
            for k, v in saved.items():
                setattr(module, k, v)

    return call


def breakdown(x: Any, n: int, repeats: int, old: Any) -> None:
    """Where a CUDA call's time goes: device time of the one-pass launch (CUDA events around it, on
    the legacy stream Taichi launches on), the host time to enqueue it, the read and the fold; the
    old kernel's device time too where ``old`` is given."""
    from cuda.bindings import driver  # import cost: CUDA only, and an optional extra

    def check(result: Any) -> Any:
        err, *rest = result if isinstance(result, tuple) else (result,)
        assert err == driver.CUresult.CUDA_SUCCESS, err
        return rest[0] if rest else None

    start, end = check(driver.cuEventCreate(0)), check(driver.cuEventCreate(0))

    def measure(
        label: str, launch: Callable[[], Any], after: Callable[[], Any] = lambda: None, nbytes: int = n * 4
    ) -> None:
        device, host, rest = [], [], []
        for _ in range(repeats + 1):
            ti.sync()
            check(driver.cuEventRecord(start, 0))
            t0 = time.perf_counter()
            launch()
            t1 = time.perf_counter()
            check(driver.cuEventRecord(end, 0))
            check(driver.cuEventSynchronize(end))
            device.append(check(driver.cuEventElapsedTime(start, end)) * 1e-3)
            host.append(t1 - t0)
            t2 = time.perf_counter()
            after()
            rest.append(time.perf_counter() - t2)
        dev, enq, post = (statistics.median(v[1:]) * 1e6 for v in (device, host, rest))
        rate = f" ({nbytes / dev / 1e3:.0f} GB/s)" if nbytes else ""
        print(f"breakdown {label}: device {dev:.0f} us{rate}, enqueue {enq:.0f} us, after it {post:.0f} us", flush=True)

    s = stats_kernels.spec(x, per_component=False, with_abs=False)
    o = stats_kernels.onepass(s)
    assert o is not None, "no one-pass kernel on this arch"
    configs = ((1 << 19, 8, 256), (1 << 18, 8, 256), (1 << 20, 8, 256), (1 << 19, 8, 64), (1 << 19, 4, 256))
    for threads, unroll, rows in configs:
        nthr, chunk = min(n, threads), -(-n // min(n, threads))
        part = stats_kernels.onepass_part(s, rows)
        graph = stats_launch.LAUNCHES.get(s, o._replace(unroll=unroll), ()).graph
        args = {"arr": x, "part": part, "nthr": nthr, "chunk": chunk, "rows": rows}
        measure(
            f"{threads} threads, unroll {unroll}, {rows} rows",
            lambda graph=graph, args=args: graph.run(args),
            lambda part=part, rows=rows: stats_kernels.fold_onepass(read_array(part)[:, :, :rows], s.dt),
        )
    small = ti.ndarray(ti.f32, shape=1)
    part = stats_kernels.onepass_part(s, 1)
    graph = stats_launch.LAUNCHES.get(s, o, ()).graph
    args = {"arr": small, "part": part, "nthr": 1, "chunk": 1, "rows": 1}
    measure(
        "of 1 element (the launch cost; after it: the read)",
        lambda: graph.run(args),
        lambda: read_array(part),
        0,
    )
    fill_graph = ti.graph.GraphBuilder()
    fill_graph.dispatch(fill, ti.graph.Arg(ti.graph.ArgKind.NDARRAY, "x", ti.f32, ndim=1))
    compiled_fill = fill_graph.compile()
    measure("an elementwise kernel of 1 element in a ti.graph", lambda: compiled_fill.run({"x": small}), nbytes=0)
    measure("the same launched by Taichi", lambda: fill(small), nbytes=0)
    if old is not None:
        nthr, chunk = min(n, 1 << 19), -(-n // min(n, 1 << 19))
        part = old._SCRATCH.get("onepass", ti.f64, 256, (1, old.PACKED))
        measure("old kernel, launched by Taichi", lambda: old._k_stats_onepass(x, part, nthr, chunk, 256, s, o))


def timed(fn: Callable[[], Any]) -> float:
    ti.sync()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="cpu", choices=["cpu", "cuda", "vulkan"])
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--variants", action="store_true")
    parser.add_argument("--old", metavar="FILE", help="a saved stats_kernels.py to time alongside")
    parser.add_argument("--check", action="store_true", help="compare with numpy on small buffers first")
    parser.add_argument("--breakdown", action="store_true", help="CUDA: device/enqueue/read/fold times")
    options = parser.parse_args()
    ti.init(arch=getattr(ti, options.arch), log_level=ti.WARN, random_seed=1)
    if options.check:
        check_against_numpy()
    n = int(options.gib * (1 << 30)) // 4
    x = ti.ndarray(ti.f32, shape=n)
    fill(x)
    nbytes = n * 4
    cases: dict[str, Callable[[], Any]] = {
        "taichi plain sum": lambda: plain_sum(x),
        "buffer_stats": lambda: buffer_stats(x),
    }
    if options.old:
        old = load_old(options.old)
        old_stats = swapped(stats, _device_rows=lambda arr, prepared: old.device_rows(arr, prepared.spec))
        cases[f"old one-pass ({options.old})"] = lambda: old_stats(x)
    if options.variants:

        def variant(**attrs: Any) -> Callable[[], Any]:
            call = swapped(stats_kernels, **attrs)
            return lambda: call(x)

        def launch_only() -> None:
            s = stats_kernels.spec(x, per_component=False, with_abs=False)
            o = stats_kernels.onepass(s)
            assert o is not None, "no one-pass kernel on this arch"
            nthr, chunk, rows = stats_kernels.onepass_plan(n, s)
            part = stats_kernels.onepass_part(s, rows)
            graph = stats_launch.LAUNCHES.get(s, o, ()).graph
            graph.run({"arr": x, "part": part, "nthr": nthr, "chunk": chunk, "rows": rows})
            ti.sync()

        direct = swapped(stats_launch.LAUNCHES, use_graphs=False)
        cases["one-pass, launched directly (no ti.graph)"] = lambda: direct(x)
        cases["one-pass launch + sync only (no read, no fold)"] = launch_only
        for rows in (64, 1024):
            cases[f"one-pass, {rows} rows"] = variant(_ONEPASS_ROWS=rows)
        cases["blockwise (before)"] = variant(_ONEPASS_ARCHS=())
        if options.arch == "cpu":
            for chunks, unroll in ((256, 1), (256, 4), (1024, 8)):
                cases[f"one-pass {chunks} chunks, unroll {unroll}"] = variant(
                    _ONEPASS_CPU_CHUNKS=chunks, _ONEPASS_UNROLL=unroll
                )
        else:
            for threads, unroll in ((1 << 19, 4), (1 << 20, 8), (1 << 18, 16)):
                cases[f"one-pass {threads} threads, unroll {unroll}"] = variant(
                    _ONEPASS_THREADS=threads, _ONEPASS_UNROLL=unroll
                )
        cases["one-pass, with |x|"] = lambda: buffer_stats(x, with_abs=True)
    if options.breakdown:
        breakdown(x, n, options.repeats, load_old(options.old) if options.old else None)
        buffer_stats(x)
        profile = cProfile.Profile()
        profile.runcall(lambda: [buffer_stats(x) for _ in range(options.repeats)])
        pstats.Stats(profile).sort_stats("tottime").print_stats(14)
    reference = buffer_stats(x)
    check = np.float64(plain_sum(x))
    print(f"buffer_stats: {reference}; sum {reference.sum:.6g}, plain sum {check:.6g}")
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():  # compile and warm every case first
        fn()
    for _ in range(options.repeats):
        for name, fn in cases.items():
            times[name].append(timed(fn))
    for name, ts in times.items():
        t = statistics.median(ts)
        print(f"{options.arch} {options.gib:g} GiB f32, {name}: {t * 1e3:.3f} ms, {nbytes / t / 1e9:.0f} GB/s")


if __name__ == "__main__":
    main()
