"""The one place that knows Taichi 1.7.4's Python internals, so a Taichi upgrade touches this package only.

- :mod:`graphlab.bridge.types`: Taichi's type objects to and from graphlab's plain data (dtype names,
  element types, texture formats, kernel parameter annotations); used by the model.
- :mod:`graphlab.bridge.runtime`: everything that touches a live Taichi runtime (which runtime is live,
  new ndarrays, ``ti.graph`` args, syncs, which runtime a value was made in).
- :mod:`graphlab.bridge.device_read`: reading flags and small ndarrays back to the host at device
  speed (a CUDA driver copy with the optional ``cuda-bindings``, a host pointer on CPUs).

Both import Taichi. This package module itself does not: it recognises the functions Taichi's
decorators wrap by the marker attributes they set (``taichi/lang/kernel_impl.py``), which the model
and the kernel carrier ask about before Taichi need be loaded (a value can only be a kernel once
Taichi is imported, and importing it prints a banner and takes a second).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "is_class_kernel",
    "is_kernel",
    "is_taichi_function",
    "is_wrapped_kernel",
    "kernel_primal",
    "python_function",
]


def is_wrapped_kernel(obj: object) -> bool:
    """Whether ``obj`` is a ``@ti.kernel`` (a plain one or a method of a ``@ti.data_oriented`` class)."""
    return bool(getattr(obj, "_is_wrapped_kernel", False))


def is_class_kernel(obj: object) -> bool:
    """Whether ``obj`` is a ``@ti.kernel`` method of a ``@ti.data_oriented`` class."""
    return is_wrapped_kernel(obj) and bool(getattr(obj, "_is_classkernel", False))


def is_kernel(obj: object) -> bool:
    """Whether ``obj`` is a plain ``@ti.kernel`` function (what a graph can dispatch)."""
    return is_wrapped_kernel(obj) and not is_class_kernel(obj)


def is_taichi_function(obj: object) -> bool:
    """Whether ``obj`` is a ``@ti.func``."""
    return bool(getattr(obj, "_is_taichi_function", False))


def kernel_primal(fn: object, *, class_kernels: bool = False) -> Any | None:
    """The ``taichi.lang.kernel_impl.Kernel`` behind a plain ``@ti.kernel`` function, or None.

    With ``class_kernels``, a kernel method of a ``@ti.data_oriented`` class has one too.
    """
    wanted = is_wrapped_kernel(fn) if class_kernels else is_kernel(fn)
    return getattr(fn, "_primal", None) if wanted else None


def python_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The plain Python function under a ``@ti.kernel`` or ``@ti.func`` wrapper (``fn`` itself otherwise)."""
    primal = getattr(fn, "_primal", None)
    if primal is not None and hasattr(primal, "func"):
        return primal.func  # type: ignore[no-any-return]
    return getattr(fn, "__wrapped__", fn)  # type: ignore[no-any-return]
