"""``gl.export``: a checked graph to an AOT module folder with a manifest and a generated C host.

The folder it writes::

    out/mpm88/
      manifest.json          what the module holds (see graphlab.deploy.manifest)
      module/                ti.aot.Module.save(): what ti_load_aot_module reads
      module.tcm             the same as one archive, where the target loads one (Vulkan)
      source/                the graph files and the carried kernels, so gl.verify can rerun them
      host/                  main.c, npy.c/.h, CMakeLists.txt, README.md (graphlab.deploy.hostgen)

A graph with conditionals or loops exports each compiled segment as a module graph of its own
(``poisson_seg0``...) and records in the manifest the tree of segments and host-side decisions
that runs them (:mod:`graphlab.deploy.control`); the C host and ``gl.load_module`` follow it.

Taichi exports only for the arch of the current ``ti.init`` and allows one module per init, so the
compiling happens in a child process (:mod:`graphlab.deploy._child`): a notebook on CUDA exports
for Vulkan, and a Taichi crash cannot kill the notebook. Everything is written into a hidden
folder next to the target (``.mpm88.export-<host>-<pid>-<random>``) and renamed into place at the
end: a failed export deletes it and leaves nothing at the target path. One whose process was killed
cannot; the next export into the same parent folder deletes such folders, but only those of this
naming made on this machine by a process that is gone.

``overwrite=True`` replaces only a folder gl.export wrote: its ``manifest.json`` has the format
``graphlab.module/1``, and everything in it is that manifest, a file it lists, or the generated
``host/`` (its five files and ``build/``). Anything else (another tool's ``manifest.json``, a file
of the user's added to an export, a symbolic link as the path) is refused with nothing deleted.
The old folder is renamed aside (``.mpm88.old-...``), checked again there, and deleted only once
the new one is in place.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from graphlab.analysis.check import check
from graphlab.analysis.guarded import guarded_writes
from graphlab.bridge.texture_formats import TEXTURE_KINDS, texel_format
from graphlab.child.carry import carry_kernels
from graphlab.core.errors import ToolMissingError
from graphlab.core.spec import Arg
from graphlab.deploy._child import VULKAN_CAPS, run_watched
from graphlab.deploy.capi import C_SCALARS
from graphlab.deploy.control import plan_to_json
from graphlab.deploy.debug_variant import debug_entry, step_graphs
from graphlab.deploy.errors import ExportError, ExportSizeWarning, OutputPathError
from graphlab.deploy.folders import (
    check_target,
    disk_error,
    make_parents,
    move_into_place,
    output_folder,
    remove_made,
    remove_stale_folders,
    temporary_folder,
)
from graphlab.deploy.manifest import ARCHS, Manifest, Sample, arg_entry, read_manifest, relation_entry, write_manifest
from graphlab.deploy.room import physical_bytes, too_big
from graphlab.deploy.seal import file_digests
from graphlab.deploy.values import collect_values, exported_args, plan_memory, written_args
from graphlab.kernelfacts.shape_facts import graph_shape_relations
from graphlab.model.graph import Graph
from graphlab.model.graphfile import dumps
from graphlab.model.plan import Plan, build_plan

if TYPE_CHECKING:
    from graphlab.model.graph import Graph

__all__ = ["ExportError", "ExportResult", "OutputPathError", "export"]

Arch = Literal["vulkan", "x64", "cuda", "cpu"]
ProgressOption = bool | Callable[[str, float], Any] | None
VULKAN_FIX = "install a Vulkan driver: on Debian/Ubuntu `apt-get install mesa-vulkan-drivers libvulkan1`"
CUDA_FIX = "export on a machine with an NVIDIA GPU and driver, or choose arch='vulkan' or 'x64'"
CHILD_ENTRY = "graphlab.deploy._child:export_module"


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
        from graphlab.deploy.verify import verify  # import cost: Taichi

        return verify(self.path, inputs, **options)

    def files_on_disk(self) -> list[str]:
        """Every file in the module folder, relative and sorted: what a user copies, so what a count of
        files means (``files``, the manifest's seals, leaves out ``manifest.json`` itself and ``host/``).
        ``str()`` and the widget's export panel both count these."""
        return sorted(p.relative_to(self.path).as_posix() for p in self.path.rglob("*") if p.is_file())

    def __str__(self) -> str:
        files = self.files_on_disk()
        size = sum((self.path / name).stat().st_size for name in files)
        return (
            f"exported {', '.join(self.graphs)} to {self.path} ({self.arch}, Taichi {self.taichi_version}): "
            f"{len(files)} files, {size / 1e6:.1f} MB, in {self.seconds:.1f} s"
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
            from tqdm import tqdm  # import cost: tqdm, only for a terminal

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


def check_c_runtime(graphs: Sequence[Graph]) -> None:
    """Refuse what Taichi 1.7.4's C runtime (or the generated host) cannot pass, before compiling."""
    problems: list[str] = []
    seen: dict[str, tuple[str, Arg]] = {}
    for graph in graphs:
        for arg in exported_args(graph):
            where = f"graph {graph.name!r}, arg {arg.name!r}"
            if arg.kind == "scalar" and arg.dtype not in C_SCALARS:
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
    debug: bool = False,
) -> ExportResult:
    """Export graphs as one Taichi AOT module with ``manifest.json``, sources and a C host program.

    Parameters
    ----------
    graph
        A graph, or several that share one module (and their args by name).
    path
        The folder to write; it must not exist unless ``overwrite=True``. ``..`` is resolved by
        name; missing parent folders are made only once every input was checked, and removed
        again if the export fails.
    overwrite
        Replace an existing folder, only one gl.export wrote: holding no file beyond its manifest,
        what that lists and the generated ``host/``; never a symbolic link (see the module docs).
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
    timeout
        Seconds the compiling child process may take; past them it is stopped and the export
        fails, leaving nothing at ``path``.
    debug
        Also export a debug variant of each graph: one module graph per dispatch node
        (``<graph>_step<i>``), recorded in the manifest's ``debug_steps``, so the module can be
        stepped dispatch by dispatch (``Module.debug_steps``; ``dbg.compare(folder)`` uses them).

    Returns
    -------
    ExportResult
        The folder (``path``), its graphs and files, the Taichi version and the time taken;
        ``result.verify()`` runs :func:`graphlab.verify` on it.

    Raises
    ------
    GraphError
        The graph has errors, or an arg the target cannot take (``g.check(target=arch)``).
    ExportError, OutputPathError
        An arg the C runtime cannot pass, bad ``dims``/``values``, or an output path that exists,
        cannot be written, or is not a folder gl.export wrote (``overwrite=True``; nothing is deleted).
    ToolMissingError
        The machine cannot compile for ``arch`` (no Vulkan driver, no CUDA GPU).
    CarryError
        A kernel cannot be taken to the child process (it closes over a live object).

    Examples
    --------
    >>> import os, tempfile
    >>> g = gl.Graph("demo")
    >>> x = g.ndarray("x", ti.f32, ndim=1, shape="n")
    >>> g.dispatch(fill, x, g.scalar("value", ti.f32))
    'fill'
    >>> folder = os.path.join(tempfile.mkdtemp(), "demo")
    >>> result = gl.export(g, folder, arch="x64", dims={"n": 1024})
    >>> result.graphs, result.arch
    (('demo',), 'x64')
    >>> sorted(os.listdir(folder))
    ['host', 'include', 'manifest.json', 'module', 'runtime', 'source']
    >>> sorted(os.listdir(result.host))
    ['CMakeLists.txt', 'README.md', 'main.c', 'npy.c', 'npy.h']
    >>> gl.export(g, folder, arch="x64")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    graphlab.deploy.errors.OutputPathError: ... exists; ...
    """
    started = time.perf_counter()
    graphs = [graph] if not isinstance(graph, Sequence) else list(graph)
    _check_graphs(graphs)
    if not isinstance(debug, bool):
        raise ExportError(f"debug={debug!r}: give True (also export a per-dispatch debug variant) or False")
    debug_steps: dict[str, Any] = {}
    if debug:
        variants = {g.name: step_graphs(g) for g in graphs}
        taken = {g.name for g in graphs}
        clash = sorted(one.name for steps in variants.values() for _, one in steps if one.name in taken)
        if clash:
            raise ExportError(
                f"export(debug=True): the debug variant's graphs {clash} have the names of graphs being "
                "exported; rename those graphs"
            )
        debug_steps = {g.name: debug_entry(g, variants[g.name]) for g in graphs}
        graphs = graphs + [one for steps in variants.values() for _, one in steps]
    arch = normalize_arch(arch)
    if cpu_threads is not None and (
        isinstance(cpu_threads, bool) or not isinstance(cpu_threads, int) or cpu_threads < 1
    ):
        raise ExportError(f"cpu_threads={cpu_threads!r}: give a positive int, or None for every core")
    target = output_folder(path)
    check_target(target, overwrite)
    remove_stale_folders(target.parent)
    check_arch_available(arch)
    report = Progress(progress, f"export {target.name}")
    try:
        report("check", 0.0)
        for g in graphs:
            check(g, target=arch)
        check_c_runtime(graphs)
        plans = plan_graphs(graphs)
        default_dims, samples = collect_values(graphs, dims, values)
        memory = plan_memory(graphs, default_dims, samples)
        _warn_if_too_big(memory, target)
        report("carry", 0.1)
        payload = carry_kernels(dict.fromkeys(k.fn for g in graphs for k in g.kernels))
        made = make_parents(target)  # only now: a refused export leaves no empty folders behind
        try:
            tmp = temporary_folder(target)
        except BaseException:
            remove_made(made)
            raise
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
                memory=memory,
                plans=plans,
                debug_steps=debug_steps,
            )
            report("finish", 0.97)
            move_into_place(tmp, target, overwrite)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            remove_made(made)
            disk = disk_error(exc, target)  # a full or read-only disk: a raw OSError said neither where nor what to do
            if disk is not None:
                raise disk from exc
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


def _warn_if_too_big(memory: Mapping[str, Any], target: Path) -> None:
    """Warn when the buffers at the default dims exceed this machine's memory: the module may be meant
    for a bigger machine, but gl.verify draws its inputs here and could not verify it."""
    sizes = {b["name"]: int(b["bytes"]) for b in memory.get("buffers", []) if b.get("bytes")}
    problem = too_big(sizes, physical_bytes())
    if problem is not None:
        warnings.warn(
            f"exporting {target}: at its default dims the module's buffers take {problem}; gl.verify cannot "
            "draw inputs that large here: check dims= (export again with smaller dims to verify it)",
            ExportSizeWarning,
            stacklevel=3,
        )


def _check_graphs(graphs: list[Any]) -> None:
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
    memory: dict[str, Any],
    plans: Mapping[str, Plan],
    debug_steps: Mapping[str, Any] | None = None,
) -> None:
    """Fill ``tmp``: module/ (in the child), source/, manifest.json and host/."""
    from graphlab.deploy.hostgen import generate_host  # import cost: Taichi

    sources = {f"source/{g.name}.graph.json": dumps(g) for g in graphs}
    tcm_name = "module.tcm" if tcm and arch == "vulkan" else None
    request = {
        "payload": payload, "graphs": sources, "arch": arch, "threads": threads if arch == "x64" else None,
        "caps": vulkan_caps(graphs) if arch == "vulkan" else [], "module_dir": str(tmp / "module"),
        "tcm": str(tmp / tcm_name) if tcm_name else None, "textures": texture_copies(graphs, samples),
    }  # fmt: skip
    answer = run_watched(CHILD_ENTRY, request, report, workdir=tmp, timeout=timeout)
    (tmp / ".progress.jsonl").unlink(missing_ok=True)
    if "fallback" in answer:
        raise _fallback_error(arch, answer["fallback"])
    _check_module_graphs(answer["module_graphs"], plans)
    report("manifest", 0.85)
    (tmp / "source").mkdir()
    for name, text in sources.items():
        (tmp / name).write_text(text, encoding="utf-8")
    (tmp / "source" / "kernels.json").write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    entries = ["module", "source", *([tcm_name] if tcm_name else [])]
    graph_entries = [_graph_entry(g, samples, plans[g.name]) for g in graphs]
    contract = {"graphs": graph_entries, "dims": dims}  # sealed: manifest.json's copy is checked against it
    (tmp / "source" / "contract.json").write_text(json.dumps(contract, indent=2, sort_keys=True) + "\n")
    write_manifest(tmp, {
        "arch": arch,
        "taichi_version": answer["taichi_version"],
        "graphs": graph_entries,
        "dims": dims,
        "memory_plan": memory,
        "caps": request["caps"],
        "cpu_max_num_threads": answer["cpu_max_num_threads"],
        "tcm": tcm_name,
        "source": {"graphs": {g.name: f"source/{g.name}.graph.json" for g in graphs},
                   "kernels": "source/kernels.json", "contract": "source/contract.json"},
        "files": file_digests(tmp, entries),
        **({"debug_steps": dict(debug_steps)} if debug_steps else {}),
    })  # fmt: skip
    report("host", 0.92)
    generate_host(tmp)


def _graph_entry(graph: Graph, samples: Mapping[str, Sample], plan: Plan) -> dict[str, Any]:
    """A graph as ``manifest.json`` records it; ``control`` only where it has control flow."""
    args = exported_args(graph)
    entry: dict[str, Any] = {
        "name": graph.name,
        "steps": None if plan.control else graph.step_count(),  # with control flow: run-time flags decide
        "writes": written_args(graph),
        "args": [arg_entry(a, samples.get(a.name)) for a in args],
    }
    relations = graph_shape_relations(graph)
    if relations:
        entry["shape_relations"] = [relation_entry(r) for r in relations]
    control = plan_to_json(plan, [a.name for a in args], guarded_writes(graph, plan))
    if control is not None:
        entry["control"] = control
    return entry


def module_graph_names(plan: Plan) -> list[str]:
    """The module graphs a graph exports: its plan's segments (itself, or ``<name>_seg<i>``)."""
    return [segment.name for segment in plan.segments]


def plan_graphs(graphs: Sequence[Graph]) -> dict[str, Plan]:
    """Each graph's plan; refuses module graph names that clash."""
    plans = {g.name: build_plan(g) for g in graphs}
    owners: dict[str, str] = {}
    for name, plan in plans.items():
        for module_graph in module_graph_names(plan):
            other = owners.setdefault(module_graph, name)
            if other != name:
                raise ExportError(
                    f"graphs {other!r} and {name!r} would both put a compute graph named {module_graph!r} into "
                    "the module (a graph with conditionals or loops exports its segments as <name>_seg<i>); "
                    "rename one"
                )
    return plans


def _check_module_graphs(compiled: Mapping[str, list[str]], plans: Mapping[str, Plan]) -> None:
    """The child must have compiled the segments planned here, or the manifest would misname them."""
    planned = {name: module_graph_names(plan) for name, plan in plans.items()}
    if dict(compiled) != planned:
        raise ExportError(f"the export child compiled module graphs {compiled}, but {planned} were planned")


def texture_copies(graphs: Sequence[Graph], samples: Mapping[str, Sample]) -> list[tuple[str, int]]:
    """The (image format, dims) of the texture args: the module gets a copy graph pair for each."""
    found = set()
    for arg in (a for g in graphs for a in exported_args(g) if a.kind in TEXTURE_KINDS):
        sample = samples.get(arg.name)
        found.add((texel_format(arg.kind, arg.fmt, sample.fmt if sample else None), arg.ndim))
    return sorted(found)


def vulkan_caps(graphs: Sequence[Graph]) -> list[str]:
    """The device capabilities the args' dtypes need; a Vulkan module assumes none unless told."""
    needed = {VULKAN_CAPS[a.dtype] for g in graphs for a in exported_args(g) if a.dtype in VULKAN_CAPS}
    return sorted(needed)
