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
(segments) and host-side decisions that runs it (see :mod:`graphlab.deploy.control`; without it
the graph is one module graph of its own name). ``shape_relations`` lists, per graph, the shape
relations read from its kernels' loops (:class:`graphlab.kernelfacts.shape_facts.ShapeRelation` as plain data:
``{"node": "substep/p2g", "arg": "J", "axis": 0, "source": "x", "source_axis": 0, ...}``; a loop's
constant bound has ``"source": null``, ``"source_axis": null`` and ``"minimum": 128``), which
``load_module``, ``gl.verify`` and the C host (a table generated from them) check before anything
runs. The rest (``sample``: the shape and value range
the notebook's values had, ``writes``, ``source``, ``cpu_max_num_threads``) lets ``gl.verify``
rerun the same graphs from Python. A ``rw_texture`` arg also has its ``fmt``; a texture's ``sample``
may name the ``fmt`` of the notebook's texture (the image format the module gives it, see
:mod:`graphlab.bridge.texture_formats`). ``debug_steps`` (``gl.export(..., debug=True)`` only) records each graph's
debug variant: ``{"update": {"graphs": [["substep/p2g", "update_step0"], ...], "order": [...]}}``,
the module graph that runs one dispatch node, and the node ids in run order (null with control
flow), so a host can step the module (:mod:`graphlab.deploy.debug_variant`). Reading never
executes anything; a bad field raises :class:`ManifestError` naming its JSON path.

A manifest is also the module's seal, so reading refuses what could reach past the folder or skip
the seal: every path it names (``files``, ``source``, ``tcm``) is relative, inside the folder, with
no ``..`` and no symbolic link leading out, and every ``files`` entry is a sha256. Before a module
is loaded or verified, :func:`graphlab.deploy.seal.check_files` hashes what is listed and refuses a folder whose
``module/`` holds a file the manifest does not list (a manifest without ``files`` checks nothing,
so it is refused there). Nesting is bounded: a control tree goes at most
:data:`graphlab.core.nesting.MAX_NESTING` levels deep, and JSON too deep for Python's parser gets a
ManifestError too.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphlab._version import __version__
from graphlab.core.errors import GraphError
from graphlab.core.fileio import read_limited
from graphlab.core.limits import TEXTURE_FORMATS
from graphlab.core.names import shown
from graphlab.core.nesting import MAX_JSON_DEPTH, MAX_NESTING, deep_json_path
from graphlab.core.spec import ARG_KINDS, NUMPY_DTYPES, ROLES, Arg
from graphlab.deploy.errors import ManifestError
from graphlab.deploy.signature import sign
from graphlab.kernelfacts.shape_facts import ShapeRelation
from graphlab.model.plan import Branch, Iterate, Op, Plan, Repeat, Segment

__all__ = [
    "ARCHS",
    "MANIFEST_FORMAT",
    "DebugSteps",
    "GraphSpec",
    "Manifest",
    "Sample",
    "arg_entry",
    "load_manifest_json",
    "manifest_error",
    "module_folder",
    "read_manifest",
    "write_manifest",
]

MANIFEST_FORMAT = "graphlab.module/1"
#: Archs the C runtime binding and the generated host can run.
ARCHS = ("vulkan", "cuda", "x64")
#: A ``files`` value: the sha256 of the file, as lowercase hex.
_SHA256 = re.compile(r"[0-9a-f]{64}")


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
    fmt: str | None = None  # a texture's ti.Format name: the image format the module gives it


@dataclass(frozen=True)
class GraphSpec:
    """One graph of the module: its args in launch order, the ndarrays it writes, its control tree.

    The args are :class:`graphlab.core.spec.Arg` themselves (``fmt`` is recorded for rw_textures only):
    reading builds them, so a manifest arg obeys every rule a notebook arg does.

    ``control`` is None for a graph without conditionals or loops: it is then one module graph.
    """

    name: str
    args: tuple[Arg, ...]
    writes: tuple[str, ...] = ()
    control: tuple[Op, ...] | None = None
    relations: tuple[ShapeRelation, ...] = ()  # what the kernels' loops need of the args' shapes

    @property
    def plan(self) -> Plan:
        """What one run launches: the control tree, or the module graph of this name with every arg."""
        if self.control is not None:
            return Plan(self.name, self.control, tuple(_segments(self.control)), True)
        whole = Segment(0, self.name, (), tuple(a.name for a in self.args))
        return Plan(self.name, (whole,), (whole,), False)


def _segments(ops: tuple[Op, ...]) -> list[Segment]:
    return [op for op in Plan("", ops, (), True).ops() if isinstance(op, Segment)]


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
    debug_steps: dict[str, DebugSteps] = field(default_factory=dict)
    """Graph name -> its debug variant (``gl.export(debug=True)``); empty without one."""
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The parsed JSON as read: what its signature and its sealed copy (``$.source.contract``) are checked on."""


@dataclass(frozen=True)
class DebugSteps:
    """A graph's debug variant: the module graph of each dispatch node, and the order the nodes run
    in (None where control flow decides it at run time)."""

    graphs: dict[str, str]
    order: tuple[str, ...] | None


_FIX = "; re-export the module or fix manifest.json"


def manifest_error(folder: Path, json_path: str, message: str) -> ManifestError:
    """A :class:`ManifestError` for ``folder/manifest.json`` at ``json_path``, with the usual fix."""
    return ManifestError(f"{message}{_FIX}", file=str(folder / "manifest.json"), json_path=json_path)


# --- reading ------------------------------------------------------------------------------------


class _Reader:
    """Typed access to parsed JSON that names the JSON path of a bad field."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.segment_count = 0  # segments read so far in the current graph's control tree

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

    def arg(self, obj: Any, path: str) -> Arg:
        kind = self.choice(obj, path, "kind", ARG_KINDS)
        typed = kind in ("scalar", "ndarray", "matrix")
        shape = self.get(obj, path, "shape", (list, type(None)), None)
        ndim = self.get(obj, path, "ndim", int, 0)
        if shape is not None and len(shape) != ndim:
            raise self.fail(f"{path}.shape", f"{shape!r} has {len(shape)} dims but ndim is {ndim}")
        fields = {
            "name": self.get(obj, path, "name", str),
            "kind": kind,
            "dtype": self.choice(obj, path, "dtype", tuple(NUMPY_DTYPES) if typed else (None, *NUMPY_DTYPES), None),
            "ndim": ndim,
            "element_shape": self.dims(
                self.get(obj, path, "element_shape", list, []), f"{path}.element_shape", names=False
            ),
            "role": self.choice(obj, path, "role", ROLES, "state"),
            "shape": None if shape is None else self.dims(shape, f"{path}.shape", names=True),
        }
        if kind == "rw_texture":
            fields["fmt"] = self.choice(obj, path, "fmt", TEXTURE_FORMATS)
        try:  # the model's own rules (names, sizes up to 2**32 - 1, kinds' dims), as for a notebook arg
            return Arg(**fields)
        except GraphError as exc:
            raise self.fail(path, str(exc)) from None

    def control(self, raw: list[Any], path: str, args: Mapping[str, Arg], level: int = 1) -> tuple[Op, ...]:
        """A control tree of plan ops (see graphlab.deploy.control); flags and counts must be args of the graph.

        ``level`` counts the lists down to here: a graph nests at most MAX_NESTING sequences, so
        the body of its deepest one is list MAX_NESTING + 1; deeper, and the walk stops.
        """
        if level > MAX_NESTING + 1:
            raise self.fail(
                path,
                f"the control tree nests deeper than {MAX_NESTING + 1} levels, more than a graph of at most "
                f"{MAX_NESTING} nested sequences (graphlab.core.nesting.MAX_NESTING) exports",
            )
        return tuple(self.entry(item, f"{path}[{i}]", args, level) for i, item in enumerate(raw))

    def entry(self, obj: Any, path: str, args: Mapping[str, Arg], level: int) -> Op:
        op = self.choice(obj, path, "op", ("segment", "repeat", "cond", "loop"))
        if op == "segment":  # numbered in program order, as graphlab.model.plan.build_plan numbers them
            name = self.get(obj, path, "graph", str)
            segment = Segment(self.segment_count, name, (), self.segment_args(obj, path, args))
            self.segment_count += 1
            return segment
        if op == "repeat":
            times = self.get(obj, path, "times", int)
            node = self.get(obj, path, "node", str, "")
            body = self.body(obj, path, "body", args, level)
            return Repeat(node, self.dims([times], f"{path}.times", names=False)[0], body)
        if op == "cond":
            other = self.get(obj, path, "else", (list, type(None)), None)
            return Branch(
                self.get(obj, path, "node", str),
                self.decision(obj, path, "flag", args, "ndarray"),
                self.body(obj, path, "then", args, level),
                None if other is None else self.control(other, f"{path}.else", args, level + 1),
            )
        return self.loop(obj, path, args, level)

    def loop(self, obj: Any, path: str, args: Mapping[str, Arg], level: int) -> Iterate:
        flag = self.decision(obj, path, "while", args, "ndarray", optional=True)
        count = self.decision(obj, path, "count", args, "scalar", optional=True)
        max_iter = self.get(obj, path, "max_iter", (int, type(None)), None)
        if (flag is None) == (count is None):
            raise self.fail(path, "a loop has exactly one of 'while' (a flag) and 'count' (a scalar)")
        if flag is not None and (max_iter is None or max_iter < 1):
            raise self.fail(f"{path}.max_iter", f"a while loop needs a positive max_iter, got {max_iter!r}")
        check_every = self.get(obj, path, "check_every", int, 1)
        if check_every < 1:
            raise self.fail(f"{path}.check_every", f"check_every must be 1 or more, got {check_every!r}")
        guarded = obj.get("guarded", False)
        if not isinstance(guarded, bool):
            raise self.fail(f"{path}.guarded", f"expected true or false, got {guarded!r}")
        if guarded and (flag is None or check_every == 1):
            raise self.fail(f"{path}.guarded", "a guarded loop is a while loop with check_every above 1")
        saves = self.get(obj, path, "saves", list, [])
        for i, name in enumerate(saves):
            if not isinstance(name, str) or getattr(args.get(name), "kind", None) != "ndarray":
                raise self.fail(f"{path}.saves[{i}]", f"{name!r} is not an ndarray arg of this graph")
        body = self.body(obj, path, "body", args, level)
        node = self.get(obj, path, "node", str)
        return Iterate(node, body, flag, count, max_iter, check_every, guarded, tuple(saves))

    def body(self, obj: Any, path: str, key: str, args: Mapping[str, Arg], level: int) -> tuple[Op, ...]:
        return self.control(self.get(obj, path, key, list), f"{path}.{key}", args, level + 1)

    def decision(
        self, obj: Any, path: str, key: str, args: Mapping[str, Arg], kind: str, *, optional: bool = False
    ) -> Any:
        """The i32 arg a decision reads: a flag (an ndarray) or a count (a scalar)."""
        name = self.get(obj, path, key, (str, type(None)) if optional else str, None if optional else ...)
        arg = args.get(name) if name is not None else None
        if name is not None and (arg is None or arg.kind != kind or arg.dtype != "i32"):
            raise self.fail(f"{path}.{key}", f"{name!r} is not an i32 {kind} arg of this graph")
        return name

    def segment_args(self, obj: Any, path: str, args: Mapping[str, Arg]) -> tuple[str, ...]:
        """The args a segment takes; every arg of the graph when not listed."""
        if obj.get("args") is None:
            return tuple(args)
        names = self.names(obj, path, "args")
        for i, name in enumerate(names):
            if name not in args:
                raise self.fail(f"{path}.args[{i}]", f"{name!r} is not an arg of this graph")
        return names

    def inside(self, value: Any, path: str) -> str:
        """A path the manifest names: relative, inside the folder (see :func:`path_problem`)."""
        if not isinstance(value, str):
            raise self.fail(path, f"expected a path inside the module folder, got {value!r}")
        problem = path_problem(self.folder, value)
        if problem is not None:
            raise self.fail(path, problem)
        return value

    def files(self, data: Any) -> dict[str, str]:
        """``files``: each a path inside the folder with its sha256 (lowercase hex)."""
        raw = self.get(data, "$", "files", dict, {})
        for name, digest in raw.items():
            where = f"$.files[{name!r}]"
            self.inside(name, where)
            if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
                raise self.fail(where, f"expected the file's sha256 (64 lowercase hex digits), got {digest!r}")
        return dict(raw)

    def source(self, data: Any) -> dict[str, Any] | None:
        """``source``: where the graph files and the carried kernels are, inside the folder."""
        raw = self.get(data, "$", "source", (dict, type(None)), None)
        if raw is None:
            return None
        for name, rel in self.get(raw, "$.source", "graphs", dict, {}).items():
            self.inside(rel, f"$.source.graphs[{name!r}]")
        for key in ("kernels", "contract"):
            rel = self.get(raw, "$.source", key, (str, type(None)), None)
            if rel is not None:
                self.inside(rel, f"$.source.{key}")
        return dict(raw)

    def relations(self, obj: Any, path: str, args: Mapping[str, Arg]) -> tuple[ShapeRelation, ...]:
        """A graph's ``shape_relations``: each between two of its ndarray args, on axes they have."""
        found = []
        for i, raw in enumerate(self.get(obj, path, "shape_relations", list, [])):
            where = f"{path}.shape_relations[{i}]"
            minimum = self.get(raw, where, "minimum", (int, type(None)), None)
            if minimum is not None and minimum < 1:
                raise self.fail(f"{where}.minimum", f"expected an int >= 1 (a loop's constant bound), got {minimum!r}")
            ends: list[tuple[str | None, int | None]] = []
            for name_key, axis_key in (("arg", "axis"), ("source", "source_axis")):
                if name_key == "source" and minimum is not None:  # a constant bound: no source arg
                    if raw.get("source") is not None or raw.get("source_axis") is not None:
                        raise self.fail(f"{where}.source", "a relation with a minimum has a null source")
                    ends.append((None, None))
                    continue
                name, axis = self.get(raw, where, name_key, str), self.get(raw, where, axis_key, int)
                arg = args.get(name)
                if arg is None or arg.kind != "ndarray" or not 0 <= axis < arg.ndim:
                    raise self.fail(f"{where}.{name_key}", f"{name!r} axis {axis} is not an axis of an ndarray arg")
                ends.append((name, axis))
            guards = []
            for j, guard in enumerate(self.get(raw, where, "guards", list, [])):
                ok = isinstance(guard, list) and len(guard) == 2 and isinstance(guard[0], str) and guard[0] in args
                if not ok or not (guard[1] is None or (type(guard[1]) is int and guard[1] >= 0)):
                    raise self.fail(f"{where}.guards[{j}]", f"expected [arg name, axis or null], got {guard!r}")
                guards.append((guard[0], guard[1]))
            node, kernel, param, access = (self.get(raw, where, k, str) for k in ("node", "kernel", "param", "access"))
            source_param = self.get(raw, where, "source_param", str) if minimum is None else None
            (arg_name, axis), (source, source_axis) = ends
            assert arg_name is not None and axis is not None
            found.append(ShapeRelation(
                node, kernel, arg_name, axis, source, source_axis, param, source_param, access, tuple(guards), minimum
            ))  # fmt: skip
        return tuple(found)

    def sample(self, obj: Any, path: str) -> Sample | None:
        raw = self.get(obj, path, "sample", (dict, type(None)), None)
        if raw is None:
            return None
        where = f"{path}.sample"
        shape = self.get(raw, where, "shape", (list, type(None)), None)
        bounds = [self.get(raw, where, key, (int, float, type(None)), None) for key in ("low", "high")]
        fmt = self.choice(raw, where, "fmt", (None, *TEXTURE_FORMATS), None)
        if not _is_sample_value(raw.get("value")):
            raise self.fail(f"{where}.value", "expected a number, or a list (or list of lists) of numbers")
        return Sample(
            None if shape is None else self.dims(shape, f"{where}.shape", names=False),
            bounds[0],
            bounds[1],
            raw.get("value"),
            fmt,
        )


def module_folder(path: object) -> Path:
    """``path`` (``~`` expanded) as the folder of a module, or a ManifestError for what names no folder."""
    if isinstance(path, (str, os.PathLike)) and isinstance(os.fspath(path), str):
        try:
            return Path(path).expanduser()
        except RuntimeError:  # "~nobody/x": an unknown user
            pass
    raise ManifestError(f"path={shown(path)}: give the folder gl.export wrote, as a str or pathlib.Path")


def read_manifest(folder: Path) -> Manifest:
    """Read and check ``folder/manifest.json`` (plain data: nothing in it is executed)."""
    folder = Path(folder)
    r = _Reader(folder)
    data = load_manifest_json(folder)
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
        r.segment_count = 0
        tree = None if control is None else r.control(control, f"{where}.control", {a.name: a for a in args})
        relations = r.relations(g, where, {a.name: a for a in args})
        graphs.append(GraphSpec(r.get(g, where, "name", str), args, r.names(g, where, "writes"), tree, relations))
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
    tcm = r.get(data, "$", "tcm", (str, type(None)), None)
    debug_steps = _debug_steps(r, data, {g.name for g in graphs})
    return Manifest(
        folder=folder,
        arch=r.choice(data, "$", "arch", ARCHS),
        taichi_version=r.get(data, "$", "taichi_version", str),
        graphs=tuple(graphs),
        dims=dict(dims),
        slots=slots,
        files=r.files(data),
        samples=samples,
        source=r.source(data),
        cpu_max_num_threads=r.get(data, "$", "cpu_max_num_threads", (int, type(None)), None),
        caps=r.names(data, "$", "caps"),
        tcm=None if tcm is None else r.inside(tcm, "$.tcm"),
        debug_steps=debug_steps,
        data=data,
    )


def _debug_steps(r: _Reader, data: Any, names: set[str]) -> dict[str, DebugSteps]:
    """``$.debug_steps``: each entry names graphs of the module, and its order names its dispatch nodes."""
    out: dict[str, DebugSteps] = {}
    for graph, entry in r.get(data, "$", "debug_steps", dict, {}).items():
        where = f"$.debug_steps.{graph}"
        if graph not in names:
            raise r.fail(where, f"graph {graph!r} is not one of the module's graphs")
        pairs = r.get(entry, where, "graphs", list)
        steps: dict[str, str] = {}
        for i, pair in enumerate(pairs):
            ok = isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)
            if not ok or pair[1] not in names:
                raise r.fail(f"{where}.graphs[{i}]", "must be [dispatch node id, a graph of the module]")
            steps[pair[0]] = pair[1]
        order = r.get(entry, where, "order", (list, type(None)), None)
        if order is not None and any(node not in steps for node in order):
            raise r.fail(f"{where}.order", "names a node that has no debug graph")
        out[graph] = DebugSteps(steps, None if order is None else tuple(order))
    return out


#: The most bytes a manifest.json may hold (a graph file's limit; read with graphlab.core.fileio.read_limited).
MAX_MANIFEST_BYTES = 64 * 1024 * 1024


def load_manifest_json(folder: Path, fix: str = _FIX) -> Any:
    """The parsed ``folder/manifest.json``; a ManifestError (never a RecursionError) when it cannot be."""
    file = folder / "manifest.json"
    try:
        text = read_limited(file, limit=MAX_MANIFEST_BYTES).decode("utf-8")
    except FileNotFoundError as e:
        raise ManifestError(f"missing; pass the folder gl.export wrote, not {folder}", file=str(file)) from e
    except (OSError, ValueError) as e:
        raise ManifestError(f"not readable ({e}){fix}", file=str(file)) from e
    try:
        return json.loads(text)
    except RecursionError:  # Python's parser gives up near 1000 levels; say where the file is too deep
        where = deep_json_path(text) or "$"
        message = f"JSON nested too deeply to read: more than {MAX_JSON_DEPTH} levels here; the file is damaged"
        raise ManifestError(message + fix, file=str(file), json_path=where) from None
    except ValueError as e:
        raise ManifestError(f"not readable JSON ({e}){fix}", file=str(file)) from e


def _is_sample_value(value: Any, depth: int = 0) -> bool:
    """A scalar's number, a vector's list or a matrix's list of lists (or None: no value)."""
    if value is None and depth == 0:
        return True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    return isinstance(value, list) and depth < 2 and all(_is_sample_value(v, depth + 1) for v in value)


def path_problem(folder: Path, name: str) -> str | None:
    """Why ``name`` is not a path inside ``folder`` (relative POSIX, no ``..``, no link leading out), or None."""
    inside = "a module names only files inside its own folder"
    if not name or "\\" in name or "\0" in name:
        return f"{name!r} is not a relative POSIX path (it is empty, or holds a backslash or NUL); {inside}"
    if name.startswith("/") or re.match(r"[A-Za-z]:", name):
        return f"{name!r} is an absolute path; {inside}"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return f"{name!r} has an empty, '.' or '..' part, which could point outside the folder; {inside}"
    root = os.path.realpath(folder)
    real = os.path.realpath(folder / name)
    if os.path.commonpath([root, real]) != root:
        return f"{name!r} leads outside the module folder through a symbolic link (to {real}); {inside}"
    return None


# --- writing ------------------------------------------------------------------------------------


def relation_entry(relation: ShapeRelation) -> dict[str, Any]:
    """A shape relation as ``manifest.json`` records it (``guards`` as ``[arg, axis or null]`` pairs)."""
    return {**dataclasses.asdict(relation), "guards": [list(g) for g in relation.guards]}


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
    if arg.kind == "rw_texture":
        entry["fmt"] = arg.fmt
    if sample is not None:
        raw = {
            "shape": None if sample.shape is None else list(sample.shape),
            "low": sample.low,
            "high": sample.high,
            "value": sample.value,
            "fmt": sample.fmt,
        }
        entry["sample"] = {k: v for k, v in raw.items() if v is not None}
    return entry


def write_manifest(folder: Path, data: Mapping[str, Any]) -> Path:
    """Write ``folder/manifest.json`` through a temporary name; check it reads back; return its path.

    Reading it back here means a manifest the readers would refuse is never shipped. It is signed
    with this user's key (:mod:`graphlab.deploy.signature`) where one can be had.
    """
    file = folder / "manifest.json"
    tmp = folder / ".manifest.json.tmp"
    full: dict[str, Any] = {"format": MANIFEST_FORMAT, **data, "graphlab_version": __version__}
    signature = sign(full)
    if signature is not None:
        full["signature"] = signature
    tmp.write_text(json.dumps(full, indent=2) + "\n")
    tmp.replace(file)
    read_manifest(folder)
    return file
