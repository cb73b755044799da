"""A corpus of real workloads: Taichi's examples as graphlab graphs over ndarray args.

Each module is one workload (``game_of_life``, ``nbody``... ported to ndarray parameters, and
``texture_graph`` loaded from the wheel) and provides:

- ``kernels()``: the module holding its kernels (what ``gl.load(..., kernels=)`` resolves against);
- ``graphs(m)``: its graphs, built with graphlab, run in list order once per frame;
- ``by_hand(m, values)``: one frame of the same kernels called one by one from Python;
- ``values(m)``: fresh initial values by arg name (numpy arrays, Python numbers, textures);
- ``FRAMES``, and optionally ``ARCH`` (``"cpu"`` unless given), ``EXPORT_ARCHS`` and ``DRAWS_RANDOM`` (the
  dispatches that call ``ti.random``: the runs compared bit for bit then start from fresh runtimes).

The ports carry a docstring naming the example and every place they differ from it.
``tests/run/test_workloads.py`` holds the checks every workload must pass.
"""

import importlib
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

import numpy as np

import graphlab as gl
from graphlab.bridge.runtime import new_ndarray

NAMES = (
    "game_of_life", "nbody", "mass_spring", "mpm99", "waterwave", "fractal", "mgpcg", "texture_graph",
    "constant_grid", "row_normalise", "random_init", "laplace",
)  # fmt: skip


def workload(name: str) -> ModuleType:
    """The workload module ``tests/workloads/<name>.py``."""
    return importlib.import_module(f"{__name__}.{name}")


def arch(w: ModuleType) -> str:
    """The runtime its run and step checks use: ``"cpu"`` (one thread) or ``"vulkan"``."""
    return str(getattr(w, "ARCH", "cpu"))


def export_archs(w: ModuleType) -> tuple[str, ...]:
    return tuple(getattr(w, "EXPORT_ARCHS", ("x64", "vulkan")))


def arg_specs(graphs: Iterable[gl.Graph]) -> dict[str, gl.Arg]:
    """Every arg of the graphs by name (graphs of one workload share args by name)."""
    return {name: arg for g in graphs for name, arg in g.args.items()}


def on_device(graphs: Iterable[gl.Graph], values: Mapping[str, Any]) -> dict[str, Any]:
    """Values with each numpy array copied into a new Taichi ndarray of its arg's spec."""
    specs = arg_specs(graphs)
    out: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, np.ndarray):
            spec = specs[name]
            assert spec.dtype is not None, name
            arr = new_ndarray(spec.dtype, value.shape[: spec.ndim], spec.element_shape)
            arr.from_numpy(value)
            out[name] = arr
        else:
            out[name] = value
    return out


def host_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values ``gl.verify`` takes as inputs: numpy arrays and numbers (it draws textures itself)."""
    return {name: value for name, value in values.items() if isinstance(value, (np.ndarray, int, float))}


def ndarray_bits(values: Mapping[str, Any]) -> dict[str, bytes]:
    """The bytes of every Taichi ndarray among the values."""
    return {name: value.to_numpy().tobytes() for name, value in values.items() if hasattr(value, "to_numpy")}


def args_of(g: gl.Graph, values: Mapping[str, Any]) -> dict[str, Any]:
    """The values one graph takes (a workload's graphs share one dict)."""
    return {name: values[name] for name in g.args}
