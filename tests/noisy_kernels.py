"""Kernels whose float sums depend on thread timing: many threads add into 256 shared cells.

On x64 with several threads (or on a GPU) each run adds the same numbers in another order, so the
last bits of ``totals`` change from run to run: real run-to-run noise for ``gl.verify`` to measure.
``NUDGED`` is the same kernel scaled by 1.001, standing in for an export that computes something else.
"""

# No `from __future__ import annotations`: Taichi reads kernel annotations as objects.

import taichi as ti

NUDGED = """
import taichi as ti


@ti.kernel
def deposit(x: ti.types.ndarray(ti.f32, ndim=1), totals: ti.types.ndarray(ti.f32, ndim=1)):
    for i in x:
        totals[i % totals.shape[0]] += 1.001 * x[i]
"""


@ti.kernel
def deposit(x: ti.types.ndarray(ti.f32, ndim=1), totals: ti.types.ndarray(ti.f32, ndim=1)):
    for i in x:
        totals[i % totals.shape[0]] += x[i]
