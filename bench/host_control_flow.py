"""The cost of one control decision in the deployed module: the generated C host reading a flag.

The same while-loop as ``control_flow.py`` (a body of two small kernels, K iterations; a counter
kernel clears the flag after K), exported with ``gl.export`` and run by the generated C host program
in Taichi's C runtime, against the same body unrolled K times in one static graph, also exported
and run by the C host. Each graph first rewinds the counter, so every frame runs K iterations; the
C host reports the mean frame time after the first frame. Rounds alternate which program starts
first; medians are reported. "Per decision" = (loop - unrolled) / decisions. On CUDA the loop at
check_every=1 also runs with ``GRAPHLAB_FLAG_READ=map`` (Taichi's map/unmap instead of the 4-byte
driver copy), the host's read before the driver path. Each k > 1 also runs guarded
(``guarded=True``: what the body writes is copied aside before each group of k, and the last group
is replayed reading every iteration, so the loop runs exactly K iterations).

    python bench/host_control_flow.py --arch cpu
    python bench/host_control_flow.py --arch cuda --frames 20
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # graphlab from this repository

import numpy as np
import taichi as ti

import graphlab as gl
from graphlab.deploy.verify import run_host

ARCHS = {"cpu": "x64", "cuda": "cuda", "vulkan": "vulkan"}


@ti.kernel
def work(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = x[i] * 0.999 + 0.001


@ti.kernel
def rewind(counter: ti.types.ndarray(dtype=ti.i32, ndim=1), iterations: ti.i32):
    counter[0] = iterations


@ti.kernel
def countdown(counter: ti.types.ndarray(dtype=ti.i32, ndim=1), flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    counter[0] -= 1
    flag[0] = 1 if counter[0] > 0 else 0


def declare(g: gl.Graph) -> dict:
    return {
        "x": g.ndarray("x", ti.f32, ndim=1),
        "counter": g.ndarray("counter", ti.i32, ndim=1, shape=(1,)),
        "flag": g.ndarray("flag", ti.i32, ndim=1, shape=(1,)),
        "iterations": g.scalar("iterations", ti.i32),
    }


def looped(iterations: int, k: int, guarded: bool = False) -> gl.Graph:
    """Rewind the counter, then the while-loop reading the flag every ``k`` iterations."""
    g = gl.Graph(f"looped_k{k}{'_guarded' * guarded}")
    a = declare(g)
    g.dispatch(rewind, a["counter"], a["iterations"])
    body = g.define("body")
    body.dispatch(work, a["x"])
    body.dispatch(countdown, a["counter"], a["flag"])
    g.loop(body, while_=a["flag"], max_iter=iterations + 1, check_every=k, guarded=guarded, name="solve")
    return g


def unrolled(iterations: int) -> gl.Graph:
    """The same work with no decision: rewind, then the body ``iterations`` times in one graph."""
    g = gl.Graph("unrolled")
    a = declare(g)
    g.dispatch(rewind, a["counter"], a["iterations"])
    with g.sequence("body", repeat=iterations) as s:
        s.dispatch(work, a["x"])
        s.dispatch(countdown, a["counter"], a["flag"])
    return g


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="cpu", choices=sorted(ARCHS))
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--elements", type=int, default=1 << 16)
    parser.add_argument("--frames", type=int, default=20, help="frames per program run; the first is set-up")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--check-every", type=int, nargs="+", default=[1, 8], help="divisors of --iterations")
    options = parser.parse_args()
    arch = ARCHS[options.arch]
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    values = {
        "x": np.zeros(options.elements, np.float32),
        "counter": np.zeros(1, np.int32),
        "flag": np.zeros(1, np.int32),
        "iterations": np.int32(options.iterations),
    }
    programs = {f"k={k}": looped(options.iterations, k) for k in options.check_every}
    programs |= {f"k={k} guarded": looped(options.iterations, k, True) for k in options.check_every if k > 1}
    programs["unrolled"] = unrolled(options.iterations)
    times: dict[str, list[float]] = {name: [] for name in programs}
    with tempfile.TemporaryDirectory(prefix="graphlab-host-control-") as tmp:
        inputs = Path(tmp, "inputs")
        inputs.mkdir()
        for name, value in values.items():
            np.save(inputs / f"{name}.npy", np.asarray(value))
        for name, graph in programs.items():
            gl.export(graph, Path(tmp, name), arch, values=values, progress=False)
        cases = [(name, name, None) for name in programs]
        if arch == "cuda":
            first = f"k={options.check_every[0]}"
            cases.append((f"{first}, map", first, "map"))
            times[f"{first}, map"] = []
        for round_ in range(options.rounds):
            for case, folder, how in cases if round_ % 2 == 0 else cases[::-1]:
                os.environ.pop("GRAPHLAB_FLAG_READ", None)
                if how:
                    os.environ["GRAPHLAB_FLAG_READ"] = how
                out = Path(tmp, f"out-{round_}-{case}")
                run = run_host(Path(tmp, folder), inputs, out, frames=options.frames, events=folder != "unrolled")
                loops = {e.event.value for e in run.events}
                k = int(folder.removeprefix("k=").split()[0]) if folder != "unrolled" else 1
                expected = min(-(-options.iterations // k) * k, options.iterations + 1)  # whole groups, or max_iter
                if folder.endswith("guarded"):
                    expected = options.iterations  # exactly where reading every iteration stops
                assert folder == "unrolled" or loops == {expected}, f"{case}: loop counts {loops}, not {expected}"
                times[case].append(run.frame_ms)
        os.environ.pop("GRAPHLAB_FLAG_READ", None)
    base = statistics.median(times["unrolled"])
    print(f"C host on {arch}: {options.iterations} iterations a frame, median of {options.rounds} rounds")
    print(f"  unrolled in one graph: {base:.3f} ms a frame")
    for case in times:
        if case == "unrolled":
            continue
        k = int(case.split(",")[0].removeprefix("k=").split()[0])
        loop = statistics.median(times[case])
        decisions = -(-options.iterations // k)
        print(
            f"  while-loop, check_every={case.removeprefix('k=')}: {loop:.3f} ms a frame, {loop / base:.2f}x unrolled, "
            f"{(loop - base) / decisions * 1e3:.1f} us per decision ({decisions} decisions)"
        )


if __name__ == "__main__":
    main()
