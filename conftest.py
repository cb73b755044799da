"""Doctest set-up for graphlab's docstrings: a Taichi runtime and small kernels in the namespace.

The examples in the docstrings (``pytest graphlab``, run by ``--doctest-modules``) build and run real
graphs, so every doctest runs on a one-thread ``ti.cpu`` (repeatable bits, as ``tests/conftest.py``'s
``ti_cpu`` fixture) with ``offline_cache=False`` (in Taichi 1.7.4 a cached kernel can carry another
kernel's parameter names into an export). The namespace holds ``ti``, ``np``, ``gl`` and what
:mod:`graphlab.api.doc_kernels` exports (``fill``, ``saxpy``, ``count_down``, ``demo_graph``): Taichi
compiles a kernel from its source file, so a docstring cannot define one.

Taichi is initialised once and again only when something replaced that runtime (a test, or a
docstring's own ``ti.init``): ``ti.init`` resets the runtime, which frees every ndarray made before.
Tests outside the docstrings are left alone: ``tests/conftest.py`` chooses their runtime per test.
This file sits at the repository root, so it is never shipped with the package.
"""

from __future__ import annotations

import weakref
from typing import Any

import pytest

#: The runtime every doctest runs on (tests/conftest.py's ti_cpu, without the offline cache).
DOCTEST_INIT: dict[str, Any] = {"cpu_max_num_threads": 1, "random_seed": 7, "offline_cache": False}

_made: list[Any] = []  # a weak reference to the Taichi runtime made here, once made


def _ensure_taichi() -> None:
    """``ti.init`` on ti.cpu unless the runtime made here is still the live one.

    ``ti.init``/``ti.reset`` replace Taichi's runtime object (``impl.get_runtime()``), so the
    object's identity tells whether anything re-initialised Taichi since.
    """
    import taichi as ti
    from taichi.lang import impl

    live = impl.get_runtime()
    if _made and _made[0]() is live and live.prog is not None:
        return
    ti.init(arch=ti.cpu, log_level=ti.WARN, **DOCTEST_INIT)
    _made[:] = [weakref.ref(impl.get_runtime())]


@pytest.fixture(autouse=True)
def _graphlab_doctest_namespace(request: pytest.FixtureRequest, doctest_namespace: dict[str, Any]) -> None:
    """For a docstring example: the runtime, and ``ti``, ``np``, ``gl`` and the doc kernels."""
    if not isinstance(request.node, pytest.DoctestItem):
        return
    import numpy as np
    import taichi as ti

    import graphlab as gl
    from graphlab.api import doc_kernels

    _ensure_taichi()
    doctest_namespace.update(ti=ti, np=np, gl=gl)
    doctest_namespace.update({name: getattr(doc_kernels, name) for name in doc_kernels.__all__})
