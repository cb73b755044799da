"""A field capture opened in the notebook: read and checked against the notebook's graph.

``gl.open_capture`` (:func:`graphlab.api.graph.open_capture`) makes a checked capture a debug session.

A capture (:mod:`graphlab.core.capture_format`) is one run of an exported graph on a user's device. To
step it here, the notebook's own :class:`~graphlab.model.graph.Graph` (its kernels) is needed; the capture
must be of that graph: same name, the same args with the same dtypes and shapes (its dims bound
consistently), decisions of its control nodes, segments of its plan, and, when the module folder is
given, the very ``manifest.json`` it was recorded with (its sha256). Every mismatch is refused before
anything runs, naming the file, the JSON path and the fix; the arrays are read with a bound
(``max_bytes``).

:class:`Capture` is then the third kind of "other side" ``dbg.compare`` takes, after an arch and a
module folder: it runs nothing, it holds the field run's answers
(:func:`graphlab.debug.compare_capture.compare_capture` does the search).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlab.core.capture_format import (
    CaptureRecord,
    read_capture_json,
    read_npy,
)
from graphlab.core.errors import CaptureError
from graphlab.core.fileio import read_limited
from graphlab.core.spec import Arg
from graphlab.model.graph import Graph
from graphlab.model.plan import Branch, Iterate, build_plan
from graphlab.run.values import numpy_dtype

if TYPE_CHECKING:
    pass

__all__ = ["DEFAULT_MAX_BYTES", "Capture", "read_capture"]

#: The default bound on the bytes of arrays read from one capture.
DEFAULT_MAX_BYTES = 8 * 1024**3
#: manifest.json is hashed with the exporter's bound on it (64 MiB).
_MAX_MANIFEST_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Capture:
    """A field capture checked against ``graph``: the start values, the flag reads, what each recorded
    segment wrote and the arrays at the end (numpy arrays by arg name)."""

    record: CaptureRecord
    graph: Graph
    inputs: dict[str, Any]
    segments: tuple[dict[str, np.ndarray], ...]
    outputs: dict[str, np.ndarray]
    dims: dict[str, int] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        return self.record.folder

    @property
    def arch(self) -> str:
        """How comparisons name this side: the arch it ran on, as a capture."""
        return f"{self.record.platform.get('arch', '?')} capture"

    def start_values(self) -> dict[str, Any]:
        """The graph's run values before the field run: fresh copies, scalars as numbers, dims by name."""
        values: dict[str, Any] = {}
        for name, value in self.inputs.items():
            values[name] = value.copy() if isinstance(value, np.ndarray) else value
        used = {d for arg in self.graph.args.values() for d in arg.shape or () if isinstance(d, str)}
        for dim, size in self.dims.items():
            if dim in used and dim not in self.graph.args:  # sizes the temps no value sizes
                values[dim] = size
        return values

    def __repr__(self) -> str:
        recorded = f"{len(self.segments)} segments" + (" (truncated)" if self.record.truncated else "")
        return (
            f"<graphlab capture of {self.record.graph!r} on {self.arch}: {len(self.record.decisions)} decisions, "
            f"{recorded}, at {self.folder}>"
        )


def read_capture(
    folder: str | os.PathLike[str],
    *,
    graph: Graph,
    module: str | os.PathLike[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> Capture:
    """Read the capture in ``folder`` and check it against ``graph`` (and ``module``'s manifest.json).

    Raises
    ------
    CaptureError
        The folder, ``capture.json`` or an ``.npy`` file it lists is missing, incomplete, corrupt,
        over ``max_bytes`` in all, or not of this graph; the message names the file and JSON path.
    """
    if not isinstance(graph, Graph):
        raise CaptureError(f"graph={type(graph).__name__}: pass the notebook's graphlab.Graph the capture is of")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
        raise CaptureError(f"max_bytes={max_bytes!r}: give the most bytes of arrays to read, an int >= 0")
    record = read_capture_json(folder)
    check = _Check(record, graph)
    check.graph_name()
    if module is not None:
        check.manifest(Path(module).expanduser())
    check.decisions()
    budget = [max_bytes]
    inputs: dict[str, Any] = {}
    for name, arg in graph.args.items():
        if not graph.uses_of(name) or arg.role == "temp":
            continue
        if name not in record.inputs:
            raise check.error("$.inputs", f"no value for arg {name!r} of graph {graph.name!r}")
    for name, path in record.inputs.items():
        arg = check.arg(name, f"$.inputs.{name}")
        if arg.role == "temp":
            continue
        array = read_npy(record, path, f"$.inputs.{name}", budget=budget)
        check.array(arg, array, f"$.inputs.{name}", path)
        inputs[name] = array if arg.kind == "ndarray" else (array.item() if arg.kind == "scalar" else array)
    segments = []
    for i, seg in enumerate(record.segments):
        check.segment(i, seg.segment, seg.graph)
        arrays = {}
        for name, path in seg.outputs.items():
            where = f"$.segments[{i}].outputs.{name}"
            arg = check.arg(name, where)
            arrays[name] = read_npy(record, path, where, budget=budget)
            check.array(arg, arrays[name], where, path)
        segments.append(arrays)
    outputs = {}
    for name, path in record.outputs.items():
        where = f"$.outputs.{name}"
        arg = check.arg(name, where)
        if arg.kind != "ndarray":
            raise check.error(where, f"arg {name!r} is a {arg.kind}; outputs are ndarrays")
        outputs[name] = read_npy(record, path, where, budget=budget)
        check.array(arg, outputs[name], where, path)
    return Capture(record, graph, inputs, tuple(segments), outputs, dict(check.dims))


class _Check:
    """The checks of a capture against the notebook's graph, each naming the file and JSON path."""

    def __init__(self, record: CaptureRecord, graph: Graph) -> None:
        self.record, self.graph = record, graph
        self.dims: dict[str, int] = dict(record.dims)
        self.plan = build_plan(graph)

    def error(self, where: str, message: str, file: str | None = None) -> CaptureError:
        fix = "; open it with the graph it was recorded from (graph=...), or record it again with this graph"
        return CaptureError(message + fix, file=file or self.record.file, json_path=where)

    def graph_name(self) -> None:
        if self.record.graph != self.graph.name:
            raise self.error(
                "$.graph", f"the capture is of graph {self.record.graph!r}, the graph given is {self.graph.name!r}"
            )

    def manifest(self, module: Path) -> None:
        file = module / "manifest.json"
        try:
            digest = hashlib.sha256(read_limited(file, limit=_MAX_MANIFEST_BYTES)).hexdigest()
        except OSError as exc:
            raise CaptureError(
                f"not readable ({exc}); pass module= the folder gl.export wrote", file=str(file)
            ) from exc
        if digest != self.record.manifest_sha256:
            raise CaptureError(
                f"the capture was recorded with another manifest.json (sha256 {self.record.manifest_sha256[:12]}..., "
                f"this one {digest[:12]}...); pass module= the folder it was recorded with, or leave module= out",
                file=self.record.file,
                json_path="$.manifest_sha256",
            )

    def arg(self, name: str, where: str) -> Arg:
        arg = self.graph.args.get(name)
        if arg is None:
            raise self.error(where, f"graph {self.graph.name!r} has no arg {name!r}")
        if arg.kind not in ("ndarray", "scalar", "matrix"):
            raise self.error(where, f"arg {name!r} is a {arg.kind}: captures of textures cannot be opened yet")
        return arg

    def array(self, arg: Arg, array: np.ndarray, where: str, path: str) -> None:
        """dtype and shape as the arg declares them, its symbolic dims bound as in ``$.dims``."""
        file = str(self.record.folder / path)
        want = numpy_dtype(arg)
        if array.dtype != want:
            raise self.error(where, f"arg {arg.name!r} is {arg.dtype} ({want}), the file holds {array.dtype}", file)
        element = tuple(arg.element_shape) if arg.kind != "scalar" else ()
        ndim = (arg.ndim if arg.kind == "ndarray" else 0) + len(element)
        if array.ndim != ndim or array.shape[array.ndim - len(element) :] != element:
            shape = ", ".join(["?"] * (ndim - len(element)) + [str(e) for e in element])
            raise self.error(where, f"arg {arg.name!r} has shape ({shape}), the file holds {array.shape}", file)
        if arg.kind != "ndarray":
            return
        for axis, dim in enumerate(arg.shape or ()):
            size = array.shape[axis]
            if isinstance(dim, str):
                bound = self.dims.setdefault(dim, size)
                if bound != size:
                    message = f"arg {arg.name!r} axis {axis} is {size}, but dim {dim!r} is {bound} in this capture"
                    raise self.error(where, message, file)
            elif dim != size:
                raise self.error(where, f"arg {arg.name!r} axis {axis} is declared {dim}, the file holds {size}", file)

    def decisions(self) -> None:
        controls = {op.node_id: "cond" if isinstance(op, Branch) else "loop" for op in self.plan.ops()
                    if isinstance(op, Branch) or (isinstance(op, Iterate) and op.while_ is not None)}  # fmt: skip
        for i, d in enumerate(self.record.decisions):
            if controls.get(d.node) != d.kind:
                known = ", ".join(f"{k} ({v})" for k, v in controls.items()) or "none"
                message = f"no {d.kind} node {d.node!r} reads a flag in graph {self.graph.name!r} (it has: {known})"
                raise self.error(f"$.decisions[{i}].node", message)

    def segment(self, i: int, index: int, name: str) -> None:
        segments = self.plan.segments
        if not 0 <= index < len(segments) or segments[index].name != name:
            have = ", ".join(f"{s.id}: {s.name}" for s in segments)
            message = f"segment {index} ({name!r}) is not one of the graph's plan (it has {have})"
            raise self.error(f"$.segments[{i}].segment", message)
