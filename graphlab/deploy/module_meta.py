"""What Taichi itself recorded about a module's graphs, to check ``manifest.json`` against before anything runs.

``manifest.json`` says what each graph's args are, but it is plain JSON that anyone can edit (its
sha256 seal covers the module's files, not itself). A changed kind, dtype, ndim or element shape
would make the C runtime read buffers and scalars wrongly: an f32 scalar passed as i32 is silently
reinterpreted, and a buffer described smaller than the kernels index is read past its end. The
module's own graph table, written by ``ti.aot.Module.save`` and sealed by its sha256, records each
dispatch's symbolic args (name, kind, dtype, field dim, element shape), so every manifest arg a
module graph takes is checked against it:

- Vulkan: ``module/graphs.json``, ``[{"key": graph, "value": {"dispatches": [{"kernel_name",
  "symbolic_args": [{"name", "tag", "dtype_id", "field_dim", "element_shape", ...}]}]}}]``;
- x64 and CUDA (LLVM): ``module/graphs.tcb``, the same table in Taichi's binary serializer: a u64
  total size, then the map (u64 count; per graph a string, then the dispatches: u64 count; per
  dispatch the kernel name and the args: u64 count; per arg ``name`` (u64 length + bytes),
  ``dtype_id`` u32, ``field_dim`` u64, ``tag`` u32, ``element_shape`` (u64 count + i32 each),
  ``num_channels`` u64), all little-endian, as Taichi 1.7.4's ``TI_IO_DEF`` order gives it.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from graphlab.core.spec import Arg
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.manifest import Manifest

__all__ = ["ModuleArg", "check_against_module", "module_graph_args"]

#: Taichi's ``aot::ArgKind`` as the graph table numbers it.
TAGS = {0: "scalar", 1: "matrix", 2: "ndarray", 3: "texture", 4: "rw_texture"}
#: Taichi's ``PrimitiveTypeID`` as the graph table numbers it (7 is u1, which no arg has).
DTYPE_IDS = {
    0: "f16", 1: "f32", 2: "f64", 3: "i8", 4: "i16", 5: "i32", 6: "i64", 8: "u8", 9: "u16", 10: "u32", 11: "u64",
}  # fmt: skip
_FIX = "re-export the module, or restore the manifest.json gl.export wrote"


@dataclass(frozen=True)
class ModuleArg:
    """One symbolic arg of a module graph, as Taichi compiled it."""

    name: str
    kind: str
    dtype: str | None
    ndim: int
    element_shape: tuple[int, ...]
    kernel: str


class _Reader:
    """Little-endian reads from Taichi's binary table, refusing a read past its end."""

    def __init__(self, data: bytes, file: Path) -> None:
        self.data, self.pos, self.file = data, 0, file

    def take(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise ManifestError(f"{self.file} ends early: it is not a Taichi 1.7 graph table; {_FIX}")
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return int(value)

    def count(self, most: int) -> int:
        value = self.take("<Q")
        if value > most:
            raise ManifestError(f"{self.file} holds a count of {value}: it is not a Taichi 1.7 graph table; {_FIX}")
        return value

    def text(self) -> str:
        size = self.count(len(self.data))
        raw = self.data[self.pos : self.pos + size]
        self.pos += size
        return raw.decode("utf-8", "replace")


def _arg(name: str, tag: int, dtype_id: int, field_dim: int, shape: list[int], kernel: str) -> ModuleArg:
    return ModuleArg(name, TAGS.get(tag, f"tag {tag}"), DTYPE_IDS.get(dtype_id), field_dim, tuple(shape), kernel)


def _from_tcb(file: Path) -> dict[str, list[ModuleArg]]:
    r = _Reader(file.read_bytes(), file)
    r.take("<Q")  # the total size
    graphs: dict[str, list[ModuleArg]] = {}
    for _ in range(r.count(len(r.data))):
        found = graphs[r.text()] = []
        for _ in range(r.count(len(r.data))):
            kernel = r.text()
            for _ in range(r.count(len(r.data))):
                name, dtype_id, field_dim, tag = r.text(), r.take("<I"), r.take("<Q"), r.take("<I")
                shape = [r.take("<i") for _ in range(r.count(len(r.data)))]
                r.take("<Q")  # num_channels: textures only (and uninitialised for the rest)
                found.append(_arg(name, tag, dtype_id, field_dim, shape, kernel))
    return graphs


def _from_json(file: Path) -> dict[str, list[ModuleArg]]:
    try:
        table = json.loads(file.read_text(encoding="utf-8"))
        graphs: dict[str, list[ModuleArg]] = {}
        for entry in table:
            found = graphs[entry["key"]] = []
            for dispatch in entry["value"]["dispatches"]:
                for a in dispatch["symbolic_args"]:
                    found.append(
                        _arg(
                            a["name"],
                            a["tag"],
                            a["dtype_id"],
                            a["field_dim"],
                            a["element_shape"],
                            dispatch["kernel_name"],
                        )
                    )
    except (ValueError, KeyError, TypeError) as exc:
        raise ManifestError(f"{file} is not a Taichi 1.7 graph table ({exc}); {_FIX}") from exc
    return graphs


def module_graph_args(folder: Path) -> dict[str, list[ModuleArg]] | None:
    """Each module graph's symbolic args (one entry per use in a dispatch); None when the module has no table."""
    for name, read in (("graphs.json", _from_json), ("graphs.tcb", _from_tcb)):
        file = folder / "module" / name
        if file.is_file():
            return read(file)
    return None


def _element_shape_matches(arg: Arg, compiled: tuple[int, ...]) -> bool:
    """Taichi records a vector of n as an n x 1 matrix."""
    want = tuple(arg.element_shape)
    return compiled == want or (arg.kind == "matrix" and len(want) == 1 and compiled == (want[0], 1))


def _difference(arg: Arg, compiled: ModuleArg) -> tuple[str, str, str] | None:
    """(field, manifest's, module's) for the first difference that matters, or None."""
    if arg.kind != compiled.kind:
        return "kind", arg.kind, compiled.kind
    if arg.kind in ("scalar", "ndarray", "matrix") and arg.dtype != compiled.dtype:
        return "dtype", str(arg.dtype), str(compiled.dtype)
    if arg.kind == "ndarray" and arg.ndim != compiled.ndim:
        return "ndim", str(arg.ndim), str(compiled.ndim)
    if arg.kind in ("ndarray", "matrix") and not _element_shape_matches(arg, compiled.element_shape):
        return "element_shape", str(list(arg.element_shape)), str(list(compiled.element_shape))
    return None


def check_against_module(manifest: Manifest) -> None:
    """Refuse a manifest whose graphs' args differ from what the module's kernels were compiled for.

    Every arg the dispatches of a module graph take must be one the manifest passes to it, of the
    same kind, dtype, ndim and element shape (a module graph the table lacks is left to the C
    runtime, whose lookup names it). Run after the files' sha256 check, so the table is the one the export wrote.
    """
    table = module_graph_args(manifest.folder)
    if table is None:
        return
    folder = manifest.folder
    for i, spec in enumerate(manifest.graphs):
        where = f"$.graphs[{i}]"
        index = {arg.name: j for j, arg in enumerate(spec.args)}
        for segment in spec.plan.segments:
            compiled = table.get(segment.name)
            if compiled is None:  # the C runtime's own lookup says so, naming the graph (TI_ERROR_NAME_NOT_FOUND)
                continue
            passed = set(segment.args)
            for used in compiled:
                j = index.get(used.name)
                if j is None or used.name not in passed:
                    message = (
                        f"module graph {segment.name!r} (kernel {used.kernel}) takes arg {used.name!r}, which the "
                        f"manifest does not pass to it; {_FIX}"
                    )
                    raise ManifestError(message, file=str(folder / "manifest.json"), json_path=f"{where}.args")
                diff = _difference(spec.args[j], used)
                if diff is not None:
                    field, have, want = diff
                    message = (
                        f"arg {used.name!r} has {field} {have}, but module graph {segment.name!r} was compiled "
                        f"with {field} {want} (kernel {used.kernel}); running it would misread the value; {_FIX}"
                    )
                    raise ManifestError(
                        message, file=str(folder / "manifest.json"), json_path=f"{where}.args[{j}].{field}"
                    )
