"""The uses of a graph behind its convenience methods: the one module of the model's that reaches up.

Users love ``g.validate()``, ``g.compile()``, ``g.debug()``, ``g.render()``, ``g.save()`` and
``g.to_code()``. The model (:mod:`graphlab.graph`) must not import the layers that implement them
(analysis, the Taichi runtime, the debugger), so those methods
(:mod:`graphlab.conveniences`) call through its :data:`~graphlab.conveniences.USES`, which this
module fills when ``import graphlab`` runs. Each function below only forwards to the module that
owns the work. The light ones are imported here; the compiler and the debugger pull in Taichi, so
they are imported when called and ``import graphlab`` stays light (import cost, the one reason for
an in-function import). Graphviz loads only inside :mod:`graphlab.render`'s functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphlab import check, codegen, conveniences, dataflow, graphfile, memory, render

if TYPE_CHECKING:
    import networkx as nx

    from graphlab.compiled import CompiledGraph
    from graphlab.debug.session import DebugSession
    from graphlab.diagnostics import Diagnostic
    from graphlab.export.module_runner import ModuleRunner
    from graphlab.graph import Graph
    from graphlab.memory import MemoryPlan


class Uses:
    """What :class:`graphlab.Graph`'s convenience methods do, one function each."""

    def validate(self, graph: Graph, *, target: str | None, access: str) -> list[Diagnostic]:
        return check.validate(graph, target=target, access=access)  # type: ignore[arg-type]

    def check(self, graph: Graph, *, target: str | None, access: str) -> None:
        check.check(graph, target=target, access=access)  # type: ignore[arg-type]

    def memory_plan(self, graph: Graph, **shapes: Any) -> MemoryPlan:
        return memory.memory_plan(graph, **shapes)

    def render(self, graph: Graph, *, view: str, highlight: str | None, **options: Any) -> Any:
        return render.render(graph, view=view, highlight=highlight, **options)  # type: ignore[arg-type]

    def mimebundle(self, graph: Graph) -> dict[str, Any]:
        return render.mimebundle(graph)

    def dataflow(self, graph: Graph, *, access: str) -> nx.DiGraph:
        return dataflow.dataflow_graph(graph, access=access)  # type: ignore[arg-type]

    def compile(self, graph: Graph) -> CompiledGraph:
        from graphlab.compiled import compile_graph  # import cost: Taichi

        return compile_graph(graph)

    def debug(self, graph: Graph, values: Mapping[str, Any] | None, **kwargs: Any) -> DebugSession:
        from graphlab.debug.session import DebugSession  # import cost: Taichi

        kwargs.setdefault("module_runner", module_runner)  # compare(folder): the exporter runs the module
        return DebugSession(graph, values, **kwargs)

    def save(self, graph: Graph, path: Any) -> None:
        graphfile.save(graph, path)

    def to_dict(self, graph: Graph) -> dict[str, Any]:
        return graphfile.to_dict(graph)

    def to_code(self, graph: Graph) -> str:
        return codegen.to_code(graph)


def module_runner(folder: Any, graph: Graph, start: Mapping[str, Any]) -> ModuleRunner:
    """An exported module as the other side of ``dbg.compare(folder)``: built here, where both the
    debugger and the exporter (siblings that must not import each other) can be seen."""
    from graphlab.export.module_runner import ModuleRunner  # import cost: Taichi's C runtime

    return ModuleRunner(folder, graph, start)


conveniences.USES = Uses()
