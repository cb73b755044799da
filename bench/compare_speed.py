"""How fast ``dbg.compare(arch)`` finds a cross-arch divergence in Taichi's mpm88 (500 substeps a frame).

The graph is mpm88's 4-kernel substep plus a fifth kernel, ``plant``, that counts substeps and at
substep ``--plant`` mirrors one particle's x (``1 - x``) when the last bit of ``sin(c)`` is set: that bit
differs between x64 and Vulkan (measured; see ``tests/compare_kernels.py``), so only one side moves
the particle. mpm88's float atomics also make the two archs differ in the last bits from the first
substep, growing as the particles interact; a tolerance (``--rtol``/``--atol``, default 0.05 each)
absorbs that noise, so the first
difference beyond it is the planted one.

Printed: one frame on this arch (x64, one thread), one frame on ``--against`` (timed in a child
process: one Taichi runtime holds one arch), and three compare wall times, each with its ratio to the
sum of the two frames (target <= 3): ``cold`` (child start, compilation and the search, all
included), ``warm`` (a second compare of the same session, reusing the process the first one kept)
and ``prepared`` (a new session's compare after ``prepare_compare(wait=True)`` reported the process
started, compiled and rehearsed once: the search only), and what was found (the same each time)::

    python bench/compare_speed.py --against vulkan
    python bench/compare_speed.py --against vulkan --json compare_speed.json
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import taichi as ti

import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_buffers

I1 = ti.types.ndarray(dtype=ti.i32, ndim=1)
V1 = ti.types.ndarray(dtype=ti.math.vec2, ndim=1)
SIN_SPLIT = 9.323565483093262  # ti.sin of it differs in the last bit between x64 and Vulkan (lavapipe)
PROBES = np.linspace(1.0, 100.0, 4096, dtype=np.float32)  # where to look for such a value on other archs


@ti.kernel
def plant(tick: I1, x: V1, c: ti.f32, at: ti.i32):
    for _ in range(1):
        if tick[0] == at and (ti.bit_cast(ti.sin(c), ti.i32) & 1) == 1:
            x[0][0] = 1.0 - x[0][0]  # mirrored: stays inside the box
        tick[0] += 1


@ti.kernel
def sin_bits(c: ti.types.ndarray(dtype=ti.f32, ndim=1), out: I1):
    for i in c:
        out[i] = ti.bit_cast(ti.sin(c[i]), ti.i32) & 1


def last_sin_bits() -> list[int]:
    """The last bit of ``ti.sin`` of every probe value on the current arch."""
    c, out = ti.ndarray(ti.f32, PROBES.size), ti.ndarray(ti.i32, PROBES.size)
    c.from_numpy(PROBES)
    sin_bits(c, out)
    return [int(b) for b in out.to_numpy()]


def split_value(against: str) -> float:
    """A value whose ``ti.sin`` ends in another bit on x64 than on ``against`` (measured there, in a child)."""
    if against == "vulkan":
        return SIN_SPLIT
    probe = [sys.executable, __file__, "--probe-only", against]
    child = subprocess.run(probe, capture_output=True, text=True, check=True)
    theirs = json.loads(child.stdout.strip().splitlines()[-1])["bits"]
    mine = last_sin_bits()
    differing = [float(v) for v, a, b in zip(PROBES, mine, theirs) if a != b]
    if not differing:
        raise SystemExit(f"ti.sin agrees to the last bit on x64 and {against} for all probes: nothing to plant")
    return differing[0]


def planted_mpm88(m: Any, substeps: int) -> gl.Graph:
    """mpm88's substep with ``plant`` appended (its arg ``at``: the substep that differs)."""
    g = gl.Graph("update")
    x = g.ndarray("x", ti.math.vec2, ndim=1, shape="n")
    v = g.ndarray("v", ti.math.vec2, ndim=1, shape="n")
    C = g.ndarray("C", ti.math.mat2, ndim=1, shape="n")
    J = g.ndarray("J", ti.f32, ndim=1, shape="n")
    grid_v = g.ndarray("grid_v", ti.math.vec2, ndim=2, shape=("G", "G"))
    grid_m = g.ndarray("grid_m", ti.f32, ndim=2, shape=("G", "G"))
    tick = g.ndarray("tick", ti.i32, ndim=1, shape=(1,))
    with g.sequence("substep", repeat=substeps) as s:
        s.dispatch(m.substep_reset_grid, grid_v, grid_m)
        s.dispatch(m.substep_p2g, x, v, C, J, grid_v, grid_m)
        s.dispatch(m.substep_update_grid_v, grid_v=grid_v, grid_m=grid_m)
        s.dispatch(m.substep_g2p, x=x, v=v, C=C, J=J, grid_v=grid_v)
        s.dispatch(plant, tick, x, g.scalar("c", ti.f32), g.scalar("at", ti.i32))
    return g


def values(m: Any, at: int, c: float) -> dict[str, Any]:
    out = mpm88_buffers(m)
    out.update(tick=ti.ndarray(ti.i32, 1), c=c, at=at)
    return out


def frame_ms(m: Any, args: argparse.Namespace) -> float:
    """Median wall time of one frame of the compiled graph (after a warm-up frame)."""
    compiled = planted_mpm88(m, args.substeps).compile()
    times = []
    for k in range(args.frames + 1):
        given = values(m, args.plant, args.c)
        ti.sync()
        start = time.perf_counter()
        compiled.run(given)
        ti.sync()
        if k:
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def init(arch: str) -> None:
    options: dict[str, Any] = {"log_level": ti.WARN}
    if arch == "x64":
        options["cpu_max_num_threads"] = 1
    ti.init(arch=getattr(ti, arch), **options)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="vulkan")
    parser.add_argument("--substeps", type=int, default=500)
    parser.add_argument("--plant", type=int, default=400, help="the substep (repetition) that differs")
    parser.add_argument("--frames", type=int, default=3)
    parser.add_argument("--rtol", type=float, default=0.05)
    parser.add_argument("--atol", type=float, default=0.05)
    parser.add_argument("--json", help="also write the numbers to this file")
    parser.add_argument("--frame-only", metavar="ARCH", help=argparse.SUPPRESS)  # the child timing one arch
    parser.add_argument("--probe-only", metavar="ARCH", help=argparse.SUPPRESS)  # the child probing ti.sin
    parser.add_argument("--c", type=float, help=argparse.SUPPRESS)  # the planted value, for the frame child
    args = parser.parse_args()
    if args.probe_only:
        init(args.probe_only)
        print(json.dumps({"bits": last_sin_bits()}))
        return
    if args.frame_only:
        init(args.frame_only)
        print(json.dumps({"frame_ms": frame_ms(load_taichi_example("mpm88_graph"), args)}))
        return
    if args.c is None:
        init("x64")
        args.c = split_value(args.against)
    child = subprocess.run(
        [sys.executable, __file__, "--frame-only", args.against, "--substeps", str(args.substeps),
         "--plant", str(args.plant), "--frames", str(args.frames), "--c", repr(args.c)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    theirs = json.loads(child.stdout.strip().splitlines()[-1])["frame_ms"]
    init("x64")
    m = load_taichi_example("mpm88_graph")
    mine = frame_ms(m, args)
    graph = planted_mpm88(m, args.substeps)

    def timed(dbg: Any) -> tuple[float, Any]:
        start = time.perf_counter()
        found = dbg.compare(args.against, rtol=args.rtol, atol=args.atol)
        return (time.perf_counter() - start) * 1e3, found

    dbg = graph.debug(values(m, args.plant, args.c))
    cold, found = timed(dbg)
    warm, again = timed(dbg)  # the process the first compare kept
    dbg.close()
    fresh = graph.debug(values(m, args.plant, args.c))
    fresh.prepare_compare(args.against, wait=True)  # untimed: done while the user works
    prepared, ahead = timed(fresh)
    fresh.close()

    def where(d: Any) -> Any:  # the values differ run to run: mpm88's start positions are random
        return None if d is None else (d.kind, d.index, d.step_id, d.buffer, d.first_index)

    if {where(again), where(ahead)} != {where(found)}:
        raise SystemExit(f"the three compares disagree: {found} / {again} / {ahead}")
    both = mine + theirs
    results = {
        "substeps": args.substeps,
        "plant": args.plant,
        "against": args.against,
        "rtol": args.rtol,
        "atol": args.atol,
        "planted_c": args.c,
        "frame_x64_ms": round(mine, 1),
        f"frame_{args.against}_ms": round(theirs, 1),
        "compare_ms": round(cold, 1),
        "ratio_to_both_frames": round(cold / both, 2),
        "warm_compare_ms": round(warm, 1),
        "warm_ratio_to_both_frames": round(warm / both, 2),
        "prepared_compare_ms": round(prepared, 1),
        "prepared_ratio_to_both_frames": round(prepared / both, 2),
        "found": None if found is None else str(found),
    }
    for key, value in results.items():
        print(f"{key}: {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
