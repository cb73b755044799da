"""The child process of ``gl.export`` and ``gl.verify`` (``process.run_child``): what runs there, and its progress.

Taichi allows one ``ti.aot.Module`` per ``ti.init`` and exports only for the arch of the current
``ti.init``; a crash in Taichi must not take the notebook with it. So each export and each Python
reference run starts a fresh process, which rebuilds the kernels (``payload.load_kernels``) and the
graphs (from their graph files) and initialises Taichi for the wanted arch.

The child reports progress to the parent through a small JSON-lines file: first its pid (so the
parent can stop it when the user interrupts), then ``{"stage", "fraction"}`` lines, which
:func:`run_watched` relays to the export's progress bar or callback.
``GRAPHLAB_CHILD_KILL_AT=<stage>`` in the environment makes the child kill itself with SIGKILL when
it reaches that stage: the tests use it to check that an interrupted export leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.analysis.variance import buffer_causes, causes_to_data
from graphlab.child.payload import load_kernels
from graphlab.child.process import run_child
from graphlab.model.graphfile import loads

KILL_AT_ENV = "GRAPHLAB_CHILD_KILL_AT"
#: Device capabilities a Vulkan module needs for args of these dtypes (none are assumed by default).
VULKAN_CAPS = {
    "i8": "spirv_has_int8", "u8": "spirv_has_int8", "i16": "spirv_has_int16", "u16": "spirv_has_int16",
    "f16": "spirv_has_float16", "i64": "spirv_has_int64", "u64": "spirv_has_int64", "f64": "spirv_has_float64",
}  # fmt: skip


class ProgressFile:
    """The child's side of the progress channel: append-only JSON lines, flushed at once."""

    def __init__(self, path: str | None) -> None:
        self.path = None if path is None else Path(path)
        self._write({"pid": os.getpid()})

    def _write(self, record: Mapping[str, Any]) -> None:
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")

    def __call__(self, stage: str, fraction: float) -> None:
        self._write({"stage": stage, "fraction": fraction})
        if os.environ.get(KILL_AT_ENV) == stage.split(" ", 1)[0]:  # test hook: die as a crash would
            os.kill(os.getpid(), signal.SIGKILL)


def _init(arch: str, threads: int | None) -> str:
    """``ti.init`` for ``arch``; returns the arch Taichi really chose (it falls back silently)."""
    import taichi as ti  # import cost: Taichi

    from graphlab.bridge.runtime import current_arch  # import cost: Taichi

    options: dict[str, Any] = {"log_level": ti.WARN}
    if arch == "x64" and threads is not None:
        options["cpu_max_num_threads"] = threads
    ti.init(arch=getattr(ti, arch), **options)
    return current_arch()


def _graphs(request: Mapping[str, Any], kernels: Mapping[str, Any]) -> list[Any]:
    return [loads(text, kernels=kernels, file=name) for name, text in request["graphs"].items()]


def _threads() -> int | None:
    from graphlab.bridge.runtime import cpu_max_threads  # import cost: Taichi

    return cpu_max_threads()


def export_module(request: Mapping[str, Any]) -> dict[str, Any]:
    """Compile the graphs with graphlab and save them as one AOT module (and its ``.tcm``).

    Request: ``payload`` (carried kernels), ``graphs`` ({file name: graph file text}), ``arch``,
    ``threads``, ``caps``, ``module_dir``, ``tcm`` (a path or None), ``progress`` (a path).
    """
    from graphlab.run.compiled import compile_graph  # import cost: Taichi, loaded in the child only

    progress = ProgressFile(request.get("progress"))
    progress("kernels", 0.15)
    kernels = load_kernels(request["payload"])  # before ti.init: a module may call ti.init itself
    progress("init", 0.2)
    arch = _init(request["arch"], request.get("threads"))
    if arch != request["arch"]:
        return {"fallback": arch}
    import taichi as ti  # import cost: Taichi

    graphs = _graphs(request, kernels)
    compiled = []
    for i, graph in enumerate(graphs):
        progress(f"compile {graph.name}", 0.25 + 0.15 * i / len(graphs))
        compiled.append(compile_graph(graph))
    module = ti.aot.Module(getattr(ti, arch), caps=list(request.get("caps") or []))
    module_graphs: dict[str, list[str]] = {}
    for i, (graph, c) in enumerate(zip(graphs, compiled)):
        progress(f"build {graph.name}", 0.4 + 0.3 * i / len(graphs))
        module_graphs[graph.name] = []
        for segment in c.plan.segments:  # one module graph per plan segment, named by the plan
            module.add_graph(segment.name, c.segment_graph(segment.id))
            module_graphs[graph.name].append(segment.name)
    if request.get("textures"):
        from graphlab.deploy.texture_kernels import copy_graphs  # import cost: Taichi, loaded in the child only

        for name, graph in copy_graphs({(fmt, int(ndim)) for fmt, ndim in request["textures"]}).items():
            module.add_graph(name, graph)
    progress("save", 0.7)
    folder = Path(request["module_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    module.save(str(folder))
    if request.get("tcm"):
        progress("archive", 0.78)
        module.archive(str(request["tcm"]))
    return {
        "arch": arch,
        "taichi_version": ".".join(map(str, ti.__version__)),
        "cpu_max_num_threads": _threads() if arch == "x64" else None,
        "module_graphs": module_graphs,
    }


def _size_temps(compiled: Sequence[Any], values: dict[str, Any], dims: Mapping[str, int]) -> None:
    """Allocate, from the manifest's dims, the temps no input sizes (the C host does the same).

    A temp whose dims only temps use (a grid of ``G`` x ``G`` beside particles of ``n``) cannot be
    sized from the inputs, so the reference run would refuse to start without these.
    """
    from graphlab.bridge.runtime import new_ndarray  # import cost: Taichi

    for c in compiled:
        for arg in c.args.values():
            if arg.name in values or arg.kind != "ndarray" or (arg.shape is None and arg.ndim):
                continue
            shape = tuple(d if isinstance(d, int) else dims.get(d, -1) for d in arg.shape or ())
            if all(d >= 0 for d in shape):
                values[arg.name] = new_ndarray(arg.dtype or "f32", shape, arg.element_shape)


def run_graphs(request: Mapping[str, Any]) -> dict[str, Any]:
    """Run the graphs from Python ``frames`` times on the inputs in ``inputs_dir``; save every ndarray.

    The answer lists the control events of every frame (``[frame, graph, node, kind, value,
    limit_reached]``): the branches taken and loop iterations, to compare with the C host's.

    Request: ``payload``, ``graphs`` (in launch order), ``arch``, ``threads``, ``inputs_dir``
    (``<arg>.npy`` per non-temp arg), ``out_dir``, ``frames``. Frames are timed as the C host's
    ``--time`` does: the first alone (it includes one-off work), then the mean of the others.
    """
    from graphlab.bridge.runtime import new_ndarray, sync  # import cost: Taichi
    from graphlab.run.compiled import compile_graph  # import cost: Taichi, loaded in the child only

    kernels = load_kernels(request["payload"])
    arch = _init(request["arch"], request.get("threads"))
    if arch != request["arch"]:
        return {"fallback": arch}
    graphs = _graphs(request, kernels)
    compiled = [compile_graph(graph) for graph in graphs]
    causes: dict[str, Any] = {}
    for graph in graphs:  # what may make each buffer vary: verify attributes differences to it
        for name, listed in causes_to_data(buffer_causes(graph)).items():
            causes.setdefault(name, []).extend(c for c in listed if c not in causes[name])
    formats: dict[str, str] = dict(request.get("textures") or {})
    if formats:
        from graphlab.deploy.texture_kernels import read_texture, write_texture  # import cost: Taichi
    values: dict[str, Any] = {}
    for path in sorted(Path(request["inputs_dir"]).glob("*.npy")):
        array = np.load(path)
        arg = next((c.args[path.stem] for c in compiled if path.stem in c.args), None)
        if arg is None:
            continue
        if arg.kind == "ndarray":
            values[arg.name] = new_ndarray(arg.dtype or "f32", array.shape[: arg.ndim], arg.element_shape)
            values[arg.name].from_numpy(array)
        elif arg.name in formats:  # a texture, filled by the copy kernel the module's host uses too
            values[arg.name] = write_texture(array, formats[arg.name])
        else:
            values[arg.name] = array.item() if arg.kind == "scalar" else array
    _size_temps(compiled, values, request.get("dims") or {})
    per_graph = [{k: v for k, v in values.items() if k in c.args} for c in compiled]
    events: list[list[Any]] = []

    def frame(index: int) -> None:
        for c, given in zip(compiled, per_graph):
            c.run(given)
            events.extend([index, c.name, e.node, e.kind, e.value, e.limit_reached] for e in c.last_events)

    start = time.perf_counter()
    frame(0)
    sync()
    first = time.perf_counter() - start
    start = time.perf_counter()
    for index in range(1, int(request["frames"])):
        frame(index)
    sync()
    rest = time.perf_counter() - start
    out = Path(request["out_dir"])
    out.mkdir(parents=True, exist_ok=True)
    for name, value in values.items():
        if name in formats:
            np.save(out / f"{name}.npy", read_texture(value, formats[name]))
        elif hasattr(value, "to_numpy"):
            np.save(out / f"{name}.npy", value.to_numpy())
    frames = int(request["frames"])
    return {
        "arch": arch,
        "cpu_max_num_threads": _threads() if arch == "x64" else None,
        "first_frame_s": first,
        "frame_s": rest / (frames - 1) if frames > 1 else first,
        "events": events,
        "causes": causes,
    }


# --- the parent's side of the progress channel -------------------------------------------------------


def run_watched(
    entry: str, request: dict[str, Any], report: Callable[[str, float], Any], *, workdir: Path, timeout: float
) -> Any:
    """``process.run_child`` in a worker thread, relaying the child's progress lines to ``report``.

    When this thread is interrupted (Ctrl-C, or a progress callback raising) the child is killed by
    the pid it wrote first, so it stops at once instead of running to the end.
    """
    channel = workdir / ".progress.jsonl"
    channel.touch()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["result"] = run_child(entry, {**request, "progress": str(channel)}, timeout=timeout)
        except BaseException as exc:  # handed to the calling thread
            outcome["error"] = exc

    worker = threading.Thread(target=work, name="graphlab-export-child", daemon=True)
    worker.start()
    seen = 0
    try:
        while worker.is_alive():
            worker.join(0.05)
            seen = _relay(channel, seen, report)
        _relay(channel, seen, report)
    except BaseException:
        _kill_child(channel, worker)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _relay(channel: Path, seen: int, report: Callable[[str, float], Any]) -> int:
    lines = channel.read_text(encoding="utf-8").splitlines()
    for line in lines[seen:]:
        record = json.loads(line) if line.endswith("}") else {}
        if "stage" in record:
            report(record["stage"], float(record["fraction"]))
    return len([line for line in lines if line.endswith("}")])


def _kill_child(channel: Path, worker: threading.Thread) -> None:
    """SIGKILL the child (the pid it wrote) while it still runs, then wait for the worker."""
    records = [json.loads(line) for line in channel.read_text(encoding="utf-8").splitlines() if line.endswith("}")]
    pid = next((r["pid"] for r in records if "pid" in r), None)
    if pid is not None and worker.is_alive():  # not reaped yet, so the pid is still that child's
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), signal.SIGKILL)
    worker.join(30)
