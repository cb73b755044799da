"""What rules share while one validation runs (computed once, on demand)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from graphlab.analysis.dataflow import dataflow_facts

if TYPE_CHECKING:
    from graphlab.model.graph import Graph


class CheckContext:
    """Shared, lazily computed facts for one validation pass."""

    def __init__(self, graph: Graph, *, target: str | None = None, access_source: str = "auto") -> None:
        self.graph = graph
        self.target = target
        self.access_source = access_source

    @cached_property
    def node_ids(self) -> list[tuple[str, Any]]:
        """All (id, node) pairs in program order."""
        return list(self.graph.nodes())

    @cached_property
    def dataflow(self) -> Any:
        """The read/write data-flow facts of the graph (see graphlab.analysis.dataflow)."""
        return dataflow_facts(self.graph, access=self.access_source)
