"""Big graphs: build, save, load, validate and render at 10**4 to 10**5 dispatches (issue 19, the hangs).

Targets on this CPU (exit code 1 when one is missed):

- 100,000 top-level dispatches: ``g.dispatch`` x 100,000, ``gl.loads`` of their file and
  ``g.validate()`` each under 2 s;
- 10,000 dispatches: ``g.validate()`` and ``g.render()`` (Graphviz source and SVG) each <= 1 s;
- 100,000 args bound across 1,000 dispatches: ``g.validate()`` and ``g.render()`` each under 2 s;
- 100,000 uses of one sequence (``g.append``) built under 2 s.

Each row gives wall-clock and CPU time (this process and the ``dot`` it waits for, from
``os.times``); the targets are checked on CPU time, which is what the work costs on an idle machine
(it is one Python thread, then ``dot``) and does not grow when other jobs share the 2 cores.
Validation times are taken warm: the first ``validate()`` also learns each kernel's reads and writes
(cached per kernel, a Vulkan compile in a child process) and is printed apart. Each time is the
median of ``--repeat`` runs, after an edit-free cache drop (``g._changed``) so nothing derived from
the graph is reused. The script prints the load average before and after.

    python bench/scale.py [--repeat 3] [--dispatches 100000]
"""

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import taichi as ti

import graphlab as gl
from graphlab.model.graphfile import dumps


@ti.kernel
def fill(x: ti.types.ndarray(dtype=ti.f32, ndim=1), v: ti.f32):  # type: ignore[valid-type]
    for i in x:
        x[i] = v


@ti.kernel
def axpy(a: ti.f32, x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):  # type: ignore[valid-type]
    for i in x:
        y[i] += a * x[i]


def flat(dispatches: int, args: int = 2) -> gl.Graph:
    """``dispatches`` top-level dispatches alternating two kernels over ``args`` buffers (x0, x1, ...)."""
    g = gl.Graph("flat")
    a = g.scalar("a", ti.f32)
    xs = [g.ndarray(f"x{i}", ti.f32, ndim=1) for i in range(args)]
    for i in range(dispatches):
        if i % 2:
            g.dispatch(fill, xs[i % args], a)
        else:
            g.dispatch(axpy, a, xs[i % args], xs[(i + 1) % args])
    return g


def uses(count: int) -> gl.Graph:
    """A one-dispatch sequence used ``count`` times at the top level."""
    g = gl.Graph("uses")
    with g.sequence("body") as body:
        body.dispatch(fill, g.ndarray("x", ti.f32, ndim=1), g.scalar("a", ti.f32))
    for _ in range(count - 1):
        g.append("body")
    return g


def timed(fn: Callable[[], Any], repeat: int, before: Callable[[], Any] = lambda: None) -> tuple[float, float]:
    """Median wall-clock and median CPU seconds (what the work costs, however many others share the cores)."""
    walls, cpus = [], []
    for _ in range(repeat):
        before()
        start, cpu = time.perf_counter(), _cpu()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(_cpu() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _cpu() -> float:
    """CPU seconds used so far by this process and the children it has waited for (``dot``)."""
    used = os.times()
    return used.user + used.system + used.children_user + used.children_system


def drop_cache(g: gl.Graph) -> None:
    g._changed("bench")  # what an edit does to everything derived from the graph


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dispatches", type=int, default=100_000)
    options = parser.parse_args()
    n, repeat = options.dispatches, options.repeat
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores)")
    rows: list[tuple[str, tuple[float, float], float]] = []  # (what, (wall, cpu) seconds, target; 0: none)

    build = timed(lambda: flat(n), repeat)
    rows.append((f"build: g.dispatch x {n:,}", build, 2.0))
    g = flat(n)
    text = dumps(g)
    rows.append((f"save: dumps of {n:,} dispatches ({len(text) / 1e6:.1f} MB)", timed(lambda: dumps(g), repeat), 0))
    rows.append(
        (f"load: gl.loads of {n:,} dispatches", timed(lambda: gl.loads(text, kernels=[fill, axpy]), repeat), 2.0)
    )
    start = time.perf_counter()
    g.validate()
    cold = time.perf_counter() - start  # wall: it waits for a child process
    rows.append((f"validate {n:,} dispatches (first: {cold:.2f} s with read/write analysis)",
                 timed(g.validate, repeat, lambda: drop_cache(g)), 2.0))  # fmt: skip
    rows.append(
        (f"render {n:,} dispatches (DOT source)", timed(lambda: g.render().source, repeat, lambda: drop_cache(g)), 0)
    )

    rows.append(
        (f"look up every node id of {n:,} dispatches", timed(lambda: [g.node(i) for i, _ in g.nodes()], repeat), 0)
    )
    rows.append((f"build: {n:,} uses of one sequence", timed(lambda: uses(n), repeat), 2.0))

    small = flat(10_000)
    small.validate()
    rows.append(("validate 10,000 dispatches", timed(small.validate, repeat, lambda: drop_cache(small)), 1.0))
    rows.append(("render 10,000 dispatches (DOT source)",
                 timed(lambda: small.render().source, repeat, lambda: drop_cache(small)), 1.0))  # fmt: skip
    rows.append(("render 10,000 dispatches to SVG",
                 timed(lambda: small.render().pipe(format="svg"), repeat, lambda: drop_cache(small)), 1.0))  # fmt: skip

    wide = flat(1_000, args=100_000)
    wide.validate()
    rows.append(
        ("validate 100,000 args, 1,000 dispatches", timed(wide.validate, repeat, lambda: drop_cache(wide)), 2.0)
    )
    rows.append(("render 100,000 args, 1,000 dispatches to SVG",
                 timed(lambda: wide.render().pipe(format="svg"), repeat, lambda: drop_cache(wide)), 2.0))  # fmt: skip

    missed = 0
    for what, (wall, cpu), target in rows:
        verdict = "" if not target else ("  ok" if cpu < target else f"  MISSED (target {target:g} s)")
        missed += bool(target) and cpu >= target
        print(f"{what}: {cpu * 1e3:,.0f} ms CPU, {wall * 1e3:,.0f} ms wall{verdict}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
