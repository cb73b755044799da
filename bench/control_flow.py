"""The cost of one host-side control decision (reading a flag between compiled segments).

A while-loop whose body is two small kernels runs K iterations (a counter kernel clears the flag
after K) and is compared, in one process, with the same body repeated K times inside one static
ti.graph. The difference per iteration is what a decision costs: a device-to-host read of one
i32 (which waits for the device to finish the segment) plus launching the next segment.

With ``check_every=k`` the flag is read once every k iterations (k=1: every iteration); the loop is
timed with the fast flag read and, at k=1, with Taichi's accessor (the read before the fast path).
For each k > 1 the guarded form (``guarded=True``) is timed too: it copies the buffers the body
writes aside before each group of k and, after the last read, copies them back and replays that
group reading every iteration, so it stops exactly where k=1 does.

    python bench/control_flow.py --arch cpu
    python bench/control_flow.py --arch cuda
"""

import argparse
import statistics
import time

import numpy as np
import taichi as ti

import graphlab as gl
from graphlab.bridge.device_read import fast_reads, read_path
from graphlab.bridge.runtime import read_flag


@ti.kernel
def work(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = x[i] * 0.999 + 0.001


@ti.kernel
def countdown(counter: ti.types.ndarray(dtype=ti.i32, ndim=1), flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    counter[0] -= 1
    flag[0] = 1 if counter[0] > 0 else 0


def graphs(iterations: int, check_every: tuple[int, ...]) -> tuple[dict[tuple[int, bool], gl.Graph], gl.Graph]:
    """The while-loop once per ``check_every`` value (and guarded, for k > 1), and the same body
    unrolled in one static graph."""
    looped = {}
    for k, guarded in [(k, False) for k in check_every] + [(k, True) for k in check_every if k > 1]:
        g = gl.Graph(f"looped_k{k}{'_guarded' * guarded}")
        x = g.ndarray("x", ti.f32, ndim=1)
        counter = g.ndarray("counter", ti.i32, ndim=1, shape=(1,))
        flag = g.ndarray("flag", ti.i32, ndim=1, shape=(1,))
        body = g.define("body")
        body.dispatch(work, x)
        body.dispatch(countdown, counter, flag)
        g.loop(body, while_=flag, max_iter=iterations + 1, check_every=k, guarded=guarded, name="solve")
        looped[k, guarded] = g
    static = gl.Graph("static")
    for arg in looped[check_every[0], False].args.values():
        static.declare(arg)
    with static.sequence("body", repeat=iterations) as s:
        s.dispatch(work, x)
        s.dispatch(countdown, counter, flag)
    return looped, static


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="cpu", choices=["cpu", "cuda", "vulkan"])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--elements", type=int, default=1 << 16)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--check-every", type=int, nargs="+", default=[1, 8], help="divisors of --iterations")
    options = parser.parse_args()
    ti.init(arch=getattr(ti, options.arch), log_level=ti.WARN)
    ks = tuple(options.check_every)
    looped, static = graphs(options.iterations, ks)
    c_loops, c_static = {key: g.compile() for key, g in looped.items()}, static.compile()
    x = ti.ndarray(ti.f32, shape=options.elements)
    counter, flag = ti.ndarray(ti.i32, shape=1), ti.ndarray(ti.i32, shape=1)
    values = {"x": x, "counter": counter, "flag": flag}
    # (check_every, fast flag reads, guarded)
    cases = [(k, True, False) for k in ks] + [(k, True, True) for k in ks if k > 1] + [(1, False, False)]
    t_loop: dict[tuple[int, bool, bool], list[float]] = {case: [] for case in cases}
    t_static, t_read, t_read_slow = [], [], []
    for _ in range(options.repeats + 1):
        for k, fast, guarded in cases:
            counter.from_numpy(np.array([options.iterations], np.int32))
            ti.sync()
            with fast_reads(fast):
                start = time.perf_counter()
                c_loops[k, guarded].run(values)
                ti.sync()
                t_loop[k, fast, guarded].append(time.perf_counter() - start)
            events = c_loops[k, guarded].last_events
            overrun = min(-options.iterations % k, 1) if options.iterations % k else 0  # max_iter is iterations + 1
            assert events[0].value == options.iterations + overrun * (not guarded), events
        counter.from_numpy(np.array([options.iterations], np.int32))
        ti.sync()
        start = time.perf_counter()
        c_static.run(values)
        ti.sync()
        t_static.append(time.perf_counter() - start)
        for fast, times in ((True, t_read), (False, t_read_slow)):
            with fast_reads(fast):
                start = time.perf_counter()
                for _ in range(100):
                    read_flag(flag)
                times.append((time.perf_counter() - start) / 100)
    static_ms = statistics.median(t_static[1:]) * 1e3
    print(
        f"read path on {options.arch}: {read_path()}; flag read alone on an idle device: "
        f"{statistics.median(t_read) * 1e6:.1f} us fast, {statistics.median(t_read_slow) * 1e6:.1f} us accessor"
    )
    for (k, fast, guarded), times in t_loop.items():
        loop_ms = statistics.median(times[1:]) * 1e3
        decisions = -(-options.iterations // k)
        per_decision_us = (loop_ms - static_ms) / decisions * 1e3
        how = f"{'fast flag read' if fast else 'Taichi accessor'}, check_every={k}{', guarded' if guarded else ''}"
        print(
            f"control flow on {options.arch} ({how}): "
            f"while-loop of {options.iterations} iterations {loop_ms:.2f} ms, same body unrolled in one ti.graph "
            f"{static_ms:.2f} ms -> {per_decision_us:.1f} us per decision ({decisions} decisions), "
            f"{loop_ms / static_ms:.2f}x"
        )


if __name__ == "__main__":
    main()
