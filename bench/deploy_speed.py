"""Deploy speed: the exported module in Taichi's C runtime vs the compiled graph from Python.

(a) Frame time of Taichi's mpm88 (500 substeps = 2,000 dispatches a frame), exported with
    ``gl.export`` and run by the generated C host program, against the same graph compiled with
    graphlab and run from Python (a child process with Taichi's frontend on the same arch). Both
    run the same inputs; each reports the mean frame time after a first frame that includes one-off
    set-up, in alternating rounds (median taken). Target: C host / Python <= 1.0.
(b) ``--export-verify``: wall time of ``gl.export`` plus ``gl.verify`` of mpm88 (target <= 15 s on
    the 2-core development CPU).
(c) ``--library``: the same frames through the graphlab runtime library, two ways: the generated host
    program (a command-line front-end over the library) and the embedded C++ path
    (``bench/library_loop.cpp`` over ``graphlab_runtime.hpp``), against the floor any runtime can reach:
    a plain Taichi C-API loop over the same compiled graph (``bench/capi_loop.c``:
    ``ti_launch_compute_graph`` per frame with the same args, then ``ti_wait``, no graphlab); and the host
    with ``GRAPHLAB_CAPTURE`` set (every frame written as a capture folder) against it without. All are
    compiled here with the host program's C compiler (and g++) at ``-O2``. Targets: library / C-API loop
    <= 1.02; capture off costs nothing (it is one pointer test per run).

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
import shutil
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
from graphlab.deploy.hostgen import LIBRARY_SOURCES, build_host, find_compiler
from graphlab.deploy.manifest import read_manifest
from graphlab.deploy.verify import run_host, run_python
from graphlab.model.plan import Op, Repeat, Segment

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


BENCH = REPO / "bench"


def build_loops(folder: Path, work: Path) -> tuple[Path, Path]:
    """``bench/capi_loop.c`` (Taichi's C API alone) and ``bench/library_loop.cpp`` (the export's runtime
    library through its C++ wrapper), compiled with the host program's C compiler and g++ at -O2."""
    c_api = taichi_c_api_dir()
    lib_dir, host, runtime = c_api / "lib", folder / "host", folder / "runtime"
    cc = find_compiler()
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        raise SystemExit("deploy_speed --library needs a C++ compiler: apt-get install g++")
    link = [f"-L{lib_dir}", "-ltaichi_c_api", "-ldl", f"-Wl,-rpath,{lib_dir}"]
    include = ["-isystem", str(c_api / "include"), f"-I{host}", f"-I{runtime}"]
    capi = work / "capi_loop"
    subprocess.run([cc, "-std=c99", "-O2", *include, str(BENCH / "capi_loop.c"), str(host / "npy.c"), "-o",
                    str(capi), *link], check=True)  # fmt: skip
    objects = []
    for source in [*(runtime / name for name in LIBRARY_SOURCES), host / "npy.c"]:
        objects.append(work / f"{source.stem}.o")
        subprocess.run([cc, "-std=c99", "-O2", *include, f'-DGRAPHLAB_TI_LIB_DIR="{c_api / "runtime"}"', "-c",
                        str(source), "-o", str(objects[-1])], check=True)  # fmt: skip
    cpp = work / "library_loop"
    subprocess.run([cxx, "-std=c++17", "-O2", *include, str(BENCH / "library_loop.cpp"), *map(str, objects), "-o",
                    str(cpp), *link], check=True)  # fmt: skip
    return capi, cpp


def launches(ops: tuple[Op, ...]) -> list[str]:
    """The compiled graphs a plan without decisions launches, in order (the C-API loop's frame)."""
    names: list[str] = []
    for op in ops:
        if isinstance(op, Segment):
            names.append(op.name)
        elif isinstance(op, Repeat):
            names += launches(op.body) * op.times
        else:
            raise SystemExit("deploy_speed --library: the C-API loop runs graphs without conditionals or loops")
    return names


def run_timed(command: list[str], env: dict[str, str] | None = None) -> float:
    """Mean ms per frame after the first, as a program printing the host's --time lines reports it."""
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False,
                          timeout=1800)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed:\n{done.stdout}{done.stderr}")
    line = next(x for x in done.stdout.splitlines() if "ms per frame" in x)
    return float(line.split()[0])


def library_time(arch: str, substeps: int, frames: int, rounds: int) -> dict[str, Any]:
    """(c): the C-API loop vs the host program and the C++ embedding over the library, and the host
    capturing every frame; rotating order in rounds."""
    graph, values = mpm88(substeps)
    sides = ["capi", "host", "cpp", "capture"]
    times: dict[str, list[float]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="graphlab-deploy-speed-") as tmp:
        folder = Path(tmp, "mpm88")
        gl.export(graph, folder, arch, values=values, progress=False)
        inputs = Path(tmp, "inputs")
        inputs.mkdir()
        for name, value in values.items():
            np.save(inputs / f"{name}.npy", value)
        [spec] = read_manifest(folder).graphs
        arrays = [a for a in spec.args if a.kind == "ndarray"]
        if {a.name for a in arrays} != {a.name for a in spec.args} or not {a.name for a in arrays} <= set(values):
            raise SystemExit("deploy_speed --library: every arg must be an ndarray given in the inputs")
        host = build_host(folder)
        capi, cpp = build_loops(folder, Path(tmp))
        env = {"TI_LIB_DIR": str(taichi_c_api_dir() / "runtime")}
        host_command = [str(host), "--module", str(folder / "module"), "--in", str(inputs), "--out",
                        str(Path(tmp, "host_out")), "--frames", str(frames), "--time"]  # fmt: skip
        commands = {
            "capi": [str(capi), arch, str(folder / "module"), ",".join(launches(spec.plan.body)), str(inputs),
                     str(frames), *(f"{a.name}:{a.ndim}" for a in arrays)],
            "host": host_command,
            "cpp": [str(cpp), str(folder), spec.name, str(inputs), str(frames), *(a.name for a in arrays)],
            "capture": host_command,
        }  # fmt: skip
        for round_ in range(rounds):
            for side in sides[round_ % 4 :] + sides[: round_ % 4]:  # rotate which side goes first
                extra = {"GRAPHLAB_CAPTURE": str(Path(tmp, f"caps{round_}"))} if side == "capture" else {}
                times[side].append(run_timed(commands[side], {**env, **extra}))
    capi_ms, host_ms, cpp_ms, capture_ms = (statistics.median(times[k]) for k in sides)
    result = {
        "arch": arch, "device": describe_device(arch), "substeps": substeps, "frames": frames, "rounds": rounds,
        "capi_ms": capi_ms, "host_ms": host_ms, "cpp_ms": cpp_ms, "capture_ms": capture_ms,
        "host_over_capi": host_ms / capi_ms, "cpp_over_capi": cpp_ms / capi_ms,
        "capture_over_host": capture_ms / host_ms, "rounds_ms": times,
    }  # fmt: skip
    print(
        f"deploy_speed library: mpm88 {substeps} substeps on {arch} ({result['device']}), median over {rounds} "
        f"rounds of the mean of {frames - 1} frames after the first: C-API loop {capi_ms:.2f} ms, host program "
        f"{host_ms:.2f} ms (ratio {host_ms / capi_ms:.3f}, target <= 1.02), C++ embedding {cpp_ms:.2f} ms (ratio "
        f"{cpp_ms / capi_ms:.3f}), host capturing every frame {capture_ms:.2f} ms (x{capture_ms / host_ms:.3f} of "
        "capture off)"
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
    parser.add_argument("--library", action="store_true", help="measure (c): the library vs a plain C-API loop")
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
