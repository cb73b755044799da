"""What ``gl.verify`` says where runs differ on a GPU, and why: a race, float atomics, random draws.

Three small graphs, each exported for the arch and verified against Taichi's Python frontend:

- ``race``: an in-place smoothing pass that reads a neighbour another thread may already have
  written (the pattern of the vortex street's ``rho[i, j] = rho[inb, jnb]``), repeated;
- ``atomics``: a float histogram (``+=`` into shared cells);
- ``random``: a ``ti.random()`` init.

For each it prints the GL027/GL028 warnings ``validate()`` gives, the verdict per output and the
notes, so one can see that a difference is attributed to what the graph contains (race, atomic add,
``ti.random``) and never to a cause the graph lacks.

    python bench/noise_verdicts.py --arch cuda
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import argparse
import tempfile
from pathlib import Path

import numpy as np
import taichi as ti

import graphlab as gl

Plane = ti.types.ndarray(ti.f32, ndim=2)
Line = ti.types.ndarray(ti.f32, ndim=1)


@ti.kernel
def smooth_in_place(rho: Plane):
    for i, j in rho:
        if i > 0:
            rho[i, j] = 0.5 * rho[i, j] + 0.5 * rho[i - 1, j]


@ti.kernel
def histogram(x: Line, bins: Line):
    for i in x:
        bins[ti.cast(x[i] * 64.0, ti.i32) % bins.shape[0]] += x[i]


@ti.kernel
def scatter(x: Line):
    for i in x:
        x[i] = ti.random()


def race_graph() -> tuple[gl.Graph, dict[str, np.ndarray]]:
    g = gl.Graph("race")
    rho = g.ndarray("rho", ti.f32, ndim=2, shape=("n", "m"))
    with g.sequence("sweep", repeat=20) as s:
        s.dispatch(smooth_in_place, rho)
    rng = np.random.default_rng(0)
    return g, {"rho": rng.random((512, 512), dtype=np.float32)}


def atomics_graph() -> tuple[gl.Graph, dict[str, np.ndarray]]:
    g = gl.Graph("atomics")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="input")
    bins = g.ndarray("bins", ti.f32, ndim=1, shape="b", role="output")
    g.dispatch(histogram, x, bins)
    rng = np.random.default_rng(1)
    return g, {"x": rng.random(1 << 20, dtype=np.float32), "bins": np.zeros(16, np.float32)}


def random_graph() -> tuple[gl.Graph, dict[str, np.ndarray]]:
    g = gl.Graph("random")
    x = g.ndarray("x", ti.f32, ndim=1, shape="n", role="output")
    g.dispatch(scatter, x)
    return g, {"x": np.zeros(1 << 16, np.float32)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="cuda", choices=["cuda", "x64", "vulkan"])
    options = parser.parse_args()
    ti.init(arch=getattr(ti, {"x64": "cpu"}.get(options.arch, options.arch)), log_level=ti.WARN)
    with tempfile.TemporaryDirectory() as tmp:
        for make in (race_graph, atomics_graph, random_graph):
            graph, values = make()
            codes = [f"{d.code} {d.message}" for d in graph.validate() if d.code in ("GL027", "GL028")]
            print(f"== {graph.name} on {options.arch}")
            for line in codes:
                print(f"   validate: {line}")
            folder = Path(tmp) / graph.name
            gl.export(graph, folder, arch=options.arch, values=values, progress=False)
            report = gl.verify(folder, values)
            for out in report.outputs:
                print(f"   {out.name}: {out.verdict}, max abs {out.max_abs:.3g}, py vs py {out.noise}")
            for note in report.notes:
                print(f"   note: {note}")


if __name__ == "__main__":
    main()
