"""Statistics of a big buffer (`graphlab.debug.stats.buffer_stats`) against Taichi's plain sum over it.

One process, alternating: the debugger's statistics (min, max, sum, sum of squares, NaN/Inf/zero
counts, first non-finite index) and a plain ``for i in x: s += x[i]`` kernel over the same f32
buffer, each timed from the call to the result on the host. Reports the bandwidth each reaches
(bytes of the buffer over the time). ``--variants`` also times the one-pass kernel's thread counts
and unrolls, and the blockwise path it replaces.

    python bench/stats_speed.py --arch cuda --gib 1
    python bench/stats_speed.py --arch cpu --gib 0.125
"""

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import taichi as ti

import graphlab  # noqa: F401  (arranges the bridge after taichi)
from graphlab.debug import stats_kernels
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
    options = parser.parse_args()
    ti.init(arch=getattr(ti, options.arch), log_level=ti.WARN, random_seed=1)
    n = int(options.gib * (1 << 30)) // 4
    x = ti.ndarray(ti.f32, shape=n)
    fill(x)
    nbytes = n * 4
    cases: dict[str, Callable[[], Any]] = {
        "taichi plain sum": lambda: plain_sum(x),
        "buffer_stats": lambda: buffer_stats(x),
    }
    if options.variants:

        def variant(**attrs: Any) -> Callable[[], Any]:
            def run() -> Any:
                saved = {k: getattr(stats_kernels, k) for k in attrs}
                for k, v in attrs.items():
                    setattr(stats_kernels, k, v)
                try:
                    return buffer_stats(x)
                finally:
                    for k, v in saved.items():
                        setattr(stats_kernels, k, v)

            return run

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
