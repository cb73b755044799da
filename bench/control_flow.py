"""The cost of one host-side control decision (reading a flag between compiled segments).

A while-loop whose body is two small kernels runs K iterations (a counter kernel clears the flag
after K) and is compared, in one process, with the same body repeated K times inside one static
ti.graph. The difference per iteration is what a decision costs: a device-to-host read of one
i32 (which waits for the device to finish the segment) plus launching the next segment.

    python bench/control_flow.py --arch cpu
    python bench/control_flow.py --arch cuda
"""

import argparse
import statistics
import time

import numpy as np
import taichi as ti

import graphlab as gl
from graphlab.bridge.runtime import read_flag


@ti.kernel
def work(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    for i in x:
        x[i] = x[i] * 0.999 + 0.001


@ti.kernel
def countdown(counter: ti.types.ndarray(dtype=ti.i32, ndim=1), flag: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    counter[0] -= 1
    flag[0] = 1 if counter[0] > 0 else 0


def graphs(iterations: int) -> tuple[gl.Graph, gl.Graph]:
    looped = gl.Graph("looped")
    x = looped.ndarray("x", ti.f32, ndim=1)
    counter = looped.ndarray("counter", ti.i32, ndim=1, shape=(1,))
    flag = looped.ndarray("flag", ti.i32, ndim=1, shape=(1,))
    body = looped.define("body")
    body.dispatch(work, x)
    body.dispatch(countdown, counter, flag)
    looped.loop(body, while_=flag, max_iter=iterations + 1, name="solve")
    static = gl.Graph("static")
    for arg in looped.args.values():
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
    options = parser.parse_args()
    ti.init(arch=getattr(ti, options.arch), log_level=ti.WARN)
    looped, static = graphs(options.iterations)
    c_loop, c_static = looped.compile(), static.compile()
    x = ti.ndarray(ti.f32, shape=options.elements)
    counter, flag = ti.ndarray(ti.i32, shape=1), ti.ndarray(ti.i32, shape=1)
    values = {"x": x, "counter": counter, "flag": flag}
    t_loop, t_static, t_read = [], [], []
    for _ in range(options.repeats + 1):
        counter.from_numpy(np.array([options.iterations], np.int32))
        ti.sync()
        start = time.perf_counter()
        c_loop.run(values)
        ti.sync()
        t_loop.append(time.perf_counter() - start)
        assert c_loop.last_events[0].value == options.iterations, c_loop.last_events
        counter.from_numpy(np.array([options.iterations], np.int32))
        ti.sync()
        start = time.perf_counter()
        c_static.run(values)
        ti.sync()
        t_static.append(time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(100):
            read_flag(flag)
        t_read.append((time.perf_counter() - start) / 100)
    loop_ms, static_ms = statistics.median(t_loop[1:]) * 1e3, statistics.median(t_static[1:]) * 1e3
    per_decision_us = (loop_ms - static_ms) / options.iterations * 1e3
    print(
        f"control flow on {options.arch}: while-loop of {options.iterations} iterations {loop_ms:.2f} ms, same body "
        f"unrolled in one ti.graph {static_ms:.2f} ms -> {per_decision_us:.1f} us per decision "
        f"(flag read alone on an idle device: {statistics.median(t_read) * 1e6:.1f} us)"
    )


if __name__ == "__main__":
    main()
