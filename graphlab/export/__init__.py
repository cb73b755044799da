"""Ship a graph: export it as a Taichi AOT module, verify it, run it "as deployed".

``gl.export(g, "out/mpm88", arch="vulkan")`` calls this package: it writes a module folder
(``module/``, ``manifest.json``, the sources and a generated C host; see :mod:`.exporter`).
``gl.verify`` (:mod:`.verify`) runs that folder's C host and Taichi's Python frontend on the same
inputs and compares what they write; ``gl.load_module`` (:mod:`.cruntime`) runs the module through
Taichi's C runtime from Python.

The package is callable, rather than shadowed by a function of the same name, so that both
``gl.export(...)`` and ``import graphlab.export.cruntime`` keep working whatever was imported
first. Importing it is light: names load on first use, and Taichi itself only in child processes.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

_LAZY = {
    "CRuntimeError": "errors", "HostBuildError": "errors", "HostGenError": "errors", "ManifestError": "errors",
    "UnknownGraphError": "errors", "ExportError": "exporter", "ExportResult": "exporter",
    "OutputPathError": "exporter", "Manifest": "manifest", "read_manifest": "manifest", "Module": "cruntime",
    "load_module": "cruntime", "OutputDiff": "verify", "VerifyError": "verify", "VerifyReport": "verify",
    "FrameEvent": "control",
}  # fmt: skip
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphlab.export' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"graphlab.export.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class _ExportPackage(types.ModuleType):
    """The type of this package: calling it is :func:`graphlab.export.exporter.export`."""

    def __call__(self, graph: Any, path: Any, arch: str = "vulkan", **options: Any) -> Any:
        """Export graphs as an AOT module folder (see :func:`graphlab.export.exporter.export`)."""
        from graphlab.export.exporter import export

        return export(graph, path, arch, **options)


sys.modules[__name__].__class__ = _ExportPackage
