"""Deploy speed: the exported module in Taichi's C runtime vs the compiled graph from Python.

(a) Frame time of Taichi's mpm88 (500 substeps = 2,000 dispatches a frame), exported with
    ``gl.export`` and run by the generated C host program, against the same graph compiled with
    graphlab and run from Python (a child process with Taichi's frontend on the same arch). Both
    run the same inputs; each reports the mean frame time after a first frame that includes one-off
    set-up, in alternating rounds (median taken). Target: C host / Python <= 1.0.
(b) ``--export-verify``: wall time of ``gl.export`` plus ``gl.verify`` of mpm88 (target <= 15 s on
    the 2-core development CPU).
(c) ``--library``: the same frames through the runtime library (``graphlab/deploy/runtime``, driven by
    ``tests/runtime_check.c``) against the generated host program, both compiled here with the same C
    compiler and ``-O2``; and the library with ``GRAPHLAB_CAPTURE`` set (every frame written as a
    capture folder) against it without. Targets: library / host <= 1.02; capture off costs nothing
    (it is one pointer test per run).

Needs taichi (a site dir on ``PYTHONPATH`` is enough; graphlab is imported from this repository)
and a C compiler (gcc) for the host program::

    python bench/deploy_speed.py --arch cpu --frames 6 --rounds 4
    python bench/deploy_speed.py --arch cuda --frames 40 --rounds 4
    python bench/deploy_speed.py --arch cpu --export-verify
    python bench/deploy_speed.py --arch cpu --library --frames 6 --rounds 4
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # graphlab from this repository

import numpy as np
import taichi as ti

import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_buffers, mpm88_graph
from graphlab.deploy.capi_ctypes import taichi_c_api_dir
from graphlab.deploy.hostgen import build_host, find_compiler
from graphlab.deploy.verify import run_host, run_python

REPO = Path(__file__).resolve().parent.parent

ARCHS = {"cpu": "x64", "cuda": "cuda", "vulkan": "vulkan"}


def describe_device(arch: str) -> str:
    """The GPU's name for cuda (nvidia-smi), else the CPU core count."""
    if arch == "cuda":
        try:
            done = subprocess.run(
                ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            return done.stdout.strip().splitlines()[0]
        except (OSError, IndexError, subprocess.TimeoutExpired):
            return "unknown GPU"
    return f"{os.cpu_count()} CPU cores"


def mpm88(substeps: int) -> tuple[gl.Graph, dict[str, np.ndarray]]:
    """The mpm88 graph and the example's initial state (made on the CPU, as numpy arrays)."""
    ti.init(arch=ti.cpu, log_level=ti.WARN)
    m = load_taichi_example("mpm88_graph")
    return mpm88_graph(m, substeps), {k: v.to_numpy() for k, v in mpm88_buffers(m).items()}


def frame_time(arch: str, substeps: int, frames: int, rounds: int) -> dict[str, Any]:
    """(a): export, then time the C host and the Python frontend on the same inputs, in rounds.

    Each round starts both programs afresh, in alternating order; the median over rounds evens out
    load from elsewhere.
    """
    graph, values = mpm88(substeps)
    host_ms, python_ms = [], []
    with tempfile.TemporaryDirectory(prefix="graphlab-deploy-speed-") as tmp:
        folder = Path(tmp, "mpm88")
        gl.export(graph, folder, arch, values=values, progress=False)
        inputs = Path(tmp, "inputs")
        inputs.mkdir()
        for name, value in values.items():
            np.save(inputs / f"{name}.npy", value)
        for round_ in range(rounds):  # alternate which side goes first, so neither always runs warm
            sides = [("host", run_host, host_ms), ("python", run_python, python_ms)]
            for name, run, times in sides[:: 1 if round_ % 2 == 0 else -1]:
                times.append(run(folder, inputs, Path(tmp, name), frames=frames).frame_ms)
    host, python = statistics.median(host_ms), statistics.median(python_ms)
    result = {
        "arch": arch,
        "device": describe_device(arch),
        "substeps": substeps,
        "frames": frames,
        "rounds": rounds,
        "host_ms": host,
        "python_ms": python,
        "ratio": host / python,
        "host_rounds_ms": host_ms,
        "python_rounds_ms": python_ms,
    }
    print(
        f"deploy_speed frame time: mpm88 {substeps} substeps on {arch} ({result['device']}), median over "
        f"{rounds} rounds of the mean of {frames - 1} frames after the first: C host {host:.2f} ms, compiled "
        f"graph from Python {python:.2f} ms, ratio {result['ratio']:.3f} (target <= 1.0)"
    )
    return result


def build_library_driver(work: Path) -> Path:
    """tests/runtime_check.c and the library's sources (as the package ships them, and as ``gl.export`` copies
    them into ``folder/runtime``), compiled as build_host compiles the host program."""
    c_api = taichi_c_api_dir()
    runtime = REPO / "graphlab" / "export" / "runtime"
    exe = work / "library_frames"
    lib_dir = c_api / "lib"
    command = [find_compiler(), "-std=c99", "-O2", "-isystem", str(c_api / "include"), f"-I{runtime}",
               f"-I{REPO / 'graphlab' / 'export' / 'host'}", f'-DGRAPHLAB_TI_LIB_DIR="{c_api / "runtime"}"',
               *map(str, sorted(runtime.glob("*.c"))), str(REPO / "tests" / "runtime_check.c"),
               str(REPO / "graphlab" / "export" / "host" / "npy.c"), "-o", str(exe), f"-L{lib_dir}", "-ltaichi_c_api",
               "-ldl", f"-Wl,-rpath,{lib_dir}"]  # fmt: skip
    subprocess.run(command, check=True)
    return exe


def run_library(exe: Path, folder: Path, inputs: Path, frames: int, capture: Path | None = None) -> float:
    """Mean ms per frame after the first, through the library (with GRAPHLAB_CAPTURE when ``capture``)."""
    env = {**os.environ, **({"GRAPHLAB_CAPTURE": str(capture)} if capture else {})}
    command = [str(exe), str(folder), "update", str(inputs), str(inputs.parent / "lib_out"), "--frames", str(frames),
               "--time"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"the library run failed:\n{done.stdout}{done.stderr}")
    line = next(x for x in done.stdout.splitlines() if "ms per frame" in x)
    return float(line.split()[0])


def library_time(arch: str, substeps: int, frames: int, rounds: int) -> dict[str, Any]:
    """(c): host program vs the runtime library vs the library capturing every frame, alternating rounds."""
    graph, values = mpm88(substeps)
    times: dict[str, list[float]] = {"host": [], "library": [], "capture": []}
    with tempfile.TemporaryDirectory(prefix="graphlab-deploy-speed-") as tmp:
        folder = Path(tmp, "mpm88")
        gl.export(graph, folder, arch, values=values, progress=False)
        inputs = Path(tmp, "inputs")
        inputs.mkdir()
        for name, value in values.items():
            np.save(inputs / f"{name}.npy", value)
        build_host(folder)
        exe = build_library_driver(Path(tmp))
        for round_ in range(rounds):
            sides = ["host", "library", "capture"]
            for side in sides[round_ % 3 :] + sides[: round_ % 3]:  # rotate which side goes first
                if side == "host":
                    times[side].append(run_host(folder, inputs, Path(tmp, "host"), frames=frames).frame_ms)
                else:
                    capture = Path(tmp, f"caps{round_}") if side == "capture" else None
                    times[side].append(run_library(exe, folder, inputs, frames, capture))
    host, library, capture = (statistics.median(times[k]) for k in ("host", "library", "capture"))
    result = {
        "arch": arch, "device": describe_device(arch), "substeps": substeps, "frames": frames, "rounds": rounds,
        "host_ms": host, "library_ms": library, "capture_ms": capture, "library_over_host": library / host,
        "capture_over_library": capture / library, "rounds_ms": times,
    }  # fmt: skip
    print(
        f"deploy_speed library: mpm88 {substeps} substeps on {arch} ({result['device']}), median over {rounds} "
        f"rounds of the mean of {frames - 1} frames after the first: host program {host:.2f} ms, library "
        f"{library:.2f} ms (ratio {library / host:.3f}, target <= 1.02), library capturing every frame "
        f"{capture:.2f} ms (x{capture / library:.3f} of capture off)"
    )
    return result


def export_verify(arch: str, substeps: int) -> dict[str, Any]:
    """(b): wall time of gl.export plus gl.verify (x64 single-threaded, so verify expects identical bits)."""
    graph, values = mpm88(substeps)
    with tempfile.TemporaryDirectory(prefix="graphlab-deploy-speed-") as tmp:
        start = time.perf_counter()
        options = {"cpu_threads": 1} if arch == "x64" else {}
        gl.export(graph, Path(tmp, "mpm88"), arch, values=values, progress=False, **options)
        exported = time.perf_counter()
        report = gl.verify(Path(tmp, "mpm88"))
        verified = time.perf_counter()
    result = {
        "arch": arch,
        "device": describe_device(arch),
        "substeps": substeps,
        "export_s": exported - start,
        "verify_s": verified - exported,
        "total_s": verified - start,
        "passed": report.passed,
        "identical": report.identical,
    }
    worst = max(report.outputs, key=lambda o: o.max_rel)
    result.update(worst_output=worst.name, worst_max_rel=worst.max_rel, notes=list(report.notes))
    verdict = "identical" if report.identical else "passed" if report.passed else "FAILED"
    print(
        f"deploy_speed export+verify: mpm88 {substeps} substeps on {arch} ({result['device']}): export "
        f"{result['export_s']:.1f} s, verify {result['verify_s']:.1f} s, total {result['total_s']:.1f} s "
        f"(target <= 15 s); outputs {verdict} (largest max rel {worst.max_rel:.2g}, {worst.name})"
    )
    for note in report.notes:
        print(f"  note: {note}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="cpu", choices=sorted(ARCHS))
    parser.add_argument("--frames", type=int, default=6, help="frames per side for (a); the first is set-up")
    parser.add_argument("--substeps", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=4, help="alternating C host / Python rounds for (a)")
    parser.add_argument("--export-verify", action="store_true", help="measure (b) instead of (a)")
    parser.add_argument("--library", action="store_true", help="measure (c): runtime library vs host program")
    parser.add_argument("--json", help="also write the numbers to this file")
    options = parser.parse_args()
    if options.frames < 2:
        parser.error("--frames needs at least 2 (the first frame is timed apart)")
    arch = ARCHS[options.arch]
    if options.export_verify:
        result = export_verify(arch, options.substeps)
    elif options.library:
        result = library_time(arch, options.substeps, options.frames, options.rounds)
    else:
        result = frame_time(arch, options.substeps, options.frames, options.rounds)
    if options.json:
        Path(options.json).parent.mkdir(parents=True, exist_ok=True)
        Path(options.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
