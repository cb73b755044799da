"""Ship a graph: export it as a Taichi AOT module, verify it, run it "as deployed".

``gl.export(g, "out/mpm88", arch="vulkan")`` (:mod:`.exporter`) writes a module folder
(``module/``, ``manifest.json``, the sources and a generated C host; see :mod:`.exporter`).
``gl.verify`` (:mod:`.verify`) runs that folder's C host and Taichi's Python frontend on the same
inputs and compares what they write; ``gl.load_module`` (:mod:`.cruntime`) runs the module through
Taichi's C runtime from Python.

``gl.export`` is :func:`graphlab.deploy.exporter.export` itself (``graphlab/__init__.py`` imports it
on first use); this package has another name, so importing a module of it never shadows the function.
Importing it is light: names load on first use, and Taichi itself only in child processes.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "CRuntimeError": "errors", "HostBuildError": "errors", "HostGenError": "errors", "ManifestError": "errors",
    "UnknownGraphError": "errors", "ExportError": "errors", "ExportResult": "exporter",
    "OutputPathError": "errors", "Manifest": "manifest", "read_manifest": "manifest", "Module": "cruntime",
    "load_module": "cruntime", "OutputDiff": "report", "VerifyError": "verify", "VerifyReport": "report",
    "FrameEvent": "control", "ExportSizeWarning": "errors", "UnsealedModuleWarning": "errors",
}  # fmt: skip
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'graphlab.deploy' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"graphlab.deploy.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
