"""Run an exported module through Taichi's C runtime, from Python, "as deployed".

A module that ``gl.export`` wrote is meant for a C host. Running it here through the same C library
(``libtaichi_c_api.so`` from the taichi wheel, bound with :mod:`ctypes`) shows that the shipped
files compute what the notebook computed, with no Taichi Python frontend in the loop: taichi is
located with :func:`importlib.util.find_spec` and never imported. The C library's structs, its
loading and device memory are in :mod:`graphlab.deploy.capi_ctypes`; this module checks values and runs graphs.

A graph with conditionals or loops runs as the manifest's control tree: its segments launched in
turn, its flags read on the host between them; ``graph.last_events`` then tells the branches taken
and the iterations of each loop, as ``CompiledGraph.last_events`` does in the notebook.

Every value is checked against ``manifest.json`` before anything is launched, and every C call is
followed by ``ti_get_last_error``; a failure names the call, the error code and Taichi's message.

For example (needs a Taichi runtime and buffers; see the tests)::

    import graphlab as gl
    update = gl.load_module("out/mpm88").graphs["update"]
    update.run(x=x, v=v, dt=1e-4)  # x and v (numpy) now hold the results
"""

from __future__ import annotations

import ctypes
import ctypes.util
import difflib
import os
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.bridge.aot_files import MODULE_FILES
from graphlab.bridge.texture_formats import TEXTURE_KINDS, texel_format
from graphlab.core.errors import GraphlabError, GraphRunError, ToolMissingError
from graphlab.core.names import check_dim_size, shown
from graphlab.core.spec import DTYPE_BYTES, Arg
from graphlab.deploy.capi import (
    ARG_F32,
    ARG_I32,
    ARG_NDARRAY,
    ARG_TENSOR,
    C_SCALARS,
    SCALAR_PASSING,
    TI_ARCH,
    TI_DATA_TYPE,
)
from graphlab.deploy.capi_ctypes import Buffer, CApi, Memory, TiNamedArgument, c_api
from graphlab.deploy.capture_write import DEFAULT_LIMIT_BYTES, CaptureWriter
from graphlab.deploy.cruntime_textures import Images, check_texels, texture_formats
from graphlab.deploy.errors import UnknownGraphError
from graphlab.deploy.manifest import (
    MANIFEST_FORMAT,
    GraphSpec,
    Manifest,
    manifest_error,
    module_folder,
    read_manifest,
)
from graphlab.deploy.seal import check_files
from graphlab.kernelfacts.shape_facts import first_violation
from graphlab.model.plan import ControlEvent, FlagRead, Iterate, Segment, run_plan
from graphlab.model.sizes import dim_names, resolve_sizes
from graphlab.run.values import Problem, array_problem, dims_problem, number_problem, numpy_dtype

__all__ = [
    "MANIFEST_FORMAT",
    "GraphSpec",
    "Manifest",
    "Module",
    "ModuleGraph",
    "load_module",
    "read_manifest",
]

ARCH_HINTS = {
    "x64": "",
    "vulkan": "; is a Vulkan driver installed? On a CPU: apt-get install mesa-vulkan-drivers libvulkan1",
    "cuda": "; is an NVIDIA GPU and its driver present? Else export for vulkan or x64",
}

# --- checking a module folder ----------------------------------------------------------------------


def check_module_files(manifest: Manifest, c_api_version: int) -> None:
    """Refuse a module folder that would crash or mislead the C runtime, before it is loaded.

    ``module/`` must hold what the arch's loader reads, every file in ``files`` must be there with
    its recorded sha256 (and every file of ``module/`` listed: :func:`~graphlab.deploy.seal.check_files`),
    and the module must come from the runtime's Taichi minor version (1.7.x modules load only into
    a 1.7.x runtime).
    """
    folder = manifest.folder
    have = f"{c_api_version // 1_000_000}.{c_api_version // 1000 % 1000}"
    if not manifest.taichi_version.startswith(have + "."):
        fix = f"export with this taichi, or install taichi=={manifest.taichi_version}"
        message = f"{manifest.taichi_version} is not the C runtime's {have}.x; {fix}"
        raise manifest_error(folder, "$.taichi_version", message)
    for name in MODULE_FILES[manifest.arch]:
        if not (folder / "module" / name).is_file():
            message = f"{folder / 'module' / name} is missing, so module/ is no {manifest.arch} module"
            raise manifest_error(folder, "$.arch", message)
    check_files(manifest)  # every file of module/ listed, none changed, none reached through a link out


# --- checking values ----------------------------------------------------------------------------


@dataclass
class _Bound:
    """The values of one run, checked: numpy ndarrays, full shapes (temps too), scalars."""

    arrays: dict[str, np.ndarray]
    shapes: dict[str, tuple[int, ...]]
    scalars: dict[str, np.ndarray]


def _fail(graph: GraphSpec, arg: Arg, message: str) -> GraphRunError:
    return GraphRunError(f"graph {graph.name!r}, arg {arg.name!r}: {message}", arg=arg.name)


def _check_names(graph: GraphSpec, values: Mapping[str, Any]) -> None:
    known = [a.name for a in graph.args]
    for name in values:
        if name not in known:
            close = difflib.get_close_matches(name, known, 1) if isinstance(name, str) else []
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise GraphRunError(
                f"graph {graph.name!r} has no arg {shown(name)}; {hint}its args: {', '.join(known)}", arg=name
            )
    missing = [a.name for a in graph.args if a.name not in values and a.role != "temp"]
    if missing:
        example = ", ".join(f"{m}=..." for m in missing)
        message = f"graph {graph.name!r}: no value for {', '.join(missing)}; pass every arg but temps"
        raise GraphRunError(f"{message}: run({example})", arg=missing[0])


def _mismatch(graph: GraphSpec, arg: Arg, problem: Problem, note: str = "") -> GraphRunError:
    return _fail(graph, arg, f"expected {problem.want}, got {problem.got}; {problem.fix}{note}")


def _check_array(graph: GraphSpec, arg: Arg, value: Any, dims: dict[str, int], owners: dict[str, str]) -> np.ndarray:
    """A numpy value for an ndarray arg, checked as ``run`` checks one (:mod:`graphlab.run.values`)."""
    if not isinstance(value, np.ndarray):
        want = numpy_dtype(arg)
        raise _fail(graph, arg, f"expected a numpy array of {want}, got {type(value).__name__}; pass np.asarray(...)")
    problem = array_problem(arg, value)
    if problem is not None:
        raise _mismatch(graph, arg, problem, " (results are written back in place, so nothing is cast)")
    if not value.flags.writeable:
        raise _fail(graph, arg, "the array is read-only, but results are copied into it; pass np.array(value)")
    mismatch = dims_problem(arg, value.shape[: arg.ndim], dims, owners)
    if mismatch is not None:
        raise _fail(graph, arg, mismatch)
    return value


def _check_scalar(graph: GraphSpec, arg: Arg, value: Any) -> np.ndarray:
    """A scalar or matrix value as an array of the arg's dtype, with ti.graph's casting rules.

    A float arg takes ints and floats; an int arg refuses floats (as ``ti.graph`` does) and ints out
    of range (rather than wrapping).
    """
    want = numpy_dtype(arg)
    if arg.kind == "scalar" and arg.dtype not in SCALAR_PASSING:
        fix = f"export it as {', '.join(C_SCALARS)} or as a 1-element ndarray"
        raise _fail(graph, arg, f"a {arg.dtype} scalar cannot cross Taichi 1.7.4's C-API; {fix}")
    try:
        got: np.ndarray | None = np.asarray(value)
    except (TypeError, ValueError, OverflowError):  # a ragged nested list
        got = None
    if got is None or got.dtype.kind not in "iuf":
        expected = "an int" if want.kind in "iu" else "a number"
        raise _fail(graph, arg, f"expected {expected} ({arg.dtype}), got {shown(value)}")
    shape = arg.element_shape if arg.kind == "matrix" else ()
    if got.shape != shape:
        raise _fail(graph, arg, f"expected shape {shape}, got {got.shape}")
    if got.size:
        problem = number_problem(arg, got.min().item(), got.max().item(), floating=got.dtype.kind == "f")
        if problem is not None:
            raise _mismatch(graph, arg, problem)
    return got.astype(want)


def bind_values(
    graph: GraphSpec,
    values: Mapping[str, Any],
    default_dims: Mapping[str, int],
    formats: Mapping[str, str] | None = None,
    given_dims: Mapping[str, object] | None = None,
) -> _Bound:
    """Check ``values`` against a graph of the manifest; raise GraphRunError before any launch.

    ``formats``: the image format of each texture arg (:func:`cruntime_textures.texture_formats`);
    ``given_dims``: dims given by name, for temps no value sizes (:func:`graphlab.model.sizes.resolve_sizes`).
    """
    _check_names(graph, values)
    dims: dict[str, int] = {}
    owners: dict[str, str] = {}
    bound = _Bound({}, {}, {})
    for arg in graph.args:
        if arg.kind in TEXTURE_KINDS:  # texels: float32, the texture's dims then its channels
            fmt = (formats or {}).get(arg.name) or texel_format(arg.kind, arg.fmt)
            where = f"graph {graph.name!r}, arg {arg.name!r}"
            bound.arrays[arg.name] = check_texels(where, arg, fmt, values.get(arg.name), dims, owners)
            bound.shapes[arg.name] = bound.arrays[arg.name].shape
        elif arg.kind == "ndarray" and arg.name in values:
            bound.arrays[arg.name] = _check_array(graph, arg, values[arg.name], dims, owners)
            bound.shapes[arg.name] = bound.arrays[arg.name].shape
        elif arg.kind != "ndarray":
            bound.scalars[arg.name] = _check_scalar(graph, arg, values[arg.name])
    sizes = resolve_sizes(
        graph.args, dims, given=values, dims=given_dims, defaults=default_dims, dim_fix="pass {dim}=SIZE to run()",
        error=lambda message, arg: GraphRunError(f"graph {graph.name!r}: {message}", arg=arg),
    )  # fmt: skip
    for name, shape in sizes.temps.items():
        bound.shapes[name] = (*shape, *next(a for a in graph.args if a.name == name).element_shape)
    for name, shape in bound.shapes.items():  # the C API takes u32 dims: refuse what it would truncate
        for axis, size in enumerate(shape):
            check_dim_size(size, f"graph {graph.name!r}, arg {name!r}: shape[{axis}]", error=GraphRunError)
    broken = first_violation(graph.relations, bound.shapes)  # the kernels' loops: a short array would crash
    if broken is not None:
        raise GraphRunError(f"graph {graph.name!r}: {broken[1]}", arg=broken[0].arg)
    return bound


def _fill(named: TiNamedArgument, arg: Arg, value: Any) -> None:
    """Fill one TiNamedArgument: ``value`` is ``(memory, shape)`` for an ndarray, else an array."""
    named.name, a, dtype = arg.name.encode(), named.argument, TI_DATA_TYPE[arg.dtype or "f32"]
    if arg.kind == "ndarray":
        a.type, nd = ARG_NDARRAY, a.value.ndarray
        nd.memory, nd.elem_type = value[0], dtype
        nd.shape.dim_count, nd.elem_shape.dim_count = arg.ndim, len(arg.element_shape)
        nd.shape.dims[: arg.ndim] = value[1][: arg.ndim]
        nd.elem_shape.dims[: len(arg.element_shape)] = arg.element_shape
    elif arg.kind == "matrix":  # row-major values packed at the dtype's width
        a.type, a.value.tensor.type, a.value.tensor.contents.length = ARG_TENSOR, dtype, value.size
        ctypes.memmove(a.value.tensor.contents.data, value.tobytes(), value.nbytes)
    else:
        a.type = SCALAR_PASSING[arg.dtype or "f32"]
        if a.type == ARG_F32:
            a.value.f32 = float(value)
        elif a.type == ARG_I32:
            a.value.i32 = int(value)
        else:
            a.value.scalar.type, a.value.scalar.value.x16 = dtype, int(value.view(np.uint16))


# --- the module ----------------------------------------------------------------------------------


class ModuleGraph:
    """One graph of a loaded :class:`Module`: one module graph, or segments and host-side decisions.

    ``last_events`` tells which branches the last run took and how many iterations each loop ran
    (as ``CompiledGraph.last_events`` does in the notebook; empty without control flow).
    """

    def __init__(self, module: Module, spec: GraphSpec, handles: Mapping[str, int]) -> None:
        self.module, self.spec, self.name, self._handles = module, spec, spec.name, dict(handles)
        self.last_events: list[ControlEvent] = []
        self._reads: list[FlagRead] = []  # the flag reads of the last captured run

    def __repr__(self) -> str:
        return f"<ModuleGraph {self.name!r}({', '.join(a.name for a in self.spec.args)}) of {self.module.path}>"

    def run(self, values: Mapping[str, Any] | None = None, /, **kwargs: Any) -> dict[str, np.ndarray]:
        """Run the graph once: ``run({"x": x, ...})`` or ``run(x=x, ...)``, as ``CompiledGraph.run`` takes them.

        Every numpy array given is updated in place with its result.

        A graph with conditionals or loops launches its segments and reads its flags between them
        (each read waits for the device); ``last_events`` then says what it decided.

        Every arg but temps needs a value: ndarrays as numpy arrays of the exact dtype and shape
        (symbolic dims must agree), scalars as numbers, matrices as array-likes. Temps may be given;
        the others are allocated from the dims the values set, then dims given by name (``m=64``),
        then the manifest's ``dims`` (:func:`graphlab.model.sizes.resolve_sizes`). Nothing is launched unless every
        value fits. Returns the given arrays by name (the caller's own objects).
        """
        if values is not None and not isinstance(values, Mapping):
            got = type(values).__name__
            raise GraphRunError(
                f"graph {self.name!r}: run() takes a dict of values by arg name (or keywords), not {got}"
            )
        clash = sorted(set(values or {}) & set(kwargs))
        if clash:
            raise GraphRunError(f"graph {self.name!r}: {', '.join(clash)} given both in the dict and as keywords")
        return self._run({**(values or {}), **kwargs}, None)

    def capture(
        self,
        folder: str | os.PathLike[str],
        values: Mapping[str, Any],
        /,
        *,
        segments: bool = False,
        limit_bytes: int = DEFAULT_LIMIT_BYTES,
    ) -> dict[str, np.ndarray]:
        """Run the graph once, as :meth:`run` does, and record the run in ``folder`` as a field capture.

        The folder (new or empty) gets the format ``graphlab.capture/1`` (:mod:`graphlab.core.capture_format`)
        that the C runtime library writes on a user's device: the args before the run, every flag
        read, the arrays after it and, with ``segments=True``, what each executed segment wrote, up to
        ``limit_bytes`` of them (then ``truncated``). ``gl.open_capture(folder, graph=g)`` opens it in
        the notebook as a debug session; ``dbg.compare(capture)`` says where the notebook departs.

        ``values``: a dict by arg name (dims by name too), as :meth:`run` takes it; a run with control
        flow runs its plan segment by segment as the C library does (a guarded loop's replay included).
        """
        if not isinstance(values, Mapping):
            got = type(values).__name__
            raise GraphRunError(f"graph {self.name!r}: capture(folder, values) takes a dict of values, not {got}")
        module = self.module
        writer = CaptureWriter(
            folder, module.manifest, self.spec, segments=segments, limit_bytes=limit_bytes,
            c_api_version=module._api.call("ti_get_version"),
        )  # fmt: skip
        return self._run(dict(values), writer)

    def _run(self, values: dict[str, Any], writer: CaptureWriter | None) -> dict[str, np.ndarray]:
        """One run on checked values; ``writer`` records it as a capture."""
        arg_names, names = {a.name for a in self.spec.args}, set(dim_names(self.spec.args))
        dims = {k: values.pop(k) for k in list(values) if k not in arg_names and k in names}
        module, api = self.module, self.module._api
        bound = bind_values(self.spec, values, module.manifest.dims, module._texture_formats, dims)
        memory = module._memory()
        buffers = module._buffers_for(self.spec, bound.shapes, uploaded=bound.arrays)
        for name, array in bound.arrays.items():
            memory.upload(buffers[name], np.ascontiguousarray(array))
        images = Images(api, module._runtime, module._handles[0], module._texture_formats)
        textures = [arg for arg in self.spec.args if arg.kind in TEXTURE_KINDS]
        for arg in textures:  # texels: buffer -> image, by the module's copy graph
            images.allocate(arg, bound.shapes[arg.name])
            images.copy(arg, buffers[arg.name], to_image=True)
        if writer is not None:
            writer.begin(bound.arrays, bound.scalars, bound.shapes)
        self.last_events = self._execute(bound, buffers, memory, images, writer)
        for arg in textures:
            images.copy(arg, buffers[arg.name], to_image=False)
        results = {name: np.empty(array.shape, array.dtype) for name, array in bound.arrays.items()}
        for name, out in results.items():
            memory.queue_download(buffers[name], out.nbytes)
        api.call("ti_wait", module._runtime)
        for name, out in results.items():
            memory.download(buffers[name], out)
            bound.arrays[name][...] = out
        images.free()
        if writer is not None:
            writer.finish(self._reads, bound.arrays)
        return dict(bound.arrays)

    def _arguments(self, segment: Segment, bound: _Bound, buffers: Mapping[str, Buffer], images: Images) -> Any:
        """The named arguments of one module graph: the args it takes, by name."""
        specs = {arg.name: arg for arg in self.spec.args}
        args = (TiNamedArgument * len(segment.args))()
        for named, name in zip(args, segment.args):
            arg = specs[name]
            if arg.kind in TEXTURE_KINDS:
                images.fill(named, name)
            elif arg.kind == "ndarray":
                _fill(named, arg, (buffers[name].memory, bound.shapes[name]))
            else:
                _fill(named, arg, bound.scalars[name])
        return args

    def _execute(
        self, bound: _Bound, buffers: Mapping[str, Buffer], memory: Memory, images: Images,
        writer: CaptureWriter | None = None,
    ) -> list[ControlEvent]:  # fmt: skip
        """Launch the module graphs of the plan in the cursor's order, reading flags on the host at each decision."""
        api, runtime = self.module._api, self.module._runtime
        plan = self.spec.plan
        arguments = {s.id: self._arguments(s, bound, buffers, images) for s in plan.segments}

        def launch(segment: Segment) -> None:
            args = arguments[segment.id]
            api.call("ti_launch_compute_graph", runtime, self._handles[segment.name], len(args), args)

        def read_flag(name: str) -> int:
            flag = np.empty(1, np.int32)
            memory.queue_download(buffers[name], flag.nbytes)
            api.call("ti_wait", runtime)
            memory.download(buffers[name], flag)
            return int(flag[0])

        def read_count(name: str) -> int:
            return int(bound.scalars[name])

        rollback = _SavedBuffers(memory, buffers, self.module._saved_copy)
        if writer is not None:  # as the C library runs it: one launch per visit, the reads it acts on

            def download(name: str) -> np.ndarray:
                arg = next(a for a in self.spec.args if a.name == name)
                out = np.empty(bound.shapes[name], numpy_dtype(arg))
                memory.queue_download(buffers[name], out.nbytes)
                api.call("ti_wait", runtime)
                memory.download(buffers[name], out)
                return out

            def launch_recorded(segment: Segment) -> None:
                launch(segment)
                writer.segment_done(segment, download)

            self._reads = []
            return run_plan(plan, launch_recorded, read_flag, read_count, rollback=rollback, reads=self._reads)
        return run_plan(plan, launch, read_flag, read_count, rollback=rollback)


@dataclass
class _SavedBuffers:
    """A guarded loop's save and restore: the buffers its manifest ``saves`` lists, copied on the device."""

    memory: Memory
    buffers: Mapping[str, Buffer]
    copy_of: Callable[[str, int], Buffer]

    def save(self, loop: Iterate) -> None:
        for name in loop.saves:
            self.memory.copy(self.copy_of(name, self.buffers[name].nbytes), self.buffers[name])

    def restore(self, loop: Iterate) -> None:
        for name in loop.saves:
            self.memory.copy(self.buffers[name], self.copy_of(name, self.buffers[name].nbytes))


class _Graphs(Mapping[str, ModuleGraph]):
    """``module.graphs``: a read-only mapping whose missing key says which graphs exist."""

    def __init__(self, path: Path, graphs: dict[str, ModuleGraph]) -> None:
        self._path, self._graphs = path, graphs

    def __getitem__(self, name: str) -> ModuleGraph:
        if name not in self._graphs:
            close = difflib.get_close_matches(name, list(self._graphs), 1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            listed = ", ".join(self._graphs) or "none"
            raise UnknownGraphError(f"module {self._path} has no graph {name!r}; {hint}manifest.json lists: {listed}")
        return self._graphs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._graphs)

    def __len__(self) -> int:
        return len(self._graphs)


class Module:
    """An exported module loaded into a fresh Taichi C runtime of its manifest's arch.

    Device buffers live with the module and are reused between runs; ``close()`` (or leaving a
    ``with`` block) destroys the module and its runtime, freeing them.
    """

    def __init__(self, manifest: Manifest) -> None:
        self.manifest, self.path, self.arch = manifest, manifest.folder, manifest.arch
        self._api = api = c_api()
        check_module_files(manifest, api.call("ti_get_version"))
        if self.arch == "cuda" and not _cuda_driver_present():
            # Without libcuda, 1.7.4's ti_create_runtime(CUDA) "falls back to x64" with only a warning.
            fix = "install the NVIDIA driver, or export for vulkan or x64"
            raise ToolMissingError(f"no CUDA driver (libcuda.so) here, so a cuda module cannot run; {fix}")
        self._runtime = api.call("ti_create_runtime", TI_ARCH[self.arch], 0, hint=ARCH_HINTS[self.arch])
        self._handles: list[int] = []  # AOT modules, destroyed before the runtime
        self._finalizer = weakref.finalize(self, _destroy, api, self._runtime, self._handles)
        folder = str(manifest.folder / "module").encode()
        self._handles.append(api.call("ti_load_aot_module", self._runtime, folder, hint=f"; re-export {self.path}"))
        graphs = {spec.name: ModuleGraph(self, spec, self._module_graphs(spec)) for spec in manifest.graphs}
        self.graphs: Mapping[str, ModuleGraph] = _Graphs(self.path, graphs)
        self._buffers: dict[str, Buffer] = {}
        self._saved: dict[str, Buffer] = {}  # guarded loops' copies, by arg
        self._slot_of = {name: f"slot {slot}" for slot, names in manifest.slots.items() for name in names}
        self._texture_formats = texture_formats(manifest)

    def _module_graphs(self, spec: GraphSpec) -> dict[str, int]:
        """Handles of the module graphs a graph launches (itself, or its segments)."""
        handles = {}
        for segment in spec.plan.segments:
            hint = f"; manifest.json lists graph {segment.name!r} but module/ lacks it: re-export {self.path}"
            handles[segment.name] = self._api.call(
                "ti_get_aot_module_compute_graph", self._handles[0], segment.name.encode(), hint=hint
            )
        return handles

    def __repr__(self) -> str:
        return f"<Module {self.path} arch={self.arch} graphs={list(self.graphs)}>"

    def debug_steps(self, graph: str) -> dict[str, ModuleGraph]:
        """Dispatch node id -> the module graph that runs only that dispatch, from the debug variant
        ``gl.export(..., debug=True)`` recorded for ``graph``; UnknownGraphError without one."""
        steps = self.manifest.debug_steps.get(graph)
        if steps is None:
            recorded = ", ".join(self.manifest.debug_steps) or "none"
            raise UnknownGraphError(
                f"module {self.path} has no debug variant of graph {graph!r} (recorded: {recorded}); "
                "export it with gl.export(..., debug=True)"
            )
        return {node_id: self.graphs[name] for node_id, name in steps.graphs.items()}

    def run_steps(self, graph: str, values: Mapping[str, Any]) -> Iterator[str]:
        """Run ``graph`` dispatch by dispatch through its debug variant, in its recorded order, on
        ``values`` (numpy arrays, written in place); yields each node id once its dispatch ran, so
        the caller can look at the arrays between dispatches."""
        steps = self.debug_steps(graph)
        order = self.manifest.debug_steps[graph].order
        if order is None:
            raise UnknownGraphError(
                f"graph {graph!r} of module {self.path} has control flow: its order of dispatches is decided "
                "at run time; step it with debug_steps() in the order the host decides"
            )
        for node_id in order:
            one = steps[node_id]
            names = {arg.name for arg in one.spec.args}
            one.run({k: v for k, v in values.items() if k in names})
            yield node_id

    def __enter__(self) -> Module:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Destroy the module and its runtime; its graphs cannot run afterwards."""
        self._finalizer()

    def _memory(self) -> Memory:
        if not self._finalizer.alive:
            raise GraphlabError(f"module {self.path} is closed; load it again with gl.load_module")
        return Memory(self._api, self._runtime, self.arch)

    def _saved_copy(self, name: str, nbytes: int) -> Buffer:
        """Where a guarded loop keeps ``name``'s saved copy: kept with the module while big enough."""
        old = self._saved.get(name)
        if old is None or old.nbytes < nbytes:
            if old is not None:
                self._memory().free(old)
            self._saved[name] = self._memory().buffer(nbytes)
        return self._saved[name]

    def _buffers_for(
        self, graph: GraphSpec, shapes: Mapping[str, tuple[int, ...]], uploaded: Mapping[str, Any]
    ) -> dict[str, Buffer]:
        """Device buffers of the graph's ndarrays, kept while big enough; temps of a slot share one.

        A new buffer that no value is uploaded into is zeroed, so temps never start as garbage.
        """
        memory, keys = self._memory(), {}
        need: dict[str, int] = {}
        uploaded_keys = {self._slot_of.get(name, name) for name in uploaded}
        for arg in graph.args:
            if arg.kind == "ndarray" or arg.kind in TEXTURE_KINDS:  # a texture's buffer holds its texels
                keys[arg.name] = key = self._slot_of.get(arg.name, arg.name)
                nbytes = int(np.prod(shapes[arg.name], dtype=np.int64)) * DTYPE_BYTES[arg.dtype or "f32"]
                need[key] = max(need.get(key, 0), nbytes)
        for key, nbytes in need.items():
            old = self._buffers.get(key)
            if old is None or old.nbytes < nbytes:
                if old is not None:
                    memory.free(old)
                self._buffers[key] = memory.buffer(nbytes)
                if key not in uploaded_keys:
                    memory.upload(self._buffers[key], np.zeros(nbytes, np.uint8))
        return {name: self._buffers[key] for name, key in keys.items()}


def _cuda_driver_present() -> bool:
    return ctypes.util.find_library("cuda") is not None


def _destroy(api: CApi, runtime: int, handles: list[int]) -> None:
    for handle in handles:
        api.call("ti_destroy_aot_module", handle)
    api.call("ti_destroy_runtime", runtime)


def load_module(path: str | os.PathLike[str]) -> Module:
    """Load an exported module folder (``manifest.json`` and ``module/``) into Taichi's C runtime.

    Every file the manifest lists is checked against its digest first, so a changed or partial
    folder is refused before the C runtime reads it.

    Parameters
    ----------
    path
        A folder ``gl.export`` wrote.

    Returns
    -------
    Module
        The module in a fresh runtime of the manifest's arch: ``module.graphs[name].run(**values)``
        runs a graph on numpy values (updated in place); ``close()`` or a ``with`` block frees it.

    Raises
    ------
    ManifestError
        ``manifest.json`` is missing or malformed, names a path outside the folder, lists no files
        or not every file of ``module/``, or a file it lists is missing or changed.
    CRuntimeError
        The C runtime refused the arch or the module; the message names the C call.

    Examples
    --------
    >>> import os, tempfile
    >>> g = gl.Graph("demo")
    >>> x, y = g.ndarray("x", ti.f32, ndim=1), g.ndarray("y", ti.f32, ndim=1)
    >>> g.dispatch(saxpy, g.scalar("a", ti.f32), x, y)
    'saxpy'
    >>> result = gl.export(g, os.path.join(tempfile.mkdtemp(), "demo"), arch="x64")
    >>> module = gl.load_module(result.path)
    >>> list(module.graphs), module.arch
    (['demo'], 'x64')
    >>> ys = np.ones(3, np.float32)
    >>> module.graphs["demo"].run(a=2.0, x=np.arange(3, dtype=np.float32), y=ys)["y"] is ys
    True
    >>> ys
    array([1., 3., 5.], dtype=float32)
    >>> module.graphs["demo"].run(a=2.0, x=np.arange(3.0), y=ys)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    graphlab.core.errors.GraphRunError: graph 'demo', arg 'x': expected dtype float32 (f32), got float64...; ...
    >>> module.close()
    """
    return Module(read_manifest(module_folder(path)))
