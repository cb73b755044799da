"""``manifest.json``: what an exported module holds, written by ``gl.export`` and read by everything after.

One file describes the module folder to every consumer (the C runtime binding, the generated C
host, ``gl.verify``, a user's own host), so its format lives here, in one place::

    {"format": "graphlab.module/1", "arch": "vulkan", "taichi_version": "1.7.4",
     "graphs": [{"name": "update", "steps": 2000, "writes": ["x", "v", ...],
                 "args": [{"name": "x", "kind": "ndarray", "dtype": "f32", "ndim": 1,
                           "element_shape": [2], "role": "state", "shape": ["n"],
                           "sample": {"shape": [8192], "low": 0.2, "high": 0.6}}, ...]},
                {"name": "poisson", "steps": null, "args": [...], "control": [{"op": "loop", ...}]}],
     "dims": {"n": 8192, "G": 128},
     "memory_plan": {"slots": [{"slot": 0, "bytes": 65536, "args": ["tmp"], ...}], "total_bytes": ...},
     "files": {"module/metadata.json": "<sha256>", ...},
     "caps": ["spirv_has_int16"], "cpu_max_num_threads": null, "tcm": "module.tcm",
     "source": {"graphs": {"update": "source/update.graph.json"}, "kernels": "source/kernels.json"},
     "graphlab_version": "0.1.0"}

``graphs``, ``dims``, ``memory_plan.slots``, ``files``, ``arch`` and ``taichi_version`` are what a
host needs; a graph with conditionals or loops also has ``control``, the tree of module graphs
(segments) and host-side decisions that runs it (see :mod:`graphlab.export.control`; without it
the graph is one module graph of its own name). The rest (``sample``: the shape and value range
the notebook's values had, ``writes``, ``source``, ``cpu_max_num_threads``) lets ``gl.verify``
rerun the same graphs from Python. Reading never executes anything; a bad field raises
:class:`ManifestError` naming its JSON path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphlab._version import __version__
from graphlab.export.control import CondEntry, ControlEntry, LoopEntry, RepeatEntry, SegmentEntry
from graphlab.export.errors import ManifestError
from graphlab.spec import ARG_KINDS, NUMPY_DTYPES, ROLES, Arg

__all__ = [
    "ARCHS",
    "MANIFEST_FORMAT",
    "ArgSpec",
    "GraphSpec",
    "Manifest",
    "Sample",
    "arg_entry",
    "file_digests",
    "manifest_error",
    "read_manifest",
    "write_manifest",
]

MANIFEST_FORMAT = "graphlab.module/1"
#: Archs the C runtime binding and the generated host can run.
ARCHS = ("vulkan", "cuda", "x64")


# --- records ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """What the notebook's value of an arg looked like at export: a shape and a range, or the value.

    ``gl.verify`` draws random inputs from it, so they stay in a range the simulation tolerates.
    """

    shape: tuple[int, ...] | None = None
    low: float | None = None
    high: float | None = None
    value: Any = None  # a scalar's number or a matrix's nested list


@dataclass(frozen=True)
class ArgSpec:
    """One graph arg as ``manifest.json`` records it (the fields of :class:`graphlab.spec.Arg`)."""

    name: str
    kind: str
    dtype: str | None
    ndim: int = 0
    element_shape: tuple[int, ...] = ()
    role: str = "state"
    shape: tuple[int | str, ...] | None = None


@dataclass(frozen=True)
class GraphSpec:
    """One graph of the module: its args in launch order, the ndarrays it writes, its control tree.

    ``control`` is None for a graph without conditionals or loops: it is then one module graph.
    """

    name: str
    args: tuple[ArgSpec, ...]
    writes: tuple[str, ...] = ()
    control: tuple[ControlEntry, ...] | None = None

    @property
    def program(self) -> tuple[ControlEntry, ...]:
        """What one run launches: the control tree, or the module graph of this name with every arg."""
        if self.control is not None:
            return self.control
        return (SegmentEntry(self.name, tuple(a.name for a in self.args)),)


@dataclass(frozen=True)
class Manifest:
    """A checked ``manifest.json``; ``slots`` maps each planned slot to the temps sharing it."""

    folder: Path
    arch: str
    taichi_version: str
    graphs: tuple[GraphSpec, ...]
    dims: dict[str, int]
    slots: dict[int, tuple[str, ...]]
    files: dict[str, str]
    samples: dict[str, Sample] = field(default_factory=dict)
    source: dict[str, Any] | None = None
    cpu_max_num_threads: int | None = None
    caps: tuple[str, ...] = ()
    tcm: str | None = None


def manifest_error(folder: Path, json_path: str, message: str) -> ManifestError:
    """A :class:`ManifestError` for ``folder/manifest.json`` at ``json_path``, with the usual fix."""
    return ManifestError(
        f"{message}; re-export the module or fix manifest.json", file=str(folder / "manifest.json"), json_path=json_path
    )


# --- reading ------------------------------------------------------------------------------------


class _Reader:
    """Typed access to parsed JSON that names the JSON path of a bad field."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def fail(self, path: str, message: str) -> ManifestError:
        return manifest_error(self.folder, path, message)

    def get(self, obj: Any, path: str, key: str, kind: Any, default: Any = ...) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(path, f"expected an object, got {obj!r}")
        if key not in obj and default is not ...:
            return default
        value = obj.get(key)
        if key not in obj or not isinstance(value, kind) or isinstance(value, bool):
            raise self.fail(f"{path}.{key}", f"expected {getattr(kind, '__name__', kind)}, got {value!r}")
        return value

    def choice(self, obj: Any, path: str, key: str, allowed: tuple[str | None, ...], default: Any = ...) -> Any:
        value = self.get(obj, path, key, (str, type(None)), default)
        if value not in allowed:
            raise self.fail(f"{path}.{key}", f"{value!r} is not one of {', '.join(map(str, allowed))}")
        return value

    def dims(self, values: list[Any], path: str, *, names: bool) -> tuple[Any, ...]:
        for i, v in enumerate(values):
            if not (isinstance(v, str) and names) and (type(v) is not int or v < 0):
                raise self.fail(f"{path}[{i}]", f"expected a non-negative int{' or a dim name' * names}, got {v!r}")
        return tuple(values)

    def names(self, obj: Any, path: str, key: str) -> tuple[str, ...]:
        values = self.get(obj, path, key, list, [])
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise self.fail(f"{path}.{key}[{i}]", f"expected a name, got {v!r}")
        return tuple(values)

    def arg(self, obj: Any, path: str) -> ArgSpec:
        kind = self.choice(obj, path, "kind", ARG_KINDS)
        typed = kind in ("scalar", "ndarray", "matrix")
        shape = self.get(obj, path, "shape", (list, type(None)), None)
        ndim = self.get(obj, path, "ndim", int, 0)
        if shape is not None and len(shape) != ndim:
            raise self.fail(f"{path}.shape", f"{shape!r} has {len(shape)} dims but ndim is {ndim}")
        return ArgSpec(
            name=self.get(obj, path, "name", str),
            kind=kind,
            dtype=self.choice(obj, path, "dtype", tuple(NUMPY_DTYPES) if typed else (None, *NUMPY_DTYPES), None),
            ndim=ndim,
            element_shape=self.dims(
                self.get(obj, path, "element_shape", list, []), f"{path}.element_shape", names=False
            ),
            role=self.choice(obj, path, "role", ROLES, "state"),
            shape=None if shape is None else self.dims(shape, f"{path}.shape", names=True),
        )

    def control(self, raw: list[Any], path: str, args: Mapping[str, ArgSpec]) -> tuple[ControlEntry, ...]:
        """A control tree (see graphlab.export.control); flags and counts must be args of the graph."""
        return tuple(self.entry(item, f"{path}[{i}]", args) for i, item in enumerate(raw))

    def entry(self, obj: Any, path: str, args: Mapping[str, ArgSpec]) -> ControlEntry:
        op = self.choice(obj, path, "op", ("segment", "repeat", "cond", "loop"))
        if op == "segment":
            return SegmentEntry(self.get(obj, path, "graph", str), self.segment_args(obj, path, args))
        if op == "repeat":
            times = self.get(obj, path, "times", int)
            return RepeatEntry(self.dims([times], f"{path}.times", names=False)[0], self.body(obj, path, "body", args))
        if op == "cond":
            other = self.get(obj, path, "else", (list, type(None)), None)
            return CondEntry(
                self.get(obj, path, "node", str),
                self.decision(obj, path, "flag", args, "ndarray"),
                self.body(obj, path, "then", args),
                None if other is None else self.control(other, f"{path}.else", args),
            )
        return self.loop(obj, path, args)

    def loop(self, obj: Any, path: str, args: Mapping[str, ArgSpec]) -> LoopEntry:
        flag = self.decision(obj, path, "while", args, "ndarray", optional=True)
        count = self.decision(obj, path, "count", args, "scalar", optional=True)
        max_iter = self.get(obj, path, "max_iter", (int, type(None)), None)
        if (flag is None) == (count is None):
            raise self.fail(path, "a loop has exactly one of 'while' (a flag) and 'count' (a scalar)")
        if flag is not None and (max_iter is None or max_iter < 1):
            raise self.fail(f"{path}.max_iter", f"a while loop needs a positive max_iter, got {max_iter!r}")
        return LoopEntry(self.get(obj, path, "node", str), self.body(obj, path, "body", args), flag, count, max_iter)

    def body(self, obj: Any, path: str, key: str, args: Mapping[str, ArgSpec]) -> tuple[ControlEntry, ...]:
        return self.control(self.get(obj, path, key, list), f"{path}.{key}", args)

    def decision(
        self, obj: Any, path: str, key: str, args: Mapping[str, ArgSpec], kind: str, *, optional: bool = False
    ) -> Any:
        """The i32 arg a decision reads: a flag (an ndarray) or a count (a scalar)."""
        name = self.get(obj, path, key, (str, type(None)) if optional else str, None if optional else ...)
        arg = args.get(name) if name is not None else None
        if name is not None and (arg is None or arg.kind != kind or arg.dtype != "i32"):
            raise self.fail(f"{path}.{key}", f"{name!r} is not an i32 {kind} arg of this graph")
        return name

    def segment_args(self, obj: Any, path: str, args: Mapping[str, ArgSpec]) -> tuple[str, ...]:
        """The args a segment takes; every arg of the graph when not listed."""
        if obj.get("args") is None:
            return tuple(args)
        names = self.names(obj, path, "args")
        for i, name in enumerate(names):
            if name not in args:
                raise self.fail(f"{path}.args[{i}]", f"{name!r} is not an arg of this graph")
        return names

    def sample(self, obj: Any, path: str) -> Sample | None:
        raw = self.get(obj, path, "sample", (dict, type(None)), None)
        if raw is None:
            return None
        where = f"{path}.sample"
        shape = self.get(raw, where, "shape", (list, type(None)), None)
        bounds = [self.get(raw, where, key, (int, float, type(None)), None) for key in ("low", "high")]
        return Sample(
            None if shape is None else self.dims(shape, f"{where}.shape", names=False),
            bounds[0],
            bounds[1],
            raw.get("value"),
        )


def read_manifest(folder: Path) -> Manifest:
    """Read and check ``folder/manifest.json`` (plain data: nothing in it is executed)."""
    folder = Path(folder)
    file = folder / "manifest.json"
    r = _Reader(folder)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise ManifestError(f"missing; pass the folder gl.export wrote, not {folder}", file=str(file)) from e
    except (OSError, ValueError) as e:
        raise r.fail("$", f"not readable JSON ({e})") from e
    r.choice(data, "$", "format", (MANIFEST_FORMAT,))
    graphs: list[GraphSpec] = []
    samples: dict[str, Sample] = {}
    for i, g in enumerate(r.get(data, "$", "graphs", list)):
        where = f"$.graphs[{i}]"
        raw_args = r.get(g, where, "args", list)
        args = tuple(r.arg(a, f"{where}.args[{j}]") for j, a in enumerate(raw_args))
        for j, (raw, arg) in enumerate(zip(raw_args, args)):
            sample = r.sample(raw, f"{where}.args[{j}]")
            if sample is not None:
                samples.setdefault(arg.name, sample)
        control = r.get(g, where, "control", (list, type(None)), None)
        if control == []:
            raise r.fail(f"{where}.control", "an empty tree runs nothing; leave 'control' out for one module graph")
        tree = None if control is None else r.control(control, f"{where}.control", {a.name: a for a in args})
        graphs.append(GraphSpec(r.get(g, where, "name", str), args, r.names(g, where, "writes"), tree))
    plan = r.get(data, "$", "memory_plan", dict, {})
    slots: dict[int, tuple[str, ...]] = {}
    for i, s in enumerate(r.get(plan, "$.memory_plan", "slots", list, [])):
        where = f"$.memory_plan.slots[{i}]"
        slots[r.get(s, where, "slot", int)] = r.names(s, where, "args")
    dims = r.get(data, "$", "dims", dict, {})
    for name, size in dims.items():
        r.dims([size], f"$.dims.{name}", names=False)
    if len({g.name for g in graphs}) != len(graphs):
        raise r.fail("$.graphs", f"graph names repeat: {[g.name for g in graphs]}")
    return Manifest(
        folder=folder,
        arch=r.choice(data, "$", "arch", ARCHS),
        taichi_version=r.get(data, "$", "taichi_version", str),
        graphs=tuple(graphs),
        dims=dict(dims),
        slots=slots,
        files=dict(r.get(data, "$", "files", dict, {})),
        samples=samples,
        source=r.get(data, "$", "source", (dict, type(None)), None),
        cpu_max_num_threads=r.get(data, "$", "cpu_max_num_threads", (int, type(None)), None),
        caps=r.names(data, "$", "caps"),
        tcm=r.get(data, "$", "tcm", (str, type(None)), None),
    )


# --- writing ------------------------------------------------------------------------------------


def arg_entry(arg: Arg, sample: Sample | None = None) -> dict[str, Any]:
    """An arg as ``manifest.json`` records it; ``sample`` only where the notebook gave a value."""
    entry: dict[str, Any] = {
        "name": arg.name,
        "kind": arg.kind,
        "dtype": arg.dtype,
        "ndim": arg.ndim,
        "element_shape": list(arg.element_shape),
        "role": arg.role,
        "shape": None if arg.shape is None else list(arg.shape),
    }
    if sample is not None:
        raw = {
            "shape": None if sample.shape is None else list(sample.shape),
            "low": sample.low,
            "high": sample.high,
            "value": sample.value,
        }
        entry["sample"] = {k: v for k, v in raw.items() if v is not None}
    return entry


def file_digests(folder: Path, names: Iterable[str]) -> dict[str, str]:
    """sha256 of every file under the given entries of ``folder`` (files or folders), by POSIX path.

    The C runtime binding refuses a module whose listed files changed after export.
    """
    digests: dict[str, str] = {}
    for name in names:
        root = folder / name
        paths = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in paths:
            digests[path.relative_to(folder).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def write_manifest(folder: Path, data: Mapping[str, Any]) -> Path:
    """Write ``folder/manifest.json`` through a temporary name; check it reads back; return its path.

    Reading it back here means a manifest the readers would refuse is never shipped.
    """
    file = folder / "manifest.json"
    tmp = folder / ".manifest.json.tmp"
    tmp.write_text(json.dumps({"format": MANIFEST_FORMAT, **data, "graphlab_version": __version__}, indent=2) + "\n")
    tmp.replace(file)
    read_manifest(folder)
    return file
