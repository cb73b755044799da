"""Ship a graph: export it as a Taichi AOT module, verify it, run it "as deployed".

``gl.export(g, "out/mpm88", arch="vulkan")`` calls this package: it writes a module folder
(``module/``, ``manifest.json``, the sources and a generated C host; see :mod:`.exporter`).
``gl.verify`` (:mod:`.verify`) runs that folder's C host and Taichi's Python frontend on the same
inputs and compares what they write; ``gl.load_module`` (:mod:`.cruntime`) runs the module through
Taichi's C runtime from Python.

The package is callable, rather than shadowed by a function of the same name, so that both
``gl.export(...)`` and ``import graphlab.export.cruntime`` keep working whatever was imported
first. Importing it is light: names load on first use, and Taichi itself only in child processes.

``help(gl.export)`` describes the function, not this text: pydoc renders any module as a module
(NAME, DESCRIPTION, contents), so the package's ``__doc__`` is the numpydoc of
:func:`graphlab.export.exporter.export` under its signature, with this text after it, and its
``__signature__`` is that function's (both read when asked, since the exporter loads lazily).
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
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
        raise AttributeError(f"module 'graphlab.export' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"graphlab.export.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


class _ExportPackage(types.ModuleType):
    # The type of this package: calling it is graphlab.export.exporter.export, and its __doc__ and
    # __signature__ are that function's (a property on the type wins over the module's own __doc__).

    def __call__(self, graph: Any, path: Any, arch: str = "vulkan", **options: Any) -> Any:
        """Export graphs as an AOT module folder (see :func:`graphlab.export.exporter.export`)."""
        from graphlab.export.exporter import export  # import cost: numpy and the exporter stay out of `import graphlab`

        return export(graph, path, arch, **options)

    @property
    def __doc__(self) -> str:
        """What ``help(gl.export)`` shows: the export function's signature and numpydoc, then the package's."""
        from graphlab.export.exporter import export  # import cost: numpy and the exporter stay out of `import graphlab`

        signature = inspect.signature(export)
        plain = signature.replace(
            parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
            return_annotation=signature.empty,
        )
        package = inspect.cleandoc(self.__dict__.get("__doc__") or "")
        return f"export{plain}\n\n{inspect.cleandoc(export.__doc__ or '')}\n\nThe package\n-----------\n{package}\n"

    @__doc__.setter
    def __doc__(self, text: str | None) -> None:
        self.__dict__["__doc__"] = text  # the package's own text, shown after the function's

    @property
    def __signature__(self) -> inspect.Signature:
        """The export function's signature, for ``inspect.signature(gl.export)``."""
        from graphlab.export.exporter import export  # import cost: numpy and the exporter stay out of `import graphlab`

        return inspect.signature(export)


sys.modules[__name__].__class__ = _ExportPackage
