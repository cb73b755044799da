"""``gl.export``: a checked graph to an AOT module folder with a manifest and a generated C host.

The folder it writes::

    out/mpm88/
      manifest.json          what the module holds (see graphlab.export.manifest)
      module/                ti.aot.Module.save(): what ti_load_aot_module reads
      module.tcm             the same as one archive, where the target loads one (Vulkan)
      source/                the graph files and the carried kernels, so gl.verify can rerun them
      host/                  main.c, npy.c/.h, CMakeLists.txt, README.md (graphlab.export.hostgen)

A graph with conditionals or loops exports each compiled segment as a module graph of its own
(``poisson_seg0``...) and records in the manifest the tree of segments and host-side decisions
that runs them (:mod:`graphlab.export.control`); the C host and ``gl.load_module`` follow it.

Taichi exports only for the arch of the current ``ti.init`` and allows one module per init, so the
compiling happens in a child process (:mod:`graphlab.export._child`): a notebook on CUDA exports
for Vulkan, and a Taichi crash cannot kill the notebook. Everything is written into a hidden
folder next to the target and renamed into place at the end: a failed or interrupted export leaves
nothing at the target path, and ``overwrite=True`` replaces the old folder in one rename.
"""

from __future__ import annotations

import ctypes
import difflib
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from graphlab.errors import GraphError, GraphlabError, ToolMissingError
from graphlab.export._child import VULKAN_CAPS, run_watched
from graphlab.export.control import ControlEntry, entries_to_json, plan_control, segments_of
from graphlab.export.manifest import ARCHS, Manifest, Sample, arg_entry, file_digests, read_manifest, write_manifest
from graphlab.spec import NUMPY_DTYPES, Arg

if TYPE_CHECKING:
    from graphlab.graph import Graph

__all__ = ["ExportError", "ExportResult", "OutputPathError", "export"]

Arch = Literal["vulkan", "x64", "cuda", "cpu"]
ProgressOption = bool | Callable[[str, float], Any] | None
#: Scalars Taichi 1.7.4's C-API can pass to a graph (see cruntime.SCALAR_PASSING).
C_SCALARS = ("f32", "i32", "i16", "u16")
VULKAN_FIX = "install a Vulkan driver: on Debian/Ubuntu `apt-get install mesa-vulkan-drivers libvulkan1`"
CUDA_FIX = "export on a machine with an NVIDIA GPU and driver, or choose arch='vulkan' or 'x64'"
CHILD_ENTRY = "graphlab.export._child:export_module"
#: A graph's control tree, None without control flow (see graphlab.export.control).
Control = tuple[ControlEntry, ...] | None


class ExportError(GraphlabError, ValueError):
    """The graph or the options cannot be exported; the message names the arg or option and the fix."""


class OutputPathError(ExportError, OSError):
    """The output path exists (and ``overwrite`` is off) or cannot be written."""

    def __init__(self, message: str, *, path: Path) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export` wrote: the folder, its graphs and files, and how long it took."""

    path: Path
    arch: str
    graphs: tuple[str, ...]
    taichi_version: str
    files: Mapping[str, str] = field(repr=False)
    seconds: float
    tcm: Path | None = None

    @property
    def host(self) -> Path:
        """The generated C host program's folder."""
        return self.path / "host"

    @property
    def manifest(self) -> Manifest:
        """The manifest, read back."""
        return read_manifest(self.path)

    def verify(self, inputs: Mapping[str, Any] | None = None, **options: Any) -> Any:
        """Shorthand for ``gl.verify(result.path, inputs, **options)``."""
        from graphlab.export.verify import verify

        return verify(self.path, inputs, **options)

    def __str__(self) -> str:
        size = sum((self.path / name).stat().st_size for name in self.files if (self.path / name).is_file())
        return (
            f"exported {', '.join(self.graphs)} to {self.path} ({self.arch}, Taichi {self.taichi_version}): "
            f"{len(self.files)} files, {size / 1e6:.1f} MB, in {self.seconds:.1f} s"
        )


# --- progress -------------------------------------------------------------------------------------


class Progress:
    """Reports ``(stage, fraction)``: to a callback, or as a tqdm bar when stderr is a terminal.

    ``progress=None`` shows the bar on a terminal only, ``True`` always, ``False`` never; a callable
    gets every report instead (the widget draws its own bar). A callback that raises stops the export.
    """

    def __init__(self, progress: ProgressOption, title: str) -> None:
        self._callback = progress if callable(progress) else None
        self._title = title
        self._bar: Any = None
        if self._callback is None and (progress is True or (progress is None and sys.stderr.isatty())):
            from tqdm import tqdm

            self._bar = tqdm(total=100, desc=title, bar_format="{desc:<36} {percentage:3.0f}%|{bar}|")

    def __call__(self, stage: str, fraction: float) -> None:
        if self._callback is not None:
            self._callback(stage, fraction)
        elif self._bar is not None:
            self._bar.set_description_str(f"{self._title}: {stage}", refresh=False)
            self._bar.update(round(fraction * 100) - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# --- what the C runtime can take ------------------------------------------------------------------


def normalize_arch(arch: str) -> str:
    """``x64``, ``vulkan`` or ``cuda`` (``cpu`` means x64); else an ExportError listing the choices."""
    name = {"cpu": "x64"}.get(str(arch).rsplit(".", 1)[-1], str(arch).rsplit(".", 1)[-1])
    if name not in ARCHS:
        raise ExportError(f"arch {arch!r} cannot be exported for Taichi's C runtime; choose one of {', '.join(ARCHS)}")
    return name


def loadable(library: str) -> bool:
    """Whether the dynamic loader finds ``library`` (as Taichi will: by dlopen, LD_LIBRARY_PATH included)."""
    try:
        ctypes.CDLL(library)
    except OSError:
        return False
    return True


def check_arch_available(arch: str) -> None:
    """Refuse an arch this machine cannot compile for (Taichi would silently fall back to x64)."""
    if arch == "vulkan" and not loadable("libvulkan.so.1"):
        raise ToolMissingError(
            f"no Vulkan loader (libvulkan) on this machine, so it cannot export for vulkan; {VULKAN_FIX}"
        )
    if arch == "cuda" and not loadable("libcuda.so.1"):
        raise ToolMissingError(f"no CUDA driver (libcuda) on this machine, so it cannot export for cuda; {CUDA_FIX}")


def _fallback_error(arch: str, got: str) -> ToolMissingError:
    fix = VULKAN_FIX if arch == "vulkan" else CUDA_FIX
    return ToolMissingError(
        f"ti.init(arch={arch}) fell back to {got} on this machine, so it cannot export for {arch}; {fix}"
    )


def exported_args(graph: Graph) -> list[Arg]:
    """The args the compiled graph takes: those some dispatch binds, in declaration order."""
    return [arg for name, arg in graph.args.items() if graph.uses_of(name)]


def check_c_runtime(graphs: Sequence[Graph]) -> None:
    """Refuse what Taichi 1.7.4's C runtime (or the generated host) cannot pass, before compiling."""
    problems: list[str] = []
    seen: dict[str, tuple[str, Arg]] = {}
    for graph in graphs:
        for arg in exported_args(graph):
            where = f"graph {graph.name!r}, arg {arg.name!r}"
            if arg.kind in ("texture", "rw_texture"):
                problems.append(
                    f"{where} is a {arg.kind}: the C host and gl.load_module do not pass textures; "
                    "use an ndarray, or run this graph from Python"
                )
            elif arg.kind == "scalar" and arg.dtype not in C_SCALARS:
                problems.append(
                    f"{where} is a {arg.dtype} scalar, which Taichi 1.7.4's C-API cannot pass; "
                    f"declare it as one of {', '.join(C_SCALARS)}, or as a 1-element ndarray"
                )
            other = seen.setdefault(arg.name, (graph.name, arg))
            if not other[1].same_spec(arg) or other[1].shape != arg.shape:
                problems.append(
                    f"{where} is {arg.describe()} (shape {arg.shape}) but graph {other[0]!r} declares "
                    f"{other[1].describe()} (shape {other[1].shape}); graphs of one module share "
                    "buffers by name, so rename one"
                )
    if problems:
        raise ExportError("cannot export for Taichi's C runtime:\n" + "\n".join(f"  {p}" for p in problems))


# --- dims and samples from the notebook's values ------------------------------------------------------


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
    finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array.ravel()
    cast = float if array.dtype.kind == "f" else int
    low, high = (cast(finite.min()), cast(finite.max())) if finite.size else (None, None)
    return Sample(tuple(int(d) for d in array.shape[: arg.ndim]), low, high)


def collect_values(
    graphs: Sequence[Graph], dims: Mapping[str, int] | None, values: Mapping[str, Any] | None
) -> tuple[dict[str, int], dict[str, Sample]]:
    """The default dims and per-arg samples: ``dims`` as given, plus what the shapes of ``values`` set."""
    args = {arg.name: arg for graph in graphs for arg in exported_args(graph)}
    out_dims: dict[str, int] = {}
    for name, size in (dims or {}).items():
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise ExportError(f"dims[{name!r}] = {size!r}: a dim is a non-negative int")
        out_dims[name] = int(size)
    samples: dict[str, Sample] = {}
    for name, value in (values or {}).items():
        arg = args.get(name)
        if arg is None:
            close = difflib.get_close_matches(name, list(args), 1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ExportError(f"values[{name!r}]: no exported graph has that arg; {hint}args: {', '.join(args)}")
        if arg.kind in ("texture", "rw_texture"):
            continue
        samples[name] = sample = _sample(arg, value)
        for axis, (dim, size) in enumerate(zip(arg.shape or (), sample.shape or ())):
            if isinstance(dim, int) and dim != size:
                raise ExportError(f"values[{name!r}].shape[{axis}] is {size}, but arg {name!r} declares {dim}")
            if isinstance(dim, str) and out_dims.setdefault(dim, size) != size:
                raise ExportError(
                    f"values[{name!r}].shape[{axis}] is {size}, so dim {dim!r} would be {size}, but "
                    f"it is {out_dims[dim]} from dims= or another value; sizes must agree"
                )
    return out_dims, samples


def plan_memory(graphs: Sequence[Graph], dims: Mapping[str, int], samples: Mapping[str, Sample]) -> dict[str, Any]:
    """The memory plan of every graph, as ``manifest.json``'s ``memory_plan``.

    Temps share a slot within a graph (graphlab.memory). Across graphs, slots holding one name are
    merged (graphs run one after another and temps keep nothing between runs), and a name that is
    not a temp in every graph keeps its own buffer.
    """
    from graphlab.memory import memory_plan

    buffers: dict[str, dict[str, Any]] = {}
    groups: list[tuple[set[str], Any]] = []
    not_temp = {a.name for g in graphs for a in exported_args(g) if a.role != "temp"}
    for graph in graphs:
        shapes = {n: s.shape for n, s in samples.items() if n in graph.args and s.shape is not None}
        try:
            plan = memory_plan(graph, **{**dims, **shapes})
        except GraphError as exc:
            raise ExportError(f"graph {graph.name!r}: {exc}; pass dims={{...}} or values={{...}} to export") from exc
        for b in plan.buffers:
            buffers.setdefault(
                b.name, {"name": b.name, "role": b.role, "shape": b.shape and list(b.shape), "bytes": b.bytes}
            )
        groups.extend((set(slot.args) - not_temp, slot) for slot in plan.slots)
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


def written_args(graph: Graph) -> list[str]:
    """The exported ndarray args some dispatch of ``graph`` writes."""
    from graphlab.dataflow import dataflow_facts

    facts = dataflow_facts(graph)
    return [a.name for a in exported_args(graph) if a.kind == "ndarray" and facts.writers(a.name)]


# --- the output folder ----------------------------------------------------------------------------


def check_target(target: Path, overwrite: bool) -> None:
    """Refuse an existing target (unless ``overwrite``) or a folder that cannot be created."""
    if target.exists() or target.is_symlink():
        if not overwrite:
            raise OutputPathError(
                f"{target} already exists; pass overwrite=True (--overwrite on the command line) to replace "
                "it, or choose another path",
                path=target,
            )
        if not target.is_dir() or (any(target.iterdir()) and not (target / "manifest.json").is_file()):
            raise OutputPathError(
                f"{target} is not a folder gl.export wrote (no manifest.json), so overwrite=True "
                "will not delete it; remove it yourself or choose another path",
                path=target,
            )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(
            f"cannot create the folder {target.parent} for {target}: {exc.strerror or exc}; choose a writable location",
            path=target,
        ) from exc


def _temporary_folder(target: Path) -> Path:
    try:
        return Path(tempfile.mkdtemp(prefix=f".{target.name}.export-", dir=target.parent))
    except OSError as exc:
        raise OutputPathError(
            f"cannot write into {target.parent}: {exc.strerror or exc}; choose a writable location", path=target
        ) from exc


def _move_into_place(tmp: Path, target: Path) -> None:
    """Rename ``tmp`` to ``target``; an old target is renamed aside first and deleted after."""
    if not (target.exists() or target.is_symlink()):
        tmp.rename(target)
        return
    old = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
    target.rename(old)
    try:
        tmp.rename(target)
    except BaseException:
        old.rename(target)
        raise
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old, ignore_errors=True)
    else:
        old.unlink(missing_ok=True)


# --- export -----------------------------------------------------------------------------------------


def export(
    graph: Graph | Sequence[Graph],
    path: str | os.PathLike[str],
    arch: Arch | str = "vulkan",
    *,
    dims: Mapping[str, int] | None = None,
    values: Mapping[str, Any] | None = None,
    overwrite: bool = False,
    progress: ProgressOption = None,
    tcm: bool = True,
    cpu_threads: int | None = None,
    timeout: float = 600.0,
) -> ExportResult:
    """Export graphs as one Taichi AOT module with ``manifest.json``, sources and a C host program.

    Parameters
    ----------
    graph
        A graph, or several that share one module (and their args by name).
    path
        The folder to write; it must not exist unless ``overwrite=True``.
    arch
        ``"vulkan"``, ``"x64"`` (or ``"cpu"``) or ``"cuda"``; any arch this machine can compile for,
        whatever the notebook's own ``ti.init``.
    dims, values
        Default sizes of the symbolic dims (``n=8192``), and/or the notebook's values by arg name:
        their shapes set dims, and their shapes and value ranges are recorded so ``gl.verify`` draws
        inputs like them.
    progress
        ``None``: a progress bar on a terminal; ``False``: none; a callable ``(stage, fraction)``.
    tcm
        Also write ``module.tcm`` where the target loads one (Vulkan; Taichi's x64 loader cannot).
    cpu_threads
        x64 only: the thread count compiled into the module (Taichi fixes it at compile time).
        ``None`` uses every core; ``1`` gives repeatable bits where kernels add floats atomically.

    Raises
    ------
    GraphError
        The graph has errors, or an arg the target cannot take (``g.check(target=arch)``).
    ExportError, OutputPathError
        An arg the C runtime cannot pass, bad ``dims``/``values``, or an output path that exists or
        cannot be written.
    ToolMissingError
        The machine cannot compile for ``arch`` (no Vulkan driver, no CUDA GPU).
    CarryError
        A kernel cannot be taken to the child process (it closes over a live object).

    Examples
    --------
    For example (needs a Taichi runtime and buffers; see the tests)::

        result = gl.export(g, "out/mpm88", arch="vulkan", values=buffers)
        gl.verify(result.path).passed  # True
    """
    started = time.perf_counter()
    graphs = [graph] if not isinstance(graph, Sequence) else list(graph)
    _check_graphs(graphs)
    arch = normalize_arch(arch)
    if cpu_threads is not None and (
        isinstance(cpu_threads, bool) or not isinstance(cpu_threads, int) or cpu_threads < 1
    ):
        raise ExportError(f"cpu_threads={cpu_threads!r}: give a positive int, or None for every core")
    target = Path(path).expanduser().absolute()
    check_target(target, overwrite)
    check_arch_available(arch)
    report = Progress(progress, f"export {target.name}")
    try:
        report("check", 0.0)
        for g in graphs:
            g.check(target=arch)
        check_c_runtime(graphs)
        controls = plan_controls(graphs)
        default_dims, samples = collect_values(graphs, dims, values)
        plan = plan_memory(graphs, default_dims, samples)
        report("carry", 0.1)
        from graphlab.carry import carry_kernels

        payload = carry_kernels(dict.fromkeys(k.fn for g in graphs for k in g.kernels))
        tmp = _temporary_folder(target)
        try:
            _build(
                tmp,
                graphs,
                arch,
                payload.to_dict(),
                report,
                tcm=tcm,
                threads=cpu_threads,
                timeout=timeout,
                dims=default_dims,
                samples=samples,
                plan=plan,
                controls=controls,
            )
            report("finish", 0.97)
            _move_into_place(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        report("done", 1.0)
    finally:
        report.close()
    manifest = read_manifest(target)
    return ExportResult(
        target,
        arch,
        tuple(g.name for g in graphs),
        manifest.taichi_version,
        manifest.files,
        time.perf_counter() - started,
        target / manifest.tcm if manifest.tcm else None,
    )


def _check_graphs(graphs: list[Any]) -> None:
    from graphlab.graph import Graph

    if not graphs or not all(isinstance(g, Graph) for g in graphs):
        raise ExportError(f"export() takes a graphlab Graph or a list of them, got {graphs!r}")
    names = [g.name for g in graphs]
    if len(set(names)) != len(names):
        raise ExportError(f"graph names repeat ({names}); one module names each graph once: rename one")


def _build(
    tmp: Path,
    graphs: Sequence[Graph],
    arch: str,
    payload: dict[str, Any],
    report: Progress,
    *,
    tcm: bool,
    threads: int | None,
    timeout: float,
    dims: dict[str, int],
    samples: dict[str, Sample],
    plan: dict[str, Any],
    controls: Mapping[str, Control],
) -> None:
    """Fill ``tmp``: module/ (in the child), source/, manifest.json and host/."""
    from graphlab.export.hostgen import generate_host
    from graphlab.graphfile import dumps

    sources = {f"source/{g.name}.graph.json": dumps(g) for g in graphs}
    tcm_name = "module.tcm" if tcm and arch == "vulkan" else None
    request = {
        "payload": payload, "graphs": sources, "arch": arch, "threads": threads if arch == "x64" else None,
        "caps": vulkan_caps(graphs) if arch == "vulkan" else [], "module_dir": str(tmp / "module"),
        "tcm": str(tmp / tcm_name) if tcm_name else None,
    }  # fmt: skip
    answer = run_watched(CHILD_ENTRY, request, report, workdir=tmp, timeout=timeout)
    (tmp / ".progress.jsonl").unlink(missing_ok=True)
    if "fallback" in answer:
        raise _fallback_error(arch, answer["fallback"])
    _check_module_graphs(answer["module_graphs"], controls)
    report("manifest", 0.85)
    (tmp / "source").mkdir()
    for name, text in sources.items():
        (tmp / name).write_text(text, encoding="utf-8")
    (tmp / "source" / "kernels.json").write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    entries = ["module", "source", *([tcm_name] if tcm_name else [])]
    write_manifest(tmp, {
        "arch": arch,
        "taichi_version": answer["taichi_version"],
        "graphs": [_graph_entry(g, samples, controls[g.name]) for g in graphs],
        "dims": dims,
        "memory_plan": plan,
        "caps": request["caps"],
        "cpu_max_num_threads": answer["cpu_max_num_threads"],
        "tcm": tcm_name,
        "source": {"graphs": {g.name: f"source/{g.name}.graph.json" for g in graphs},
                   "kernels": "source/kernels.json"},
        "files": file_digests(tmp, entries),
    })  # fmt: skip
    report("host", 0.92)
    generate_host(tmp)


def _graph_entry(graph: Graph, samples: Mapping[str, Sample], control: Control) -> dict[str, Any]:
    """A graph as ``manifest.json`` records it; ``control`` only where it has control flow."""
    entry: dict[str, Any] = {
        "name": graph.name,
        "steps": None if control is not None else graph.step_count(),  # with control flow: run-time flags decide
        "writes": written_args(graph),
        "args": [arg_entry(a, samples.get(a.name)) for a in exported_args(graph)],
    }
    if control is not None:
        entry["control"] = entries_to_json(control)
    return entry


def module_graph_names(name: str, control: Control) -> list[str]:
    """The module graphs a graph exports: itself, or its compiled segments (``<name>_seg<i>``)."""
    return [name] if control is None else [s.graph for s in segments_of(control)]


def plan_controls(graphs: Sequence[Graph]) -> dict[str, Control]:
    """Each graph's control tree (None without control flow); refuses module graph names that clash."""
    controls = {g.name: plan_control(g, [a.name for a in exported_args(g)]) for g in graphs}
    owners: dict[str, str] = {}
    for name, control in controls.items():
        for module_graph in module_graph_names(name, control):
            other = owners.setdefault(module_graph, name)
            if other != name:
                raise ExportError(
                    f"graphs {other!r} and {name!r} would both put a compute graph named {module_graph!r} into "
                    "the module (a graph with conditionals or loops exports its segments as <name>_seg<i>); "
                    "rename one"
                )
    return controls


def _check_module_graphs(compiled: Mapping[str, list[str]], controls: Mapping[str, Control]) -> None:
    """The child must have compiled the segments planned here, or the manifest would misname them."""
    planned = {name: module_graph_names(name, control) for name, control in controls.items()}
    if dict(compiled) != planned:
        raise ExportError(f"the export child compiled module graphs {compiled}, but {planned} were planned")


def vulkan_caps(graphs: Sequence[Graph]) -> list[str]:
    """The device capabilities the args' dtypes need; a Vulkan module assumes none unless told."""
    needed = {VULKAN_CAPS[a.dtype] for g in graphs for a in exported_args(g) if a.dtype in VULKAN_CAPS}
    return sorted(needed)
