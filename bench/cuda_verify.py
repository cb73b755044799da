"""Export Taichi's mpm88 for CUDA and verify it in the C runtime against Python (run on a GPU machine).

python bench/cuda_verify.py --substeps 20
"""

import argparse
import tempfile
import time
from pathlib import Path

import taichi as ti

import graphlab as gl
from graphlab.api.examples import load_taichi_example, mpm88_buffers, mpm88_graph


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--substeps", type=int, default=20)
    options = parser.parse_args()
    ti.init(arch=ti.cuda, log_level=ti.WARN)
    m = load_taichi_example("mpm88_graph")
    graph = mpm88_graph(m, options.substeps)
    values = mpm88_buffers(m)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "mpm88_cuda"
        start = time.perf_counter()
        gl.export(graph, out, arch="cuda", values=values, progress=False)
        exported = time.perf_counter() - start
        start = time.perf_counter()
        report = gl.verify(out)
        verified = time.perf_counter() - start
        print(f"export for cuda {exported:.1f} s, verify {verified:.1f} s, passed={report.passed}")
        print(report)


if __name__ == "__main__":
    main()
