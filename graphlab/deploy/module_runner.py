"""An exported module as the other side of ``dbg.compare(folder)``: the deployed graph, and a debug variant.

The deployed module runs a whole graph per call in Taichi's C runtime, with no stop inside, so it can
say *whether* it ends as the notebook does, not *where* it departs. To say where, this module
exports a debug variant on the first need: one module graph per dispatch node of the graph, for the
same arch and CPU threads as the deployed one, from the same kernels. Running those one by one in
the C runtime, in the order of the notebook's steps, gives the state after every dispatch.

The search itself is the debugger's (:mod:`graphlab.debug.compare`); this module only runs module
graphs on numpy values. It is reached through :func:`graphlab.api.graph.module_runner`, since the
debugger and the exporter are sibling layers that do not import each other.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from graphlab.core.leftovers import scratch_prefix
from graphlab.deploy.cruntime import Module, load_module
from graphlab.deploy.debug_variant import step_graphs
from graphlab.deploy.errors import ExportError
from graphlab.deploy.exporter import export
from graphlab.deploy.manifest import module_folder, read_manifest
from graphlab.model.graph import Graph
from graphlab.model.nodes import Dispatch
from graphlab.model.plan import ControlEvent

__all__ = ["ModuleRunner"]


class ModuleRunner:
    """Runs ``graph`` from the start values ``start`` in the exported module at ``folder``.

    Raises :class:`~graphlab.deploy.errors.ExportError` (before anything runs) when the module has
    no graph of that name or its args differ from the graph's.
    """

    def __init__(self, folder: str | Path, graph: Graph, start: Mapping[str, Any]) -> None:
        self.folder = module_folder(folder)
        self.manifest = read_manifest(self.folder)
        specs = {spec.name: spec for spec in self.manifest.graphs}
        spec = specs.get(graph.name)
        if spec is None:
            raise ExportError(
                f"compare({str(folder)!r}): the module has no graph {graph.name!r} (it has "
                f"{', '.join(sorted(specs)) or 'none'}); compare a session of one of those graphs"
            )
        differ = sorted(
            name
            for name in {a.name for a in spec.args} | {n for n, a in graph.args.items() if graph.uses_of(n)}
            if name not in graph.args or not any(a.name == name for a in spec.args)
        )
        if differ:
            raise ExportError(
                f"compare({str(folder)!r}): graph {graph.name!r} of the module and of this session differ in "
                f"args {', '.join(differ)}; export this graph again"
            )
        self.graph = graph
        self.arch = f"{self.manifest.arch} module"
        self.start = _host_values({name: value for name, value in start.items() if name in graph.args})
        self.values = _copies(self.start)
        self._variant: Module | None = None
        self._variant_dir: tempfile.TemporaryDirectory[str] | None = None
        self._names: dict[str, str] = {}
        #: Whether the steps ran in the debug variant recorded in the module (``gl.export(debug=True)``).
        self.recorded = False

    def run_deployed(self) -> tuple[list[ControlEvent], dict[str, np.ndarray]]:
        """Run the deployed graph once from the start values: its control events and every array but temps.

        The session's temps go in too, so the module sizes them as the session did (a dim only temps
        use may differ from the manifest's default); what they hold at the end is the module's own
        business (temps of one memory-plan slot share a buffer), so they are not handed back.
        """
        values = _copies(self.start)
        names = {a.name for spec in self.manifest.graphs if spec.name == self.graph.name for a in spec.args}
        given = {k: v for k, v in values.items() if k in names}
        with load_module(self.folder) as module:
            graph = module.graphs[self.graph.name]
            graph.run(given)
            kept = {k: v for k, v in given.items() if isinstance(v, np.ndarray) and self.graph.args[k].role != "temp"}
            return list(graph.last_events), kept

    def reset(self) -> None:
        """Back to the start values (for a replay dispatch by dispatch)."""
        self.values = _copies(self.start)

    def step(self, node_id: str) -> dict[str, np.ndarray]:
        """Run dispatch node ``node_id`` in the debug variant on the current values; every array after it."""
        module = self._debug_variant()
        node = self.graph.node(node_id)
        assert isinstance(node, Dispatch)
        bound = {arg for _, arg in node.bindings if arg is not None}
        module.graphs[self._names[node_id]].run({k: v for k, v in self.values.items() if k in bound})
        return {k: v for k, v in self.values.items() if isinstance(v, np.ndarray)}

    def _debug_variant(self) -> Module:
        """The debug variant: one module graph per dispatch node. The one ``gl.export(debug=True)``
        recorded in the module when it covers this graph's dispatch nodes; else exported once, now,
        for the deployed arch."""
        if self._variant is not None:
            return self._variant
        dispatches = {node_id for node_id, node in self.graph.nodes() if isinstance(node, Dispatch)}
        recorded = self.manifest.debug_steps.get(self.graph.name)
        if recorded is not None and set(recorded.graphs) == dispatches:
            self._names = dict(recorded.graphs)
            self.recorded = True
            self._variant = load_module(self.folder)
            return self._variant
        graphs = []
        for node_id, one in step_graphs(self.graph):
            self._names[node_id] = one.name
            graphs.append(one)
        self._variant_dir = tempfile.TemporaryDirectory(prefix=scratch_prefix("debug-variant"))
        folder = Path(self._variant_dir.name, "variant")
        arrays = {k: v for k, v in self.start.items() if isinstance(v, np.ndarray)}
        export(
            graphs,
            folder,
            self.manifest.arch,
            values=arrays,
            tcm=False,
            cpu_threads=self.manifest.cpu_max_num_threads,
        )
        self._variant = load_module(folder)
        return self._variant

    def close(self) -> None:
        """Free the debug variant's runtime and folder."""
        if self._variant is not None:
            self._variant.close()
            self._variant = None
        if self._variant_dir is not None:
            self._variant_dir.cleanup()
            self._variant_dir = None


def _host_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Run values on the host: ndarrays as numpy arrays (names bound to one ndarray, such as temps
    sharing a memory-plan slot, to one numpy array), scalars as they are."""
    seen: dict[int, Any] = {}
    out = {}
    for name, value in values.items():
        if id(value) not in seen:
            seen[id(value)] = value.to_numpy() if hasattr(value, "to_numpy") else value
        out[name] = seen[id(value)]
    return out


def _copies(values: Mapping[str, Any]) -> dict[str, Any]:
    """Fresh copies of the arrays, names sharing an array still sharing its copy."""
    seen: dict[int, Any] = {}
    out = {}
    for name, value in values.items():
        if id(value) not in seen:
            seen[id(value)] = value.copy() if isinstance(value, np.ndarray) else value
        out[name] = seen[id(value)]
    return out
