"""How fast the step debugger is on Taichi's mpm88 graph (500 substeps = 2,000 dispatches a frame).

Numbers, one line each (targets from DESIGN.md):

1. ``continue_()`` over a whole frame with no breakpoint vs the compiled graph's own frame time
   (target <= 1.1x): from step 0 (the span is the whole graph) and from step 1 (a partial
   repetition, then power-of-two chunks of repetitions as compiled segments).
2. ``step()`` plus the refreshed device statistics of what it wrote (target <= 20 ms on the GPU).
3. Device statistics of a 1 GiB f32 buffer (target <= 100 ms on an H100; on CPU a smaller buffer,
   flagged as such).
4. What the snapshots behind ``back()`` cost per step, and the memory they hold.

Needs only ``graphlab`` and ``taichi`` importable (``PYTHONPATH=<site dir>`` is enough)::

    python bench/debug_speed.py --arch cpu
    python bench/debug_speed.py --arch cuda --frames 20 --json debug_speed.json
"""

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import taichi as ti

from graphlab.api.examples import load_taichi_example, mpm88_buffers, mpm88_graph
from graphlab.debug import DebugOptions
from graphlab.debug.stats import buffer_stats


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


def frame_times(args: argparse.Namespace, m: Any, results: dict[str, Any]) -> None:
    graph = mpm88_graph(m, args.substeps)
    buffers = mpm88_buffers(m)
    compiled = graph.compile()
    dbg = graph.debug(buffers)
    for _ in range(2):  # warm up: kernels, segments, statistics kernels
        compiled.run(buffers)
        dbg.restart()
        dbg.continue_()
        dbg.restart()
        dbg.step()
        dbg.continue_()
    ti.sync()
    t_graph, t_cont0, t_cont1 = [], [], []
    for _ in range(args.frames):
        start = time.perf_counter()
        compiled.run(buffers)
        ti.sync()
        t_graph.append(time.perf_counter() - start)
        dbg.restart()
        start = time.perf_counter()
        stop = dbg.continue_()
        t_cont0.append(time.perf_counter() - start)
        assert stop.reason == "end", stop
        dbg.restart()
        dbg.step()
        start = time.perf_counter()
        dbg.continue_()
        t_cont1.append(time.perf_counter() - start)
    t_stats = []
    for _ in range(args.frames):  # what a stop adds: device statistics of the buffers the frame wrote
        ti.sync()
        start = time.perf_counter()
        for name in ("x", "v", "C", "J", "grid_v", "grid_m"):
            buffer_stats(buffers[name])
        t_stats.append(time.perf_counter() - start)
    g, c0, c1 = median_ms(t_graph), median_ms(t_cont0), median_ms(t_cont1)
    results["stop_stats_ms"] = median_ms(t_stats)
    results.update(graph_frame_ms=g, continue_from_0_ms=c0, continue_from_1_ms=c1, segments=len(dbg.segments))
    steps = graph.step_count()
    print(f"compiled graph frame ({steps} dispatches): {g:.2f} ms (median of {args.frames})")
    print(f"continue_() over the frame from step 0: {c0:.2f} ms = {c0 / g:.3f}x the compiled graph (target <= 1.1x)")
    print(
        f"  reading the stop's statistics (6 buffers, on the device, when first read): "
        f"{results['stop_stats_ms']:.2f} ms more"
    )
    print(
        f"continue_() from step 1 ({steps - 1} dispatches, {len(dbg.segments)} segments): {c1:.2f} ms "
        f"= {c1 / g:.3f}x the compiled graph (target <= 1.1x)"
    )


def step_times(args: argparse.Namespace, m: Any, results: dict[str, Any]) -> None:
    graph = mpm88_graph(m, args.substeps)
    with_snapshots = graph.debug(mpm88_buffers(m))
    without = graph.debug(mpm88_buffers(m), options=DebugOptions(budget_bytes=1))  # every copy skipped
    for dbg in (with_snapshots, without):
        for _ in range(8):  # warm up every kernel and statistics variant
            dbg.step()
    timed: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(args.steps):
        for key, dbg in (("with", with_snapshots), ("without", without)):
            start = time.perf_counter()
            stop = dbg.step()
            written = [s.count for s in stop.stats.values()]  # reduced on the device now
            timed[key].append(time.perf_counter() - start)
            assert written, "step() offers the statistics of what it wrote"
    ti.sync()
    s_with, s_without = median_ms(timed["with"]), median_ms(timed["without"])
    usage = with_snapshots.snapshots
    held_steps = max(usage.positions, 1)
    results.update(
        step_ms=s_with,
        step_without_snapshots_ms=s_without,
        snapshot_ms_per_step=s_with - s_without,
        snapshot_bytes_held=usage.held_bytes,
        snapshot_bytes_per_step=usage.held_bytes / held_steps,
        initial_state_bytes=usage.initial_bytes,
    )
    print(
        f"step() + device statistics of what it wrote: {s_with:.2f} ms (median of {args.steps}; "
        f"target <= 20 ms on the GPU)"
    )
    print(f"snapshots for back(): {s_with - s_without:.3f} ms per step (step() without them: {s_without:.2f} ms)")
    print(
        f"snapshot memory: {usage.held_bytes / 2**20:.2f} MiB held for {usage.positions} steps "
        f"({usage.held_bytes / held_steps / 2**10:.1f} KiB a step, budget {usage.budget_bytes / 2**30:.2f} GiB), "
        f"plus the initial state {usage.initial_bytes / 2**20:.2f} MiB"
    )


def big_stats(args: argparse.Namespace, results: dict[str, Any]) -> None:
    mib = args.stats_mib or (1024 if args.arch == "cuda" else 128)
    n = mib * 2**20 // 4
    big = ti.ndarray(ti.f32, shape=(n,))
    big.fill(1.5)
    buffer_stats(big)  # compile
    times = []
    for _ in range(args.repeats):
        ti.sync()
        start = time.perf_counter()
        s = buffer_stats(big)
        times.append(time.perf_counter() - start)
    assert s.mean == 1.5 and s.count == n
    t = median_ms(times)
    results.update(stats_mib=mib, stats_ms=t)
    flag = "" if mib == 1024 else f" [{mib} MiB, not 1 GiB: scaled to 1 GiB that is {t * 1024 / mib:.0f} ms]"
    print(f"device statistics of a {mib} MiB f32 buffer: {t:.2f} ms (target <= 100 ms for 1 GiB on an H100){flag}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="cpu", choices=["cpu", "cuda", "vulkan"])
    parser.add_argument("--frames", type=int, default=None, help="frames per timing (default 5 on CPU, 20 else)")
    parser.add_argument("--steps", type=int, default=200, help="step() calls to time")
    parser.add_argument("--substeps", type=int, default=500)
    parser.add_argument("--stats-mib", type=int, default=None, help="size of the statistics buffer")
    parser.add_argument("--repeats", type=int, default=5, help="timed statistics runs")
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args()
    args.frames = args.frames or (5 if args.arch == "cpu" else 20)
    ti.init(arch=getattr(ti, args.arch), log_level=ti.WARN, offline_cache=True)
    m = load_taichi_example("mpm88_graph")
    results: dict[str, Any] = {"arch": args.arch, "substeps": args.substeps, "frames": args.frames}
    from graphlab.bridge.runtime import cpu_max_threads

    if args.arch == "cpu":
        results["threads"] = cpu_max_threads()
    print(f"graphlab debugger on {args.arch}, mpm88 with {args.substeps} substeps; numpy {np.__version__}")
    frame_times(args, m, results)
    step_times(args, m, results)
    big_stats(args, results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
