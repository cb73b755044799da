"""Print a sha256 of graphlab.random's draws per arch: equal hashes mean bit-identical draws.

    python bench/random_archs.py                      # x64 (and vulkan where it runs)
    python bench/random_archs.py --arch x64 --arch cuda --export

For each arch it hashes (1) the draws of every form (``rand_u32x4``, ``rand_u32``, ``rand_f32``,
``rand_vec4``) for 2**20 elements under four seeds and counters, launched as a plain kernel, (2) the
buffers after a graph whose repeated substep draws with a counter buffer, run as ``ti.graph``, and
with ``--export`` (3) the same graph exported for the arch and run in Taichi's C runtime. It exits
with status 1 when any hash differs from the first arch's. Needs only taichi, numpy and graphlab.

On the CPU machine (x64 and Mesa's lavapipe Vulkan, 2026-11-26) every arch printed::

    kernel draws     sha256 45658f956e1fa836a952f3ca3757106a8b05397658fdd970373f6a1400023658
    ti.graph run     sha256 ca8425169704330136a5fbec5113d5505b6cf0cd524f52042c501b0bdfc3c699
    exported module  sha256 ca8425169704330136a5fbec5113d5505b6cf0cd524f52042c501b0bdfc3c699

(the graph's two lines agree: the exported module writes the same buffers as ``ti.graph``).
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import argparse
import hashlib
import sys
import tempfile
from pathlib import Path

import numpy as np
import taichi as ti

import graphlab as gl
from graphlab.random import advance_counter, rand_f32, rand_u32, rand_u32x4, rand_vec4

N = 1 << 20
CASES = [(0, 0), (1, 7), (-123456789, 2**31 - 1), (2**31 - 1, 99)]  # (seed, counter)
PARTICLES, SUBSTEPS = 4096, 10
ARCHS = {"x64": ti.cpu, "cuda": ti.cuda, "vulkan": ti.vulkan}


@ti.kernel
def draw_all(
    seed: ti.i32,
    counter: ti.i32,
    words: ti.types.ndarray(ti.u32, ndim=2),
    one: ti.types.ndarray(ti.u32, ndim=1),
    unit: ti.types.ndarray(ti.f32, ndim=1),
    units: ti.types.ndarray(ti.math.vec4, ndim=1),
):
    for i in one:
        w = rand_u32x4(seed, i, counter)
        for j in ti.static(range(4)):
            words[i, j] = w[j]
        one[i] = rand_u32(seed, i, counter)
        unit[i] = rand_f32(seed, i, counter)
        units[i] = rand_vec4(seed, i, counter)


@ti.kernel
def kick(x: ti.types.ndarray(ti.math.vec2, ndim=1), seed: ti.i32, step: ti.types.ndarray(ti.i32, ndim=1)):
    for i in x:
        r = rand_vec4(seed, i, step[0])
        x[i] = ti.Vector([r[0], r[1]]) - 0.5


def particle_graph() -> gl.Graph:
    g = gl.Graph("kick")
    x = g.ndarray("x", ti.math.vec2, ndim=1)
    step = g.ndarray("step", ti.i32, ndim=1)
    with g.sequence("substep", repeat=SUBSTEPS) as s:
        s.dispatch(kick, x, g.scalar("seed", ti.i32, role="input"), step)
        s.dispatch(advance_counter, step)
    return g


def particle_values() -> dict:
    return {"x": np.zeros((PARTICLES, 2), np.float32), "seed": 2024, "step": np.array([5], np.int32)}


def digest(arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def kernel_hash() -> str:
    out = []
    for seed, counter in CASES:
        words, one = np.zeros((N, 4), np.uint32), np.zeros(N, np.uint32)
        unit, units = np.zeros(N, np.float32), np.zeros((N, 4), np.float32)
        draw_all(seed, counter, words, one, unit, units)
        out += [words, one, unit, units]
    return digest(out)


def graph_hash() -> str:
    values = particle_values()
    particle_graph().run(values)
    return digest([values["x"], values["step"]])


def module_hash(arch: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "kick"
        gl.export(particle_graph(), folder, arch, values=particle_values(), progress=False)
        values = particle_values()
        with gl.load_module(folder) as module:
            module.graphs["kick"].run(**values)
    return digest([values["x"], values["step"]])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", action="append", choices=sorted(ARCHS), help="repeatable; default x64 and vulkan")
    parser.add_argument("--export", action="store_true", help="also export the graph and run it in the C runtime")
    options = parser.parse_args()
    archs = options.arch or ["x64", "vulkan"]
    rows: list[tuple[str, str, str]] = []
    for arch in archs:
        ti.init(arch=ARCHS[arch], log_level=ti.WARN, offline_cache=False)
        if ti.lang.impl.current_cfg().arch != ARCHS[arch]:  # Taichi falls back to x64 with a warning
            print(f"{arch}: not available on this machine (Taichi fell back); skipped")
            continue
        rows.append((arch, "kernel draws", kernel_hash()))
        rows.append((arch, "ti.graph run", graph_hash()))
        if options.export:
            rows.append((arch, "exported module", module_hash(arch)))
    for arch, what, h in rows:
        print(f"{arch:7s} {what:16s} sha256 {h}")
    first = {what: h for arch, what, h in rows if arch == rows[0][0]} if rows else {}
    same = all(first.get(what, h) == h for _, what, h in rows)
    ran = sorted({arch for arch, _, _ in rows})
    print(f"{'identical' if same else 'DIFFERENT'} across {', '.join(ran) or 'no arch'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
