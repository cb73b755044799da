"""Errors of export: the graph or output path refused, reading a module, calling Taichi's C-API, building a host.

Each is a :class:`~graphlab.core.errors.GraphlabError` and also the builtin that describes it, so callers
that do not know graphlab can still catch ``ValueError``, ``KeyError`` or ``RuntimeError``.
"""

from __future__ import annotations

from pathlib import Path

from graphlab.core.errors import GraphlabError

#: ``TiError`` codes from ``taichi/taichi_core.h``, for messages that name the code.
TI_ERROR_NAMES: dict[int, str] = {
    -1: "TI_ERROR_NOT_SUPPORTED", -2: "TI_ERROR_CORRUPTED_DATA", -3: "TI_ERROR_NAME_NOT_FOUND",
    -4: "TI_ERROR_INVALID_ARGUMENT", -5: "TI_ERROR_ARGUMENT_NULL", -6: "TI_ERROR_ARGUMENT_OUT_OF_RANGE",
    -7: "TI_ERROR_ARGUMENT_NOT_FOUND", -8: "TI_ERROR_INVALID_INTEROP", -9: "TI_ERROR_INVALID_STATE",
    -10: "TI_ERROR_INCOMPATIBLE_MODULE", -11: "TI_ERROR_OUT_OF_MEMORY",
}  # fmt: skip


class ExportError(GraphlabError, ValueError):
    """The graph or the options cannot be exported; the message names the arg or option and the fix."""


class OutputPathError(ExportError, OSError):
    """The output path exists (and ``overwrite`` is off) or cannot be written."""

    def __init__(self, message: str, *, path: Path) -> None:
        super().__init__(message)
        self.path = path


class ManifestError(GraphlabError, ValueError):
    """``manifest.json`` (or a file it lists) is missing or does not fit the format; names the JSON path."""

    def __init__(self, message: str, *, file: str | None = None, json_path: str = "$") -> None:
        where = f"{file}: " if file else ""
        super().__init__(f"{where}{json_path}: {message}")
        self.file, self.json_path, self.reason = file, json_path, message


class CRuntimeError(GraphlabError, RuntimeError):
    """A call into Taichi's C runtime failed; ``call``, ``code`` and ``code_name`` say which and how."""

    def __init__(self, call: str, code: int, detail: str, hint: str = "") -> None:
        self.call, self.code, self.detail = call, code, detail
        self.code_name = TI_ERROR_NAMES.get(code, f"TiError({code})")
        super().__init__(f"{call} failed: {self.code_name} ({code}): {detail or 'no message'}{hint}")


class UnknownGraphError(GraphlabError, KeyError):
    """``module.graphs[name]`` names a graph the module does not have."""

    def __str__(self) -> str:  # KeyError would show the message with quotes around it
        return str(self.args[0])


class HostGenError(GraphlabError, ValueError):
    """The manifest asks for something the generated C host cannot do (a texture arg, clashing args)."""


class HostBuildError(GraphlabError, RuntimeError):
    """The C compiler ran and failed; the message holds the command and the compiler's output."""


class ExportSizeWarning(UserWarning):
    """The exported buffers at their default dims exceed this machine's memory: ``gl.verify`` cannot run them here."""


class UnsealedModuleWarning(UserWarning):
    """A module folder was not signed by this user: its sha256 seal is vouched for only by its own manifest."""
