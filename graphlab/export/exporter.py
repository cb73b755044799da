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
import difflib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from graphlab.check import check
from graphlab.errors import GraphError, GraphlabError, ToolMissingError
from graphlab.export._child import VULKAN_CAPS, run_watched
from graphlab.export.capi import C_SCALARS
from graphlab.export.control import plan_to_json
from graphlab.export.errors import ManifestError
from graphlab.export.manifest import (
    ARCHS,
    Manifest,
    Sample,
    arg_entry,
    file_digests,
    listed_files,
    read_manifest,
    walk_files,
    write_manifest,
)
from graphlab.names import check_buffer_bytes, check_dim_size, name_problem, shown
from graphlab.plan import Plan, build_plan
from graphlab.spec import DTYPE_BYTES, NUMPY_DTYPES, Arg, numel

if TYPE_CHECKING:
    from graphlab.graph import Graph

__all__ = ["ExportError", "ExportResult", "OutputPathError", "export"]

Arch = Literal["vulkan", "x64", "cuda", "cpu"]
ProgressOption = bool | Callable[[str, float], Any] | None
VULKAN_FIX = "install a Vulkan driver: on Debian/Ubuntu `apt-get install mesa-vulkan-drivers libvulkan1`"
CUDA_FIX = "export on a machine with an NVIDIA GPU and driver, or choose arch='vulkan' or 'x64'"
CHILD_ENTRY = "graphlab.export._child:export_module"


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
    for axis, size in enumerate(array.shape[: arg.ndim]):  # before scanning it: a broadcast view can be huge
        check_dim_size(size, f"{where}.shape[{axis}]", error=ExportError)
    finite = array[np.isfinite(array)] if array.dtype.kind == "f" else array.ravel()
    cast = float if array.dtype.kind == "f" else int
    low, high = (cast(finite.min()), cast(finite.max())) if finite.size else (None, None)
    return Sample(tuple(int(d) for d in array.shape[: arg.ndim]), low, high)


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


def written_args(graph: Graph) -> list[str]:
    """The exported ndarray args some dispatch of ``graph`` writes."""
    from graphlab.dataflow import dataflow_facts

    facts = dataflow_facts(graph)
    return [a.name for a in exported_args(graph) if a.kind == "ndarray" and facts.writers(a.name)]


# --- the output folder ----------------------------------------------------------------------------


#: The hidden folders gl.export makes next to a target: ``export`` while writing it, ``old`` for the
#: folder it replaces until that is deleted. Nothing else is ever deleted as stale.
_OWN_FOLDER = re.compile(
    r"\.(?P<name>.+)\.(?P<kind>export|old)-(?P<host>[A-Za-z0-9]+)-(?P<pid>[1-9][0-9]{0,9})-[a-z0-9_]{8}"
)
#: What gl.export writes besides manifest.json and the files it lists: the generated C host.
HOST_FILES = ("main.c", "npy.c", "npy.h", "CMakeLists.txt", "README.md")
_KEEP_OUT = "nothing was deleted: remove it yourself or choose another path"


def _host_tag() -> str:
    return re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:24] or "host"


def _own_prefix(target: Path, kind: str) -> str:
    """The start of the name of a hidden folder for ``target``: ``.<name>.<kind>-<host>-<pid>-``."""
    return f".{target.name}.{kind}-{_host_tag()}-{os.getpid()}-"


def check_target(target: Path, overwrite: bool) -> None:
    """Refuse an existing target (unless ``overwrite`` and gl.export wrote it) or a folder that cannot be created."""
    if target.is_symlink():
        raise _link_error(target)
    if target.exists():
        if not overwrite:
            raise OutputPathError(
                f"{target} already exists; pass overwrite=True (--overwrite on the command line) to replace "
                "it, or choose another path",
                path=target,
            )
        check_replaceable(target, target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(
            f"cannot create the folder {target.parent} for {target}: {exc.strerror or exc}; choose a writable location",
            path=target,
        ) from exc


def _link_error(target: Path) -> OutputPathError:
    return OutputPathError(
        f"{target} is a symbolic link (to {target.readlink()}); gl.export neither writes through a link nor "
        "replaces one, even with overwrite=True; pass the folder it points to, or remove the link; nothing was deleted",
        path=target,
    )


def _written_by_export(name: str, listed: set[str]) -> bool:
    """Whether a path in an export folder is one gl.export writes (or the host build puts there)."""
    if name == "manifest.json" or name in listed:
        return True
    host = name.removeprefix("host/")
    if host == name:
        return False
    return host in HOST_FILES or host.startswith("build/") or host in {f".{n}.tmp" for n in HOST_FILES}


def check_replaceable(folder: Path, target: Path) -> None:
    """Refuse to delete ``folder`` (the target, or the target renamed aside) unless gl.export wrote all of it.

    An empty folder holds nothing to lose. Otherwise ``manifest.json`` must be a graphlab module's
    (format ``graphlab.module/1``) and every file and link in the folder must be the manifest, a file
    it lists, or part of the generated ``host/``: a user's own file in an export is never deleted.
    """
    if folder.is_symlink():
        raise _link_error(target)
    if not folder.is_dir():
        raise OutputPathError(
            f"{target} is a file, not a folder gl.export wrote, so overwrite=True does not replace it; {_KEEP_OUT}",
            path=target,
        )
    if not any(folder.iterdir()):
        return
    try:
        listed = listed_files(folder)
    except ManifestError as exc:
        why = f"manifest.json {exc.json_path}: {exc.reason}"
        if not (folder / "manifest.json").is_file():
            why = "it has no manifest.json"
        raise OutputPathError(
            f"{target} is not a folder gl.export wrote ({why}), so overwrite=True does not replace it; {_KEEP_OUT}",
            path=target,
        ) from exc
    extra = [name for name in walk_files(folder) if not _written_by_export(name, listed)]
    if extra:
        shown = ", ".join(extra[:3]) + (f" and {len(extra) - 3} more" if len(extra) > 3 else "")
        raise OutputPathError(
            f"{target} is an export but also holds files gl.export did not write ({shown}), so overwrite=True "
            f"does not replace it; move them out of it and export again, or choose another path; nothing was deleted",
            path=target,
        )


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (one of another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True
    return True


def remove_stale_folders(parent: Path) -> list[Path]:
    """Delete the hidden folders interrupted exports left in ``parent``; return what was deleted.

    Only folders named as gl.export names its own (``.<name>.export-<host>-<pid>-<random>``), made on
    this machine (``host``) by a process that no longer exists. A replaced export set aside
    (``.<name>.old-...``) goes only where its replacement ``<name>`` is in place: if the process
    died between the two renames it is the only copy, so it stays.
    """
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    host = _host_tag()
    for entry in entries:
        match = _OWN_FOLDER.fullmatch(entry.name)
        if match is None or match["host"] != host or _process_alive(int(match["pid"])):
            continue
        if entry.is_symlink() or not entry.is_dir():
            continue
        if match["kind"] == "old" and not (parent / match["name"]).is_dir():
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _temporary_folder(target: Path) -> Path:
    try:
        return Path(tempfile.mkdtemp(prefix=_own_prefix(target, "export"), dir=target.parent))
    except OSError as exc:
        raise OutputPathError(
            f"cannot write into {target.parent}: {exc.strerror or exc}; choose a writable location", path=target
        ) from exc


def _move_into_place(tmp: Path, target: Path, overwrite: bool) -> None:
    """Rename ``tmp`` to ``target``; an old target is renamed aside, checked again, and deleted after.

    The old folder may have changed while the export ran (or appeared: then only ``overwrite``
    replaces it); checked where it was renamed to, nothing can slip in between the check and the
    delete. Refused, it is renamed back.
    """
    if target.is_symlink():
        raise _link_error(target)
    if not target.exists():
        tmp.rename(target)
        return
    if not overwrite:
        raise OutputPathError(
            f"{target} appeared while the export ran; pass overwrite=True to replace it (only a folder gl.export "
            "wrote is replaced), or choose another path; nothing was deleted",
            path=target,
        )
    old = target.with_name(_own_prefix(target, "old") + uuid.uuid4().hex[:8])
    target.rename(old)
    try:
        check_replaceable(old, target)
        tmp.rename(target)
    except BaseException:
        old.rename(target)
        raise
    shutil.rmtree(old, ignore_errors=True)


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
    ['host', 'manifest.json', 'module', 'source']
    >>> sorted(os.listdir(result.host))
    ['CMakeLists.txt', 'README.md', 'main.c', 'npy.c', 'npy.h']
    >>> gl.export(g, folder, arch="x64")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    graphlab.export.exporter.OutputPathError: ... exists; ...
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
                memory=memory,
                plans=plans,
            )
            report("finish", 0.97)
            _move_into_place(tmp, target, overwrite)
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
    memory: dict[str, Any],
    plans: Mapping[str, Plan],
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
    _check_module_graphs(answer["module_graphs"], plans)
    report("manifest", 0.85)
    (tmp / "source").mkdir()
    for name, text in sources.items():
        (tmp / name).write_text(text, encoding="utf-8")
    (tmp / "source" / "kernels.json").write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    entries = ["module", "source", *([tcm_name] if tcm_name else [])]
    write_manifest(tmp, {
        "arch": arch,
        "taichi_version": answer["taichi_version"],
        "graphs": [_graph_entry(g, samples, plans[g.name]) for g in graphs],
        "dims": dims,
        "memory_plan": memory,
        "caps": request["caps"],
        "cpu_max_num_threads": answer["cpu_max_num_threads"],
        "tcm": tcm_name,
        "source": {"graphs": {g.name: f"source/{g.name}.graph.json" for g in graphs},
                   "kernels": "source/kernels.json"},
        "files": file_digests(tmp, entries),
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
    control = plan_to_json(plan, [a.name for a in args])
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


def vulkan_caps(graphs: Sequence[Graph]) -> list[str]:
    """The device capabilities the args' dtypes need; a Vulkan module assumes none unless told."""
    needed = {VULKAN_CAPS[a.dtype] for g in graphs for a in exported_args(g) if a.dtype in VULKAN_CAPS}
    return sorted(needed)
