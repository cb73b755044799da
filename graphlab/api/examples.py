"""Taichi's own graph examples, loaded from the installed wheel and rebuilt with graphlab.

Taichi ships ``taichi/examples/graph/mpm88_graph.py`` and ``stable_fluid_graph.py``; they are real
workloads for the notebooks, benchmarks and tests. They are imported from the wheel (never copied),
with their module-level ``ti.init(arch=ti.vulkan)`` skipped so the caller's ``ti.init`` stands.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import taichi as ti

from graphlab.api.graph import Graph
from graphlab.bridge.runtime import new_ndarray

_COUNTER = itertools.count(1)


def examples_dir() -> Path:
    """The folder of Taichi's graph examples inside the installed wheel."""
    spec = importlib.util.find_spec("taichi")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("taichi is not installed: pip install 'taichi>=1.7.4,<1.8'")
    return Path(next(iter(spec.submodule_search_locations))) / "examples" / "graph"


def load_taichi_example(name: str) -> ModuleType:
    """Import ``taichi/examples/graph/<name>.py`` under the current ``ti.init``.

    A fresh module each call, since kernels and ndarrays belong to the runtime they were made in.
    """
    path = examples_dir() / f"{name}.py"
    if not path.is_file():
        available = ", ".join(sorted(p.stem for p in examples_dir().glob("*.py")))
        raise FileNotFoundError(f"no Taichi graph example {name!r}; available: {available}")
    module_name = f"taichi_example_{name}_{next(_COUNTER)}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    real_init = ti.init
    ti.init = lambda *args, **kwargs: None  # the caller has chosen the arch already
    try:
        spec.loader.exec_module(module)
    finally:
        ti.init = real_init
    return module


def mpm88_graph(m: ModuleType, substeps: int = 500) -> Graph:
    """mpm88's update graph built with graphlab: a 4-kernel sequence repeated ``substeps`` times."""
    g = Graph("update")
    x = g.ndarray("x", ti.math.vec2, ndim=1, shape="n")
    v = g.ndarray("v", ti.math.vec2, ndim=1, shape="n")
    C = g.ndarray("C", ti.math.mat2, ndim=1, shape="n")
    J = g.ndarray("J", ti.f32, ndim=1, shape="n")
    grid_v = g.ndarray("grid_v", ti.math.vec2, ndim=2, shape=("G", "G"))
    grid_m = g.ndarray("grid_m", ti.f32, ndim=2, shape=("G", "G"))
    with g.sequence("substep", repeat=substeps) as s:
        s.dispatch(m.substep_reset_grid, grid_v, grid_m)
        s.dispatch(m.substep_p2g, x, v, C, J, grid_v, grid_m)
        s.dispatch(m.substep_update_grid_v, grid_v=grid_v, grid_m=grid_m)
        s.dispatch(m.substep_g2p, x=x, v=v, C=C, J=J, grid_v=grid_v)
    return g


def mpm88_buffers(m: ModuleType, *, initialise: bool = True) -> dict[str, Any]:
    """mpm88's buffers, with particles placed by the example's own ``init_particles`` kernel."""
    n, grid = m.n_particles, m.n_grid
    buffers = {
        "x": ti.Vector.ndarray(2, ti.f32, shape=n),
        "v": ti.Vector.ndarray(2, ti.f32, shape=n),
        "C": ti.Matrix.ndarray(2, 2, ti.f32, shape=n),
        "J": ti.ndarray(ti.f32, shape=n),
        "grid_v": ti.Vector.ndarray(2, ti.f32, shape=(grid, grid)),
        "grid_m": ti.ndarray(ti.f32, shape=(grid, grid)),
    }
    if initialise:
        m.init_particles(buffers["x"], buffers["v"], buffers["J"])
    return buffers


def hand_built_mpm88(m: ModuleType, substeps: int = 500) -> Any:
    """The update graph exactly as Taichi's example builds it by hand with ``ti.graph``."""
    nd = ti.graph.ArgKind.NDARRAY
    x = ti.graph.Arg(nd, "x", dtype=ti.math.vec2, ndim=1)
    v = ti.graph.Arg(nd, "v", dtype=ti.math.vec2, ndim=1)
    C = ti.graph.Arg(nd, "C", dtype=ti.math.mat2, ndim=1)
    J = ti.graph.Arg(nd, "J", ti.f32, ndim=1)
    grid_v = ti.graph.Arg(nd, "grid_v", dtype=ti.math.vec2, ndim=2)
    grid_m = ti.graph.Arg(nd, "grid_m", dtype=ti.f32, ndim=2)
    builder = ti.graph.GraphBuilder()
    seq = builder.create_sequential()
    seq.dispatch(m.substep_reset_grid, grid_v, grid_m)
    seq.dispatch(m.substep_p2g, x, v, C, J, grid_v, grid_m)
    seq.dispatch(m.substep_update_grid_v, grid_v, grid_m)
    seq.dispatch(m.substep_g2p, x, v, C, J, grid_v)
    for _ in range(substeps):
        builder.append(seq)
    return builder.compile()


def copy_buffers(source: dict[str, Any]) -> dict[str, Any]:
    """Device copies of a dict of ndarrays (same content, new memory)."""
    copies = {}
    for name, arr in source.items():
        twin = new_ndarray(str(arr.dtype), tuple(arr.shape), tuple(arr.element_shape))
        twin.copy_from(arr)
        copies[name] = twin
    return copies
