"""Validation and rendering of a 10,000-dispatch graph (target <= 1 s each on this CPU).

Two shapes of 10,000 dispatches: mpm88's 4-kernel sequence repeated 2,500 times (the issue's case),
and a flat graph of 10,000 top-level dispatches (the worst case: nothing is drawn once).
Read/write facts come from Taichi's compiler (Vulkan) and are cached per kernel; the first
(cold) validation includes that cost and is reported separately.

    python bench/check_scale.py
"""

from __future__ import annotations

import statistics
import time

import taichi as ti

import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_graph


def timed(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def flat_graph(m, dispatches: int) -> gl.Graph:
    g = mpm88_graph(m, substeps=1)
    body = list(g.sequences["substep"])
    flat = gl.Graph("flat")
    for arg in g.args.values():
        flat.declare(arg)
    for i in range(dispatches):
        node = body[i % 4]
        flat.insert(node.kernel, bindings=dict(node.bindings))
    return flat


def bump(g: gl.Graph) -> None:
    g._changed("bench")  # drop cached facts, as an edit would


def main() -> None:
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    m = load_taichi_example("mpm88_graph")
    for label, graph in (
        ("2,500 x 4-kernel sequence", mpm88_graph(m, 2500)),
        ("flat 10,000 dispatches", flat_graph(m, 10_000)),
    ):
        assert graph.step_count() == 10_000
        start = time.perf_counter()
        graph.validate()
        cold = time.perf_counter() - start
        validate = timed(lambda g=graph: (bump(g), g.validate()))
        render = timed(lambda g=graph: (bump(g), g.render().pipe(format="svg")), repeat=3)
        print(
            f"{label}: validate {validate * 1e3:.1f} ms (first, with read/write analysis: {cold * 1e3:.0f} ms), "
            f"render to SVG {render * 1e3:.1f} ms"
        )


if __name__ == "__main__":
    main()
