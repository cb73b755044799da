"""Running a graph built with graphlab vs the hand-built ti.graph: the ratio of frame times.

Both are Taichi's mpm88 update graph (500 substeps = 2,000 dispatches a frame) over the same
buffers, in one process, alternating frame by frame; the median of several frames each. Also
measures the pre-run value check alone, as a share of a frame.

    python bench/run_overhead.py --arch cpu --frames 15
    python bench/run_overhead.py --arch cuda --frames 40
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import taichi as ti

from graphlab.api.examples import hand_built_mpm88, load_taichi_example, mpm88_buffers, mpm88_graph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="cpu", choices=["cpu", "cuda", "vulkan"])
    parser.add_argument("--frames", type=int, default=15)
    parser.add_argument("--substeps", type=int, default=500)
    parser.add_argument("--json", help="also write the numbers to this file")
    options = parser.parse_args()
    ti.init(arch=getattr(ti, options.arch), log_level=ti.WARN, offline_cache=True)
    m = load_taichi_example("mpm88_graph")
    buffers = mpm88_buffers(m)
    ours = mpm88_graph(m, options.substeps).compile()
    theirs = hand_built_mpm88(m, options.substeps)
    for _ in range(2):  # warm up both
        ours.run(buffers)
        theirs.run(buffers)
    ti.sync()
    t_ours, t_theirs, t_check = [], [], []
    for _ in range(options.frames):
        start = time.perf_counter()
        ours.run(buffers)
        ti.sync()
        t_ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs.run(buffers)
        ti.sync()
        t_theirs.append(time.perf_counter() - start)
        start = time.perf_counter()
        ours.prepare(buffers)
        t_check.append(time.perf_counter() - start)
    result = {
        "arch": options.arch,
        "substeps": options.substeps,
        "frames": options.frames,
        "graphlab_ms": statistics.median(t_ours) * 1e3,
        "hand_built_ms": statistics.median(t_theirs) * 1e3,
        "check_us": statistics.median(t_check) * 1e6,
    }
    result["ratio"] = result["graphlab_ms"] / result["hand_built_ms"]
    result["check_share"] = result["check_us"] / 1e3 / result["hand_built_ms"]
    print(
        f"mpm88 on {options.arch}, {options.substeps} substeps, median of {options.frames} frames: "
        f"graphlab {result['graphlab_ms']:.2f} ms, hand-built ti.graph {result['hand_built_ms']:.2f} ms, "
        f"ratio {result['ratio']:.3f} (target <= 1.02); pre-run check {result['check_us']:.1f} us "
        f"= {100 * result['check_share']:.3f}% of a frame (target < 1%)"
    )
    if options.json:
        with Path(options.json).open("w") as handle:
            json.dump(result, handle, indent=2)


if __name__ == "__main__":
    main()
