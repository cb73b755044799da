"""Shared fixtures: a fresh Taichi runtime per test, and Taichi's own graph examples loaded from the wheel.

The examples (``taichi/examples/graph/*.py``) are real workloads, not ours: they are loaded from the
installed wheel at test time, never copied. Their ``ti.init(arch=ti.vulkan)`` at import is
replaced by the runtime the test chose.

Tests live in one folder per package (``tests/model/``, ``tests/debug/`` ...); shared kernels and graphs
sit in modules here at the top (``graphs.py``, ``compare_kernels.py`` ...). A few tests still take helpers
from another test module by name (``from test_compiled import jacobi_graph``), so every folder of tests
is on ``sys.path`` and on the ``PYTHONPATH`` of the child processes tests start, as the one flat folder was.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import taichi as ti

from graphlab.api.examples import load_taichi_example

_TESTS = Path(__file__).resolve().parent
_FOLDERS = [str(_TESTS)] + [str(f) for f in sorted(_TESTS.iterdir()) if f.is_dir() and any(f.glob("test_*.py"))]
sys.path[1:1] = [folder for folder in _FOLDERS if folder not in sys.path]
# and in the child processes the tests start (a carried kernel's module may import a helper by name)
os.environ["PYTHONPATH"] = os.pathsep.join([*_FOLDERS, *filter(None, [os.environ.get("PYTHONPATH")])])


@pytest.fixture
def ti_cpu() -> Iterator[None]:
    """ti.cpu with one thread: float atomics give repeatable bits."""
    ti.init(arch=ti.cpu, cpu_max_num_threads=1, random_seed=7, log_level=ti.WARN)
    yield


@pytest.fixture
def ti_vulkan() -> Iterator[None]:
    """ti.vulkan (Mesa lavapipe on a CPU machine; make test installs it)."""
    ti.init(arch=ti.vulkan, log_level=ti.WARN)
    yield


@pytest.fixture
def mpm88(ti_cpu: None) -> ModuleType:
    """Taichi's mpm88 graph example, loaded under ti.cpu."""
    return load_taichi_example("mpm88_graph")


@pytest.fixture
def stable_fluid(ti_cpu: None) -> ModuleType:
    """Taichi's stable fluid graph example, loaded under ti.cpu."""
    return load_taichi_example("stable_fluid_graph")
