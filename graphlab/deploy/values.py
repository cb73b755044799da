"""What an export records of the args: which it takes, their dims and samples, and the memory plan.

:func:`collect_values` turns ``dims=`` and the notebook's ``values=`` into the default dims and a
:class:`~graphlab.deploy.manifest.Sample` per arg (shape and value range, so ``gl.verify`` draws
inputs like them); :func:`plan_memory` merges the graphs' memory plans into ``manifest.json``'s
``memory_plan``. Bad values are refused with an :class:`ExportError` before anything compiles.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from graphlab.analysis.dataflow import dataflow_facts
from graphlab.analysis.memory import memory_plan
from graphlab.bridge.texture_formats import TEXTURE_KINDS, format_problem
from graphlab.core.errors import GraphError
from graphlab.core.names import check_buffer_bytes, check_dim_size, name_problem, shown
from graphlab.core.spec import DTYPE_BYTES, NUMPY_DTYPES, Arg, numel
from graphlab.deploy.errors import ExportError
from graphlab.deploy.manifest import Sample
from graphlab.model.sizes import resolve_sizes

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = ["collect_values", "exported_args", "plan_memory", "written_args"]


def exported_args(graph: Graph) -> list[Arg]:
    """The args the compiled graph takes: those some dispatch binds, in declaration order."""
    return [arg for name, arg in graph.args.items() if graph.uses_of(name)]


def _as_numpy(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "to_numpy"):  # ti.ndarray, ti.Matrix
        return np.asarray(value.to_numpy())
    return np.asarray(value)


def _sample(arg: Arg, value: Any) -> Sample:
    """The shape and finite value range of an ndarray, or the value of a scalar or matrix."""
    array = _as_numpy(value)
    want = np.dtype(NUMPY_DTYPES[arg.dtype or "f32"])
    where = f"values[{arg.name!r}]"
    if array.dtype.kind not in "iuf" or (arg.kind == "ndarray" and array.dtype != want):
        raise ExportError(
            f"{where} is {array.dtype}, but arg {arg.name!r} is {arg.describe()}; "
            f"pass it as {want} (e.g. .astype(np.{want}))"
        )
    if arg.kind != "ndarray":
        return Sample(value=array.tolist() if arg.kind == "matrix" else array.item())
    esh = arg.element_shape
    if array.ndim != arg.ndim + len(esh) or array.shape[arg.ndim :] != esh:
        raise ExportError(
            f"{where} has shape {array.shape}, but arg {arg.name!r} is {arg.describe()}; "
            f"give {arg.ndim} dims then the element shape {esh}"
        )
    for axis, size in enumerate(array.shape[: arg.ndim]):  # before scanning it: a broadcast view can be huge
        check_dim_size(size, f"{where}.shape[{axis}]", error=ExportError)
    finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array.ravel()
    cast = float if array.dtype.kind == "f" else int
    low, high = (cast(finite.min()), cast(finite.max())) if finite.size else (None, None)
    return Sample(tuple(int(d) for d in array.shape[: arg.ndim]), low, high)


def _texture_sample(arg: Arg, value: Any) -> Sample:
    """A texture's dims and format (its image format in the module, see graphlab.bridge.texture_formats)."""
    fmt = getattr(getattr(value, "fmt", None), "name", None)
    shape = getattr(value, "shape", None)
    where = f"values[{arg.name!r}]"
    if not isinstance(fmt, str) or shape is None or len(shape) != arg.ndim:
        got = type(value).__name__
        raise ExportError(f"{where} is {got}, but arg {arg.name!r} is {arg.describe()}; pass its ti.Texture")
    if arg.kind == "rw_texture" and fmt != arg.fmt:
        want = f"pass a {arg.fmt} one"
        raise ExportError(f"{where} is a {fmt} texture, but arg {arg.name!r} is {arg.describe()}; {want}")
    problem = format_problem(fmt)
    if problem is not None:
        raise ExportError(f"{where}: {problem}; pass a texture of one of those formats")
    for axis, size in enumerate(shape):
        check_dim_size(size, f"{where}.shape[{axis}]", error=ExportError)
    return Sample(tuple(int(d) for d in shape), fmt=fmt)


def collect_values(
    graphs: Sequence[Graph], dims: Mapping[str, int] | None, values: Mapping[str, Any] | None
) -> tuple[dict[str, int], dict[str, Sample]]:
    """The default dims and per-arg samples: ``dims`` as given, plus what the shapes of ``values`` set."""
    args = {arg.name: arg for graph in graphs for arg in exported_args(graph)}
    if dims is not None and not isinstance(dims, Mapping):
        raise ExportError(f"dims={shown(dims)}: give a dict of dim name to size, e.g. dims={{'n': 8192}}")
    out_dims: dict[str, int] = {}
    for name, size in (dims or {}).items():
        problem = name_problem(name)
        if problem is not None:  # it is written into manifest.json and the C host: refuse it before anything
            raise ExportError(
                f"dims[{shown(name)}]: not a dim name ({problem}); use the dim names of the args' shapes, "
                "ASCII letters, digits and '_' (e.g. dims={'n': 8192})"
            )
        out_dims[name] = check_dim_size(size, f"dims[{name!r}]", error=ExportError)
    samples: dict[str, Sample] = {}
    for name, value in (values or {}).items():
        arg = args.get(name)
        if arg is None:
            close = difflib.get_close_matches(name, list(args), 1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ExportError(f"values[{name!r}]: no exported graph has that arg; {hint}args: {', '.join(args)}")
        sample = _texture_sample(arg, value) if arg.kind in TEXTURE_KINDS else _sample(arg, value)
        samples[name] = sample
        for axis, (dim, size) in enumerate(zip(arg.shape or (), sample.shape or ())):
            if isinstance(dim, int) and dim != size:
                raise ExportError(f"values[{name!r}].shape[{axis}] is {size}, but arg {name!r} declares {dim}")
            if isinstance(dim, str) and out_dims.setdefault(dim, size) != size:
                raise ExportError(
                    f"values[{name!r}].shape[{axis}] is {size}, so dim {dim!r} would be {size}, but "
                    f"it is {out_dims[dim]} from dims= or another value; sizes must agree"
                )
    _check_buffer_sizes(args.values(), out_dims, samples)
    return out_dims, samples


def _check_buffer_sizes(args: Iterable[Arg], dims: Mapping[str, int], samples: Mapping[str, Sample]) -> None:
    """Refuse an ndarray whose bytes the C host could not count, where its shape is known."""
    for arg in args:
        sample = samples.get(arg.name)
        shape = sample.shape if sample is not None and sample.shape is not None else arg.shape
        if arg.kind != "ndarray" or shape is None:
            continue
        sizes = [dims.get(d, -1) if isinstance(d, str) else d for d in shape]
        if all(size >= 0 for size in sizes):  # -1: a dim with no value yet (sized by the host's inputs)
            item = DTYPE_BYTES[arg.dtype or "f32"] * numel(arg.element_shape)
            check_buffer_bytes(sizes, item, f"arg {arg.name!r}", error=ExportError)


def plan_memory(graphs: Sequence[Graph], dims: Mapping[str, int], samples: Mapping[str, Sample]) -> dict[str, Any]:
    """The memory plan of every graph, as ``manifest.json``'s ``memory_plan``.

    Temps share a slot within a graph (graphlab.analysis.memory). Across graphs, slots holding one name are
    merged (graphs run one after another and temps keep nothing between runs), and a name that is
    not a temp in every graph keeps its own buffer.
    """
    buffers: dict[str, dict[str, Any]] = {}
    groups: list[tuple[set[str], Any]] = []
    not_temp = {a.name for g in graphs for a in exported_args(g) if a.role != "temp"}
    for graph in graphs:
        shapes = {n: s.shape for n, s in samples.items() if n in graph.args and s.shape is not None}
        resolve_sizes(  # the rule run() and load_module follow: every temp sized, else say which dim to give
            exported_args(graph), dims, given=shapes, dim_fix="pass dims={{'{dim}': SIZE}} (CLI: --dim {dim}=SIZE)",
            error=partial(_sizing_error, graph.name),
        )  # fmt: skip
        try:
            layout = memory_plan(graph, **{**dims, **shapes})
        except GraphError as exc:
            raise ExportError(f"graph {graph.name!r}: {exc}; pass dims={{...}} or values={{...}} to export") from exc
        for b in layout.buffers:
            buffers.setdefault(
                b.name, {"name": b.name, "role": b.role, "shape": b.shape and list(b.shape), "bytes": b.bytes}
            )
        groups.extend((set(slot.args) - not_temp, slot) for slot in layout.slots)
    merged: list[tuple[set[str], int]] = []
    for names, slot in groups:
        if not names:
            continue
        hits = [m for m in merged if m[0] & names]
        union = set(names).union(*(m[0] for m in hits))
        size = max([slot.bytes, *(m[1] for m in hits)])
        merged = [m for m in merged if m not in hits] + [(union, size)]
    slots: list[dict[str, Any]] = [
        {"slot": i, "bytes": size, "args": sorted(names)} for i, (names, size) in enumerate(merged)
    ]
    in_slots = {name for names, _ in merged for name in names}
    own = sum(b["bytes"] or 0 for b in buffers.values() if b["name"] not in in_slots)
    return {
        "slots": slots,
        "buffers": list(buffers.values()),
        "total_bytes": sum(b["bytes"] or 0 for b in buffers.values()),
        "shared_bytes": own + sum(s["bytes"] for s in slots),
    }


def _sizing_error(graph: str, message: str, arg: str | None) -> ExportError:
    """A temp export cannot size (:func:`graphlab.model.sizes.resolve_sizes`), as the export's error."""
    return ExportError(f"graph {graph!r}: {message}")


def written_args(graph: Graph) -> list[str]:
    """The exported ndarray and rw_texture args some dispatch of ``graph`` writes."""
    facts = dataflow_facts(graph)
    return [a.name for a in exported_args(graph) if a.kind in ("ndarray", "rw_texture") and facts.writers(a.name)]
