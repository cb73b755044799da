"""The other side of ``dbg.compare(arch)``: a child process that runs the same graph on another arch.

Taichi holds one arch per ``ti.init``, so the other arch's run lives in its own process. It is a
small server: the parent sends one JSON line per command on one pipe and reads one JSON line back on
another (stdout stays free for Taichi's banner and prints). The child rebuilds the kernels
(``payload.load_kernels``) and compiles the graph (from its graph-file text) at ``start``; each
comparison then sends ``values``: the start values, from ``.npy`` files, on which it opens a
:class:`~graphlab.debug.session.DebugSession`, so both sides walk the same timeline with the same
machinery: ``goto`` a boundary (compiled segments), ``step`` one dispatch. The process outlives one
comparison (a debug session keeps it warm for the next): ``graph`` rebuilds the compiled graph in
place when the graph or its kernels changed, without a new ``ti.init``. Buffers asked for are
written as ``.npy`` files into the folder the parent gives, which reads and deletes them, so a long
run holds no more than one boundary's buffers.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import taichi as ti

from graphlab.analysis.dataflow import assume_access
from graphlab.bridge.runtime import current_arch, new_ndarray
from graphlab.child.payload import load_kernels
from graphlab.core.parentwatch import watch_parent
from graphlab.debug.compare_sides import ALIASES, side_state
from graphlab.debug.redraws import RandomReplayWarning
from graphlab.debug.session import DebugOptions, DebugSession
from graphlab.model.graphfile import loads
from graphlab.run.compiled import CompiledGraph, compile_graph


def start_values(graph: Any, folder: Path) -> dict[str, Any]:
    """Run values from ``<arg>.npy`` files: ndarrays on this arch's device, scalars as Python numbers;
    names listed in ``aliases.json`` share the buffer of their owner, as they do in the parent."""
    values: dict[str, Any] = {}
    for name, arg in graph.args.items():
        path = folder / f"{name}.npy"
        if not path.is_file():
            continue
        array = np.load(path)
        if arg.kind == "ndarray":
            nd = new_ndarray(arg.dtype or "f32", array.shape[: array.ndim - len(arg.element_shape)], arg.element_shape)
            nd.from_numpy(array)
            values[name] = nd
        else:
            values[name] = array.item() if arg.kind == "scalar" else array
    aliases = folder / ALIASES
    if aliases.is_file():
        for name, owner in json.loads(aliases.read_text()).items():
            values[name] = values[owner]
    return values


def save_buffers(session: DebugSession, names: Sequence[str], folder: Path) -> None:
    """Write the named buffers as ``<name>.npy`` into ``folder``."""
    buffers = session.buffers
    for name in names:
        np.save(folder / f"{name}.npy", buffers[name].to_numpy())


class _Server:
    def __init__(self) -> None:
        self.compiled: CompiledGraph | None = None
        self.session: DebugSession | None = None

    def start(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """``ti.init`` the arch asked for and compile the graph; ``fallback`` when Taichi chose another."""
        kernels = load_kernels(request["payload"])
        options: dict[str, Any] = {"log_level": ti.WARN}
        if request["arch"] == "x64" and request.get("threads"):
            options["cpu_max_num_threads"] = request["threads"]
        ti.init(arch=getattr(ti, request["arch"]), **options)
        arch = current_arch()
        if arch != request["arch"]:
            return {"fallback": arch}
        self.build(request, kernels)
        return {"arch": arch}

    def build(self, request: Mapping[str, Any], kernels: Any = None) -> dict[str, Any]:
        """Compile the graph of ``request`` (its kernels loaded anew unless given), in this runtime."""
        self.session = None
        if kernels is None:
            kernels = load_kernels(request["payload"])
        graph = loads(request["graph"], kernels=kernels, file=request.get("file"))
        assume_access(graph, request.get("access", "auto"))  # no Vulkan probe where the parent's failed
        self.compiled = compile_graph(graph)
        return {}

    def load(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """A new session on the compiled graph, from the start values in ``values_dir``."""
        assert self.compiled is not None, "start first"
        self.session = None  # the last comparison's buffers go before the new ones are made
        values = start_values(self.compiled.graph, Path(request["values_dir"]))
        self.session = DebugSession(self.compiled, values, options=DebugOptions(stats_on_stop=False))
        return {}

    def rehearse(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Run the graph once on ``values_dir``'s values, as a comparison would (segments to the end,
        then a few dispatches from Python), so the kernels are compiled and loaded before the
        comparison that was prepared. A failure is left for that comparison to meet and report."""
        try:
            self.load(request)
            session = self.session
            assert session is not None
            session.continue_()
            session.goto(0)
            for _ in range(min(session.step_count, int(request.get("steps", 0)))):
                session.step()
        except Exception as exc:  # the comparison runs the same and reports it in its own words
            return {"rehearsal": f"{type(exc).__name__}: {exc}"}
        finally:
            self.session = None
        return {}

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        command = request["command"]
        if command == "start":
            return self.start(request)
        if command == "graph":
            return self.build(request)
        if command == "values":
            return self.load(request)
        if command == "rehearse":
            return self.rehearse(request)
        session = self.session
        assert session is not None, "start first"
        if command == "goto":
            session.goto(int(request["index"]))
        elif command == "step":
            session.step()
        else:
            raise ValueError(f"unknown command {command!r}")
        if request.get("names"):
            save_buffers(session, request["names"], Path(request["folder"]))
        return side_state(session, int(request.get("since", 0)))


def main(argv: Sequence[str]) -> int:
    """Serve commands from fd ``argv[0]``, answer on fd ``argv[1]``, until ``quit`` or end of input.

    The process dies with its parent (:mod:`graphlab.core.parentwatch`), even in the middle of a command.
    """
    watch_parent()
    # the search goes back and forth on purpose; a random dispatch is reported as the divergence itself
    warnings.simplefilter("ignore", RandomReplayWarning)
    server = _Server()
    with os.fdopen(int(argv[0]), "r") as inbox, os.fdopen(int(argv[1]), "w") as outbox:
        for line in inbox:
            request = json.loads(line)
            if request["command"] == "quit":
                break
            try:
                answer: dict[str, Any] = {"ok": server.handle(request)}
            except Exception as exc:  # sent to the parent, which raises it with the child's arch
                answer = {"error": f"{type(exc).__name__}: {exc}"}
            outbox.write(json.dumps(answer) + "\n")
            outbox.flush()
    sys.stdout.flush()
    return 0
